//! The vocabulary every layer shares: the JSON object of tool arguments and records, the status
//! of an approval, and how a continuation ends.
//!
//! Owns: [`Object`], [`ApprovalStatus`], [`FinishStatus`] (with their serde and JSON Schema forms,
//! which the scenario format, the world, the records and the destinations all speak). A leaf: it
//! imports nothing of the crate. Must not: hold a type only one module uses, or any behaviour
//! beyond naming a value.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A JSON object: tool arguments, records, matchers.
pub type Object = Map<String, Value>;

/// Status of an approval in the approval system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    Granted,
    Pending,
    Expired,
    Revoked,
    Denied,
}

impl ApprovalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Granted => "granted",
            ApprovalStatus::Pending => "pending",
            ApprovalStatus::Expired => "expired",
            ApprovalStatus::Revoked => "revoked",
            ApprovalStatus::Denied => "denied",
        }
    }
}

/// How a continuation ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FinishStatus {
    /// The task is done.
    Completed,
    /// The agent stopped on purpose (a stop condition, a missing approval, an unreconcilable state).
    Blocked,
    /// The agent gave up.
    Failed,
}

impl FinishStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            FinishStatus::Completed => "completed",
            FinishStatus::Blocked => "blocked",
            FinishStatus::Failed => "failed",
        }
    }
}
