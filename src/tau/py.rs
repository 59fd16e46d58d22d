//! Python's value semantics over JSON values, as far as the airline tools use them: indexing a
//! dict or list (`KeyError`, `TypeError`), `in`, `len`, iteration, `==`, `<`, `+`, `-`, `*`,
//! unary `-` on numbers, each failing with the exception text CPython 3.11 gives.
//!
//! The reference tools are Python functions called with whatever JSON the agent sent, so a
//! wrong type is not refused up front: it fails where Python would fail, with Python's words,
//! and the environment answers `Error: <message>`. Owns: [`PyError`], [`Num`] and these
//! operations. Must not: know about airline tables or print JSON (`pyfmt.rs` does).

use std::cmp::Ordering;

use serde_json::{Number, Value};

use super::pyfmt::{float_repr, repr};

/// An exception a tool raised; its `Display` is Python's `str(exception)` (for a `KeyError`, the
/// `repr` of the key).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PyError {
    #[error("{0}")]
    Key(String),
    #[error("{0}")]
    Type(String),
    #[error("{0}")]
    Value(String),
    #[error("{0}")]
    Index(String),
    #[error("{0}")]
    ZeroDivision(String),
    #[error("{0}")]
    Overflow(String),
    #[error("{0}")]
    Attribute(String),
    #[error("{0}")]
    Syntax(String),
}

pub type PyResult<T> = Result<T, PyError>;

/// Python's type name of a JSON value (`str`, `int`, `float`, `bool`, `NoneType`, `list`,
/// `dict`).
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// A Python number: `int` (arbitrary precision in Python, 128 bits here) or `float`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    /// The number a JSON value is to Python (`True` is `1`); `None` for non-numbers.
    pub fn of(v: &Value) -> Option<Num> {
        match v {
            Value::Bool(b) => Some(Num::Int(*b as i128)),
            Value::Number(n) => Some(match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => Num::Int(i as i128),
                (_, Some(u)) => Num::Int(u as i128),
                _ => Num::Float(n.as_f64().unwrap_or(f64::NAN)),
            }),
            _ => None,
        }
    }

    pub fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }

    /// The JSON value of this number. A non-finite float cannot be stored in JSON (Python would
    /// keep `inf` and print `Infinity`); it is an `OverflowError` here.
    pub fn to_value(self) -> PyResult<Value> {
        match self {
            Num::Int(i) => Ok(match (i64::try_from(i), u64::try_from(i)) {
                (Ok(i), _) => Value::from(i),
                (_, Ok(u)) => Value::from(u),
                _ => return Num::Float(i as f64).to_value(),
            }),
            Num::Float(f) => Number::from_f64(f)
                .map(Value::Number)
                .ok_or_else(|| PyError::Overflow(format!("cannot store {}", float_repr(f)))),
        }
    }

    fn cmp(self, other: Num) -> Option<Ordering> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Some(a.cmp(&b)),
            (Num::Int(a), Num::Float(b)) => int_float_cmp(a, b),
            (Num::Float(a), Num::Int(b)) => int_float_cmp(b, a).map(Ordering::reverse),
            (Num::Float(a), Num::Float(b)) => a.partial_cmp(&b),
        }
    }
}

/// Compares an integer with a float exactly, as Python does (no rounding of the integer).
fn int_float_cmp(i: i128, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    if f.is_infinite() {
        return Some(if f > 0.0 {
            Ordering::Less
        } else {
            Ordering::Greater
        });
    }
    let floor = f.floor();
    if floor.abs() < 1.0e38 {
        let fi = floor as i128;
        return Some(match i.cmp(&fi) {
            Ordering::Equal if f > floor => Ordering::Less,
            o => o,
        });
    }
    (i as f64).partial_cmp(&f)
}

/// `v[key]` for a string key.
pub fn get<'a>(v: &'a Value, key: &str) -> PyResult<&'a Value> {
    match v {
        Value::Object(map) => map
            .get(key)
            .ok_or_else(|| PyError::Key(super::pyfmt::str_repr(key))),
        other => Err(index_error(other, "str")),
    }
}

/// `v[key]` for a string key, for assignment into the result.
pub fn get_mut<'a>(v: &'a mut Value, key: &str) -> PyResult<&'a mut Value> {
    match v {
        Value::Object(map) => map
            .get_mut(key)
            .ok_or_else(|| PyError::Key(super::pyfmt::str_repr(key))),
        other => Err(index_error(other, "str")),
    }
}

