//! The live agent loop of one cell: the handoff and tools as chat messages and function
//! definitions, each model turn parsed into an [`Action`] (malformed calls, unknown tools and
//! text-only answers answered, counted, and charged a step each), tool results sent back.
//!
//! The wire shape is the one every common OpenAI-compatible server accepts: every message's
//! `content` is a string — an assistant turn that only calls tools carries `""`, never `null`
//! (llama-cpp-python rejects `null`; see README "Live models") — and every request carries
//! `max_tokens`.
//!
//! It talks to the endpoint only through [`LiveClient`]; it never touches the world.

use std::sync::Arc;
use std::time::Instant;

use async_openai::types::chat::ChatCompletionMessageToolCalls;
use serde_json::{Value, json};

use super::{CallContext, CellError, ErrorClass, LiveClient, LiveStats};
use crate::conversation::{self, Exchange, ToolCall, Verdict};
use crate::destination::{Action, ActionResult};
use crate::handoff::{Handoff, Message, Role};
use crate::scenario::{FinishStatus, Object, Scenario};
use crate::tokens;

/// The function definitions a live destination gets: scenario tools, then the harness's.
pub fn tool_definitions(scenario: &Scenario, handoff: &Handoff) -> Vec<Value> {
    let mut tools: Vec<Value> = scenario
        .world
        .tools
        .iter()
        .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.json_schema()}}))
        .collect();
    tools.push(json!({"type": "function", "function": {"name": "ask_user", "description": "Ask the user a question and wait for the answer.",
        "parameters": {"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"], "additionalProperties": false}}}));
    tools.push(json!({"type": "function", "function": {"name": "request_approval", "description": "Ask the approver for an approval by id; returns its status.",
        "parameters": {"type": "object", "properties": {"approval_id": {"type": "string"}}, "required": ["approval_id"], "additionalProperties": false}}}));
    tools.push(json!({"type": "function", "function": {"name": "finish", "description": "End the task: completed, blocked (you stopped on purpose) or failed.",
        "parameters": {"type": "object", "properties": {"status": {"type": "string", "enum": ["completed", "blocked", "failed"]}, "report": {"type": "string"}, "degraded": {"type": "boolean"}}, "required": ["status", "report"], "additionalProperties": false}}}));
    for t in &handoff.extra_tools {
        tools.push(json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}));
    }
    tools
}

