//! The seed's §5 trace events: `context_compaction`, `context_rehydration`, `continuity_validation_failed`.
//!
//! Events carry identifiers, versions, digests and reason codes only. The summary text, prompts and the
//! constraint texts behind `exact_constraint_refs` never enter an event; identifiers echoed from a possibly
//! hostile document are cut to a bounded length and stripped of control characters so that an event line
//! cannot smuggle a prompt or forge a second line.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::codes::{Decision, ReasonCode};
use super::types::{ContinuityEnvelope, CurrentState, SourceEventRange};

/// The classes of structured state an envelope preserves without summarization (the rows of seed §2).
pub const PRESERVED_FIELD_CLASSES: [&str; 7] = [
    "identity",
    "contract_versions",
    "approval_binding",
    "side_effect_state",
    "execution_boundary",
    "constraints_and_obligations",
    "provenance",
];

/// Longest identifier echoed into an event.
const MAX_ECHO_CHARS: usize = 96;

/// The `validation_result` of a rehydration: the only way to reach rehydration is to pass validation.
pub const VALIDATION_PASSED: &str = "passed";

/// Control versions reloaded from the systems of record at rehydration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VersionsReloaded {
    /// Policy version in force.
    pub policy_version: String,
    /// Capability of the pending action.
    pub capability_name: String,
    /// Its version.
    pub capability_version: String,
}

/// One continuity trace event, serialized with an `event` tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum TraceEvent {
    /// The envelope was recorded and the summary bound to it (emitted by whoever builds the envelope).
    ContextCompaction {
        /// The envelope recorded.
        envelope_id: String,
        /// Events the summary covers.
        source_event_range: SourceEventRange,
        /// Digest of the derived summary.
        summary_digest: String,
        /// The envelope's `reset_reason`.
        trigger: String,
        /// Classes of state kept structured ([`PRESERVED_FIELD_CLASSES`]).
        preserved_field_classes: Vec<String>,
    },
    /// Validation passed and the model's context view was rebuilt from the envelope.
    ContextRehydration {
        /// Same id as the compaction event's: links pre-compaction and post-rehydration evidence.
        envelope_id: String,
        /// Execution boundary resumed from.
        checkpoint_ref: String,
        /// The compaction event's range, repeated so one event proves which history was rehydrated.
        source_event_range: SourceEventRange,
        /// The compaction event's summary digest, which the presented summary matched.
        summary_digest: String,
        /// Versions reloaded from the systems of record.
        versions_reloaded: VersionsReloaded,
        /// Always [`VALIDATION_PASSED`].
        validation_result: String,
        /// Obligation references still open, kept visible in the rebuilt view.
        pending_obligations: Vec<String>,
        /// Always true: rehydration never authorizes the next action.
        requires_reauthorization: bool,
    },
    /// Continuity stopped: validation failed, or (status `blocked_on_reconciliation`) an unknown side effect
    /// must be reconciled first.
    ContinuityValidationFailed {
        /// The envelope that was presented.
        envelope_id: String,
        /// Stable reason code.
        reason_code: ReasonCode,
        /// The decision: `continuity_validation_failed` or `blocked_on_reconciliation`.
        status: Decision,
        /// Operator-facing explanation built from fixed text, field names and bounded identifiers.
        detail: String,
    },
}

impl TraceEvent {
    /// The `event` tag (`context_compaction`, …).
    pub fn event_type(&self) -> &'static str {
        match self {
            Self::ContextCompaction { .. } => "context_compaction",
            Self::ContextRehydration { .. } => "context_rehydration",
            Self::ContinuityValidationFailed { .. } => "continuity_validation_failed",
        }
    }

    /// The envelope the event belongs to.
    pub fn envelope_id(&self) -> &str {
        match self {
            Self::ContextCompaction { envelope_id, .. }
            | Self::ContextRehydration { envelope_id, .. }
            | Self::ContinuityValidationFailed { envelope_id, .. } => envelope_id,
        }
    }

    /// One human-readable line: the event type, then `key=value` for each field in declaration order.
    /// Strings without spaces are printed bare, other values as compact JSON.
    pub fn to_line(&self) -> String {
        let mut line = self.event_type().to_owned();
        // Serializing a derived enum of strings, bools and string lists into a Value cannot fail.
        if let Ok(Value::Object(fields)) = serde_json::to_value(self) {
            for (key, value) in fields.iter().filter(|(key, _)| *key != "event") {
                line.push(' ');
                line.push_str(key);
                line.push('=');
                match value {
                    Value::String(text)
                        if !text.is_empty() && !text.contains(char::is_whitespace) =>
                    {
                        line.push_str(text);
                    }
                    other => line.push_str(&other.to_string()),
                }
            }
        }
        line
    }
}

/// `value` cut to [`MAX_ECHO_CHARS`] characters, control characters replaced, for echoing into an event.
pub(crate) fn bounded(value: &str) -> String {
    let mut echoed: String = value
        .chars()
        .take(MAX_ECHO_CHARS)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if value.chars().count() > MAX_ECHO_CHARS {
        echoed.push('…');
    }
    echoed
}

/// The `context_compaction` event for a freshly built envelope (summary already bound).
pub fn compaction_event(envelope: &ContinuityEnvelope) -> TraceEvent {
    TraceEvent::ContextCompaction {
        envelope_id: bounded(&envelope.envelope_id),
        source_event_range: SourceEventRange {
            first: bounded(&envelope.source_event_range.first),
            last: bounded(&envelope.source_event_range.last),
        },
        summary_digest: bounded(&envelope.summary_sha256),
        trigger: bounded(&envelope.reset_reason),
        preserved_field_classes: PRESERVED_FIELD_CLASSES.map(str::to_owned).to_vec(),
    }
}

pub(crate) fn rehydration_event(
    envelope: &ContinuityEnvelope,
    current: &CurrentState,
) -> TraceEvent {
    TraceEvent::ContextRehydration {
        envelope_id: bounded(&envelope.envelope_id),
        checkpoint_ref: bounded(&current.checkpoint_ref),
        source_event_range: SourceEventRange {
            first: bounded(&envelope.source_event_range.first),
            last: bounded(&envelope.source_event_range.last),
        },
        summary_digest: bounded(&envelope.summary_sha256),
        versions_reloaded: VersionsReloaded {
            policy_version: bounded(&current.policy_version),
            capability_name: bounded(&current.capability_name),
            capability_version: bounded(&current.capability_version),
        },
        validation_result: VALIDATION_PASSED.to_owned(),
        pending_obligations: envelope
            .pending_obligations
            .iter()
            .map(|o| bounded(o))
            .collect(),
        requires_reauthorization: true,
    }
}

pub(crate) fn stop_event(
    envelope: &ContinuityEnvelope,
    reason_code: ReasonCode,
    status: Decision,
    detail: String,
) -> TraceEvent {
    TraceEvent::ContinuityValidationFailed {
        envelope_id: bounded(&envelope.envelope_id),
        reason_code,
        status,
        detail,
    }
}
