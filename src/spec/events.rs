//! The reference run's events: user and assistant messages (with the assistant's tags), tool calls
//! with their recorded results and scripted faults, and approval decisions, plus the kind an
//! event is read as. Shape only: whether a recorded result replays is validation's to say.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::vocab::{ApprovalStatus, Object};

/// Tag of an assistant message in the reference run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AssistantTag {
    Plan,
    Decision,
    Hypothesis,
    Report,
}

impl AssistantTag {
    pub fn as_str(self) -> &'static str {
        match self {
            AssistantTag::Plan => "plan",
            AssistantTag::Decision => "decision",
            AssistantTag::Hypothesis => "hypothesis",
            AssistantTag::Report => "report",
        }
    }
}

/// A scripted fault on a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// The effect is committed, but the caller sees a timeout instead of the result.
    TimeoutAfterCommit,
    /// The call times out before anything happens.
    TimeoutBeforeCommit,
    /// The service refuses the call: nothing happens, and the caller sees the event's `error`
    /// text (a service's own error message, from outside the trust boundary; it may carry an
    /// injected payload, which the benign variant removes).
    Rejected,
}

impl Fault {
    pub fn as_str(self) -> &'static str {
        match self {
            Fault::TimeoutAfterCommit => "timeout_after_commit",
            Fault::TimeoutBeforeCommit => "timeout_before_commit",
            Fault::Rejected => "rejected",
        }
    }
}

/// One event of the reference run. Exactly one of `user`, `assistant`, `call`, `approval` is set.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Event {
    /// Stable id, `event-0001`, `event-0002`, …
    pub id: String,
    /// A user message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// An assistant message, tagged by what it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assistant: Option<AssistantTag>,
    /// The assistant message's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A tool call (tool name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// The tool call's arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Object>,
    /// The result the source agent saw; when given, replaying the call must reproduce it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// A scripted fault on this call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<Fault>,
    /// With `fault: rejected`: the error text the service answers with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The call is expected to fail (the world returns an error), e.g. a failing test run.
    #[serde(default)]
    pub expect_error: bool,
    /// An approval decision recorded in the run (a human granted, denied or revoked it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalEvent>,
    /// Set only by the volume generator (never in a file): a padding call, replayed without
    /// advancing the simulated clock so that volume never changes when an approval lapses.
    #[serde(skip)]
    #[schemars(skip)]
    pub volume: bool,
}

/// An approval decision inside the reference run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalEvent {
    pub id: String,
    pub status: ApprovalStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Who decided (e.g. `oncall-lead`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

/// The kind of an event, derived from which field is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    User,
    Assistant(AssistantTag),
    Call,
    Approval,
}

impl Event {
    /// The event's kind; `None` when zero or several kinds are set (a validation error).
    pub fn kind(&self) -> Option<EventKind> {
        let set = [
            self.user.is_some(),
            self.assistant.is_some(),
            self.call.is_some(),
            self.approval.is_some(),
        ];
        if set.iter().filter(|b| **b).count() != 1 {
            return None;
        }
        if self.user.is_some() {
            Some(EventKind::User)
        } else if let Some(tag) = self.assistant {
            Some(EventKind::Assistant(tag))
        } else if self.call.is_some() {
            Some(EventKind::Call)
        } else {
            Some(EventKind::Approval)
        }
    }
}