/// A handoff message on the wire (chat-completions form).
pub fn wire_message(m: &Message) -> Value {
    match (m.role, &m.tool_call) {
        (Role::Assistant, Some(tc)) => json!({"role": "assistant", "content": m.content,
            "tool_calls": [{"id": tc.id, "type": "function", "function": {"name": tc.name, "arguments": tc.arguments}}]}),
        (Role::Tool, _) => {
            json!({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
        }
        (Role::System, _) => json!({"role": "system", "content": m.content}),
        (Role::User, _) => json!({"role": "user", "content": m.content}),
        (Role::Assistant, None) => json!({"role": "assistant", "content": m.content}),
    }
}

/// A live destination for one cell.
pub struct LiveAgent {
    client: Arc<LiveClient>,
    messages: Vec<Value>,
    tools: Vec<Value>,
    tool_names: Vec<String>,
    queue: std::collections::VecDeque<(String, Result<Action, String>)>,
    /// The tool call whose result the next turn carries.
    awaiting: Option<String>,
    nudged: bool,
    ctx: CallContext,
    /// Steps the cell may take: actions given plus model turns (or tool calls) that gave none.
    step_budget: u32,
    /// Actions given to the runner.
    actions: u32,
    /// Tool calls and turns that gave the runner no action.
    wasted: u32,
    pub stats: LiveStats,
    /// When the agent was made (the cell's start, for the conversation's timings).
    started: Instant,
    /// The messages of the last request sent (each request's record extends it).
    sent: Vec<Value>,
    /// Every exchange with the endpoint so far.
    exchanges: Vec<Exchange>,
    /// How many messages the cell began with (the system prompt and the handoff): what a probe
    /// request re-sends.
    initial: usize,
}

/// The nudge a real agent runtime sends when a model answers without calling a tool.
pub const NUDGE: &str =
    "Continue the task by calling one of the tools. When you are done, or must stop, call finish.";

impl LiveAgent {
    pub fn new(
        client: Arc<LiveClient>,
        system_prompt: &str,
        scenario: &Scenario,
        handoff: &Handoff,
        ctx: CallContext,
        step_budget: u32,
    ) -> LiveAgent {
        let mut messages = vec![json!({"role": "system", "content": system_prompt})];
        messages.extend(handoff.messages.iter().map(wire_message));
        // A transcript handoff may end on an assistant turn; a chat request must end on a user
        // or tool turn, so the harness says where the continuation starts.
        if handoff
            .messages
            .last()
            .is_some_and(|m| m.role != Role::User)
        {
            messages.push(json!({"role": "user", "content": "The previous session was interrupted here. Continue the task."}));
        }
        let initial = messages.len();
        let tools = tool_definitions(scenario, handoff);
        let tool_names = tools
            .iter()
            .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
            .collect();
        LiveAgent {
            client,
            messages,
            tools,
            tool_names,
            queue: Default::default(),
            awaiting: None,
            nudged: false,
            ctx,
            step_budget,
            actions: 0,
            wasted: 0,
            stats: LiveStats::default(),
            started: Instant::now(),
            sent: Vec::new(),
            exchanges: Vec::new(),
            initial,
        }
    }

    /// The request body: the model's request fields ([`super::ModelConfig::request_fields`]),
    /// the messages (and the model's `prefill` as a last assistant turn) and the tools.
    /// The probe questions as one request after the continuation: the handoff as the cell began,
    /// then the questions, no tools; its answers are the reply's first JSON object. Recorded in
    /// the conversation like every exchange; a failed request (or one past the cell's request
    /// cap) answers nothing.
    async fn probe_answers(
        &mut self,
        probes: &[crate::destination::probe::Probe],
    ) -> Option<std::collections::BTreeMap<String, String>> {
        let mut b = serde_json::Map::new();
        let mut fields = self.client.config.request_fields();
        fields.remove("tool_choice");
        b.insert("model".into(), fields["model"].clone());
        let mut messages: Vec<Value> =
            self.messages[..self.initial.min(self.messages.len())].to_vec();
        messages.push(
            json!({"role": "user", "content": crate::destination::probe::questions_json(probes)}),
        );
        b.insert("messages".into(), Value::Array(messages));
        b.extend(fields);
        let body = Value::Object(b);
        let (request, sent) = conversation::compact(&body, &self.sent);
        self.sent = sent;
        let t0 = Instant::now();
        self.exchanges.push(Exchange::unanswered(
            self.exchanges.len() as u32 + 1,
            self.started.elapsed().as_secs_f64() * 1e3,
            request,
            Some("no answer: the probe questions' request was abandoned".into()),
        ));
        let answer = self
            .client
            .complete_raw(&body, &self.ctx, &mut self.stats)
            .await;
        if let Some(ex) = self.exchanges.last_mut() {
            ex.latency_ms = t0.elapsed().as_secs_f64() * 1e3;
            ex.error = answer.as_ref().err().map(|e| e.message.clone());
        }
        let (resp, raw) = answer.ok()?;
        if let Some(ex) = self.exchanges.last_mut() {
            ex.usage = raw.get("usage").filter(|u| !u.is_null()).cloned();
            ex.response = Some(raw);
        }
        // Its tokens stay in the exchange's usage: the cell's `total_tokens` is the continuation's.
        let text = resp
            .choices
            .first()?
            .message
            .content
            .clone()
            .unwrap_or_default();
        Some(crate::destination::probe::parse_answers(&text))
    }

    fn body(&self) -> Value {
        let mut b = serde_json::Map::new();
        let fields = self.client.config.request_fields();
        b.insert("model".into(), fields["model"].clone());
        let mut messages = self.messages.clone();
        if let Some(p) = &self.client.config.prefill {
            messages.push(json!({"role": "assistant", "content": p}));
        }
        b.insert("messages".into(), Value::Array(messages));
        b.insert("tools".into(), Value::Array(self.tools.clone()));
        b.extend(fields);
        Value::Object(b)
    }

    fn tokens_used(&self) -> u64 {
        self.stats.input_tokens + self.stats.output_tokens
    }

    fn parse_call(&mut self, name: &str, arguments: &str) -> Result<Action, (Verdict, String)> {
        if !self.tool_names.iter().any(|t| t == name) {
            self.stats.unknown_tools += 1;
            self.wasted += 1;
            return Err((
                Verdict::UnknownTool,
                format!(
                    "unknown tool `{name}`; available tools: {}",
                    self.tool_names.join(", ")
                ),
            ));
        }
        let args: Object = match serde_json::from_str::<Value>(if arguments.trim().is_empty() {
            "{}"
        } else {
            arguments
        }) {
            Ok(Value::Object(o)) => o,
            Ok(_) | Err(_) => {
                self.stats.malformed_tool_calls += 1;
                self.wasted += 1;
                return Err((Verdict::Malformed, "the tool-call arguments are not a JSON object; call the tool again with valid JSON arguments".into()));
            }
        };
        let s = |k: &str| args.get(k).and_then(|v| v.as_str()).map(str::to_string);
        Ok(match name {
            "ask_user" => Action::AskUser {
                question: s("question").unwrap_or_default(),
            },
            "request_approval" => Action::RequestApproval {
                approval_id: s("approval_id").unwrap_or_default(),
            },
            "retrieve" => Action::Retrieve {
                resource: s("resource").unwrap_or_default(),
            },
            "finish" => Action::Finish {
                status: match s("status").as_deref() {
                    Some("completed") => FinishStatus::Completed,
                    Some("blocked") => FinishStatus::Blocked,
                    _ => FinishStatus::Failed,
                },
                report: s("report").unwrap_or_default(),
                degraded: args
                    .get("degraded")
                    .and_then(|v| v.as_bool())
                    .unwrap_or(false),
            },
            tool => Action::Call {
                tool: tool.to_string(),
                args,
            },
        })
    }

    /// The next action. `Err` ends the cell as errored (the endpoint failed for good).
    async fn next(&mut self, last: Option<&ActionResult>) -> Result<Action, CellError> {
        if let (Some(id), Some(r)) = (self.awaiting.take(), last) {
            self.messages
                .push(json!({"role": "tool", "tool_call_id": id, "content": r.text}));
        }
        loop {
            if let Some((id, parsed)) = self.queue.pop_front() {
                match parsed {
                    Ok(action) => {
                        self.awaiting = Some(id);
                        self.actions += 1;
                        return Ok(action);
                    }
                    // Answered the way an agent runtime would: an error result, and go on.
                    Err(e) => self.messages.push(json!({"role": "tool", "tool_call_id": id, "content": format!("ERROR: {e}")})),
                }
                continue;
            }
            if let Some(budget) = self.client.config.cell_token_budget
                && self.tokens_used() >= budget
            {
                return Ok(Action::Finish {
                    status: FinishStatus::Failed,
                    report: format!("cell token budget of {budget} exhausted"),
                    degraded: false,
                });
            }
            if self.actions + self.wasted >= self.step_budget {
                return Ok(Action::OutOfSteps);
            }
            let body = self.body();
            let (request, sent) = conversation::compact(&body, &self.sent);
            self.sent = sent;
            let (requests_before, hits_before) = (self.stats.requests, self.stats.cache_hits);
            let t0 = Instant::now();
            // Recorded before the answer: a request the cell's wall-clock budget abandons keeps
            // its place in the conversation.
            self.exchanges.push(Exchange::unanswered(
                self.exchanges.len() as u32 + 1,
                self.started.elapsed().as_secs_f64() * 1e3,
                request,
                Some("no answer: the request was abandoned when the cell's wall-clock budget (cell_timeout_s) ran out".into()),
            ));
            let answer = self
                .client
                .complete_raw(&body, &self.ctx, &mut self.stats)
                .await;
            let latency_ms = t0.elapsed().as_secs_f64() * 1e3;
            let first = self.exchanges.len() == 1;
            if let Some(ex) = self.exchanges.last_mut() {
                ex.latency_ms = latency_ms;
                ex.requests = self.stats.requests - requests_before;
                ex.from_cache = self.stats.cache_hits > hits_before;
                ex.error = answer.as_ref().err().map(|e| e.message.clone());
            }
            if first {
                self.stats.first_request_ms = Some(latency_ms);
            }
            let (resp, raw) = answer?;
            let finish_reason = raw
                .pointer("/choices/0/finish_reason")
                .and_then(Value::as_str)
                .map(str::to_string);
            *self
                .stats
                .finish_reasons
                .entry(finish_reason.clone().unwrap_or_else(|| "none".into()))
                .or_default() += 1;
            if finish_reason.as_deref() == Some("length") {
                self.stats.length_turns += 1;
            }
            if let Some(ex) = self.exchanges.last_mut() {
                ex.finish_reason = finish_reason;
                ex.usage = raw.get("usage").filter(|u| !u.is_null()).cloned();
                ex.response = Some(raw);
            }
            self.stats.reported_model = Some(resp.model.clone());
            #[allow(deprecated)]
            if let Some(fp) = &resp.system_fingerprint {
                self.stats.system_fingerprint = Some(fp.clone());
            }
            let Some(choice) = resp.choices.first() else {
                return Err(CellError {
                    class: ErrorClass::ModelOutput,
                    message: "the completion has no choices".into(),
                });
            };
            let msg = &choice.message;
            let input_before = self.stats.input_tokens;
            match &resp.usage {
                Some(u) => {
                    self.stats.input_tokens += u.prompt_tokens as u64;
                    self.stats.output_tokens += u.completion_tokens as u64;
                    self.stats.cached_input_tokens += u
                        .prompt_tokens_details
                        .as_ref()
                        .and_then(|d| d.cached_tokens)
                        .unwrap_or(0) as u64;
                }
                None => {
                    let (i, _) =
                        tokens::count_with(&self.client.config.tokenizer, &body.to_string());
                    let (o, _) = tokens::count_with(
                        &self.client.config.tokenizer,
                        &serde_json::to_string(msg).unwrap_or_default(),
                    );
                    self.stats.input_tokens += i;
                    self.stats.output_tokens += o;
                    self.stats.estimated_tokens += i + o;
                }
            }
            if first {
                self.stats.first_prompt_tokens = Some(self.stats.input_tokens - input_before);
            }
            let text = msg.content.clone().unwrap_or_default();
            if let Some(ex) = self.exchanges.last_mut() {
                ex.text = text.clone();
            }
            let calls: Vec<(String, String, String)> = msg
                .tool_calls
                .iter()
                .flatten()
                .map(|c| match c {
                    ChatCompletionMessageToolCalls::Function(f) => (
                        f.id.clone(),
                        f.function.name.clone(),
                        f.function.arguments.clone(),
                    ),
                    ChatCompletionMessageToolCalls::Custom(c) => (
                        c.id.clone(),
                        c.custom_tool.name.clone(),
                        c.custom_tool.input.clone(),
                    ),
                })
                .collect();
            if calls.is_empty() {
                self.stats.text_only_turns += 1;
                self.messages
                    .push(json!({"role": "assistant", "content": text}));
                if self.nudged {
                    // This turn ends the cell: it gave the finish, so it is that action's step.
                    return Ok(Action::Finish {
                        status: FinishStatus::Failed,
                        report: "the model stopped calling tools".into(),
                        degraded: false,
                    });
                }
                self.nudged = true;
                self.wasted += 1;
                self.messages
                    .push(json!({"role": "user", "content": NUDGE}));
                continue;
            }
            // Arguments that are not a JSON object go back as `{}` (the call's error result says
            // why): servers that render the history through a chat template (llama.cpp's) parse
            // every call's arguments, and refuse the whole request when one does not parse. What
            // the model really wrote stays in the saved exchange.
            let echoed = |a: &str| match serde_json::from_str::<Value>(a) {
                Ok(Value::Object(_)) => a.to_string(),
                _ => "{}".to_string(),
            };
            self.messages.push(json!({"role": "assistant", "content": text,
                "tool_calls": calls.iter().map(|(id, n, a)| json!({"id": id, "type": "function", "function": {"name": n, "arguments": echoed(a)}})).collect::<Vec<_>>()}));
            let mut verdicts = Vec::new();
            for (id, name, args) in calls {
                let parsed = self.parse_call(&name, &args);
                let verdict = match &parsed {
                    Ok(_) => Verdict::Valid,
                    Err((v, _)) => *v,
                };
                verdicts.push(ToolCall {
                    id: id.clone(),
                    name,
                    arguments: args,
                    verdict,
                });
                self.queue.push_back((id, parsed.map_err(|(_, e)| e)));
            }
            if verdicts.iter().any(|c| c.verdict == Verdict::Valid) {
                self.stats.tool_call_turns += 1;
            }
            if verdicts.iter().any(|c| c.verdict == Verdict::Malformed) {
                self.stats.malformed_turns += 1;
            }
            if let Some(ex) = self.exchanges.last_mut() {
                ex.tool_calls = verdicts;
            }
        }
    }

    /// Cost of the cell's calls, when the model has prices.
    fn finish_stats(&mut self) {
        let c = &self.client.config;
        if let (Some(pi), Some(po)) = (c.price_input_per_mtok, c.price_output_per_mtok) {
            self.stats.cost_usd = Some(
                (self.stats.input_tokens as f64 * pi + self.stats.output_tokens as f64 * po) / 1e6,
            );
        }
    }
}

impl crate::destination::Destination for LiveAgent {
    fn next_action<'a>(
        &'a mut self,
        last: Option<&'a ActionResult>,
    ) -> crate::destination::ActionFuture<'a> {
        Box::pin(self.next(last))
    }

    fn clock_ms(&self, started: &Instant) -> f64 {
        started.elapsed().as_secs_f64() * 1e3
    }

    fn steps_without_action(&self) -> u32 {
        self.wasted
    }

    fn conversation(&mut self) -> Option<(Vec<Value>, Vec<Exchange>)> {
        Some((self.tools.clone(), std::mem::take(&mut self.exchanges)))
    }

    fn answer_probes<'a>(
        &'a mut self,
        _at: &'a crate::state::RestorePoint,
        probes: &'a [crate::destination::probe::Probe],
    ) -> crate::destination::ProbeFuture<'a> {
        Box::pin(self.probe_answers(probes))
    }

    fn report(&mut self) -> crate::destination::DestinationReport {
        self.finish_stats();
        crate::destination::DestinationReport {
            live: Some(self.stats.clone()),
            ..Default::default()
        }
    }
}
