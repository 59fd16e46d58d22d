//! The HTTP client of one live model, shared by all its cells: concurrency and requests-per-minute
//! limits, timeouts, the configured retry policy (with Retry-After), the per-cell request cap, the
//! cache, usage and cost; what an endpoint's error means (its [`ErrorClass`], whether it is worth
//! a retry) and the bounded, redacted message a record keeps; and the cheap probe a run sends
//! before its first cell.
//!
//! Requests go out with reqwest and async-openai's wire types, not through
//! `async_openai::Client`, which retries 429/5xx on its own, invisibly. The API key is read from
//! the environment variable the configuration names; it is never stored, logged, cached or put
//! in an error message. This file knows nothing of tools or the agent loop.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_openai::types::chat::CreateChatCompletionResponse;
use serde_json::Value;

use super::cache::CacheEntry;
use super::{Cache, CellError, ErrorClass, LiveStats, ModelConfig};
use crate::tokens;

/// At most this many characters of an endpoint's error message are kept in a record.
pub const ERROR_MESSAGE_LIMIT: usize = 2000;

/// Who a request is for: the cell's identity (part of the cache key), the seed of the backoff
/// jitter, and the cell's index in the run (for progress events).
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    /// The cell's identity as the records name it (`null` for a shared summary).
    pub identity: Value,
    pub seed: u64,
    pub cell: Option<usize>,
}

/// A retry about to wait, as progress reporters see it.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryNotice {
    pub model: String,
    /// The cell's index in the run, when the request is a cell's.
    pub cell: Option<usize>,
    /// 1 for the first retry.
    pub attempt: u32,
    pub wait: Duration,
    /// What failed (the same bounded, redacted text an errored record would keep).
    pub reason: String,
}

/// Receives every [`RetryNotice`] of a client.
pub type RetryHook = Arc<dyn Fn(RetryNotice) + Send + Sync>;

/// A live model shared by all its cells: HTTP client, limits, cache.
pub struct LiveClient {
    pub config: ModelConfig,
    http: reqwest::Client,
    slots: tokio::sync::Semaphore,
    next_start: tokio::sync::Mutex<Instant>,
    cache: Option<Cache>,
    /// Requests that went over HTTP (for tests and progress).
    pub http_requests: AtomicU64,
    /// Requests waiting out a backoff right now.
    pub retrying: AtomicU64,
    on_retry: Mutex<Option<RetryHook>>,
}

fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let v = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| *s >= 0.0 && *s < 3600.0)
        .map(Duration::from_secs_f64)
}

/// An error and its causes, `outer: inner: root` (reqwest's own text hides the root cause, such
/// as "Connection refused").
fn chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        let t = s.to_string();
        if !parts.iter().any(|p| p.contains(&t)) {
            parts.push(t);
        }
        cur = s.source();
    }
    parts.join(": ")
}

/// Replaces what looks like a credential: the key itself, a bearer token, an `sk-…` style key.
pub fn redact(text: &str, key: Option<&str>) -> String {
    let out = match key.filter(|k| k.len() >= 4) {
        Some(k) => text.replace(k, "[REDACTED]"),
        None => text.to_string(),
    };
    let mut result = String::with_capacity(out.len());
    let mut redact_next = false;
    for (i, word) in out.split(' ').enumerate() {
        if i > 0 {
            result.push(' ');
        }
        let bare = word.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '_');
        let keyish = (bare.starts_with("sk-") || bare.starts_with("sk_")) && bare.len() >= 12;
        if (redact_next && bare.len() >= 8) || keyish {
            result.push_str(&word.replace(bare, "[REDACTED]"));
        } else {
            result.push_str(word);
        }
        redact_next = bare.eq_ignore_ascii_case("bearer");
    }
    result
}

