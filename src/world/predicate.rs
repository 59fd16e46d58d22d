//! Success predicates and `where` matchers over world state.

use serde_json::Value;

use super::World;
use crate::spec::{FinishStatus, Object, Predicate};

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

/// Why a predicate does not hold: what it expects and what the world shows.
pub(super) fn explain(world: &World, p: &Predicate, finished: Option<FinishStatus>) -> String {
    let empty = Object::new();
    let matchers = p.matching.as_ref().unwrap_or(&empty);
    let expected = || {
        let mut parts = Vec::new();
        if let Some(c) = p.count {
            parts.push(format!("exactly {c}"));
        }
        if let Some(c) = p.count_at_least {
            parts.push(format!("at least {c}"));
        }
        if let Some(c) = p.count_at_most {
            parts.push(format!("at most {c}"));
        }
        parts.join(" and ")
    };
    let where_ = serde_json::to_string(matchers).unwrap_or_default();
    if let Some(c) = &p.collection {
        let n = world
            .records(c)
            .iter()
            .filter(|r| matches_where(r, matchers))
            .count();
        return format!(
            "expected {} record(s) of `{c}` where {where_}, observed {n}",
            expected()
        );
    }
    if p.outbox.is_some() {
        let n = world
            .outbox()
            .iter()
            .filter(|r| matches_where(r, matchers))
            .count();
        return format!(
            "expected {} outbox message(s) where {where_}, observed {n}",
            expected()
        );
    }
    if let Some(key) = &p.resource {
        let Some(r) = world.resource(key) else {
            return format!("expected resource `{key}`, which does not exist");
        };
        let missing: Vec<&str> = p
            .contains
            .iter()
            .filter(|s| !r.text.contains(s.as_str()))
            .map(String::as_str)
            .collect();
        let present: Vec<&str> = p
            .not_contains
            .iter()
            .filter(|s| r.text.contains(s.as_str()))
            .map(String::as_str)
            .collect();
        return format!(
            "expected `{key}` (revision {}) to contain {:?} and not {:?}; it lacks {missing:?} and contains {present:?}",
            r.revision, p.contains, p.not_contains
        );
    }
    if let Some(status) = p.finished {
        return format!(
            "expected the continuation to finish `{}`, observed {}",
            status.as_str(),
            finished
                .map(|f| format!("`{}`", f.as_str()))
                .unwrap_or_else(|| "no finish".into())
        );
    }
    "the predicate names nothing to check".into()
}
