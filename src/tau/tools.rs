//! The 14 airline tools as the agent calls them: argument binding with Python's rules, the
//! dispatch by name, and the tools that only read (user and reservation details, flight
//! searches, airports, `calculate`, `think`, `transfer_to_human_agents`).
//!
//! Every tool answers the observation the reference answers, byte for byte: JSON printed as
//! Python's `json.dumps` prints it, `Error: …` texts as the reference words them (including its
//! quirks: a missing reservation in `get_reservation_details` is `Error: user not found`), and a
//! raised exception as `Error: <Python's message>`; an unknown tool is `Unknown action <name>`.
//! Owns: [`invoke`], [`TOOL_NAMES`], [`ends_episode`]. Must not: keep state between calls (the
//! database is the only state) or judge an episode (`reward.rs` does). The tools that write are
//! in `booking.rs`.

use serde_json::{Map, Value};

use super::booking;
use super::calc;
use super::db::Db;
use super::py::{self, PyError, PyResult, contains, get, get_by, is_str, type_name};
use super::pyfmt::json_dumps;

/// A tool's name, the reference's class name (Python's error texts name it) and its parameters
/// in order.
struct Spec {
    name: &'static str,
    class: &'static str,
    params: &'static [&'static str],
}

const SPECS: [Spec; 14] = [
    Spec {
        name: "book_reservation",
        class: "BookReservation",
        params: &[
            "user_id",
            "origin",
            "destination",
            "flight_type",
            "cabin",
            "flights",
            "passengers",
            "payment_methods",
            "total_baggages",
            "nonfree_baggages",
            "insurance",
        ],
    },
    Spec {
        name: "calculate",
        class: "Calculate",
        params: &["expression"],
    },
    Spec {
        name: "cancel_reservation",
        class: "CancelReservation",
        params: &["reservation_id"],
    },
    Spec {
        name: "get_reservation_details",
        class: "GetReservationDetails",
        params: &["reservation_id"],
    },
    Spec {
        name: "get_user_details",
        class: "GetUserDetails",
        params: &["user_id"],
    },
    Spec {
        name: "list_all_airports",
        class: "ListAllAirports",
        params: &[],
    },
    Spec {
        name: "search_direct_flight",
        class: "SearchDirectFlight",
        params: &["origin", "destination", "date"],
    },
    Spec {
        name: "search_onestop_flight",
        class: "SearchOnestopFlight",
        params: &["origin", "destination", "date"],
    },
    Spec {
        name: "send_certificate",
        class: "SendCertificate",
        params: &["user_id", "amount"],
    },
    Spec {
        name: "think",
        class: "Think",
        params: &["thought"],
    },
    Spec {
        name: "transfer_to_human_agents",
        class: "TransferToHumanAgents",
        params: &["summary"],
    },
    Spec {
        name: "update_reservation_baggages",
        class: "UpdateReservationBaggages",
        params: &[
            "reservation_id",
            "total_baggages",
            "nonfree_baggages",
            "payment_id",
        ],
    },
    Spec {
        name: "update_reservation_flights",
        class: "UpdateReservationFlights",
        params: &["reservation_id", "cabin", "flights", "payment_id"],
    },
    Spec {
        name: "update_reservation_passengers",
        class: "UpdateReservationPassengers",
        params: &["reservation_id", "passengers"],
    },
];

/// The tools' names, in the reference's order.
pub const TOOL_NAMES: [&str; 14] = [
    "book_reservation",
    "calculate",
    "cancel_reservation",
    "get_reservation_details",
    "get_user_details",
    "list_all_airports",
    "search_direct_flight",
    "search_onestop_flight",
    "send_certificate",
    "think",
    "transfer_to_human_agents",
    "update_reservation_baggages",
    "update_reservation_flights",
    "update_reservation_passengers",
];

/// Whether calling `tool` ends the episode (the airline environment's terminating tool).
pub fn ends_episode(tool: &str) -> bool {
    tool == "transfer_to_human_agents"
}

/// Calls `tool` with the agent's arguments (`args`, normally a JSON object) on `db` and returns
/// the observation. Never fails: a refused call is an `Error: …` observation, as in the
/// reference environment.
pub fn invoke(db: &mut Db, tool: &str, args: &Value) -> String {
    let Some(spec) = SPECS.iter().find(|s| s.name == tool) else {
        return format!("Unknown action {tool}");
    };
    match bind(spec, args).and_then(|a| run(db.value_mut(), spec.name, &a)) {
        Ok(out) => out,
        Err(e) => format!("Error: {e}"),
    }
}

