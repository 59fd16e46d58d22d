//! The HTTP client of one live model, shared by all its cells: concurrency and requests-per-minute
//! limits, timeouts, the configured retry policy (with Retry-After), the cache, usage and cost.
//!
//! Requests go out with reqwest and async-openai's wire types, not through
//! `async_openai::Client`, which retries 429/5xx on its own, invisibly. The API key is read from
//! the environment variable the configuration names; it is never stored, logged, cached or put
//! in an error message. This file knows nothing of tools or the agent loop.

use std::time::{Duration, Instant};

use async_openai::types::chat::CreateChatCompletionResponse;
use serde_json::{Value, json};

use super::cache::CacheEntry;
use super::{Cache, CellError, ErrorClass, LiveStats, ModelConfig};
use crate::handoff::tokens;

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