/// The error message of an endpoint's answer: the `error.message` / `error` / `detail` /
/// `message` of a JSON body (with the error's type and code), else the body's text; whitespace
/// collapsed, at most [`ERROR_MESSAGE_LIMIT`] characters, credentials redacted.
pub fn error_text(body: &[u8], key: Option<&str>) -> String {
    let raw = String::from_utf8_lossy(body);
    let text = match serde_json::from_slice::<Value>(body) {
        Ok(v) => {
            let err = &v["error"];
            let as_text = |x: &Value| match x {
                Value::String(s) => Some(s.clone()),
                Value::Null => None,
                other => Some(other.to_string()),
            };
            let message = as_text(&err["message"])
                .or_else(|| err.as_str().map(str::to_string))
                .or_else(|| as_text(&v["detail"]))
                .or_else(|| as_text(&v["message"]));
            match message {
                Some(m) => {
                    let kind: Vec<String> = ["type", "code"]
                        .iter()
                        .filter_map(|k| as_text(&err[*k]))
                        .filter(|t| !m.contains(t.as_str()))
                        .collect();
                    if kind.is_empty() {
                        m
                    } else {
                        format!("{m} ({})", kind.join(", "))
                    }
                }
                None => raw.to_string(),
            }
        }
        Err(_) => raw.to_string(),
    };
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let collapsed = if collapsed.is_empty() {
        "(empty body)".to_string()
    } else {
        collapsed
    };
    let redacted = redact(&collapsed, key);
    let n = redacted.chars().count();
    if n > ERROR_MESSAGE_LIMIT {
        let kept: String = redacted.chars().take(ERROR_MESSAGE_LIMIT).collect();
        format!("{kept}… ({} more characters)", n - ERROR_MESSAGE_LIMIT)
    } else {
        redacted
    }
}

/// Whether an error message says the request does not fit the context window (OpenAI
/// `context_length_exceeded`, vLLM "maximum context length", llama.cpp "exceeds the available
/// context size", llama-cpp-python "exceed context window").
fn is_context_length(lower: &str) -> bool {
    [
        "context_length_exceeded",
        "context length",
        "context window",
        "context size",
        "maximum context",
        "n_ctx",
        "prompt is too long",
        "too many tokens",
    ]
    .iter()
    .any(|m| lower.contains(m))
}

/// Whether an error message is a request validation error (a Pydantic or schema failure that some
/// servers, llama-cpp-python among them, report under HTTP 500).
fn is_validation(lower: &str) -> bool {
    [
        "validation error",
        "validationerror",
        "field required",
        "input should be",
        "extra inputs are not permitted",
        "invalid_request_error",
        "unprocessable",
    ]
    .iter()
    .any(|m| lower.contains(m))
}

/// The class of an HTTP error answer, and whether a retry could help.
pub fn classify(status: u16, message: &str) -> (ErrorClass, bool) {
    let lower = message.to_lowercase();
    if status >= 400 && status != 429 && is_context_length(&lower) {
        return (ErrorClass::ContextLength, false);
    }
    match status {
        408 | 429 => (ErrorClass::Infrastructure, true),
        401 | 403 | 404 => (ErrorClass::Harness, false),
        s if s >= 500 && is_validation(&lower) => (ErrorClass::RequestRejected, false),
        s if s >= 500 => (ErrorClass::Infrastructure, true),
        _ => (ErrorClass::RequestRejected, false),
    }
}

/// What to add to an HTTP error so that the reader knows what to fix.
fn hint(status: u16) -> &'static str {
    match status {
        401 | 403 => " (the endpoint refused the API key: check api_key_env)",
        404 => " (check base_url — it ends with /v1 — and the model name)",
        _ => "",
    }
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "y" } else { "ies" }
}

/// rustls needs one process-wide crypto provider before the first TLS client is built; the
/// build carries ring only (see Cargo.toml), so it is installed here, once. A provider already
/// installed by an embedding program is kept.
fn install_tls_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

