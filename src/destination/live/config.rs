//! A live model's configuration (`[model.NAME]` tables and `openai:MODEL`): endpoint, key
//! variable name, sampling, limits, retries and prices. Data only: it never opens a connection and
//! never reads the key's value.

use serde::{Deserialize, Serialize};

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
    /// Output tokens per request; every request carries it ([`DEFAULT_MAX_TOKENS`] when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Context window in tokens: bounds strategies A, mask and B+A and decides whether a handoff
    /// fits at all. Default: [`known_context_window`] of `model`, else 32,768.
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
    /// HTTP requests (first attempts and retries) one cell may send; past it the cell ends as
    /// errored (`budget`).
    #[serde(default = "default_max_requests")]
    pub max_requests_per_cell: u32,
    /// Seconds of wall time one cell may take (model calls, backoff, queueing); past it the cell
    /// ends as errored (`budget`) with what it spent.
    #[serde(default = "default_cell_timeout")]
    pub cell_timeout_s: f64,
}

/// `max_tokens` of a request when the model's table sets none: every request is bounded.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;
/// Default `max_requests_per_cell`: room for the default step budget (40) with a retry for every
/// other turn, well short of what a runaway cell would send.
pub const DEFAULT_MAX_REQUESTS_PER_CELL: u32 = 100;
/// Default `cell_timeout_s` (15 minutes).
pub const DEFAULT_CELL_TIMEOUT_S: f64 = 900.0;

fn default_max_requests() -> u32 {
    DEFAULT_MAX_REQUESTS_PER_CELL
}
fn default_cell_timeout() -> f64 {
    DEFAULT_CELL_TIMEOUT_S
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
            max_requests_per_cell: default_max_requests(),
            cell_timeout_s: default_cell_timeout(),
        }
    }

    /// `max_tokens` as sent.
    pub fn max_tokens_sent(&self) -> u32 {
        self.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)
    }

    /// The base URL as it may be shown and recorded: without any `user:password@` part.
    pub fn display_url(&self) -> String {
        redact_userinfo(&self.base_url)
    }

    /// The `[model.NAME]` table (or `openai:MODEL`) a message about this model names.
    pub fn table(&self) -> String {
        if self.name.starts_with("openai:") {
            format!("`{}` (OPENAI_BASE_URL / OPENAI_API_KEY)", self.name)
        } else {
            format!("[model.{}]", self.name)
        }
    }

    /// Checks the duration fields (`request_timeout_s`, `backoff_s`): finite, `request_timeout_s`
    /// above 0 and `backoff_s` at least 0. The error names the key.
    pub fn check_durations(&self) -> Result<(), DurationError> {
        for (key, v, zero_ok) in [
            ("request_timeout_s", self.request_timeout_s, false),
            ("backoff_s", self.backoff_s, true),
        ] {
            if !v.is_finite() || v < 0.0 || (!zero_ok && v == 0.0) || v > 1e6 {
                return Err(DurationError {
                    key,
                    value: v,
                    zero_ok,
                });
            }
        }
        Ok(())
    }
}

/// A duration field of a model table out of range: the key, its value and whether 0 is allowed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "`{key}` must be a finite number of seconds {} (and at most 1000000), not {value}",
    if *zero_ok { "of at least 0" } else { "above 0" }
)]
pub struct DurationError {
    pub key: &'static str,
    pub value: f64,
    pub zero_ok: bool,
}

/// Published context windows of common models, matched on the model name's start (case
/// insensitive, after any `org/` prefix). Exact names win over shorter prefixes.
const KNOWN_WINDOWS: &[(&str, u64)] = &[
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("gpt-5", 400_000),
    ("claude", 200_000),
    ("llama3.1", 131_072),
    ("llama-3.1", 131_072),
    ("llama3.2", 131_072),
    ("llama-3.2", 131_072),
    ("llama3.3", 131_072),
    ("llama-3.3", 131_072),
    ("qwen2.5", 32_768),
    ("qwen3", 32_768),
    ("mistral", 32_768),
    ("smollm2", 8_192),
];

/// The window a model is known to have, from [`KNOWN_WINDOWS`].
pub fn known_context_window(model: &str) -> Option<u64> {
    let m = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    KNOWN_WINDOWS
        .iter()
        .filter(|(p, _)| m.starts_with(p))
        .max_by_key(|(p, _)| p.len())
        .map(|(_, w)| *w)
}

impl ModelConfig {
    /// The window the harness bounds handoffs by: configured, else known, else 32,768.
    pub fn window(&self) -> u64 {
        self.context_window
            .or_else(|| known_context_window(&self.model))
            .unwrap_or(32_768)
    }
}

/// `scheme://user:pass@host/…` → `scheme://host/…`.
pub fn redact_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_info_is_dropped_from_shown_urls() {
        assert_eq!(
            redact_userinfo("https://u:secret@example.com/v1"),
            "https://example.com/v1"
        );
        assert_eq!(
            redact_userinfo("http://127.0.0.1:8000/v1"),
            "http://127.0.0.1:8000/v1"
        );
        assert_eq!(
            redact_userinfo("http://host/v1?next=a@b"),
            "http://host/v1?next=a@b"
        );
    }
}
