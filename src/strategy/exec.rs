//! `exec:` strategies: a plug-in program compacts the state. The state goes out as the protocol's
//! state document; a checkpoint answer is rendered like C's, a text answer becomes messages.
//!
//! Running the program (limits, environment, errors) is `plugin`'s; this file only maps between
//! the interrupted state, the protocol documents and a handoff.

use std::path::PathBuf;

use super::{BuildFuture, Strategy, StrategyConfig, StrategyError, Templates, ready};
use crate::handoff::{Handoff, Message, Role, finish};
use crate::plugin::protocol::{InputFormat, PreviousHandoff, STATE_FORMAT_4, state_input_after};
use crate::plugin::{Answer, PluginError, Program, parse_answer};
use crate::state::InterruptedState;

pub struct Exec {
    config: StrategyConfig,
    templates: Templates,
    program: Program,
}

impl Exec {
    pub fn new(
        config: StrategyConfig,
        templates: Templates,
        dir: PathBuf,
        hide: Vec<PathBuf>,
    ) -> Exec {
        let program = Program {
            id: config.id.clone(),
            program: config.program.clone(),
            args: config.args.clone(),
            env: config.env.clone(),
            timeout_s: config.timeout_s,
            max_output_bytes: config.max_output_bytes,
            dir,
            hide,
        };
        Exec {
            config,
            templates,
            program,
        }
    }

    /// The input format the plug-in reads (`reads` was checked when the file was read,
    /// [`super::settings`]).
    fn format(&self) -> InputFormat {
        self.config
            .reads
            .as_deref()
            .and_then(InputFormat::parse)
            .unwrap_or_default()
    }

    fn run(
        &self,
        previous: Option<PreviousHandoff>,
        state: &InterruptedState,
    ) -> Result<crate::handoff::Handoff, PluginError> {
        let cfg = &self.config;
        let format = self.format();
        let input = state_input_after(
            previous,
            state,
            super::min_budget(cfg.token_budget, cfg.window_budget),
            format,
        )
        .map_err(|e| PluginError::Config {
            id: cfg.id.clone(),
            message: e.to_string(),
        })?;
        let out = crate::plugin::run(&self.program, &input)?;
        let dropped = state.events.iter().map(|e| e.id.clone()).collect();
        match parse_answer(&cfg.id, &out)? {
            Answer::Checkpoint(cp) => {
                // Rendered as compacted; the harness marks stale resources at restore.
                let text = self.templates.render_checkpoint(&cp, false).map_err(|e| {
                    PluginError::Config {
                        id: cfg.id.clone(),
                        message: e.to_string(),
                    }
                })?;
                Ok(finish(
                    &cfg.id,
                    vec![Message::user(text)],
                    Some(*cp),
                    vec![],
                    vec![],
                ))
            }
            Answer::Text(t) => {
                let mut messages: Vec<Message> = t
                    .messages
                    .iter()
                    .map(|m| Message {
                        role: if m.role == "assistant" {
                            Role::Assistant
                        } else {
                            Role::User
                        },
                        content: m.content.clone(),
                        tool_call: None,
                        tool_call_id: None,
                    })
                    .collect();
                messages.push(Message::user(t.text));
                Ok(finish(&cfg.id, messages, None, dropped, vec![]))
            }
        }
    }
}

impl Strategy for Exec {
    fn id(&self) -> &str {
        &self.config.id
    }
    fn build<'a>(&'a self, state: &'a InterruptedState) -> BuildFuture<'a> {
        ready(self.run(None, state).map_err(StrategyError::Plugin))
    }
    /// Format 4's `previous_handoff` with the events since; a plug-in that reads an older
    /// format cannot be chained (it would compact the new events alone).
    fn build_after<'a>(
        &'a self,
        previous: &'a Handoff,
        since: &'a InterruptedState,
    ) -> BuildFuture<'a> {
        if self.format() != InputFormat::State4 {
            return ready(Err(StrategyError::Chain {
                id: self.config.id.clone(),
                message: chain_refusal(self.config.reads.as_deref()),
            }));
        }
        let prev = PreviousHandoff {
            after: previous_after(previous),
            text: previous.text.clone(),
            checkpoint: previous.checkpoint.clone(),
        };
        ready(self.run(Some(prev), since).map_err(StrategyError::Plugin))
    }
}

/// Why a plug-in that reads `reads` (unset: format 3) cannot be chained, and what to change.
pub fn chain_refusal(reads: Option<&str>) -> String {
    format!(
        "it reads `{}`, which has no previous handoff: a chain (--cycles above 1) needs `reads = \"{STATE_FORMAT_4}\"` in its TOML and a program that reads `previous_handoff`",
        reads.unwrap_or(crate::plugin::protocol::STATE_FORMAT)
    )
}

/// The last source event a handoff covered: its checkpoint's range when it has one, else the
/// handoff's own record of it.
fn previous_after(h: &Handoff) -> String {
    h.checkpoint
        .as_ref()
        .map(|c| c.envelope.source_event_range.1.clone())
        .or_else(|| h.covers.clone())
        .unwrap_or_default()
}