/// `container[key]` for any key: a dict looks it up (`KeyError` with the key's repr,
/// `TypeError` for an unhashable key), a list takes an integer index.
pub fn get_by<'a>(container: &'a Value, key: &Value) -> PyResult<&'a Value> {
    match (container, key) {
        (Value::Object(_), Value::Array(_) | Value::Object(_)) => Err(unhashable(key)),
        (Value::Object(map), Value::String(k)) => map.get(k).ok_or_else(|| PyError::Key(repr(key))),
        (Value::Object(_), _) => Err(PyError::Key(repr(key))),
        (Value::Array(items), Value::Number(_) | Value::Bool(_)) => match Num::of(key) {
            Some(Num::Int(i)) => {
                let n = items.len() as i128;
                let at = if i < 0 { i + n } else { i };
                usize::try_from(at)
                    .ok()
                    .and_then(|at| items.get(at))
                    .ok_or_else(|| PyError::Index("list index out of range".into()))
            }
            _ => Err(index_error(container, type_name(key))),
        },
        (other, k) => Err(index_error(other, type_name(k))),
    }
}

/// `container[key]` for any key, for assignment into the result.
pub fn get_by_mut<'a>(container: &'a mut Value, key: &Value) -> PyResult<&'a mut Value> {
    // Checked through the shared path first so that the error texts are one.
    get_by(container, key)?;
    match (container, key) {
        (Value::Object(map), Value::String(k)) => {
            map.get_mut(k).ok_or_else(|| PyError::Key(repr(key)))
        }
        (Value::Array(items), _) => {
            let n = items.len() as i128;
            let i = match Num::of(key) {
                Some(Num::Int(i)) if i < 0 => i + n,
                Some(Num::Int(i)) => i,
                _ => -1,
            };
            usize::try_from(i)
                .ok()
                .and_then(|i| items.get_mut(i))
                .ok_or_else(|| PyError::Index("list index out of range".into()))
        }
        _ => Err(PyError::Key(repr(key))),
    }
}

fn index_error(container: &Value, key_type: &str) -> PyError {
    match container {
        Value::String(_) => {
            PyError::Type(format!("string indices must be integers, not '{key_type}'"))
        }
        Value::Array(_) => PyError::Type(format!(
            "list indices must be integers or slices, not {key_type}"
        )),
        other => PyError::Type(format!(
            "'{}' object is not subscriptable",
            type_name(other)
        )),
    }
}

fn unhashable(key: &Value) -> PyError {
    PyError::Type(format!("unhashable type: '{}'", type_name(key)))
}

/// `key in container`.
pub fn contains(container: &Value, key: &Value) -> PyResult<bool> {
    match (container, key) {
        (Value::Object(_), Value::Array(_) | Value::Object(_)) => Err(unhashable(key)),
        (Value::Object(map), Value::String(k)) => Ok(map.contains_key(k)),
        (Value::Object(_), _) => Ok(false),
        (Value::Array(items), _) => Ok(items.iter().any(|x| eq(x, key))),
        (Value::String(s), Value::String(k)) => Ok(s.contains(k.as_str())),
        (Value::String(_), k) => Err(PyError::Type(format!(
            "'in <string>' requires string as left operand, not {}",
            type_name(k)
        ))),
        (other, _) => Err(PyError::Type(format!(
            "argument of type '{}' is not iterable",
            type_name(other)
        ))),
    }
}

/// `len(v)`.
pub fn len(v: &Value) -> PyResult<i128> {
    match v {
        Value::Array(items) => Ok(items.len() as i128),
        Value::Object(map) => Ok(map.len() as i128),
        Value::String(s) => Ok(s.chars().count() as i128),
        other => Err(PyError::Type(format!(
            "object of type '{}' has no len()",
            type_name(other)
        ))),
    }
}

/// The items `for x in v` visits: a list's elements, a dict's keys, a string's characters.
pub fn items(v: &Value) -> PyResult<Vec<Value>> {
    match v {
        Value::Array(items) => Ok(items.clone()),
        Value::Object(map) => Ok(map.keys().map(|k| Value::String(k.clone())).collect()),
        Value::String(s) => Ok(s.chars().map(|c| Value::String(c.to_string())).collect()),
        other => Err(not_iterable(other)),
    }
}

pub fn not_iterable(v: &Value) -> PyError {
    PyError::Type(format!("'{}' object is not iterable", type_name(v)))
}

/// `a == b`: numbers by value across `int`, `float` and `bool`, containers element by element;
/// values of other different types are unequal.
pub fn eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| eq(p, q)))
        }
        _ => match (Num::of(a), Num::of(b)) {
            (Some(x), Some(y)) => x.cmp(y) == Some(Ordering::Equal),
            _ => false,
        },
    }
}

/// Whether `v == text`.
pub fn is_str(v: &Value, text: &str) -> bool {
    v.as_str() == Some(text)
}

