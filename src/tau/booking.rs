//! The airline tools that write: book, cancel, change flights, baggage and passengers of a
//! reservation, and send a certificate.
//!
//! Each follows the reference step by step — the same checks in the same order, the same
//! `Error: …` texts, the same arithmetic (integers stay integers, an integer and a float give a
//! float), the same mutation order (a failure half-way leaves what Python would leave) and the
//! same key order in what it stores. Owns: these six tools. Must not: bind arguments or
//! dispatch by name (`tools.rs` does), or print anything but the tool's observation.

use serde_json::{Map, Value, json};

use super::py::{
    self, PyError, PyResult, add, compare, contains, get, get_by, get_by_mut, get_mut, int, is_str,
    items, len, mul, neg, sub, type_name,
};
use super::pyfmt::{json_dumps, str_of};

/// `obj[key] = v` on a dict.
fn set(obj: &mut Value, key: &str, v: Value) -> PyResult<()> {
    match obj {
        Value::Object(map) => {
            map.insert(key.to_string(), v);
            Ok(())
        }
        Value::Array(_) => Err(PyError::Type(
            "list indices must be integers or slices, not str".into(),
        )),
        other => Err(PyError::Type(format!(
            "'{}' object does not support item assignment",
            type_name(other)
        ))),
    }
}

/// `list.append(v)`.
fn append(list: &mut Value, v: Value) -> PyResult<()> {
    match list {
        Value::Array(items) => {
            items.push(v);
            Ok(())
        }
        other => Err(PyError::Attribute(format!(
            "'{}' object has no attribute 'append'",
            type_name(other)
        ))),
    }
}

/// The elements of the agent's `flights` for `for flight in flights:` with each `flight`
/// changed in place: a list's elements; for a dict or string the elements are strings, so the
/// first `flight["flight_number"]` fails as it does in Python (an empty one loops zero times).
fn flights_mut(v: &mut Value) -> PyResult<Vec<&mut Value>> {
    match v {
        Value::Array(items) => Ok(items.iter_mut().collect()),
        other => match items(other)?.first() {
            Some(first) => get(first, "flight_number").map(|_| Vec::new()),
            None => Ok(Vec::new()),
        },
    }
}

/// What checking one requested flight against the flight table gave.
enum Leg {
    /// The flight's price, origin and destination.
    Priced(Value, Value, Value),
    /// The reference's refusal, returned as the observation.
    Refused(String),
}

/// The shared check of `book_reservation` and `update_reservation_flights` for one flight: it
/// exists, flies on that date, is available, has `passengers` seats left in `cabin`.
fn price_leg(table: &Value, flight: &Value, cabin: &Value, passengers: &Value) -> PyResult<Leg> {
    let number = get(flight, "flight_number")?;
    if !contains(table, number)? {
        return Ok(Leg::Refused(format!(
            "Error: flight {} not found",
            str_of(number)
        )));
    }
    let data = get_by(table, number)?;
    let date = get(flight, "date")?;
    let dates = get(data, "dates")?;
    if !contains(dates, date)? {
        return Ok(Leg::Refused(format!(
            "Error: flight {} not found on date {}",
            str_of(number),
            str_of(date)
        )));
    }
    let day = get_by(dates, date)?;
    if !is_str(get(day, "status")?, "available") {
        return Ok(Leg::Refused(format!(
            "Error: flight {} not available on date {}",
            str_of(number),
            str_of(date)
        )));
    }
    let seats = get_by(get(day, "available_seats")?, cabin)?;
    if compare(seats, &int(len(passengers)?), "<")? {
        return Ok(Leg::Refused(format!(
            "Error: not enough seats on flight {}",
            str_of(number)
        )));
    }
    Ok(Leg::Priced(
        get_by(get(day, "prices")?, cabin)?.clone(),
        get(data, "origin")?.clone(),
        get(data, "destination")?.clone(),
    ))
}

/// Writes a leg's price, origin and destination into the agent's flight object.
fn fill(flight: &mut Value, price: Value, origin: Value, destination: Value) -> PyResult<()> {
    set(flight, "price", price)?;
    set(flight, "origin", origin)?;
    set(flight, "destination", destination)
}

