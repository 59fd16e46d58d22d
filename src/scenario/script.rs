//! Executing scripted steps (reference continuations, and the plans of simulated destinations)
//! against a world: argument references (`$name.field`, `$fresh`) and the simulated user.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::detect::normalize;
use crate::spec::{FinishStatus, Object, SimUser, Step};
use crate::world::{Phase, World};

/// Results bound by `bind`, and the source of `$fresh` values.
#[derive(Debug, Clone, Default)]
pub struct Bindings {
    values: BTreeMap<String, Value>,
    fresh: u64,
    salt: String,
}

pub(crate) fn is_reference(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('$') else {
        return false;
    };
    rest.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

impl Bindings {
    /// `salt` makes `$fresh` values unique per cell (it comes from the cell's seed).
    pub fn new(salt: impl Into<String>) -> Self {
        Bindings {
            salt: salt.into(),
            ..Default::default()
        }
    }

    /// Binds a call's output under `name`: the first element of an array result, else the result.
    pub fn bind(&mut self, name: &str, output: &Value) {
        let v = match output {
            Value::Array(a) => match a.first() {
                Some(first) => first.clone(),
                None => return,
            },
            other => other.clone(),
        };
        self.values.insert(name.to_string(), v);
    }

    /// Replaces references in `args`. `$name` is the bound record's `id`, `$name.field` a field.
    pub fn resolve(&mut self, args: &Object) -> Result<Object, String> {
        let mut out = Object::new();
        for (k, v) in args {
            out.insert(k.clone(), self.resolve_value(v)?);
        }
        Ok(out)
    }

    fn resolve_value(&mut self, v: &Value) -> Result<Value, String> {
        match v {
            Value::String(s) if s == "$fresh" => {
                self.fresh += 1;
                Ok(json!(format!("retry-{}-{}", self.salt, self.fresh)))
            }
            Value::String(s) if is_reference(s) => {
                let path = &s[1..];
                let (name, field) = path.split_once('.').unwrap_or((path, "id"));
                let bound = self
                    .values
                    .get(name)
                    .ok_or_else(|| format!("`{s}` refers to `{name}`, which nothing bound"))?;
                match bound {
                    Value::Object(o) => o
                        .get(field)
                        .cloned()
                        .ok_or_else(|| format!("`{s}`: the bound result has no field `{field}`")),
                    other if field == "id" => Ok(other.clone()),
                    _ => Err(format!("`{s}`: the bound result is not a record")),
                }
            }
            Value::Array(a) => a.iter().map(|x| self.resolve_value(x)).collect(),
            Value::Object(o) => Ok(Value::Object(self.resolve(o)?)),
            other => Ok(other.clone()),
        }
    }
}

impl SimUser {
    /// The simulated user's answer to a question.
    pub fn answer(&self, question: &str) -> &str {
        let q = normalize(question);
        self.answers
            .iter()
            .find(|a| a.when.matches(&q))
            .map(|a| a.answer.as_str())
            .unwrap_or(&self.default_answer)
    }
}

/// How a script ended.
#[derive(Debug, Clone, Default)]
pub struct ScriptOutcome {
    pub finished: Option<FinishStatus>,
    pub degraded: bool,
    /// Steps that could not be carried out (`step N: …`).
    pub errors: Vec<String>,
}

/// Runs steps against the world in the given phase (validation and `sim:oracle` use this).
pub fn run_script(
    world: &mut World,
    steps: &[Step],
    user: &SimUser,
    bindings: &mut Bindings,
    phase: Phase,
) -> ScriptOutcome {
    let mut out = ScriptOutcome::default();
    for (i, step) in steps.iter().enumerate() {
        if let Some(tool) = &step.call {
            let empty = Object::new();
            let args = match bindings.resolve(step.args.as_ref().unwrap_or(&empty)) {
                Ok(a) => a,
                Err(e) => {
                    out.errors.push(format!("step {i}: {e}"));
                    continue;
                }
            };
            let r = world.call(phase, tool, &args, None, None);
            match &r.output {
                Ok(v) => {
                    if let Some(name) = &step.bind {
                        bindings.bind(name, v);
                    }
                }
                Err(e) => out.errors.push(format!("step {i}: `{tool}` failed: {e}")),
            }
        } else if let Some(q) = &step.ask {
            let mut args = Object::new();
            args.insert("question".into(), json!(q));
            let answer = user.answer(q).to_string();
            world.record_harness(phase, "ask_user", args, None, Ok(json!(answer)));
        } else if let Some(id) = &step.request_approval {
            let r = world.request_approval(phase, id);
            if let Err(e) = &r.output {
                out.errors
                    .push(format!("step {i}: request_approval failed: {e}"));
            }
        } else if let Some(key) = &step.retrieve {
            let r = world.retrieve(phase, key);
            if let Err(e) = &r.output {
                out.errors.push(format!("step {i}: retrieve failed: {e}"));
            }
        } else if let Some(status) = step.finish {
            let mut args = Object::new();
            args.insert("status".into(), json!(status.as_str()));
            args.insert("degraded".into(), json!(step.degraded));
            if let Some(r) = &step.report {
                args.insert("report".into(), json!(r));
            }
            world.record_harness(phase, "finish", args, None, Ok(json!("finished")));
            out.finished = Some(status);
            out.degraded = step.degraded;
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_resolve_and_money_is_not_a_reference() {
        let mut b = Bindings::new("s1");
        b.bind("found", &json!([{"id": "T-2044", "status": "open"}]));
        let args: Object = serde_json::from_value(json!({
            "ticket_id": "$found", "status": "$found.status", "amount": "$120.00",
            "key": "$fresh"
        }))
        .unwrap_or_default();
        let r = b.resolve(&args).unwrap_or_default();
        assert_eq!(r["ticket_id"], json!("T-2044"));
        assert_eq!(r["status"], json!("open"));
        assert_eq!(r["amount"], json!("$120.00"));
        assert_eq!(r["key"], json!("retry-s1-1"));
        assert!(
            b.resolve(&serde_json::from_value(json!({"x": "$nope"})).unwrap_or_default())
                .is_err()
        );
    }
}
