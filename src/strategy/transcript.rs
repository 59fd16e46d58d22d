//! Strategy A (transcript replay), `mask` (observation masking) and the transcript half of `B+A`.

use super::{BuildFuture, Strategy, StrategyConfig, ready};
use crate::handoff::tokens;
use crate::handoff::{Handoff, Message, Role, ToolCallMsg, finish};
use crate::state::InterruptedState;

/// A (`mask = None`) and `mask` (tool outputs older than the last `mask` calls masked).
pub struct Transcript {
    config: StrategyConfig,
    mask: Option<usize>,
}

impl Transcript {
    pub fn new(config: StrategyConfig, mask: Option<usize>) -> Transcript {
        Transcript { config, mask }
    }
}

impl Strategy for Transcript {
    fn id(&self) -> &str {
        &self.config.id
    }
    fn build<'a>(&'a self, state: &'a InterruptedState) -> BuildFuture<'a> {
        let budget = super::min_budget(self.config.token_budget, self.config.window_budget);
        let (m, d) = transcript(state, budget, self.mask);
        ready(Ok(finish(&self.config.id, m, None, d, vec![])))
    }
    /// What fits the window of the previous handoff's messages and the new events (A and mask
    /// give the same handoff chained as in one shot: dropping the oldest is idempotent).
    fn build_after<'a>(
        &'a self,
        previous: &'a Handoff,
        since: &'a InterruptedState,
    ) -> BuildFuture<'a> {
        let budget = super::min_budget(self.config.token_budget, self.config.window_budget);
        let (m, d) = continue_transcript(
            &previous.messages,
            &previous.dropped_events,
            since,
            budget,
            self.mask,
        );
        ready(Ok(finish(&self.config.id, m, None, d, vec![])))
    }
}

/// One or two messages that stand or fall together (a tool call and its result).
struct Unit {
    event: String,
    messages: Vec<Message>,
}

impl Unit {
    fn new(event: String, messages: Vec<Message>) -> Unit {
        Unit { event, messages }
    }

    /// Counted only when a budget needs it, after masking (a masked output is not counted).
    fn tokens(&self) -> u64 {
        self.messages.iter().map(tokens::count_message).sum()
    }

    /// The tool result of a call unit.
    fn tool_result(&mut self) -> Option<&mut Message> {
        self.messages.iter_mut().find(|m| m.role == Role::Tool)
    }
}

/// The placeholder that replaces a masked tool output.
fn placeholder(tool: &str, chars: usize) -> String {
    format!(
        "[output of {tool} omitted to save context ({chars} characters); call the tool again if you need it]"
    )
}

fn is_placeholder(content: &str) -> bool {
    content.starts_with("[output of ") && content.ends_with("; call the tool again if you need it]")
}

/// The events of `state` as units, tool outputs as they were returned.
fn event_units(state: &InterruptedState) -> Vec<Unit> {
    let mut units: Vec<Unit> = Vec::with_capacity(state.events.len());
    for e in &state.events {
        let messages = match (&e.call, e.kind) {
            (Some(c), _) => {
                let id = format!("call_{}", e.id.replace('-', "_"));
                vec![
                    Message {
                        role: Role::Assistant,
                        content: String::new(),
                        tool_call: Some(ToolCallMsg {
                            id: id.clone(),
                            name: c.tool.clone(),
                            arguments: serde_json::to_string(&c.args).unwrap_or_default(),
                        }),
                        tool_call_id: None,
                    },
                    Message {
                        role: Role::Tool,
                        content: c.result_text.clone(),
                        tool_call: None,
                        tool_call_id: Some(id),
                    },
                ]
            }
            (None, "user") => vec![Message::user(e.text.clone())],
            (None, "approval") => vec![Message::user(format!("[approval system] {}", e.text))],
            (None, _) => vec![Message {
                role: Role::Assistant,
                content: e.text.clone(),
                tool_call: None,
                tool_call_id: None,
            }],
        };
        units.push(Unit::new(e.id.clone(), messages));
    }
    units
}

