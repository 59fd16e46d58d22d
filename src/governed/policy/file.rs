//! `inspect-context FILE`: reading a policy file, with JSON syntax errors placed by line and
//! column and duplicate object keys refused, then validating it. It adds no rule of its own: what
//! a valid policy is, is `rules`'.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};
use thiserror::Error;

use super::{ContextPolicy, PolicyError, validate};

/// Why `inspect-context FILE` could not produce a valid policy.
#[derive(Debug, Error)]
pub enum InspectError {
    #[error("cannot read policy file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}:{column}: not valid JSON: {message}", path.display())]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{}: {}", path.display(), list(errors))]
    Invalid {
        path: PathBuf,
        errors: Vec<PolicyError>,
    },
}

fn list(errors: &[PolicyError]) -> String {
    let mut out = format!(
        "the policy is invalid ({} error{}):",
        errors.len(),
        if errors.len() == 1 { "" } else { "s" }
    );
    for e in errors {
        out.push_str("\n  ");
        out.push_str(&e.to_string());
    }
    out
}

/// `inspect-context FILE`: read, parse and validate a policy file. Errors name the file (and, for JSON
/// syntax, the line and column).
pub fn inspect_file(path: &Path) -> Result<ContextPolicy, InspectError> {
    let bytes = std::fs::read(path).map_err(|source| InspectError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let value: Value = serde_json::from_slice::<Strict>(&bytes)
        .map(|s| s.0)
        .map_err(|e| {
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            let text = e.to_string();
            InspectError::Syntax {
                path: path.to_path_buf(),
                line: e.line(),
                column: e.column(),
                message: text.strip_suffix(&suffix).unwrap_or(&text).to_string(),
            }
        })?;
    validate(&value).map_err(|errors| InspectError::Invalid {
        path: path.to_path_buf(),
        errors,
    })
}

/// A JSON value read with duplicate object keys refused: in a policy file, `{"maxBytes": 8192,
/// "maxBytes": 32768}` would otherwise keep only the last one, and a reader of the file may see the first.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Strict, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> serde::de::Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(serde::de::Error::custom(format!(
                    "duplicate field `{key}` (a policy names each field once)"
                )));
            }
            let Strict(v) = map.next_value()?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}
