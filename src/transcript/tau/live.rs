//! Live τ-bench continuations: a live model receives the airline policy as its system prompt,
//! the handoff, and the 14 airline tools ([`super::schema`]); its tool calls run on the episode
//! (whose prefix already happened), its messages go to the live simulated customer
//! ([`super::user::Customer`]), until the episode ends (`transfer_to_human_agents`), the
//! customer writes [`super::user::STOP`], or the step budget (model requests) is spent.
//!
//! Counted as rediscovery: a read call the run had already made before the cut with the same
//! arguments (a re-read), and a customer turn after the cut that repeats an identifier the
//! customer had given before it (a token of three or more characters holding a digit or an
//! underscore — ids, dates, amounts — found in an earlier customer turn). A write identical to
//! one already made in the episode is unsafe.
//!
//! Owns [`LiveContinuation`] and [`Lived`]. Must not: score the episode (the cell loop asks the
//! environment) or write records.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Value, json};

use super::user::{Customer, STOP, chat};
use super::{Options, schema};
use crate::destination::live::{Cache, CallContext, LiveClient};
use crate::handoff::Handoff;
use crate::record::{CellError, LiveStats};
use crate::runner::{RunConfig, live_model};
use crate::state::InterruptedState;
use crate::tau::{self, Episode};
use crate::transcript::TranscriptError;
use crate::transcript::agree::request_messages;
use crate::transcript::cuts::WriteRule;
use crate::transcript::model::{TRole, Transcript};

/// What a live continuation did.
#[derive(Debug, Clone)]
pub struct Lived {
    pub episode: Episode,
    pub tool_calls: u32,
    pub extra_tool_calls: u32,
    pub extra_user_turns: u32,
    pub user_turns: u32,
    pub unsafe_writes: u32,
    pub budget_exhausted: bool,
    /// The destination's requests (the customer's are not the destination's cost).
    pub stats: LiveStats,
}

/// The recorded run before the cut, as a live cell needs it.
pub struct Prefix<'a> {
    pub t: &'a Transcript,
    /// The cut's position in the transcript's messages.
    pub at: usize,
    /// The state strategies compacted (its observations answer `retrieve`).
    pub state: &'a InterruptedState,
}

/// What every live τ-bench cell of a run shares: the customer's model, the policy, the budget.
pub struct LiveContinuation {
    user: Option<Arc<LiveClient>>,
    policy: String,
    budget: u32,
}

/// Identifier-like tokens of a text: three or more characters with a digit or an underscore.
fn identifiers(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '.'))
        .map(|w| w.trim_matches(['.', '-']).to_lowercase())
        .filter(|w| w.chars().count() >= 3 && w.chars().any(|c| c.is_ascii_digit() || c == '_'))
        .collect()
}

impl LiveContinuation {
    /// `live_models` are the run's live destinations; with any, the customer's model must be set.
    pub fn new(
        cfg: &RunConfig,
        opts: &Options,
        cache: &Option<Cache>,
        policy: &str,
        live_models: &[String],
    ) -> Result<LiveContinuation, TranscriptError> {
        let user = match (&opts.user_model, live_models.is_empty()) {
            (_, true) => None,
            (None, false) => {
                return Err(TranscriptError::Usage(format!(
                    "live destinations ({}) need a simulated customer: name its model with --tau-user MODEL",
                    live_models.join(", ")
                )));
            }
            (Some(name), false) => {
                let mc = live_model(cfg, name).ok_or_else(|| {
                    TranscriptError::Usage(format!(
                        "--tau-user: `{name}` is not a configured model (add [model.{name}] to the configuration, or use openai:MODEL)"
                    ))
                })?;
                Some(Arc::new(
                    LiveClient::new(mc, cache.clone())
                        .map_err(|e| TranscriptError::Usage(e.message))?,
                ))
            }
        };
        Ok(LiveContinuation {
            user,
            policy: policy.to_string(),
            budget: cfg.step_budget,
        })
    }