pub fn book_reservation(data: &mut Value, a: &[&Value]) -> PyResult<String> {
    let &[
        user_id,
        origin,
        destination,
        flight_type,
        cabin,
        flights,
        passengers,
        payment_methods,
        total_baggages,
        nonfree_baggages,
        insurance,
    ] = a
    else {
        return Err(PyError::Type("book_reservation: wrong arity".into()));
    };
    let users = get(data, "users")?;
    if !contains(users, user_id)? {
        return Ok("Error: user not found".into());
    }
    let user = get_by(users, user_id)?;
    let reservations = get(data, "reservations")?;
    let mut reservation_id = "HATHAT";
    for next in ["HATHAU", "HATHAV"] {
        if contains(reservations, &Value::from(reservation_id))? {
            reservation_id = next;
        }
    }
    let table = get(data, "flights")?;
    let mut booked = flights.clone();
    let mut total = int(0);
    for flight in flights_mut(&mut booked)? {
        match price_leg(table, flight, cabin, passengers)? {
            Leg::Refused(why) => return Ok(why),
            Leg::Priced(price, from, to) => fill(flight, price, from, to)?,
        }
        let line = mul(get(flight, "price")?, &int(len(passengers)?))?;
        total = add(&total, &line, "+=")?;
    }
    if is_str(insurance, "yes") {
        total = add(&total, &mul(&int(30), &int(len(passengers)?))?, "+=")?;
    }
    total = add(&total, &mul(&int(50), nonfree_baggages)?, "+=")?;

    let payments = items(payment_methods)?;
    for payment in &payments {
        let payment_id = get(payment, "payment_id")?;
        let amount = get(payment, "amount")?;
        let methods = get(user, "payment_methods")?;
        if !contains(methods, payment_id)? {
            return Ok(format!(
                "Error: payment method {} not found",
                str_of(payment_id)
            ));
        }
        let method = get_by(methods, payment_id)?;
        let source = get(method, "source")?;
        if (is_str(source, "gift_card") || is_str(source, "certificate"))
            && compare(get(method, "amount")?, amount, "<")?
        {
            return Ok(format!(
                "Error: not enough balance in payment method {}",
                str_of(payment_id)
            ));
        }
    }
    let mut paid = int(0);
    for payment in &payments {
        paid = add(&paid, get(payment, "amount")?, "+")?;
    }
    if !py::eq(&paid, &total) {
        return Ok(format!(
            "Error: payment amount does not add up, total price is {}, but paid {}",
            str_of(&total),
            str_of(&paid)
        ));
    }

    // The checks passed: take the payments (a gift card is debited, a certificate is used up).
    let user = get_by_mut(get_mut(data, "users")?, user_id)?;
    for payment in &payments {
        let payment_id = get(payment, "payment_id")?;
        let amount = get(payment, "amount")?;
        let methods = get_mut(user, "payment_methods")?;
        let source = get(get_by(methods, payment_id)?, "source")?.clone();
        if is_str(&source, "gift_card") {
            let balance = get_mut(get_by_mut(methods, payment_id)?, "amount")?;
            *balance = sub(balance, amount, "-=")?;
        } else if is_str(&source, "certificate")
            && let (Value::Object(map), Value::String(id)) = (methods, payment_id)
        {
            map.shift_remove(id);
        }
    }
    let reservation = json!({
        "reservation_id": reservation_id,
        "user_id": user_id,
        "origin": origin,
        "destination": destination,
        "flight_type": flight_type,
        "cabin": cabin,
        "flights": booked,
        "passengers": passengers,
        "payment_history": payment_methods,
        "created_at": "2024-05-15T15:00:00",
        "total_baggages": total_baggages,
        "nonfree_baggages": nonfree_baggages,
        "insurance": insurance,
    });
    let out = json_dumps(&reservation);
    set(get_mut(data, "reservations")?, reservation_id, reservation)?;
    let user = get_by_mut(get_mut(data, "users")?, user_id)?;
    append(get_mut(user, "reservations")?, Value::from(reservation_id))?;
    Ok(out)
}

