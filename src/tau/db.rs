//! The airline database: `env/flights.json`, `env/reservations.json` and `env/users.json` of a
//! data folder, joined as `{"flights", "reservations", "users"}` like τ-bench's `load_data`.
//!
//! The tables are kept as JSON values in file order (the tools print records in that order) and
//! checked on load for what the tools rely on, so that a broken file is an error naming the file
//! and the field, not a surprise in an observation. Owns: [`Db`] and its loading and hash.
//! Must not: change records (the tools do) or know about tasks and rewards.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Number, Value};

use super::error::TauError;
use super::pyfmt::consistent_hash;

/// The three tables, as one JSON object.
#[derive(Debug, Clone, PartialEq)]
pub struct Db {
    data: Value,
}

#[derive(Deserialize)]
struct UserShape {
    payment_methods: HashMap<String, PaymentMethodShape>,
    #[allow(dead_code)]
    reservations: Vec<String>,
}

#[derive(Deserialize)]
struct PaymentMethodShape {
    source: String,
    #[serde(default)]
    amount: Option<Number>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct ReservationShape {
    user_id: String,
    cabin: String,
    flights: Vec<ReservedFlightShape>,
    passengers: Vec<Value>,
    payment_history: Vec<PaymentShape>,
    nonfree_baggages: Number,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct ReservedFlightShape {
    flight_number: String,
    date: String,
    price: Number,
    origin: String,
    destination: String,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct PaymentShape {
    payment_id: String,
    amount: Number,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct FlightShape {
    origin: String,
    destination: String,
    scheduled_departure_time_est: String,
    scheduled_arrival_time_est: String,
    dates: HashMap<String, FlightDayShape>,
}

#[derive(Deserialize)]
struct FlightDayShape {
    status: String,
    #[serde(default)]
    available_seats: Option<HashMap<String, Number>>,
    #[serde(default)]
    prices: Option<HashMap<String, Number>>,
}

/// Reads one table file.
fn read_table(path: &Path) -> Result<Value, TauError> {
    let text = crate::text::read_file(path).map_err(TauError::read(path))?;
    serde_json::from_str(&text).map_err(|source| TauError::Json {
        path: path.to_path_buf(),
        source,
    })
}

/// Checks a table against its shape; `table` names it in the error (`users.mia_li_3668: …`).
fn check<T: for<'de> Deserialize<'de>>(path: &Path, table: &str, v: &Value) -> Result<T, TauError> {
    serde_path_to_error::deserialize(v).map_err(|e| TauError::schema(path, table, e))
}

impl Db {
    /// Loads `DIR/env/{flights,reservations,users}.json` and checks them.
    pub fn load(dir: &Path) -> Result<Db, TauError> {
        let file = |name: &str| -> PathBuf { dir.join("env").join(name) };
        let (flights_path, reservations_path, users_path) = (
            file("flights.json"),
            file("reservations.json"),
            file("users.json"),
        );
        let flights = read_table(&flights_path)?;
        let reservations = read_table(&reservations_path)?;
        let users = read_table(&users_path)?;

        let user_shapes: HashMap<String, UserShape> = check(&users_path, "users", &users)?;
        for (id, user) in &user_shapes {
            for (pid, method) in &user.payment_methods {
                if matches!(method.source.as_str(), "gift_card" | "certificate")
                    && method.amount.is_none()
                {
                    return Err(TauError::field(
                        &users_path,
                        format!("users.{id}.payment_methods.{pid}"),
                        format!("missing field `amount` (a {} has a balance)", method.source),
                    ));
                }
            }
        }
        let reservation_shapes: HashMap<String, ReservationShape> =
            check(&reservations_path, "reservations", &reservations)?;
        for (id, r) in &reservation_shapes {
            if !user_shapes.contains_key(&r.user_id) {
                return Err(TauError::field(
                    &reservations_path,
                    format!("reservations.{id}.user_id"),
                    format!("no user `{}` in {}", r.user_id, users_path.display()),
                ));
            }
        }
        let flight_shapes: HashMap<String, FlightShape> =
            check(&flights_path, "flights", &flights)?;
        for (number, flight) in &flight_shapes {
            for (date, day) in &flight.dates {
                if day.status != "available" {
                    continue;
                }
                let missing = match (&day.available_seats, &day.prices) {
                    (None, _) => Some("available_seats"),
                    (_, None) => Some("prices"),
                    _ => None,
                };
                if let Some(field) = missing {
                    return Err(TauError::field(
                        &flights_path,
                        format!("flights.{number}.dates.{date}"),
                        format!("missing field `{field}` (the flight is available)"),
                    ));
                }
            }
        }
        Ok(Db::from_tables(flights, reservations, users))
    }

    /// A database from its three tables, unchecked (the tools cope with any shape, answering
    /// Python's errors).
    pub fn from_tables(flights: Value, reservations: Value, users: Value) -> Db {
        let mut data = serde_json::Map::new();
        data.insert("flights".into(), flights);
        data.insert("reservations".into(), reservations);
        data.insert("users".into(), users);
        Db {
            data: Value::Object(data),
        }
    }

    /// τ-bench's data hash (`consistent_hash(to_hashable(data))`): equal hashes are equal
    /// databases for the reward.
    pub fn hash(&self) -> String {
        consistent_hash(&self.data)
    }

    /// The whole database as `{"flights", "reservations", "users"}`.
    pub fn as_value(&self) -> &Value {
        &self.data
    }

    pub(crate) fn value_mut(&mut self) -> &mut Value {
        &mut self.data
    }

    fn row(&self, table: &str, id: &str) -> Option<&Value> {
        self.data.get(table)?.get(id)
    }

    /// A user's record.
    pub fn user(&self, id: &str) -> Option<&Value> {
        self.row("users", id)
    }

    /// A reservation's record.
    pub fn reservation(&self, id: &str) -> Option<&Value> {
        self.row("reservations", id)
    }

    /// A flight's record (with its `dates`).
    pub fn flight(&self, number: &str) -> Option<&Value> {
        self.row("flights", number)
    }
}
