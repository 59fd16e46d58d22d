//! Live destinations: any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp
//! server, Ollama, LM Studio, OpenRouter), with the configured concurrency, requests-per-minute
//! limit, timeout and retry policy, and a content-addressed response cache.
//!
//! The wire types are async-openai's (`CreateChatCompletionResponse`, tool-call enums); requests
//! are sent with reqwest (the HTTP client async-openai itself uses) rather than through
//! `async_openai::Client`, because that client retries 429/5xx on its own, invisibly: the policy
//! that runs here must be exactly the configured one, with every retry counted.
//!
//! The API key is read from the environment variable the configuration *names*; it is never
//! stored, logged, cached, hashed into a cache key, or put in an error message.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_openai::types::chat::{ChatCompletionMessageToolCalls, CreateChatCompletionResponse};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Action, ActionResult};
pub use crate::record::{CellError, ErrorClass, LiveStats};
use crate::scenario::{FinishStatus, Object, Scenario};
use crate::strategy::{Handoff, Message, Role, tokens};

/// A live model, as the run configuration describes it (`[model.NAME]` tables).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// The name used on the command line (the table's key).
    #[serde(default, skip_deserializing)]
    pub name: String,
    /// Base URL including `/v1`, no trailing slash (e.g. `http://127.0.0.1:8000/v1`).
    pub base_url: String,
    /// The model name the endpoint expects.
    pub model: String,
    /// Name of the environment variable holding the API key (none for local servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Context window, for reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Encoding used to count tokens the provider does not report (`o200k_base`, `cl100k_base`).
    #[serde(default = "default_tokenizer")]
    pub tokenizer: String,
    /// Requests in flight at once.
    #[serde(default = "default_concurrency")]
    pub max_concurrency: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_minute: Option<u32>,
    /// Seconds before a request counts as timed out.
    #[serde(default = "default_timeout")]
    pub request_timeout_s: f64,
    /// Retries after the first attempt, on 429, 5xx, timeouts and connection errors.
    #[serde(default = "default_retries")]
    pub retries: u32,
    /// First backoff in seconds (doubled each retry, with jitter, capped at 30 s).
    #[serde(default = "default_backoff")]
    pub backoff_s: f64,
    /// Dollars per million input / output tokens, for cost per cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_input_per_mtok: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_output_per_mtok: Option<f64>,
    /// Tokens (input + output) a cell may spend before it ends as failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell_token_budget: Option<u64>,
}

fn default_tokenizer() -> String {
    "o200k_base".into()
}
fn default_concurrency() -> usize {
    4
}
fn default_timeout() -> f64 {
    120.0
}
fn default_retries() -> u32 {
    4
}
fn default_backoff() -> f64 {
    1.0
}

impl ModelConfig {
    /// `openai:MODEL`: the OpenAI API (or `OPENAI_BASE_URL`), key from `OPENAI_API_KEY`.
    pub fn openai(model: &str) -> ModelConfig {
        let base =
            std::env::var("OPENAI_BASE_URL").unwrap_or_else(|_| "https://api.openai.com/v1".into());
        ModelConfig {
            name: format!("openai:{model}"),
            base_url: base.trim_end_matches('/').to_string(),
            model: model.to_string(),
            api_key_env: Some("OPENAI_API_KEY".into()),
            temperature: None,
            seed: None,
            max_tokens: None,
            context_window: None,
            tokenizer: default_tokenizer(),
            max_concurrency: default_concurrency(),
            requests_per_minute: None,
            request_timeout_s: default_timeout(),
            retries: default_retries(),
            backoff_s: default_backoff(),
            price_input_per_mtok: None,
            price_output_per_mtok: None,
            cell_token_budget: None,
        }
    }
}

/// The response cache: one JSON file per request, named by the SHA-256 of its canonical key.
#[derive(Debug, Clone)]
pub struct Cache {
    pub dir: PathBuf,
}

#[derive(Serialize, Deserialize)]
struct CacheEntry {
    response: Value,
    latency_ms: f64,
}

