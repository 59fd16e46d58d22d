//! The live simulated customer of τ-bench cells: a configured model that plays the customer of
//! the task's instruction, as τ-bench's user simulator does — one message at a time, revealing
//! what it knows only as the conversation needs it, never inventing what the instruction does
//! not say, and ending with [`STOP`] once the goal is reached or cannot be. The customer keeps
//! the whole conversation (it is not the one being compacted): the customer and agent turns
//! before the cut are its history.
//!
//! Owns the customer's prompt ([`customer_prompt`]), its conversation and [`chat`], the one
//! request both the customer and the live agent make. Must not: see the agent's tools, tool
//! outputs or handoff, or judge the episode.

use async_openai::types::chat::ChatCompletionMessageToolCalls;
use serde_json::{Value, json};

use crate::destination::live::{CallContext, LiveClient};
use crate::record::{CellError, ErrorClass, LiveStats};
use crate::transcript::model::{TRole, Transcript};

/// What the customer writes when the conversation is over (τ-bench's end marker).
pub const STOP: &str = "###STOP###";

/// The customer's system prompt for a task instruction (this project's wording).
pub fn customer_prompt(instruction: &str) -> String {
    format!(
        "You are role-playing a customer writing to an airline's customer-service agent in a chat. \
Your situation, identity and goals are described here:\n\n{instruction}\n\n\
How to play the customer:\n\
- Write only the customer's next message: short and natural, in your own words; never write the agent's part.\n\
- Do not state everything at once. Give a detail (an id, a name, a date, a preference) when the agent asks for it or when the conversation needs it.\n\
- Never make up facts the description above does not give. If the agent asks for something you were not told, say that you do not know or do not have it.\n\
- Hold to the goals and limits of the description; do not accept something it rules out.\n\
- When your goals are met, or it is clear they cannot be, write {STOP} as your whole message."
    )
}

/// One chat completion: the message text and the tool calls `(id, name, raw arguments)`.
pub async fn chat(
    client: &LiveClient,
    messages: &[Value],
    tools: Option<&[Value]>,
    ctx: &CallContext,
    stats: &mut LiveStats,
) -> Result<(String, Vec<(String, String, String)>), CellError> {
    let c = &client.config;
    let mut body = json!({"model": c.model, "messages": messages});
    if let Some(tools) = tools.filter(|t| !t.is_empty()) {
        body["tools"] = json!(tools);
        body["tool_choice"] = json!("auto");
    }
    if let Some(t) = c.temperature {
        body["temperature"] = json!(t);
    }
    if let Some(s) = c.seed {
        body["seed"] = json!(s);
    }
    if let Some(m) = c.max_tokens {
        body["max_tokens"] = json!(m);
    }
    let resp = client.complete(&body, ctx, stats).await?;
    match &resp.usage {
        Some(u) => {
            stats.input_tokens += u.prompt_tokens as u64;
            stats.output_tokens += u.completion_tokens as u64;
        }
        None => {
            let n = crate::tokens::count(&body["messages"].to_string());
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
    let calls = choice
        .message
        .tool_calls
        .iter()
        .flatten()
        .filter_map(|tc| match tc {
            ChatCompletionMessageToolCalls::Function(f) => Some((
                f.id.clone(),
                f.function.name.clone(),
                f.function.arguments.clone(),
            )),
            ChatCompletionMessageToolCalls::Custom(_) => None,
        })
        .collect();
    Ok((choice.message.content.clone().unwrap_or_default(), calls))
}

/// The simulated customer of one cell.
pub struct Customer<'a> {
    client: &'a LiveClient,
    /// The customer's conversation: its own turns are `assistant`, the agent's `user`.
    messages: Vec<Value>,
    pub stats: LiveStats,
}

impl<'a> Customer<'a> {
    /// A customer for `instruction` who remembers the conversation before `at` in `t`.
    pub fn new(client: &'a LiveClient, instruction: &str, t: &Transcript, at: usize) -> Self {
        let mut messages = vec![json!({"role": "system", "content": customer_prompt(instruction)})];
        for m in &t.messages[..at] {
            let role = match m.role {
                TRole::User => "assistant",
                TRole::Assistant if !m.content.trim().is_empty() => "user",
                _ => continue,
            };
            messages.push(json!({"role": role, "content": m.content}));
        }
        Customer {
            client,
            messages,
            stats: LiveStats::default(),
        }
    }

    /// The customer's answer to the agent's message.
    pub async fn reply(&mut self, agent: &str, ctx: &CallContext) -> Result<String, CellError> {
        self.messages
            .push(json!({"role": "user", "content": agent}));
        let (text, _) = chat(self.client, &self.messages, None, ctx, &mut self.stats).await?;
        self.messages
            .push(json!({"role": "assistant", "content": text}));
        Ok(text)
    }
}