    /// Continues one cell: `episode` has the prefix applied; `h` is the strategy's handoff.
    pub async fn continue_cell(
        &self,
        client: &LiveClient,
        prefix: Prefix<'_>,
        h: &Handoff,
        episode: Episode,
        identity: Value,
        seed: u64,
    ) -> Result<Lived, CellError> {
        let Some(user_client) = &self.user else {
            return Err(CellError {
                class: crate::record::ErrorClass::Harness,
                message: "no simulated customer configured".into(),
            });
        };
        let Prefix {
            t,
            at: cut_at,
            state,
        } = prefix;
        let rule = WriteRule::default();
        let instruction = episode.task().instruction.clone();
        let mut customer = Customer::new(user_client, &instruction, t, cut_at);
        let agent_ctx = CallContext {
            identity: json!({"cell": identity.clone(), "role": "agent"}),
            seed,
            cell: None,
        };
        let user_ctx = CallContext {
            identity: json!({"cell": identity, "role": "customer"}),
            seed,
            cell: None,
        };
        let prefix_reads: BTreeSet<(String, String)> = t.messages[..cut_at]
            .iter()
            .flat_map(|m| m.tool_calls.iter())
            .filter(|c| !rule.is_write(&c.name))
            .map(|c| {
                (
                    c.name.clone(),
                    Value::Object(c.arguments.clone()).to_string(),
                )
            })
            .collect();
        let mut writes: BTreeSet<(String, String)> = t.messages[..cut_at]
            .iter()
            .flat_map(|m| m.tool_calls.iter())
            .filter(|c| rule.is_write(&c.name))
            .map(|c| {
                (
                    c.name.clone(),
                    Value::Object(c.arguments.clone()).to_string(),
                )
            })
            .collect();
        let given: BTreeSet<String> = t.messages[..cut_at]
            .iter()
            .filter(|m| m.role == TRole::User)
            .flat_map(|m| identifiers(&m.content))
            .collect();
        let mut tools = schema::tool_definitions();
        tools.extend(h.extra_tools.iter().map(|x| json!({"type": "function", "function": {"name": x.name, "description": x.description, "parameters": x.parameters}})));
        let mut messages = request_messages(Some(&self.policy), h, None);
        let mut out = Lived {
            episode,
            tool_calls: 0,
            extra_tool_calls: 0,
            extra_user_turns: 0,
            user_turns: 0,
            unsafe_writes: 0,
            budget_exhausted: false,
            stats: LiveStats::default(),
        };
        let mut steps = 0u32;
        loop {
            if out.episode.is_done() {
                break;
            }
            if steps >= self.budget {
                out.budget_exhausted = true;
                break;
            }
            steps += 1;
            let (text, calls) =
                chat(client, &messages, Some(&tools), &agent_ctx, &mut out.stats).await?;
            if calls.is_empty() {
                out.stats.text_only_turns += 1;
                out.episode.respond(&text);
                messages.push(json!({"role": "assistant", "content": text}));
                let reply = customer.reply(&text, &user_ctx).await?;
                out.user_turns += 1;
                if !identifiers(&reply).is_disjoint(&given) {
                    out.extra_user_turns += 1;
                }
                if reply.contains(STOP) {
                    break;
                }
                messages.push(json!({"role": "user", "content": reply}));
                continue;
            }
            messages.push(json!({"role": "assistant", "content": text, "tool_calls": calls.iter().map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})).collect::<Vec<_>>()}));
            for (id, name, raw) in &calls {
                let args: Value = match serde_json::from_str(if raw.trim().is_empty() {
                    "{}"
                } else {
                    raw
                }) {
                    Ok(v @ Value::Object(_)) => v,
                    _ => {
                        out.stats.malformed_tool_calls += 1;
                        messages.push(json!({"role": "tool", "tool_call_id": id, "content": "Error: the arguments are not a JSON object"}));
                        continue;
                    }
                };
                let output = if out.episode.is_done() {
                    "Error: the conversation was transferred; no further action".to_string()
                } else if tau::TOOL_NAMES.contains(&name.as_str()) {
                    let key = (name.clone(), args.to_string());
                    if rule.is_write(name) {
                        if !writes.insert(key) {
                            out.unsafe_writes += 1;
                        }
                    } else if prefix_reads.contains(&key) {
                        out.extra_tool_calls += 1;
                    }
                    out.tool_calls += 1;
                    out.episode.step(name, &args).output
                } else if name == "retrieve" && h.extra_tools.iter().any(|x| x.name == "retrieve") {
                    // D's retrieve: answered from what the agent observed before the cut.
                    let key = args
                        .get("resource")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    state
                        .latest_observations()
                        .into_iter()
                        .find(|o| o.key == key)
                        .map(|o| o.text.to_string())
                        .unwrap_or_else(|| format!("no resource `{key}`"))
                } else {
                    out.stats.unknown_tools += 1;
                    format!("Error: unknown tool {name}")
                };
                messages.push(json!({"role": "tool", "tool_call_id": id, "content": output}));
            }
        }
        Ok(out)
    }
}
