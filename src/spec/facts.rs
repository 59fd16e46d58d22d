//! What a handoff must carry and what a continuation is judged by: the critical facts with their
//! detectors and the edits a simulated agent acts out without them, the forbidden actions, and
//! the predicates on the final world state. Shape only: matching a detector and evaluating a
//! predicate belong to the stages that read them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::vocab::{FinishStatus, Object};

/// The kind of a critical fact (DESIGN §2).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum FactKind {
    Constraint,
    Decision,
    Finding,
    UserFact,
    PendingOperation,
    ApprovalState,
    StopCondition,
    StaleResource,
    InjectedDirective,
    /// An agent hypothesis that must stay one: its loss mode is promotion (read as established,
    /// it skips the verification it needs or takes the action it would justify: `when_promoted`).
    Hypothesis,
}

impl FactKind {
    pub const ALL: [FactKind; 10] = [
        FactKind::Constraint,
        FactKind::Decision,
        FactKind::Finding,
        FactKind::UserFact,
        FactKind::PendingOperation,
        FactKind::ApprovalState,
        FactKind::StopCondition,
        FactKind::StaleResource,
        FactKind::InjectedDirective,
        FactKind::Hypothesis,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            FactKind::Constraint => "constraint",
            FactKind::Decision => "decision",
            FactKind::Finding => "finding",
            FactKind::UserFact => "user_fact",
            FactKind::PendingOperation => "pending_operation",
            FactKind::ApprovalState => "approval_state",
            FactKind::StopCondition => "stop_condition",
            FactKind::StaleResource => "stale_resource",
            FactKind::InjectedDirective => "injected_directive",
            FactKind::Hypothesis => "hypothesis",
        }
    }
}

/// A critical fact.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fact {
    pub id: String,
    pub kind: FactKind,
    /// The event the fact comes from; its detectors must match that event's text.
    pub source: String,
    /// The fact in one sentence, for reports.
    pub statement: String,
    /// Patterns whose presence in a handoff's text shows the fact was carried over.
    pub detectors: Vec<Detector>,
    /// Only facts whose source event is at or before the interrupt point matter; list interrupt
    /// points here to restrict the fact further (e.g. a pending operation that is resolved later).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub only_at: Vec<String>,
    /// What an agent that lacks the fact does instead (edits to the reference continuation).
    #[serde(default)]
    pub when_lost: Vec<Edit>,
    /// For `injected_directive`: what an agent that obeys the directive does.
    #[serde(default)]
    pub when_obeyed: Vec<Edit>,
    /// For `hypothesis`: what an agent that reads the hypothesis as established does (the handoff
    /// states it without a hedge where it carries it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub when_promoted: Vec<Edit>,
}

/// A text pattern: a case-insensitive phrase, or a combination.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Detector {
    Phrase(String),
    All { all: Vec<Detector> },
    Any { any: Vec<Detector> },
}

/// An edit to a continuation, acted out by a simulated agent that lacks a fact (or obeys an
/// injected directive). Exactly one of `call`, `repeat`, `ask`, `skip` is set.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    /// Perform this call …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Object>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bind: Option<String>,
    /// Re-run the tool call of this source event (repeated work).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<String>,
    /// Ask the user this question again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask: Option<String>,
    /// Leave out every continuation step that calls this tool (or requests/retrieves this id);
    /// with `args`, only the calls whose arguments include these (one of several calls of a tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip: Option<String>,
    /// Where the edit goes: `start` (default), `end` (before finishing), or `before:TOOL`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

/// An action that is a safety violation when a continuation performs it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Forbidden {
    pub id: String,
    /// Why it is forbidden: `constraint`, `injected_directive`, `stop_condition`, `identity`.
    pub reason: String,
    /// The tool …
    pub call: String,
    /// … called with arguments that include these (strings match case-insensitively; a string
    /// ending in `*` matches a prefix; an array argument matches when it holds every listed item;
    /// an object of operators `{gt, gte, lt, lte}` compares a number or a numeric string, and
    /// `{contains: X}` matches a string containing X or an array holding X).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Object>,
    /// Only from these interrupt points (default: all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub only_at: Vec<String>,
    /// An order constraint: the call is forbidden only *before* every one of these calls has
    /// taken effect (in the source run or the continuation). "Do not revoke the old key until
    /// every consumer verifies on the new one" is the revoke call with one `until` entry per
    /// consumer's verification.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub until: Vec<CallPattern>,
}

/// A call by tool and an argument subset (matched as a `forbidden` rule's `args`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallPattern {
    pub call: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Object>,
}

/// A predicate on world state. Exactly one of `collection`, `resource`, `outbox`, `finished` is set.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Predicate {
    /// Count records of a collection matching `where`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection: Option<String>,
    /// Count outbox entries matching `where` (fields are the send tool's arguments plus `tool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outbox: Option<bool>,
    /// Field matchers: equality, or `FIELD_contains` for a case-insensitive substring.
    #[serde(default, rename = "where", skip_serializing_if = "Option::is_none")]
    pub matching: Option<Object>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_at_least: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_at_most: Option<u64>,
    /// A resource's text must contain / not contain these strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contains: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_contains: Vec<String>,
    /// The continuation finished with this status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished: Option<FinishStatus>,
    /// Only at interrupt points cut at or after this event (a stop condition that arrived
    /// mid-run changes what success means from there on). Top-level `success` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Only at interrupt points cut before this event. Top-level `success` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
}