fn run(data: &mut Value, tool: &str, a: &[&Value]) -> PyResult<String> {
    match (tool, a) {
        ("book_reservation", a) => booking::book_reservation(data, a),
        ("calculate", [e]) => calc::calculate(e),
        ("cancel_reservation", [r]) => booking::cancel_reservation(data, r),
        ("get_reservation_details", [r]) => details(data, "reservations", r),
        ("get_user_details", [u]) => details(data, "users", u),
        ("list_all_airports", []) => Ok(list_all_airports()),
        ("search_direct_flight", [o, d, date]) => search_direct_flight(data, o, d, date),
        ("search_onestop_flight", [o, d, date]) => search_onestop_flight(data, o, d, date),
        ("send_certificate", [u, amount]) => booking::send_certificate(data, u, amount),
        ("think", [_]) => Ok(String::new()),
        ("transfer_to_human_agents", [_]) => Ok("Transfer successful".into()),
        ("update_reservation_baggages", [r, t, n, p]) => {
            booking::update_reservation_baggages(data, r, t, n, p)
        }
        ("update_reservation_flights", [r, c, f, p]) => {
            booking::update_reservation_flights(data, r, c, f, p)
        }
        ("update_reservation_passengers", [r, p]) => {
            booking::update_reservation_passengers(data, r, p)
        }
        (tool, _) => Ok(format!("Unknown action {tool}")),
    }
}

/// Python's binding of `invoke(data=data, **args)`: `data` given twice, then the first
/// unexpected keyword, then every missing parameter — with CPython 3.11's texts.
fn bind<'a>(spec: &Spec, args: &'a Value) -> PyResult<Vec<&'a Value>> {
    let qualified = format!(
        "tau_bench.envs.airline.tools.{}.{}.invoke()",
        spec.name, spec.class
    );
    let Value::Object(map) = args else {
        return Err(PyError::Type(format!(
            "{qualified} argument after ** must be a mapping, not {}",
            type_name(args)
        )));
    };
    if map.contains_key("data") {
        return Err(PyError::Type(format!(
            "{qualified} got multiple values for keyword argument 'data'"
        )));
    }
    if let Some(k) = map.keys().find(|k| !spec.params.contains(&k.as_str())) {
        return Err(PyError::Type(format!(
            "{}.invoke() got an unexpected keyword argument '{k}'",
            spec.class
        )));
    }
    let missing: Vec<String> = spec
        .params
        .iter()
        .filter(|p| !map.contains_key(**p))
        .map(|p| format!("'{p}'"))
        .collect();
    if !missing.is_empty() {
        let list = match missing.as_slice() {
            [one] => one.clone(),
            [a, b] => format!("{a} and {b}"),
            [init @ .., last] => format!("{}, and {last}", init.join(", ")),
            [] => String::new(),
        };
        return Err(PyError::Type(format!(
            "{}.invoke() missing {} required positional argument{}: {list}",
            spec.class,
            missing.len(),
            if missing.len() == 1 { "" } else { "s" }
        )));
    }
    Ok(spec.params.iter().filter_map(|p| map.get(*p)).collect())
}

/// `get_user_details` / `get_reservation_details`: the record as JSON, or the reference's
/// `Error: user not found` (for both tables).
fn details(data: &Value, table: &str, id: &Value) -> PyResult<String> {
    let rows = get(data, table)?;
    if contains(rows, id)? {
        return Ok(json_dumps(get_by(rows, id)?));
    }
    Ok("Error: user not found".into())
}

const AIRPORTS: [(&str, &str); 20] = [
    ("SFO", "San Francisco"),
    ("JFK", "New York"),
    ("LAX", "Los Angeles"),
    ("ORD", "Chicago"),
    ("DFW", "Dallas"),
    ("DEN", "Denver"),
    ("SEA", "Seattle"),
    ("ATL", "Atlanta"),
    ("MIA", "Miami"),
    ("BOS", "Boston"),
    ("PHX", "Phoenix"),
    ("IAH", "Houston"),
    ("LAS", "Las Vegas"),
    ("MCO", "Orlando"),
    ("EWR", "Newark"),
    ("CLT", "Charlotte"),
    ("MSP", "Minneapolis"),
    ("DTW", "Detroit"),
    ("PHL", "Philadelphia"),
    ("LGA", "LaGuardia"),
];

fn list_all_airports() -> String {
    let map: Map<String, Value> = AIRPORTS
        .iter()
        .map(|(code, city)| (code.to_string(), Value::from(*city)))
        .collect();
    json_dumps(&Value::Object(map))
}