/// Recursively sorts object keys: the canonical form hashed into cache keys.
pub fn canonical(v: &Value) -> Value {
    match v {
        Value::Object(o) => {
            let sorted: BTreeMap<&String, Value> =
                o.iter().map(|(k, v)| (k, canonical(v))).collect();
            let mut m = serde_json::Map::new();
            for (k, v) in sorted {
                m.insert(k.clone(), v);
            }
            Value::Object(m)
        }
        Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

impl Cache {
    /// The default location: the user's cache directory, else `.compaction-eval-cache`.
    pub fn default_dir() -> PathBuf {
        dirs::cache_dir()
            .map(|d| d.join("compaction-eval").join("responses"))
            .unwrap_or_else(|| PathBuf::from(".compaction-eval-cache"))
    }

    /// The key of a request: everything that determines the response, never the API key.
    pub fn key(base_url: &str, body: &Value, rep: u32) -> String {
        let doc = canonical(&json!({ "base_url": base_url, "request": body, "rep": rep }));
        hex::encode(<sha2::Sha256 as sha2::Digest>::digest(
            doc.to_string().as_bytes(),
        ))
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    fn get(&self, key: &str) -> Option<CacheEntry> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        serde_json::from_str(&text).ok()
    }

    fn put(&self, key: &str, e: &CacheEntry) {
        let p = self.path(key);
        if let Some(parent) = p.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        // Write then rename, so a killed run never leaves a torn entry.
        let tmp = p.with_extension("tmp");
        if std::fs::write(&tmp, serde_json::to_vec(e).unwrap_or_default()).is_ok() {
            let _ = std::fs::rename(&tmp, &p);
        }
    }

    /// Number of entries and their total size in bytes.
    pub fn stats(&self) -> (u64, u64) {
        let mut n = 0;
        let mut bytes = 0;
        if let Ok(dirs) = std::fs::read_dir(&self.dir) {
            for d in dirs.flatten() {
                if let Ok(files) = std::fs::read_dir(d.path()) {
                    for f in files.flatten() {
                        if f.path().extension().is_some_and(|x| x == "json") {
                            n += 1;
                            bytes += f.metadata().map(|m| m.len()).unwrap_or(0);
                        }
                    }
                }
            }
        }
        (n, bytes)
    }

    /// Removes every entry.
    pub fn clear(&self) -> std::io::Result<()> {
        if self.dir.exists() {
            std::fs::remove_dir_all(&self.dir)?;
        }
        Ok(())
    }
}

/// A live model shared by all its cells: HTTP client, limits, cache.
pub struct LiveClient {
    pub config: ModelConfig,
    http: reqwest::Client,
    slots: tokio::sync::Semaphore,
    next_start: tokio::sync::Mutex<Instant>,
    cache: Option<Cache>,
    /// Requests that went over HTTP (for tests and progress).
    pub http_requests: std::sync::atomic::AtomicU64,
    /// Retries in flight (the progress bar shows them).
    pub retrying: std::sync::atomic::AtomicU64,
}

fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let v = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| *s >= 0.0 && *s < 3600.0)
        .map(Duration::from_secs_f64)
}

impl LiveClient {
    pub fn new(config: ModelConfig, cache: Option<Cache>) -> Result<LiveClient, CellError> {
        let http = reqwest::Client::builder().build().map_err(|e| CellError {
            class: ErrorClass::Harness,
            message: format!("cannot build an HTTP client: {e}"),
        })?;
        Ok(LiveClient {
            slots: tokio::sync::Semaphore::new(config.max_concurrency.max(1)),
            next_start: tokio::sync::Mutex::new(Instant::now()),
            http,
            cache,
            config,
            http_requests: Default::default(),
            retrying: Default::default(),
        })
    }

    fn api_key(&self) -> Result<Option<String>, CellError> {
        match &self.config.api_key_env {
            None => Ok(None),
            Some(var) => match std::env::var(var) {
                Ok(k) if !k.is_empty() => Ok(Some(k)),
                _ => Err(CellError {
                    class: ErrorClass::Harness,
                    message: format!(
                        "model `{}`: environment variable {var} (api_key_env) is not set",
                        self.config.name
                    ),
                }),
            },
        }
    }

    async fn pace(&self) {
        if let Some(rpm) = self.config.requests_per_minute.filter(|r| *r > 0) {
            let gap = Duration::from_secs_f64(60.0 / rpm as f64);
            let mut next = self.next_start.lock().await;
            let now = Instant::now();
            if *next > now {
                tokio::time::sleep(*next - now).await;
            }
            *next = Instant::now().max(*next) + gap;
        }
    }

