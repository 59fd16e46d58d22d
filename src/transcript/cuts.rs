//! Cut points: where a logged run is interrupted for compaction, chosen by rule and recorded with
//! it — before the first write call (exploration done), before each later write call
//! (mid-implementation), and before the final assistant message — and the rule that decides
//! what a write call is.
//!
//! Owns [`WriteRule`] and [`cuts`]. Must not: build a state, a handoff or a measure.

use std::collections::BTreeSet;

use serde::Serialize;

use super::model::{TRole, Transcript};

/// The first words of a tool name that make it a write (README, "Real transcripts"). A name is
/// split into words at `_`, `-`, `.`, spaces and lower→upper case changes; only its first word
/// counts (`update_reservation_flights` writes, `get_update_status` reads).
pub const WRITE_VERBS: [&str; 27] = [
    "add", "approve", "assign", "book", "cancel", "change", "close", "create", "delete", "edit",
    "insert", "issue", "modify", "pay", "post", "put", "refund", "remove", "reopen", "reserve",
    "send", "set", "submit", "update", "upgrade", "upsert", "write",
];

/// What makes a tool call a write: the tools named on the command line (`--write-tools`), or else
/// the verb rule ([`WRITE_VERBS`]).
#[derive(Debug, Clone, Default)]
pub struct WriteRule {
    pub tools: Option<BTreeSet<String>>,
}

impl WriteRule {
    pub fn listed<I: IntoIterator<Item = String>>(tools: I) -> WriteRule {
        WriteRule {
            tools: Some(tools.into_iter().collect()),
        }
    }

    /// Whether calls to `tool` change the world.
    pub fn is_write(&self, tool: &str) -> bool {
        match &self.tools {
            Some(list) => list.contains(tool),
            None => first_word(tool).is_some_and(|w| WRITE_VERBS.contains(&w.as_str())),
        }
    }

    /// The rule in words (for the report and the manifest).
    pub fn describe(&self) -> String {
        match &self.tools {
            Some(list) => format!(
                "write tools as listed: {}",
                list.iter().cloned().collect::<Vec<_>>().join(", ")
            ),
            None => {
                "a tool whose name starts with a write verb (book, cancel, update, send, …)".into()
            }
        }
    }
}

fn first_word(name: &str) -> Option<String> {
    let mut w = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if matches!(c, '_' | '-' | '.' | ' ' | '/' | ':') || (c.is_uppercase() && prev_lower) {
            if !w.is_empty() {
                break;
            }
            continue;
        }
        prev_lower = c.is_lowercase();
        w.extend(c.to_lowercase());
    }
    (!w.is_empty()).then_some(w)
}

/// Why a cut is where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CutRule {
    /// Before the assistant message that makes the run's first write call.
    FirstWrite,
    /// Before each later assistant message that makes a write call.
    LaterWrite,
    /// Before the run's final assistant message.
    FinalAssistant,
}

impl CutRule {
    pub fn as_str(self) -> &'static str {
        match self {
            CutRule::FirstWrite => "first_write",
            CutRule::LaterWrite => "later_write",
            CutRule::FinalAssistant => "final_assistant",
        }
    }
}

/// One cut: the prefix is `messages[..at]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cut {
    /// `first-write@m12`, `write-2@m20`, `final@m41` (m = the source log's message index).
    pub name: String,
    pub rule: CutRule,
    /// Position in the transcript's messages (the prefix is everything before it).
    pub at: usize,
    /// The source log's index of the first message after the cut.
    pub before: usize,
}

/// The run's cuts in message order; `cap` keeps at most that many, preferring the first write,
/// then the final assistant message, then the later writes in order. A cut needs a user message
/// before it; two rules at one place make one cut (the earlier rule in this list names it).
pub fn cuts(t: &Transcript, rule: &WriteRule, cap: Option<usize>) -> Vec<Cut> {
    let first_user = t.messages.iter().position(|m| m.role == TRole::User);
    let Some(first_user) = first_user else {
        return vec![];
    };
    let writes: Vec<usize> = t
        .messages
        .iter()
        .enumerate()
        .filter(|(i, m)| {
            *i > first_user
                && m.role == TRole::Assistant
                && m.tool_calls.iter().any(|c| rule.is_write(&c.name))
        })
        .map(|(i, _)| i)
        .collect();
    let mut out: Vec<Cut> = Vec::new();
    let mut push = |at: usize, rule: CutRule, label: String| {
        if !out.iter().any(|c| c.at == at) {
            let before = t.messages[at].index;
            out.push(Cut {
                name: format!("{label}@m{before}"),
                rule,
                at,
                before,
            });
        }
    };
    if let Some(&w) = writes.first() {
        push(w, CutRule::FirstWrite, "first-write".into());
    }
    if let Some(f) = t
        .messages
        .iter()
        .rposition(|m| m.role == TRole::Assistant)
        .filter(|&f| f > first_user)
    {
        push(f, CutRule::FinalAssistant, "final".into());
    }
    for (n, &w) in writes.iter().enumerate().skip(1) {
        push(w, CutRule::LaterWrite, format!("write-{}", n + 1));
    }
    if let Some(k) = cap {
        out.truncate(k);
    }
    out.sort_by_key(|c| c.at);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verb_rule_reads_the_first_word() {
        let r = WriteRule::default();
        for w in [
            "book_reservation",
            "update_reservation_flights",
            "cancelOrder",
            "send-email",
        ] {
            assert!(r.is_write(w), "{w}");
        }
        for w in [
            "get_update_status",
            "search_direct_flight",
            "think",
            "transfer_to_human_agents",
            "",
        ] {
            assert!(!r.is_write(w), "{w}");
        }
        let listed = WriteRule::listed(["think".to_string()]);
        assert!(listed.is_write("think") && !listed.is_write("book_reservation"));
    }
}
