//! Next-action agreement with a live model: given the system prompt (unchanged), the handoff and,
//! when the cut lies before a user turn, that turn, does the destination's next tool call match
//! the logged run's next call — the same tool, and the same arguments after
//! [`super::metrics::normalized_arguments`]?
//!
//! Owns the expected call of a cut, the request, the one-step loop (a `retrieve` call of a
//! handoff that offers it is answered from the prefix's resources, at most [`MAX_RETRIEVES`]
//! times) and the comparison. Talks to the endpoint only through [`LiveClient`] (its cache,
//! retries and error classes). Must not: run a simulated world or score anything else.

use async_openai::types::chat::ChatCompletionMessageToolCalls;
use serde_json::{Value, json};

use super::cuts::Cut;
use super::metrics::normalized_arguments;
use super::model::{TMessage, TRole, ToolCall, Transcript};
use crate::destination::live::{LiveClient, wire_message};
use crate::handoff::{Handoff, Role};
use crate::record::{CellError, ErrorClass, LiveStats};
use crate::scenario::Object;
use crate::state::InterruptedState;
use crate::tokens;

/// `retrieve` calls answered before the destination's next real call counts.
pub const MAX_RETRIEVES: usize = 3;

/// Sent after a handoff that ends on an assistant or tool turn (a chat request must end on a user
/// turn or a tool result).
pub const CONTINUE: &str =
    "The previous session was interrupted here. Continue with your next step.";

/// What the run did next at a cut: the user turn the cut lies before (if it does) and the next
/// tool call — when the next assistant message makes one; `None` when the run's next step is a
/// text reply (there is no call to agree with).
pub fn expected_next<'a>(
    t: &'a Transcript,
    cut: &Cut,
) -> Option<(Option<&'a TMessage>, &'a ToolCall)> {
    let rest = &t.messages[cut.at..];
    let (user, rest) = match rest.first() {
        Some(m) if m.role == TRole::User => (Some(m), &rest[1..]),
        _ => (None, rest),
    };
    let next = rest.first().filter(|m| m.role == TRole::Assistant)?;
    next.tool_calls.first().map(|c| (user, c))
}

/// Whether a call matches the expected one: the same tool, the same normalised arguments.
pub fn agrees(expected: &ToolCall, name: &str, args: &Object) -> bool {
    expected.name == name && normalized_arguments(&expected.arguments) == normalized_arguments(args)
}

/// A call as the record shows it: `tool {arguments}`.
pub fn show(name: &str, args: &Object) -> String {
    format!("{name} {}", serde_json::to_string(args).unwrap_or_default())
}

/// The destination's answer at a cut.
#[derive(Debug, Clone, PartialEq)]
pub enum NextStep {
    /// A tool call with parsed arguments.
    Call(String, Object),
    /// A call whose arguments are not a JSON object.
    Malformed(String, String),
    /// Text without a call.
    Text,
}

/// The request messages: system prompt, handoff, then the next user turn or the continuation note.
pub fn request_messages(
    system: Option<&str>,
    handoff: &Handoff,
    next_user: Option<&str>,
) -> Vec<Value> {
    let mut messages = Vec::new();
    if let Some(s) = system {
        messages.push(json!({"role": "system", "content": s}));
    }
    messages.extend(handoff.messages.iter().map(wire_message));
    match next_user {
        Some(u) => messages.push(json!({"role": "user", "content": u})),
        None if handoff.messages.last().is_none_or(|m| m.role != Role::User) => {
            messages.push(json!({"role": "user", "content": CONTINUE}))
        }
        None => {}
    }
    messages
}

/// Asks the destination for its next step (answering `retrieve` from `state`'s resources).
pub async fn next_step(
    client: &LiveClient,
    mut messages: Vec<Value>,
    tools: &[Value],
    state: &InterruptedState,
    identity: Value,
    seed: u64,
    stats: &mut LiveStats,
) -> Result<NextStep, CellError> {
    // The cell's identity is part of the cache key: two cells sending the same request are
    // independent samples.
    let ctx = crate::destination::live::CallContext {
        identity,
        seed,
        cell: None,
    };
    let c = &client.config;
    for _ in 0..=MAX_RETRIEVES {
        let mut body =
            json!({"model": c.model, "messages": messages, "tools": tools, "tool_choice": "auto"});
        if let Some(t) = c.temperature {
            body["temperature"] = json!(t);
        }
        if let Some(s) = c.seed {
            body["seed"] = json!(s);
        }
        if let Some(m) = c.max_tokens {
            body["max_tokens"] = json!(m);
        }
        let resp = client.complete(&body, &ctx, stats).await?;
        match &resp.usage {
            Some(u) => {
                stats.input_tokens += u.prompt_tokens as u64;
                stats.output_tokens += u.completion_tokens as u64;
            }
            None => {
                let n = tokens::count(&body["messages"].to_string());
                stats.input_tokens += n;
                stats.estimated_tokens += n;
            }
        }
        stats.reported_model = Some(resp.model.clone());
        let Some(choice) = resp.choices.first() else {
            return Err(CellError {
                class: ErrorClass::ModelOutput,
                message: format!("model `{}` returned no choice", c.name),
            });
        };
        let call = choice.message.tool_calls.as_ref().and_then(|calls| {
            calls.iter().find_map(|tc| match tc {
                ChatCompletionMessageToolCalls::Function(f) => Some((
                    f.id.clone(),
                    f.function.name.clone(),
                    f.function.arguments.clone(),
                )),
                ChatCompletionMessageToolCalls::Custom(_) => None,
            })
        });
        let Some((id, name, arguments)) = call else {
            stats.text_only_turns += 1;
            return Ok(NextStep::Text);
        };
        let args = match serde_json::from_str::<Value>(if arguments.trim().is_empty() {
            "{}"
        } else {
            &arguments
        }) {
            Ok(Value::Object(o)) => o,
            _ => {
                stats.malformed_tool_calls += 1;
                return Ok(NextStep::Malformed(name, arguments));
            }
        };
        if name != "retrieve" || !tools.iter().any(|t| t["function"]["name"] == "retrieve") {
            return Ok(NextStep::Call(name, args));
        }
        // D's retrieve: answered from what the agent observed before the cut.
        let key = args
            .get("resource")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let answer = state
            .latest_observations()
            .into_iter()
            .find(|o| o.key == key)
            .map(|o| o.text.to_string())
            .unwrap_or_else(|| format!("no resource `{key}`"));
        messages.push(json!({"role": "assistant", "content": "", "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}]}));
        messages.push(json!({"role": "tool", "tool_call_id": id, "content": answer}));
    }
    Ok(NextStep::Text)
}

/// The function definitions the destination gets: the run's tools, then the handoff's extras.
pub fn tools_for(state: &InterruptedState, handoff: &Handoff) -> Vec<Value> {
    let mut tools: Vec<Value> = state
        .task
        .tools
        .iter()
        .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
        .collect();
    for t in &handoff.extra_tools {
        tools.push(json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}));
    }
    tools
}