/// A flight's fields without `dates`, updated with one date's fields (Python's
/// `{k: v for k, v in flight.items() if k != "dates"}` then `.update(...)`).
fn flight_on(flight: &Value, day: &Value) -> PyResult<Map<String, Value>> {
    let (Value::Object(f), Value::Object(d)) = (flight, day) else {
        return Err(PyError::Attribute(format!(
            "'{}' object has no attribute 'items'",
            type_name(flight)
        )));
    };
    let mut out: Map<String, Value> = f
        .iter()
        .filter(|(k, _)| k.as_str() != "dates")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, v) in d {
        out.insert(k.clone(), v.clone());
    }
    Ok(out)
}

fn flights_of(data: &Value) -> PyResult<Vec<&Value>> {
    match get(data, "flights")? {
        Value::Object(map) => Ok(map.values().collect()),
        other => Err(PyError::Attribute(format!(
            "'{}' object has no attribute 'values'",
            type_name(other)
        ))),
    }
}

fn search_direct_flight(
    data: &Value,
    origin: &Value,
    destination: &Value,
    date: &Value,
) -> PyResult<String> {
    let mut results = Vec::new();
    for flight in flights_of(data)? {
        if py::eq(get(flight, "origin")?, origin)
            && py::eq(get(flight, "destination")?, destination)
        {
            let dates = get(flight, "dates")?;
            if contains(dates, date)? && is_str(get(get_by(dates, date)?, "status")?, "available") {
                results.push(Value::Object(flight_on(flight, get_by(dates, date)?)?));
            }
        }
    }
    Ok(json_dumps(&Value::Array(results)))
}

/// The reference's next day for a flight arriving `+1`: `f"2024-05-{int(date[-2:]) + 1}"`
/// (not zero-padded, so `2024-05-05` gives `2024-05-6`, a date no flight has).
fn next_day(date: &Value) -> PyResult<Value> {
    let tail: String = match date {
        Value::String(s) => {
            let chars: Vec<char> = s.chars().collect();
            chars[chars.len().saturating_sub(2)..].iter().collect()
        }
        Value::Array(_) => {
            return Err(PyError::Type(
                "int() argument must be a string, a bytes-like object or a real number, not 'list'"
                    .into(),
            ));
        }
        Value::Object(_) => return Err(PyError::Type("unhashable type: 'slice'".into())),
        other => {
            return Err(PyError::Type(format!(
                "'{}' object is not subscriptable",
                type_name(other)
            )));
        }
    };
    let n = python_int(&tail).ok_or_else(|| {
        PyError::Value(format!(
            "invalid literal for int() with base 10: {}",
            super::pyfmt::str_repr(&tail)
        ))
    })?;
    Ok(Value::String(format!("2024-05-{}", n + 1)))
}

/// Python's `int(text)` for base 10: surrounding whitespace, a sign, digits with single
/// underscores between them.
fn python_int(text: &str) -> Option<i128> {
    let t = text.trim();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return None;
    }
    let n: i128 = digits.replace('_', "").parse().ok()?;
    Some(if neg { -n } else { n })
}

fn search_onestop_flight(
    data: &Value,
    origin: &Value,
    destination: &Value,
    date: &Value,
) -> PyResult<String> {
    let flights = flights_of(data)?;
    let mut results = Vec::new();
    for first in &flights {
        if !py::eq(get(first, "origin")?, origin) {
            continue;
        }
        for second in &flights {
            if !(py::eq(get(second, "destination")?, destination)
                && py::eq(get(first, "destination")?, get(second, "origin")?))
            {
                continue;
            }
            let arrival = get(first, "scheduled_arrival_time_est")?;
            let date2 = if contains(arrival, &Value::from("+1"))? {
                next_day(date)?
            } else {
                date.clone()
            };
            if py::compare(arrival, get(second, "scheduled_departure_time_est")?, ">")? {
                continue;
            }
            let (d1, d2) = (get(first, "dates")?, get(second, "dates")?);
            if !(contains(d1, date)? && contains(d2, &date2)?) {
                continue;
            }
            if is_str(get(get_by(d1, date)?, "status")?, "available")
                && is_str(get(get_by(d2, &date2)?, "status")?, "available")
            {
                let mut leg1 = flight_on(first, get_by(d1, date)?)?;
                leg1.insert("date".into(), date.clone());
                // The reference fills the second leg from the *first* leg's date.
                let mut leg2 = flight_on(second, get_by(d2, date)?)?;
                leg2.insert("date".into(), date2.clone());
                results.push(Value::Array(vec![Value::Object(leg1), Value::Object(leg2)]));
            }
        }
    }
    Ok(json_dumps(&Value::Array(results)))
}