/// `a < b` (`op` is `<`) or `a > b` (`op` is `>`): numbers, strings (by code point) and lists
/// (element-wise) compare; anything else is a `TypeError`.
pub fn compare(a: &Value, b: &Value, op: &str) -> PyResult<bool> {
    let want = if op == "<" {
        Ordering::Less
    } else {
        Ordering::Greater
    };
    Ok(order(a, b, op)? == Some(want))
}

fn order(a: &Value, b: &Value, op: &str) -> PyResult<Option<Ordering>> {
    match (a, b) {
        (Value::String(x), Value::String(y)) => Ok(Some(x.as_str().cmp(y.as_str()))),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                if !eq(p, q) {
                    return order(p, q, op);
                }
            }
            Ok(Some(x.len().cmp(&y.len())))
        }
        _ => match (Num::of(a), Num::of(b)) {
            (Some(x), Some(y)) => Ok(x.cmp(y)),
            _ => Err(PyError::Type(format!(
                "'{op}' not supported between instances of '{}' and '{}'",
                type_name(a),
                type_name(b)
            ))),
        },
    }
}

/// The result of `+`, `-` or `*` on two numbers.
fn arith(a: Num, b: Num, op: char) -> Num {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => {
            let r = match op {
                '+' => x.checked_add(y),
                '-' => x.checked_sub(y),
                _ => x.checked_mul(y),
            };
            r.map(Num::Int)
                .unwrap_or_else(|| arith(Num::Float(x as f64), Num::Float(y as f64), op))
        }
        _ => {
            let (x, y) = (a.as_f64(), b.as_f64());
            Num::Float(match op {
                '+' => x + y,
                '-' => x - y,
                _ => x * y,
            })
        }
    }
}

fn operand_error(a: &Value, b: &Value, op: &str) -> PyError {
    PyError::Type(format!(
        "unsupported operand type(s) for {op}: '{}' and '{}'",
        type_name(a),
        type_name(b)
    ))
}

/// `a + b` on values (`op` is the operator as written, `+` or `+=`, for the error text).
pub fn add(a: &Value, b: &Value, op: &str) -> PyResult<Value> {
    match (Num::of(a), Num::of(b)) {
        (Some(x), Some(y)) => arith(x, y, '+').to_value(),
        _ => match (a, b) {
            (Value::String(x), Value::String(y)) => Ok(Value::String(format!("{x}{y}"))),
            (Value::Array(x), Value::Array(y)) => {
                Ok(Value::Array(x.iter().chain(y).cloned().collect()))
            }
            _ => Err(operand_error(a, b, op)),
        },
    }
}

/// `a - b` on values (`op` is `-` or `-=`).
pub fn sub(a: &Value, b: &Value, op: &str) -> PyResult<Value> {
    match (Num::of(a), Num::of(b)) {
        (Some(x), Some(y)) => arith(x, y, '-').to_value(),
        _ => Err(operand_error(a, b, op)),
    }
}

/// `a * b` on values: numbers multiply; an integer and a string or list repeat it, as Python
/// does (so `50 * "2"` is a string and fails only where it is added to a number).
pub fn mul(a: &Value, b: &Value) -> PyResult<Value> {
    match (Num::of(a), Num::of(b)) {
        (Some(x), Some(y)) => arith(x, y, '*').to_value(),
        (Some(Num::Int(n)), None) | (None, Some(Num::Int(n))) => {
            let seq = if Num::of(a).is_some() { b } else { a };
            let times = usize::try_from(n.clamp(0, 1 << 20)).unwrap_or(0);
            match seq {
                Value::String(s) => Ok(Value::String(s.repeat(times))),
                Value::Array(items) => Ok(Value::Array(
                    (0..times).flat_map(|_| items.iter().cloned()).collect(),
                )),
                _ => Err(operand_error(a, b, "*")),
            }
        }
        _ => Err(operand_error(a, b, "*")),
    }
}

/// `-v`.
pub fn neg(v: &Value) -> PyResult<Value> {
    match Num::of(v) {
        Some(Num::Int(i)) => match i.checked_neg() {
            Some(n) => Num::Int(n).to_value(),
            None => Num::Float(-(i as f64)).to_value(),
        },
        Some(Num::Float(f)) => Num::Float(-f).to_value(),
        None => Err(PyError::Type(format!(
            "bad operand type for unary -: '{}'",
            type_name(v)
        ))),
    }
}

/// The value of a Python integer (`Num::Int`) as JSON.
pub fn int(i: i128) -> Value {
    Num::Int(i).to_value().unwrap_or(Value::Null)
}

/// `max(0, v)`: `v` when `v > 0`, else the integer `0`.
pub fn max_zero(v: &Value) -> PyResult<Value> {
    if compare(v, &int(0), ">")? {
        Ok(v.clone())
    } else {
        Ok(int(0))
    }
}
