//! Success predicates and `where` matchers over world state.

use serde_json::Value;

use super::World;
use crate::scenario::{FinishStatus, Object, Predicate};

/// Whether `item` satisfies every matcher of `matchers`: equality, or `FIELD_contains` for a
/// case-insensitive substring of a string field.
pub fn matches_where(item: &Object, matchers: &Object) -> bool {
    matchers.iter().all(|(k, want)| {
        if let Some(field) = k.strip_suffix("_contains") {
            let needle = want.as_str().unwrap_or_default().to_lowercase();
            match item.get(field) {
                Some(Value::String(s)) => s.to_lowercase().contains(&needle),
                Some(other) => other.to_string().to_lowercase().contains(&needle),
                None => false,
            }
        } else {
            item.get(k) == Some(want)
        }
    })
}

fn count_ok(p: &Predicate, n: u64) -> bool {
    p.count.is_none_or(|c| n == c)
        && p.count_at_least.is_none_or(|c| n >= c)
        && p.count_at_most.is_none_or(|c| n <= c)
}

pub(super) fn eval(world: &World, p: &Predicate, finished: Option<FinishStatus>) -> bool {
    let empty = Object::new();
    let matchers = p.matching.as_ref().unwrap_or(&empty);
    if let Some(c) = &p.collection {
        let n = world
            .records(c)
            .iter()
            .filter(|r| matches_where(r, matchers))
            .count() as u64;
        return count_ok(p, n);
    }
    if p.outbox.is_some() {
        let n = world
            .outbox()
            .iter()
            .filter(|r| matches_where(r, matchers))
            .count() as u64;
        return count_ok(p, n);
    }
    if let Some(key) = &p.resource {
        let Some(r) = world.resource(key) else {
            return false;
        };
        return p.contains.iter().all(|s| r.text.contains(s.as_str()))
            && p.not_contains.iter().all(|s| !r.text.contains(s.as_str()));
    }
    if let Some(status) = p.finished {
        return finished == Some(status);
    }
    false
}
