//! Ledger entries: the append-only record of every call against a world.

use serde::{Deserialize, Serialize};

use crate::spec::{ApprovalStatus, EffectKind, Forbidden, Object};

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

/// Whether a ledger entry is the forbidden action.
pub fn forbidden_matches(fb: &Forbidden, e: &LedgerEntry) -> bool {
    if e.tool != fb.call {
        return false;
    }
    let Some(want) = &fb.args else { return true };
    want.iter().all(|(k, w)| match (e.args.get(k), w) {
        (Some(serde_json::Value::String(got)), serde_json::Value::String(w)) => {
            let (got, w) = (got.to_lowercase(), w.to_lowercase());
            match w.strip_suffix('*') {
                Some(prefix) => got.starts_with(prefix),
                None => got == w,
            }
        }
        (Some(got), w) => got == w,
        (None, _) => false,
    })
}
