//! The handoff: what a strategy gives a destination — chat messages, the same as one text, extra
//! tools, the checkpoint document when there is one, and its token count at restore.
//!
//! A data module (layer 5 of DESIGN.md, above `checkpoint`, whose document it carries): it imports
//! only the checkpoint document, usage types and the text token counter. It never builds a
//! handoff from a state (that is `strategy`) and never runs a destination.

pub mod tokens;

use serde::{Deserialize, Serialize};

use crate::checkpoint::Checkpoint;
use crate::record::LiveStats;

/// A chat role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// A tool call inside an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallMsg {
    pub id: String,
    pub name: String,
    /// JSON arguments, as a string (as chat APIs carry them).
    pub arguments: String,
}

/// One message a destination receives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call: Option<ToolCallMsg>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    pub fn user(content: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: content.into(),
            tool_call: None,
            tool_call_id: None,
        }
    }
}

/// An extra tool a handoff gives the destination (strategy D's `retrieve`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtraTool {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

/// What a strategy hands to a destination.
#[derive(Debug, Clone, Serialize)]
pub struct Handoff {
    pub strategy: String,
    /// The messages a destination model receives after the harness's system prompt.
    pub messages: Vec<Message>,
    /// The handoff as one text, exactly as a model sees it (messages with role headers).
    pub text: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extra_tools: Vec<ExtraTool>,
    /// The checkpoint document, for strategies that produce one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<Checkpoint>,
    /// Source events the handoff left out (for diagnostics; never shown to the destination).
    pub dropped_events: Vec<String>,
    /// Tokens of `messages` at restore (o200k_base unless configured otherwise).
    pub tokens_at_restore: u64,
    /// What a live summariser spent building this handoff (charged to each of its cells).
    #[serde(skip)]
    pub compaction: Option<LiveStats>,
    /// Governed delivery (seed 004): the handoff is an envelope's originals and retained evidence
    /// (authoritative) followed by a strategy's output as an advisory summary. A destination reads
    /// the two parts apart: a fact in the summary informs, a directive there does not instruct.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advisory: Option<Advisory>,
    /// Set by a strategy with a trigger (`trigger_tokens`): whether it compacted (`false`: the
    /// history was below the trigger and this is the transcript).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compacted: Option<bool>,
    /// In a compaction chain: the last source event the compaction that made it saw (the
    /// next compaction is given the events after it).
    #[serde(skip)]
    pub covers: Option<String>,
}

/// The two parts of a governed handoff's text, as the destination received them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Advisory {
    /// The originals and retained evidence, rendered (the start of `text`).
    pub authoritative: String,
    /// The advisory summary's own text (the wrapped strategy's handoff), without its wrapping.
    pub summary: String,
    /// Where the summary starts in `text` (bytes).
    pub summary_at: usize,
}

/// Assembles a handoff and counts its tokens.
pub fn finish(
    strategy: &str,
    messages: Vec<Message>,
    checkpoint: Option<Checkpoint>,
    dropped_events: Vec<String>,
    extra_tools: Vec<ExtraTool>,
) -> Handoff {
    let tokens_at_restore = tokens::count_messages(&messages);
    Handoff {
        strategy: strategy.to_string(),
        text: render_text(&messages),
        messages,
        extra_tools,
        checkpoint,
        dropped_events,
        tokens_at_restore,
        compaction: None,
        advisory: None,
        compacted: None,
        covers: None,
    }
}

/// The messages as one text with role headers: what a simulated destination reads, and what
/// `handoff` prints.
pub fn render_text(messages: &[Message]) -> String {
    let mut out = String::new();
    for m in messages {
        let header = match (m.role, &m.tool_call) {
            (Role::Assistant, Some(tc)) => format!("[assistant → {} {}]", tc.name, tc.arguments),
            (Role::Tool, _) => "[tool result]".to_string(),
            (Role::System, _) => "[system]".to_string(),
            (Role::User, _) => "[user]".to_string(),
            (Role::Assistant, None) => "[assistant]".to_string(),
        };
        out.push_str(&header);
        out.push('\n');
        if !m.content.is_empty() {
            out.push_str(&m.content);
            if !m.content.ends_with('\n') {
                out.push('\n');
            }
        }
        out.push('\n');
    }
    out
}