impl LiveClient {
    pub fn new(config: ModelConfig, cache: Option<Cache>) -> Result<LiveClient, CellError> {
        install_tls_provider();
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
            on_retry: Mutex::new(None),
        })
    }

    /// Sends every retry notice of this client to `hook` (replacing any earlier one).
    pub fn set_retry_hook(&self, hook: Option<RetryHook>) {
        if let Ok(mut h) = self.on_retry.lock() {
            *h = hook;
        }
    }

    fn notify_retry(&self, n: RetryNotice) {
        let hook = self.on_retry.lock().ok().and_then(|h| h.clone());
        if let Some(h) = hook {
            h(n);
        }
    }

    fn api_key(&self) -> Result<Option<String>, CellError> {
        match &self.config.api_key_env {
            None => Ok(None),
            Some(var) => match std::env::var(var) {
                Ok(k) if !k.is_empty() => Ok(Some(k)),
                _ => Err(CellError {
                    class: ErrorClass::Harness,
                    message: format!(
                        "model {}: environment variable {var} (api_key_env) is not set; export it, or change api_key_env",
                        self.config.table()
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

    fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.config.base_url.trim_end_matches('/'))
    }

    fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.config.request_timeout_s.clamp(0.001, 86_400.0))
    }

    /// One cheap request before the run's first cell (`GET /models`): the key variable is set,
    /// the base URL answers and does not refuse the key. Any other answer (404 included: not
    /// every server lists models) counts as reachable. The message names the model's table.
    pub async fn probe(&self) -> Result<(), String> {
        let key = self.api_key().map_err(|e| e.message)?;
        let url = self.url("models");
        let shown = super::config::redact_userinfo(&url);
        let timeout = self.timeout().min(Duration::from_secs(10));
        let mut req = self.http.get(&url).timeout(timeout);
        if let Some(k) = &key {
            req = req.bearer_auth(k);
        }
        let table = self.config.table();
        let answer = tokio::time::timeout(timeout, async {
            let resp = req.send().await?;
            let status = resp.status();
            let body = resp.bytes().await.unwrap_or_default();
            Ok::<_, reqwest::Error>((status, body))
        })
        .await;
        match answer {
            Err(_) => Err(format!(
                "model {table}: {shown} did not answer within {:.1} s; start the server or fix base_url",
                timeout.as_secs_f64()
            )),
            Ok(Err(e)) => Err(format!(
                "model {table}: cannot reach {shown}: {}; start the server or fix base_url",
                redact(&chain(&e.without_url()), key.as_deref())
            )),
            Ok(Ok((status, body))) if status.as_u16() == 401 || status.as_u16() == 403 => {
                Err(format!(
                    "model {table}: {shown} refused the API key (HTTP {status}): {}; check api_key_env{}",
                    error_text(&body, key.as_deref()),
                    self.config
                        .api_key_env
                        .as_deref()
                        .map(|v| format!(" (now {v})"))
                        .unwrap_or_default()
                ))
            }
            Ok(Ok(_)) => Ok(()),
        }
    }

    /// One chat completion, from the cache or over HTTP under the configured policy.
    pub async fn complete(
        &self,
        body: &Value,
        ctx: &CallContext,
        stats: &mut LiveStats,
    ) -> Result<CreateChatCompletionResponse, CellError> {
        Ok(self.complete_raw(body, ctx, stats).await?.0)
    }

    /// [`LiveClient::complete`], with the completion as the endpoint sent it (for the cell's
    /// conversation).
    pub async fn complete_raw(
        &self,
        body: &Value,
        ctx: &CallContext,
        stats: &mut LiveStats,
    ) -> Result<(CreateChatCompletionResponse, Value), CellError> {
        self.complete_within(body, ctx, stats, self.timeout()).await
    }

    async fn complete_within(
        &self,
        body: &Value,
        ctx: &CallContext,
        stats: &mut LiveStats,
        timeout: Duration,
    ) -> Result<(CreateChatCompletionResponse, Value), CellError> {
        let key = Cache::key(&self.config.base_url, body, &ctx.identity);
        if let Some(cache) = &self.cache
            && let Some(hit) = cache.get(&key)
            && let Ok(r) =
                serde_json::from_value::<CreateChatCompletionResponse>(hit.response.clone())
        {
            stats.calls += 1;
            stats.cache_hits += 1;
            stats.cache_latency_ms += hit.latency_ms;
            return Ok((r, hit.response));
        }
        let api_key = self.api_key()?;
        let url = self.url("chat/completions");
        let shown = super::config::redact_userinfo(&url);
        let name = &self.config.name;
        let cap = self.config.max_requests_per_cell;
        let mut jitter = ctx.seed | 1;
        let mut attempt = 0u32;
        loop {
            if stats.requests >= cap {
                return Err(CellError {
                    class: ErrorClass::Budget,
                    message: format!(
                        "model `{name}`: the cell's request cap of {cap} (max_requests_per_cell) is reached"
                    ),
                });
            }
            let permit = self.slots.acquire().await.map_err(|_| CellError {
                class: ErrorClass::Harness,
                message: "the request limiter was closed".into(),
            })?;
            self.pace().await;
            let started = Instant::now();
            let mut req = self.http.post(&url).json(body).timeout(timeout);
            if let Some(k) = &api_key {
                req = req.bearer_auth(k);
            }
            self.http_requests.fetch_add(1, Ordering::Relaxed);
            stats.requests += 1;
            // Past the timeout the future is dropped: reqwest closes the connection (a response
            // that was not read to its end is never put back in the pool), so a server that keeps
            // generating is abandoned, not waited for.
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
            stats.latency_ms += latency_ms;
            let (class, retryable, wait, message) = match outcome {
                Err(_) => (
                    ErrorClass::Infrastructure,
                    true,
                    None,
                    format!(
                        "no complete answer from {shown} within {:.1} s (request_timeout_s); the request was abandoned and its connection closed",
                        timeout.as_secs_f64()
                    ),
                ),
                Ok(Err(e)) if e.is_timeout() => (
                    ErrorClass::Infrastructure,
                    true,
                    None,
                    format!(
                        "no complete answer from {shown} within {:.1} s (request_timeout_s); the request was abandoned and its connection closed",
                        timeout.as_secs_f64()
                    ),
                ),
                Ok(Err(e)) if e.is_connect() => (
                    ErrorClass::Infrastructure,
                    true,
                    None,
                    format!(
                        "cannot connect to {shown}: {}",
                        redact(&chain(&e.without_url()), api_key.as_deref())
                    ),
                ),
                Ok(Err(e)) => (
                    ErrorClass::Infrastructure,
                    true,
                    None,
                    format!(
                        "request to {shown} failed: {}",
                        redact(&chain(&e.without_url()), api_key.as_deref())
                    ),
                ),
                Ok(Ok((status, _, bytes))) if status.is_success() => {
                    let not_completion = |what: String| CellError {
                        class: ErrorClass::ModelOutput,
                        message: format!(
                            "model `{name}`: the answer of {shown} (HTTP {status}) is not a chat completion: {what}; it began: {}",
                            error_text(&bytes[..bytes.len().min(600)], api_key.as_deref())
                        ),
                    };
                    let value: Value = serde_json::from_slice(&bytes)
                        .map_err(|e| not_completion(e.to_string()))?;
                    let parsed =
                        serde_json::from_value::<CreateChatCompletionResponse>(value.clone())
                            .map_err(|e| not_completion(e.to_string()))?;
                    stats.calls += 1;
                    if let Some(cache) = &self.cache {
                        cache.put(
                            &key,
                            &CacheEntry {
                                response: value.clone(),
                                latency_ms,
                            },
                        );
                    }
                    return Ok((parsed, value));
                }
                Ok(Ok((status, headers, bytes))) => {
                    let text = error_text(&bytes, api_key.as_deref());
                    let (class, retry) = classify(status.as_u16(), &text);
                    (
                        class,
                        retry,
                        retry_after(&headers),
                        format!(
                            "HTTP {status} from {shown}: {text}{}",
                            hint(status.as_u16())
                        ),
                    )
                }
            };
            if !retryable || attempt >= self.config.retries {
                return Err(CellError {
                    class,
                    message: format!(
                        "model `{name}`: {message} (after {attempt} retr{}{})",
                        plural(attempt),
                        if retryable {
                            ""
                        } else {
                            "; not retried: a retry cannot change the answer"
                        }
                    ),
                });
            }
            if stats.requests >= cap {
                return Err(CellError {
                    class: ErrorClass::Budget,
                    message: format!(
                        "model `{name}`: the cell's request cap of {cap} (max_requests_per_cell) is reached; the last request: {message}"
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
            let wait = wait.unwrap_or(Duration::from_secs_f64(backoff.max(0.0)));
            self.retrying.fetch_add(1, Ordering::Relaxed);
            self.notify_retry(RetryNotice {
                model: name.clone(),
                cell: ctx.cell,
                attempt,
                wait,
                reason: message,
            });
            tokio::time::sleep(wait).await;
            self.retrying.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// A live client as the summariser of an `llm_summary` strategy: one completion of the prompt.
impl crate::strategy::Summariser for LiveClient {
    fn summarise<'a>(&'a self, prompt: &'a str, seed: u64) -> crate::strategy::SummaryFuture<'a> {
        Box::pin(async move {
            let body = self.config.summary_body(prompt);
            let timeout =
                Duration::from_secs_f64(self.config.summary_timeout_s().clamp(0.001, 86_400.0));
            let mut stats = LiveStats::default();
            let ctx = CallContext {
                identity: Value::Null,
                seed,
                cell: None,
            };
            let (resp, _) = self
                .complete_within(&body, &ctx, &mut stats, timeout)
                .await?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_classes_follow_status_and_message() {
        use ErrorClass::*;
        assert_eq!(classify(429, "slow down"), (Infrastructure, true));
        assert_eq!(classify(503, "loading model"), (Infrastructure, true));
        assert_eq!(
            classify(400, "messages[2].content: expected string"),
            (RequestRejected, false)
        );
        assert_eq!(classify(422, "Field required"), (RequestRejected, false));
        // llama-cpp-python reports Pydantic validation errors as HTTP 500.
        assert_eq!(
            classify(
                500,
                "1 validation error for ChatCompletionRequestAssistantMessage content Input should be a valid string"
            ),
            (RequestRejected, false)
        );
        assert_eq!(
            classify(
                400,
                "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens"
            ),
            (ContextLength, false)
        );
        assert_eq!(
            classify(
                500,
                "the request exceeds the available context size, try increasing it"
            ),
            (ContextLength, false)
        );
        assert_eq!(classify(401, "bad key"), (Harness, false));
        assert_eq!(classify(404, "not found"), (Harness, false));
    }

    #[test]
    fn error_text_takes_the_message_bounds_it_and_redacts_keys() {
        let body = br#"{"error": {"message": "Invalid 'messages[3].content': expected a string", "type": "invalid_request_error", "code": null}}"#;
        assert_eq!(
            error_text(body, None),
            "Invalid 'messages[3].content': expected a string (invalid_request_error)"
        );
        assert_eq!(error_text(br#"{"detail": "Not Found"}"#, None), "Not Found");
        assert_eq!(
            error_text(
                b"key sk-live-ABCDEF123456 and Bearer abcdefgh12345 and mysecretvalue",
                Some("mysecretvalue")
            ),
            "key [REDACTED] and Bearer [REDACTED] and [REDACTED]"
        );
        let long = "x".repeat(ERROR_MESSAGE_LIMIT + 10);
        let t = error_text(long.as_bytes(), None);
        assert!(t.ends_with("… (10 more characters)"), "{t}");
        assert_eq!(error_text(b"", None), "(empty body)");
    }
}
