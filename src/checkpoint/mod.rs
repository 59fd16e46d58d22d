//! The checkpoint document (`compaction-eval/handoff/1`) that strategies C and D produce and that
//! plug-in compactors may return: statements with kind, origin and verification; operations with
//! status and resume rule; resources with revision and digest; stop conditions, open questions,
//! focus, next steps, derivation; the continuity envelope's governed fields.
//!
//! This module owns the document's types and their rendering for a model. It does not decide what
//! goes into a checkpoint (that is the compactor's job, `strategy::checkpoint`).

pub mod rules;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The format tag of a checkpoint document.
pub const FORMAT: &str = "compaction-eval/handoff/1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    /// Always `compaction-eval/handoff/1`.
    pub format: String,
    pub objective: String,
    /// The continuity envelope's governed fields, carried structurally (seed 000 §2).
    pub envelope: GovernedFields,
    /// Conditions that stop or gate work; a destination checks them first.
    #[serde(default)]
    pub stop_conditions: Vec<String>,
    #[serde(default)]
    pub open_questions: Vec<String>,
    #[serde(default)]
    pub statements: Vec<Statement>,
    #[serde(default)]
    pub operations: Vec<Operation>,
    #[serde(default)]
    pub resources: Vec<ResourceRef>,
    #[serde(default)]
    pub success_criteria: Vec<String>,
    #[serde(default)]
    pub focus: String,
    #[serde(default)]
    pub next_steps: Vec<String>,
    #[serde(default)]
    pub derivation: Derivation,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GovernedFields {
    pub tenant_id: String,
    pub principal_id: String,
    pub authorization_mode: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegated_principal_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegated_scope: Option<String>,
    pub policy_version: String,
    #[serde(default)]
    pub capabilities: std::collections::BTreeMap<String, String>,
    /// First and last source event the checkpoint was derived from.
    pub source_event_range: (String, String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StatementKind {
    Instruction,
    Constraint,
    Decision,
    Observation,
    Hypothesis,
    External,
}

impl StatementKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StatementKind::Instruction => "instruction",
            StatementKind::Constraint => "constraint",
            StatementKind::Decision => "decision",
            StatementKind::Observation => "observation",
            StatementKind::Hypothesis => "hypothesis",
            StatementKind::External => "external",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VerificationState {
    Verified,
    Unverified,
    Stale,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Revalidate {
    BeforeUse,
    BeforeAction,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Verification {
    pub state: VerificationState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revalidate: Option<Revalidate>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Statement {
    pub kind: StatementKind,
    pub text: String,
    /// `user`, `agent`, `tool:NAME`, `external:SOURCE`, `approver:WHO`.
    pub origin: String,
    /// The source event (or resource) the statement comes from.
    #[serde(rename = "ref")]
    pub origin_ref: String,
    pub verification: Verification,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OperationStatus {
    NotStarted,
    Committed,
    Unknown,
}

impl OperationStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            OperationStatus::NotStarted => "not_started",
            OperationStatus::Committed => "committed",
            OperationStatus::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResumeRule {
    /// The outcome is unknown: check through the reconciling read before anything else.
    ReconcileFirst,
    /// It happened: never repeat it.
    DoNotRepeat,
    /// It did not happen: it may be retried with the same idempotency key.
    RetryAllowed,
}

impl ResumeRule {
    pub fn as_str(self) -> &'static str {
        match self {
            ResumeRule::ReconcileFirst => "reconcile_first",
            ResumeRule::DoNotRepeat => "do_not_repeat",
            ResumeRule::RetryAllowed => "retry_allowed",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Operation {
    /// The source event of the call.
    #[serde(rename = "ref")]
    pub origin_ref: String,
    pub tool: String,
    pub effect: String,
    pub status: OperationStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    pub args: serde_json::Map<String, serde_json::Value>,
    pub resume: ResumeRule,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconcile_with: Option<String>,
    /// What the committed write returned (or, for a timed-out write the source run looked up,
    /// what the lookup found), clipped: the ids the world gave it (a journal entry, a booking)
    /// are how later steps refer to it, and nothing else in a checkpoint carries them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub returned: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResourceRef {
    pub key: String,
    pub revision: u64,
    pub digest: String,
    pub observed_at: String,
    #[serde(default)]
    pub external: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// An excerpt (strategy C); `None` when the resource is a reference only (strategy D).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
    pub verification: Verification,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Derivation {
    #[serde(default)]
    pub transformations: Vec<Transformation>,
    #[serde(default)]
    pub omissions: Vec<Omission>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Transformation {
    /// e.g. `condensed_tool_output`, `excerpted_resource`, `referenced_resource`.
    pub kind: String,
    /// Source events or resources it applies to.
    pub from: Vec<String>,
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Omission {
    pub what: String,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recoverable_from: Option<String>,
}

/// Escapes text so it cannot close the delimiters a rendering wraps it in.
pub fn neutralize_delimiters(text: &str) -> String {
    text.replace("</external", "<\\/external")
        .replace("</checkpoint", "<\\/checkpoint")
        .replace("<external", "<\\external")
        .replace("<checkpoint", "<\\checkpoint")
}