    /// One chat completion, from the cache or over HTTP under the configured policy.
    pub async fn complete(
        &self,
        body: &Value,
        rep: u32,
        jitter_seed: u64,
        stats: &mut LiveStats,
    ) -> Result<CreateChatCompletionResponse, CellError> {
        let key = Cache::key(&self.config.base_url, body, rep);
        if let Some(cache) = &self.cache
            && let Some(hit) = cache.get(&key)
            && let Ok(r) = serde_json::from_value::<CreateChatCompletionResponse>(hit.response)
        {
            stats.calls += 1;
            stats.cache_hits += 1;
            stats.latency_ms += hit.latency_ms;
            return Ok(r);
        }
        let api_key = self.api_key()?;
        let url = format!(
            "{}/chat/completions",
            self.config.base_url.trim_end_matches('/')
        );
        let timeout = Duration::from_secs_f64(self.config.request_timeout_s.max(0.001));
        let mut jitter = jitter_seed | 1;
        let mut attempt = 0u32;
        loop {
            let permit = self.slots.acquire().await.map_err(|_| CellError {
                class: ErrorClass::Harness,
                message: "the request limiter was closed".into(),
            })?;
            self.pace().await;
            let started = Instant::now();
            let mut req = self.http.post(&url).json(body);
            if let Some(k) = &api_key {
                req = req.bearer_auth(k);
            }
            self.http_requests
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let outcome = tokio::time::timeout(timeout, async {
                let resp = req.send().await?;
                let status = resp.status();
                let headers = resp.headers().clone();
                let bytes = resp.bytes().await?;
                Ok::<_, reqwest::Error>((status, headers, bytes))
            })
            .await;
            drop(permit);
            let latency_ms = started.elapsed().as_secs_f64() * 1e3;
            let (retryable, wait, message) = match outcome {
                Err(_) => (
                    true,
                    None,
                    format!("timed out after {:.1} s", timeout.as_secs_f64()),
                ),
                // The error text of reqwest can carry the URL, never the key (sent as a header).
                Ok(Err(e)) => (true, None, format!("request failed: {}", e.without_url())),
                Ok(Ok((status, headers, bytes))) if status.is_success() => {
                    let value: Value = serde_json::from_slice(&bytes).map_err(|e| CellError {
                        class: ErrorClass::ModelOutput,
                        message: format!("the endpoint's answer is not JSON: {e}"),
                    })?;
                    let parsed =
                        serde_json::from_value::<CreateChatCompletionResponse>(value.clone())
                            .map_err(|e| CellError {
                                class: ErrorClass::ModelOutput,
                                message: format!(
                                    "the endpoint's answer is not a chat completion: {e}"
                                ),
                            })?;
                    stats.calls += 1;
                    stats.latency_ms += latency_ms;
                    if let Some(cache) = &self.cache {
                        cache.put(
                            &key,
                            &CacheEntry {
                                response: value,
                                latency_ms,
                            },
                        );
                    }
                    let _ = headers;
                    return Ok(parsed);
                }
                Ok(Ok((status, headers, bytes))) => {
                    let retry = status.as_u16() == 429 || status.is_server_error();
                    let body = String::from_utf8_lossy(&bytes);
                    let snippet: String = body.chars().take(300).collect();
                    (
                        retry,
                        retry_after(&headers),
                        format!("HTTP {status}: {snippet}"),
                    )
                }
            };
            if !retryable || attempt >= self.config.retries {
                let class = if retryable {
                    ErrorClass::Infrastructure
                } else {
                    ErrorClass::Harness
                };
                return Err(CellError {
                    class,
                    message: format!(
                        "model `{}`: {message} (after {attempt} retr{})",
                        self.config.name,
                        if attempt == 1 { "y" } else { "ies" }
                    ),
                });
            }
            attempt += 1;
            stats.retries += 1;
            // Exponential backoff with jitter in [0.5, 1), derived from the cell's seed so that a
            // rerun waits the same; a Retry-After header wins.
            jitter ^= jitter << 13;
            jitter ^= jitter >> 7;
            jitter ^= jitter << 17;
            let factor = 0.5 + (jitter >> 11) as f64 / (1u64 << 53) as f64 / 2.0;
            let backoff =
                (self.config.backoff_s * 2f64.powi(attempt as i32 - 1)).min(30.0) * factor;
            let wait = wait.unwrap_or(Duration::from_secs_f64(backoff));
            self.retrying
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            tokio::time::sleep(wait).await;
            self.retrying
                .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

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

fn wire_message(m: &Message) -> Value {
    match (m.role, &m.tool_call) {
        (Role::Assistant, Some(tc)) => json!({"role": "assistant", "content": null,
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
    rep: u32,
    seed: u64,
    pub stats: LiveStats,
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
        rep: u32,
        seed: u64,
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
            rep,
            seed,
            stats: LiveStats::default(),
        }
    }

    fn body(&self) -> Value {
        let c = &self.client.config;
        let mut b = json!({ "model": c.model, "messages": self.messages, "tools": self.tools, "tool_choice": "auto" });
        if let Some(t) = c.temperature {
            b["temperature"] = json!(t);
        }
        if let Some(s) = c.seed {
            b["seed"] = json!(s);
        }
        if let Some(m) = c.max_tokens {
            b["max_tokens"] = json!(m);
        }
        b
    }

    fn tokens_used(&self) -> u64 {
        self.stats.input_tokens + self.stats.output_tokens
    }

    fn parse_call(&mut self, name: &str, arguments: &str) -> Result<Action, String> {
        if !self.tool_names.iter().any(|t| t == name) {
            self.stats.unknown_tools += 1;
            return Err(format!(
                "unknown tool `{name}`; available tools: {}",
                self.tool_names.join(", ")
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
                return Err("the tool-call arguments are not a JSON object; call the tool again with valid JSON arguments".into());
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
            let body = self.body();
            let resp = self
                .client
                .complete(&body, self.rep, self.seed, &mut self.stats)
                .await?;
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
                self.messages.push(json!({"role": "assistant", "content": msg.content.clone().unwrap_or_default()}));
                if self.nudged {
                    return Ok(Action::Finish {
                        status: FinishStatus::Failed,
                        report: "the model stopped calling tools".into(),
                        degraded: false,
                    });
                }
                self.nudged = true;
                self.messages
                    .push(json!({"role": "user", "content": NUDGE}));
                continue;
            }
            self.messages.push(json!({"role": "assistant", "content": msg.content,
                "tool_calls": calls.iter().map(|(id, n, a)| json!({"id": id, "type": "function", "function": {"name": n, "arguments": a}})).collect::<Vec<_>>()}));
            for (id, name, args) in calls {
                let parsed = self.parse_call(&name, &args);
                self.queue.push_back((id, parsed));
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

impl super::Destination for LiveAgent {
    fn next_action<'a>(&'a mut self, last: Option<&'a ActionResult>) -> super::ActionFuture<'a> {
        Box::pin(self.next(last))
    }

    fn clock_ms(&self, _started: &Instant) -> f64 {
        self.stats.latency_ms
    }

    fn report(&mut self) -> super::DestinationReport {
        self.finish_stats();
        super::DestinationReport {
            live: Some(self.stats.clone()),
            ..Default::default()
        }
    }
}

/// A live client as the summariser of an `llm_summary` strategy: one completion of the prompt.
impl crate::strategy::Summariser for LiveClient {
    fn summarise<'a>(&'a self, prompt: &'a str, seed: u64) -> crate::strategy::SummaryFuture<'a> {
        Box::pin(async move {
            let mut body = json!({
                "model": self.config.model,
                "messages": [{"role": "user", "content": prompt}],
            });
            if let Some(t) = self.config.temperature {
                body["temperature"] = json!(t);
            }
            if let Some(m) = self.config.max_tokens {
                body["max_tokens"] = json!(m);
            }
            let mut stats = LiveStats::default();
            let resp = self.complete(&body, 0, seed, &mut stats).await?;
            let text = resp
                .choices
                .first()
                .and_then(|ch| ch.message.content.clone())
                .filter(|t| !t.trim().is_empty())
                .ok_or_else(|| CellError {
                    class: ErrorClass::ModelOutput,
                    message: format!("summariser `{}` returned no text", self.config.name),
                })?;
            match &resp.usage {
                Some(u) => {
                    stats.input_tokens += u.prompt_tokens as u64;
                    stats.output_tokens += u.completion_tokens as u64;
                }
                None => {
                    stats.input_tokens += tokens::count(prompt);
                    stats.output_tokens += tokens::count(&text);
                    stats.estimated_tokens += stats.input_tokens + stats.output_tokens;
                }
            }
            stats.reported_model = Some(resp.model.clone());
            Ok((text, stats))
        })
    }
}
