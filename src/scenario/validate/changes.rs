//! Whether a record perturbation's `changes` can take effect at restore: the record and field
//! exist in the world at the interrupt point, `from` is the field's value there, `to` differs
//! from it and is of the kind the field holds. Reads the replayed world; applies nothing.

use serde_json::Value;

use super::Checker;
use crate::spec::*;
use crate::world::World;

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Checks every record change of interrupt point `i` against `world`, the world at the point
/// before its perturbations.
pub(super) fn check_record_changes(c: &mut Checker, i: usize, it: &Interrupt, world: &World) {
    for (j, pt) in it.perturb.iter().enumerate() {
        if let (Some(col), Some(rec)) = (&pt.collection, &pt.add) {
            let id = rec.get("id").and_then(Value::as_str).unwrap_or_default();
            if world.record_field(col, id, "id").is_ok() {
                c.err(
                    format!("interrupts[{i}].perturb[{j}].add.id"),
                    format!(
                        "`{col}` already has a record `{id}` at `{}`: an added record needs a new id",
                        it.point
                    ),
                );
            }
        }
        let (Some(col), Some(id)) = (&pt.collection, &pt.record) else {
            continue;
        };
        for (k, ch) in pt.changes.iter().enumerate() {
            let cp = format!("interrupts[{i}].perturb[{j}].changes[{k}]");
            let Some(field) = &ch.field else { continue };
            let current = match world.record_field(col, id, field) {
                Ok(v) => v,
                Err(e) => {
                    c.err(
                        format!("{cp}.field"),
                        format!(
                            "{e} at `{}`: the change cannot take effect (a change sets an existing field; it adds none)",
                            it.point
                        ),
                    );
                    continue;
                }
            };
            if *current == ch.to {
                c.err(
                    format!("{cp}.to"),
                    format!(
                        "`{}` is already the value of `{field}` at `{}`: the change changes nothing",
                        ch.to, it.point
                    ),
                );
            } else if !current.is_null() && kind(current) != kind(&ch.to) {
                c.err(
                    format!("{cp}.to"),
                    format!(
                        "`{field}` holds a {} at `{}`; `{}` is a {}",
                        kind(current),
                        it.point,
                        ch.to,
                        kind(&ch.to)
                    ),
                );
            }
            if *current != ch.from {
                c.err(
                    format!("{cp}.from"),
                    format!(
                        "`{}` is not the value of `{field}` at `{}` (it is `{current}`)",
                        ch.from, it.point
                    ),
                );
            }
        }
    }
}