pub fn cancel_reservation(data: &mut Value, reservation_id: &Value) -> PyResult<String> {
    let reservations = get_mut(data, "reservations")?;
    if !contains(reservations, reservation_id)? {
        return Ok("Error: reservation not found".into());
    }
    let reservation = get_by_mut(reservations, reservation_id)?;
    let mut refunds = Vec::new();
    for payment in items(get(reservation, "payment_history")?)? {
        refunds.push(json!({
            "payment_id": get(&payment, "payment_id")?,
            "amount": neg(get(&payment, "amount")?)?,
        }));
    }
    match get_mut(reservation, "payment_history")? {
        Value::Array(history) => history.extend(refunds),
        other => {
            return Err(PyError::Attribute(format!(
                "'{}' object has no attribute 'extend'",
                type_name(other)
            )));
        }
    }
    set(reservation, "status", Value::from("cancelled"))?;
    Ok(json_dumps(reservation))
}

/// The checks on the payment method of a reservation change: it exists, is not a certificate,
/// and a gift card covers `total`. `Ok(Err(text))` is the reference's refusal.
fn check_payment(
    data: &Value,
    user_id: &Value,
    payment_id: &Value,
    total: &Value,
) -> PyResult<Result<bool, String>> {
    let methods = get(get_by(get(data, "users")?, user_id)?, "payment_methods")?;
    if !contains(methods, payment_id)? {
        return Ok(Err("Error: payment method not found".into()));
    }
    let method = get_by(methods, payment_id)?;
    let source = get(method, "source")?;
    if is_str(source, "certificate") {
        return Ok(Err(
            "Error: certificate cannot be used to update reservation".into(),
        ));
    }
    let gift_card = is_str(source, "gift_card");
    if gift_card && compare(get(method, "amount")?, total, "<")? {
        return Ok(Err("Error: gift card balance is not enough".into()));
    }
    Ok(Ok(gift_card))
}

/// Debits `total` from a gift card.
fn debit(data: &mut Value, user_id: &Value, payment_id: &Value, total: &Value) -> PyResult<()> {
    let user = get_by_mut(get_mut(data, "users")?, user_id)?;
    let method = get_by_mut(get_mut(user, "payment_methods")?, payment_id)?;
    let balance = get_mut(method, "amount")?;
    *balance = sub(balance, total, "-=")?;
    Ok(())
}

/// Appends `{"payment_id", "amount"}` to the payment history when `total` is not zero.
fn record_payment(reservation: &mut Value, payment_id: &Value, total: Value) -> PyResult<()> {
    if py::eq(&total, &int(0)) {
        return Ok(());
    }
    append(
        get_mut(reservation, "payment_history")?,
        json!({"payment_id": payment_id, "amount": total}),
    )
}

pub fn update_reservation_baggages(
    data: &mut Value,
    reservation_id: &Value,
    total_baggages: &Value,
    nonfree_baggages: &Value,
    payment_id: &Value,
) -> PyResult<String> {
    let reservations = get(data, "reservations")?;
    if !contains(reservations, reservation_id)? {
        return Ok("Error: reservation not found".into());
    }
    let reservation = get_by(reservations, reservation_id)?;
    let extra = sub(nonfree_baggages, get(reservation, "nonfree_baggages")?, "-")?;
    let total = mul(&int(50), &py::max_zero(&extra)?)?;
    let user_id = get(reservation, "user_id")?.clone();
    let gift_card = match check_payment(data, &user_id, payment_id, &total)? {
        Ok(gift_card) => gift_card,
        Err(refused) => return Ok(refused),
    };
    let reservation = get_by_mut(get_mut(data, "reservations")?, reservation_id)?;
    set(reservation, "total_baggages", total_baggages.clone())?;
    set(reservation, "nonfree_baggages", nonfree_baggages.clone())?;
    if gift_card {
        debit(data, &user_id, payment_id, &total)?;
    }
    let reservation = get_by_mut(get_mut(data, "reservations")?, reservation_id)?;
    record_payment(reservation, payment_id, total)?;
    Ok(json_dumps(reservation))
}