/// A previous handoff's messages as units: a tool call with its result is one, any other
/// message one of its own. Their events are not known to the handoff: they are named by place.
fn message_units(messages: &[Message]) -> Vec<Unit> {
    let mut units = Vec::new();
    let mut i = 0;
    while i < messages.len() {
        let pair = messages[i].tool_call.as_ref().is_some_and(|tc| {
            messages
                .get(i + 1)
                .is_some_and(|r| r.role == Role::Tool && r.tool_call_id.as_deref() == Some(&tc.id))
        });
        let n = if pair { 2 } else { 1 };
        units.push(Unit::new(
            format!("earlier-message-{}", i + 1),
            messages[i..i + n].to_vec(),
        ));
        i += n;
    }
    units
}

/// Masks the tool outputs of every call unit but the last `keep` (an output already masked
/// stays as it is).
fn mask_units(units: &mut [Unit], keep: usize) {
    let calls = units.iter().filter(|u| u.messages.len() == 2).count();
    let mut seen = 0usize;
    for u in units.iter_mut().filter(|u| u.messages.len() == 2) {
        seen += 1;
        if calls - seen < keep {
            continue;
        }
        let tool = u.messages[0]
            .tool_call
            .as_ref()
            .map(|tc| tc.name.clone())
            .unwrap_or_default();
        if let Some(m) = u.tool_result()
            && !is_placeholder(&m.content)
        {
            m.content = placeholder(&tool, m.content.len());
        }
    }
}

/// The units that fit `budget`, oldest dropped first — silently, as transcript truncation is
/// (seed 003): nothing in the result says anything was removed.
fn fit(mut units: Vec<Unit>, budget: Option<u64>) -> (Vec<Message>, Vec<String>) {
    let mut dropped = Vec::new();
    if let Some(budget) = budget {
        let counts: Vec<u64> = units.iter().map(Unit::tokens).collect();
        let mut total: u64 = counts.iter().sum::<u64>() + 3;
        let mut start = 0;
        // Keep at least the most recent unit, even if it alone is over budget.
        while total > budget && start + 1 < units.len() {
            total -= counts[start];
            dropped.push(units[start].event.clone());
            start += 1;
        }
        units.drain(..start);
    }
    (
        units.into_iter().flat_map(|u| u.messages).collect(),
        dropped,
    )
}

/// The source events as chat messages. With `mask = Some(n)`, tool outputs older than the last
/// `n` calls become a placeholder. With a budget, the oldest units are dropped.
pub fn transcript(
    state: &InterruptedState,
    budget: Option<u64>,
    mask: Option<usize>,
) -> (Vec<Message>, Vec<String>) {
    let mut units = event_units(state);
    if let Some(n) = mask {
        mask_units(&mut units, n);
    }
    fit(units, budget)
}

/// A transcript continued (a chain's next compaction): the previous handoff's messages, then
/// the events of `since`, masked and fitted to the budget as one transcript. Dropped are the
/// previous handoff's dropped events and whatever falls out now.
pub fn continue_transcript(
    previous: &[Message],
    previous_dropped: &[String],
    since: &InterruptedState,
    budget: Option<u64>,
    mask: Option<usize>,
) -> (Vec<Message>, Vec<String>) {
    let mut units = message_units(previous);
    units.extend(event_units(since));
    if let Some(n) = mask {
        mask_units(&mut units, n);
    }
    let (messages, dropped) = fit(units, budget);
    let mut all = previous_dropped.to_vec();
    all.extend(dropped);
    (messages, all)
}

/// Tokens of the full source history at a restore point: the unbounded transcript (strategy A
/// with no budget), the denominator of `metrics.compression_ratio`.
pub fn full_history_tokens(state: &InterruptedState) -> u64 {
    let (m, _) = transcript(state, None, None);
    crate::handoff::tokens::count_messages(&m)
}
