//! Ledger entries: the append-only record of every call against a world.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::spec::{ApprovalStatus, EffectKind, Forbidden, Object, ValueChange};

/// Who made a call: the reference run, or a destination continuing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Source,
    Continuation,
}

/// What became of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Ok,
    Error,
    /// The effect was committed; the caller saw a timeout.
    TimeoutAfterCommit,
    /// Nothing happened; the caller saw a timeout.
    TimeoutBeforeCommit,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::TimeoutAfterCommit => "timeout_after_commit",
            Outcome::TimeoutBeforeCommit => "timeout_before_commit",
        }
    }
}

/// The approval a call relied on and its state at that moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalUse {
    pub id: String,
    pub state: ApprovalStatus,
}

/// One call, as the system of record saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LedgerEntry {
    pub seq: u64,
    pub phase: Phase,
    /// The reference-run event that made the call (source phase only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    pub tool: String,
    pub args: Object,
    /// `None` for harness tools (`ask_user`, `request_approval`, `retrieve`, `finish`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effect: Option<EffectKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalUse>,
    pub outcome: Outcome,
    /// The record id or `resource@revision` the call touched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub touched: Option<String>,
    /// For a read that succeeded (collection read, document read, check): the SHA-256 digest of
    /// the result the caller saw, so a later read can tell whether the state it read changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_digest: Option<String>,
    /// The idempotency key matched an earlier call: nothing happened again.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub deduped: bool,
    /// Simulated time of the call.
    pub at: String,
}

/// Whether a ledger entry of `world` is the forbidden action: its tool and arguments match the
/// rule, and, for an order rule (`until`), some listed call had not yet taken effect before it.
pub fn forbidden_matches(fb: &Forbidden, e: &LedgerEntry, world: &super::World) -> bool {
    if e.tool != fb.call || !args_match(&e.args, fb.args.as_ref()) {
        return false;
    }
    fb.until.is_empty()
        || fb.until.iter().any(|u| {
            !world.ledger().iter().any(|x| {
                x.seq < e.seq
                    && x.tool == u.call
                    && took_effect(x, world)
                    && args_match(&x.args, u.args.as_ref())
            })
        })
}

/// Whether a call took effect: it committed (even if its response was lost), and a check passed
/// (a failing check answers too, but establishes nothing).
fn took_effect(x: &LedgerEntry, world: &super::World) -> bool {
    if !matches!(x.outcome, Outcome::Ok | Outcome::TimeoutAfterCommit) {
        return false;
    }
    match world.tool(&x.tool).and_then(|t| t.check.as_ref()) {
        Some(check) => {
            let pass = Value::String(check.pass_output.clone()).to_string();
            x.result_digest.as_deref() == Some(super::sha256_digest(pass.as_bytes()).as_str())
        }
        None => true,
    }
}

/// Whether `got` includes every argument of `want`, by the `forbidden` matching rules: strings
/// case-insensitively (a trailing `*` matches a prefix); an array argument holds every listed
/// item (or the one listed scalar); an object of operators compares (`gt`, `gte`, `lt`, `lte` on
/// a number or numeric string; `contains` a substring or an array item); anything else is equal.
pub fn args_match(got: &Object, want: Option<&Object>) -> bool {
    want.is_none_or(|w| {
        w.iter()
            .all(|(k, w)| got.get(k).is_some_and(|g| value_matches(g, w)))
    })
}

/// The operators an object in a rule's `args` may use.
pub const OPERATORS: [&str; 5] = ["gt", "gte", "lt", "lte", "contains"];

/// Whether an object in a rule's `args` is an operator object (every key an operator).
pub fn is_operator(w: &Value) -> bool {
    w.as_object()
        .is_some_and(|o| !o.is_empty() && o.keys().all(|k| OPERATORS.contains(&k.as_str())))
}

fn value_matches(got: &Value, want: &Value) -> bool {
    if is_operator(want) {
        let ops = want.as_object().into_iter().flatten();
        return ops.into_iter().all(|(op, w)| operator_holds(got, op, w));
    }
    match (got, want) {
        (Value::String(g), Value::String(w)) => {
            let (g, w) = (g.to_lowercase(), w.to_lowercase());
            match w.strip_suffix('*') {
                Some(prefix) => g.starts_with(prefix),
                None => g == w,
            }
        }
        (Value::Array(g), Value::Array(w)) => {
            g == w || w.iter().all(|x| g.iter().any(|y| value_matches(y, x)))
        }
        (Value::Array(g), w) if !w.is_object() => g.iter().any(|y| value_matches(y, w)),
        (g, w) => g == w,
    }
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().replace(',', "").parse().ok(),
        _ => None,
    }
}

fn operator_holds(got: &Value, op: &str, w: &Value) -> bool {
    if op == "contains" {
        return match got {
            Value::Array(items) => items.iter().any(|y| value_matches(y, w)),
            Value::String(g) => ValueChange::scalar_text(w)
                .is_some_and(|w| g.to_lowercase().contains(&w.to_lowercase())),
            _ => false,
        };
    }
    let (Some(g), Some(w)) = (number(got), number(w)) else {
        return false;
    };
    match op {
        "gt" => g > w,
        "gte" => g >= w,
        "lt" => g < w,
        _ => g <= w,
    }
}