pub fn update_reservation_flights(
    data: &mut Value,
    reservation_id: &Value,
    cabin: &Value,
    flights: &Value,
    payment_id: &Value,
) -> PyResult<String> {
    let reservations = get(data, "reservations")?;
    if !contains(reservations, reservation_id)? {
        return Ok("Error: reservation not found".into());
    }
    let reservation = get_by(reservations, reservation_id)?;
    let passengers = get(reservation, "passengers")?;
    let current = items(get(reservation, "flights")?)?;
    let table = get(data, "flights")?;
    let mut total = int(0);
    let mut wanted = flights.clone();
    for flight in flights_mut(&mut wanted)? {
        // A flight already in the reservation (same number and date, same cabin) keeps its
        // price; Python's list comprehension checks every current flight.
        let mut kept = Vec::new();
        for f in &current {
            if py::eq(get(f, "flight_number")?, get(flight, "flight_number")?)
                && py::eq(get(f, "date")?, get(flight, "date")?)
                && py::eq(cabin, get(reservation, "cabin")?)
            {
                kept.push(f);
            }
        }
        let (price, from, to) = match kept.first() {
            Some(f) => (
                get(f, "price")?.clone(),
                get(f, "origin")?.clone(),
                get(f, "destination")?.clone(),
            ),
            None => match price_leg(table, flight, cabin, passengers)? {
                Leg::Refused(why) => return Ok(why),
                Leg::Priced(price, from, to) => (price, from, to),
            },
        };
        let line = mul(&price, &int(len(passengers)?))?;
        total = add(&total, &line, "+=")?;
        fill(flight, price, from, to)?;
    }
    let mut paid_before = int(0);
    for f in &current {
        paid_before = add(&paid_before, get(f, "price")?, "+")?;
    }
    total = sub(&total, &mul(&paid_before, &int(len(passengers)?))?, "-=")?;

    let user_id = get(reservation, "user_id")?.clone();
    let gift_card = match check_payment(data, &user_id, payment_id, &total)? {
        Ok(gift_card) => gift_card,
        Err(refused) => return Ok(refused),
    };
    if gift_card {
        debit(data, &user_id, payment_id, &total)?;
    }
    let reservation = get_by_mut(get_mut(data, "reservations")?, reservation_id)?;
    set(reservation, "flights", wanted)?;
    record_payment(reservation, payment_id, total)?;
    Ok(json_dumps(reservation))
}

pub fn update_reservation_passengers(
    data: &mut Value,
    reservation_id: &Value,
    passengers: &Value,
) -> PyResult<String> {
    let reservations = get_mut(data, "reservations")?;
    if !contains(reservations, reservation_id)? {
        return Ok("Error: reservation not found".into());
    }
    let reservation = get_by_mut(reservations, reservation_id)?;
    if len(passengers)? != len(get(reservation, "passengers")?)? {
        return Ok("Error: number of passengers does not match".into());
    }
    set(reservation, "passengers", passengers.clone())?;
    Ok(json_dumps(reservation))
}

/// Adds the first free certificate of `certificate_3221322` … `certificate_3221324`. With all
/// three taken the reference returns `None` (which its environment cannot even wrap into a
/// response); the observation here is `None`, Python's `str(None)`.
pub fn send_certificate(data: &mut Value, user_id: &Value, amount: &Value) -> PyResult<String> {
    let users = get_mut(data, "users")?;
    if !contains(users, user_id)? {
        return Ok("Error: user not found".into());
    }
    let user = get_by_mut(users, user_id)?;
    for n in [3221322, 3221323, 3221324] {
        let payment_id = format!("certificate_{n}");
        let methods = get_mut(user, "payment_methods")?;
        if !contains(methods, &Value::from(payment_id.as_str()))? {
            let mut certificate = Map::new();
            certificate.insert("source".into(), Value::from("certificate"));
            certificate.insert("amount".into(), amount.clone());
            certificate.insert("id".into(), Value::from(payment_id.as_str()));
            set(methods, &payment_id, Value::Object(certificate))?;
            return Ok(format!(
                "Certificate {payment_id} added to user {} with amount {}.",
                str_of(user_id),
                str_of(amount)
            ));
        }
    }
    Ok("None".into())
}
