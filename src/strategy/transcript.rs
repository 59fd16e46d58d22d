//! Strategy A (transcript replay), `mask` (observation masking) and the transcript half of `B+A`.

use super::{BuildFuture, Strategy, StrategyConfig, ready};
use crate::handoff::tokens;
use crate::handoff::{Message, Role, ToolCallMsg, finish};
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
}

/// One or two messages that stand or fall together (a tool call and its result).
struct Unit {
    event: String,
    messages: Vec<Message>,
    tokens: u64,
}

/// The source events as chat messages. With `mask = Some(n)`, tool outputs older than the last
/// `n` calls become a placeholder. With a budget, the oldest units are dropped — silently, as
/// transcript truncation is (seed 003): nothing in the result says anything was removed.
pub fn transcript(
    state: &InterruptedState,
    budget: Option<u64>,
    mask: Option<usize>,
) -> (Vec<Message>, Vec<String>) {
    let calls_total = state.events.iter().filter(|e| e.call.is_some()).count();
    let mut calls_seen = 0usize;
    let mut units: Vec<Unit> = Vec::with_capacity(state.events.len());
    for e in &state.events {
        let messages = match (&e.call, e.kind) {
            (Some(c), _) => {
                calls_seen += 1;
                let id = format!("call_{}", e.id.replace('-', "_"));
                let masked = mask.is_some_and(|n| calls_total - calls_seen >= n);
                let content = if masked {
                    format!(
                        "[output of {} omitted to save context ({} characters); call the tool again if you need it]",
                        c.tool,
                        c.result_text.len()
                    )
                } else {
                    c.result_text.clone()
                };
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
                        content,
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
        let tokens = messages.iter().map(tokens::count_message).sum();
        units.push(Unit {
            event: e.id.clone(),
            messages,
            tokens,
        });
    }
    let mut dropped = Vec::new();
    if let Some(budget) = budget {
        let mut total: u64 = units.iter().map(|u| u.tokens).sum::<u64>() + 3;
        let mut start = 0;
        // Keep at least the most recent unit, even if it alone is over budget.
        while total > budget && start + 1 < units.len() {
            total -= units[start].tokens;
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

/// Tokens of the full source history at a restore point: the unbounded transcript (strategy A
/// with no budget), the denominator of `metrics.compression_ratio`.
pub fn full_history_tokens(state: &InterruptedState) -> u64 {
    let (m, _) = transcript(state, None, None);
    crate::handoff::tokens::count_messages(&m)
}
