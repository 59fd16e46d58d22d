//! A live model's configuration (`[model.NAME]` tables and `openai:MODEL`): endpoint, key
//! variable name, sampling, limits, retries and prices. Data only: it never opens a connection and
//! never reads the key's value.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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
    /// `tool_choice` of every destination request: `"auto"` (the default), `"required"`, `"none"`,
    /// or an object naming one function.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    /// Stop sequences sent with every request (`stop`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    /// The start of every destination answer, sent as a final assistant message that a server
    /// which continues a final assistant turn (llama.cpp's server) answers from inside. With a
    /// template whose tool calls open with a marker, the marker here forces a tool call where the
    /// server's `tool_choice = "required"` still lets prose come first. Not kept in the
    /// conversation the model sees next turn: the answer as parsed is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill: Option<String>,
    /// Extra fields of every request body (`top_k`, `repetition_penalty`, `chat_template_kwargs`,
    /// …); they may not set the fields the harness owns ([`RESERVED_FIELDS`]).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra_body: Map<String, Value>,
    /// The model as a live summariser of B, apart from its destination settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summariser: Option<SummariserSettings>,
}

/// A model's settings when it summarises for an `llm_summary` strategy (`[model.NAME.summariser]`);
/// each one unset takes the model's own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummariserSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_timeout_s: Option<f64>,
}

/// Request fields the harness sets itself: `extra_body` may not set them (`stream` would change
/// the answer's format).
pub const RESERVED_FIELDS: [&str; 7] = [
    "model",
    "messages",
    "tools",
    "tool_choice",
    "max_tokens",
    "stop",
    "stream",
];

/// Known local servers: the `--models` prefix, the server, and its default base URL.
pub const LOCAL_SERVERS: [(&str, &str, &str); 3] = [
    ("vllm:", "vLLM", "http://127.0.0.1:8000/v1"),
    ("ollama:", "Ollama", "http://127.0.0.1:11434/v1"),
    ("llamacpp:", "llama.cpp server", "http://127.0.0.1:8080/v1"),
];

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
    /// A model named by a prefix of `--models`: `openai:MODEL` (the OpenAI API or
    /// `OPENAI_BASE_URL`, key from `OPENAI_API_KEY`), or a local server's (`vllm:MODEL`,
    /// `ollama:MODEL`, `llamacpp:MODEL`: its default URL on 127.0.0.1, no key). `None` for any
    /// other name, or a prefix without a model.
    pub fn from_prefix(spec: &str) -> Option<ModelConfig> {
        if let Some(m) = spec.strip_prefix("openai:").filter(|m| !m.is_empty()) {
            return Some(ModelConfig::openai(m));
        }
        LOCAL_SERVERS.iter().find_map(|(prefix, _, url)| {
            let m = spec.strip_prefix(prefix).filter(|m| !m.is_empty())?;
            let mut c = ModelConfig::at(url, m);
            c.name = spec.to_string();
            Some(c)
        })
    }

    /// `openai:MODEL`: the OpenAI API (or `OPENAI_BASE_URL`), key from `OPENAI_API_KEY`.
    pub fn openai(model: &str) -> ModelConfig {
        let base =
            std::env::var("OPENAI_BASE_URL").unwrap_or_else(|_| "https://api.openai.com/v1".into());
        let mut c = ModelConfig::at(&base, model);
        c.name = format!("openai:{model}");
        c.api_key_env = Some("OPENAI_API_KEY".into());
        c
    }

    /// `model` at `base_url`, without a key, every other setting its default.
    pub fn at(base_url: &str, model: &str) -> ModelConfig {
        ModelConfig {
            name: model.to_string(),
            base_url: base_url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            api_key_env: None,
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
            tool_choice: None,
            stop: Vec::new(),
            prefill: None,
            extra_body: Map::new(),
            summariser: None,
        }
    }

    /// The request fields every destination request carries besides messages and tools:
    /// `max_tokens`, `tool_choice`, sampling, stop sequences and `extra_body`.
    pub fn request_fields(&self) -> Map<String, Value> {
        let mut b = Map::new();
        b.insert("model".into(), Value::from(self.model.clone()));
        b.insert(
            "tool_choice".into(),
            self.tool_choice.clone().unwrap_or_else(|| "auto".into()),
        );
        b.insert("max_tokens".into(), self.max_tokens_sent().into());
        if let Some(t) = self.temperature {
            b.insert("temperature".into(), t.into());
        }
        if let Some(s) = self.seed {
            b.insert("seed".into(), s.into());
        }
        if !self.stop.is_empty() {
            b.insert("stop".into(), self.stop.clone().into());
        }
        for (k, v) in &self.extra_body {
            b.entry(k.clone()).or_insert_with(|| v.clone());
        }
        b
    }

    /// The body of a summariser's request for `prompt`: its own settings, else the model's.
    pub fn summary_body(&self, prompt: &str) -> Value {
        let s = self.summariser.clone().unwrap_or_default();
        let mut b = Map::new();
        b.insert("model".into(), Value::from(self.model.clone()));
        b.insert(
            "messages".into(),
            serde_json::json!([{"role": "user", "content": prompt}]),
        );
        b.insert(
            "max_tokens".into(),
            s.max_tokens.unwrap_or(self.max_tokens_sent()).into(),
        );
        if let Some(t) = s.temperature.or(self.temperature) {
            b.insert("temperature".into(), t.into());
        }
        if !self.stop.is_empty() {
            b.insert("stop".into(), self.stop.clone().into());
        }
        for (k, v) in &self.extra_body {
            b.entry(k.clone()).or_insert_with(|| v.clone());
        }
        Value::Object(b)
    }

    /// The summariser's request timeout, s.
    pub fn summary_timeout_s(&self) -> f64 {
        self.summariser
            .as_ref()
            .and_then(|s| s.request_timeout_s)
            .unwrap_or(self.request_timeout_s)
    }

    /// Checks `tool_choice`, `extra_body`, `stop` and the summariser's settings; the error names
    /// the key and what is wrong.
    pub fn check_request(&self) -> Result<(), String> {
        match &self.tool_choice {
            None => {}
            Some(Value::String(s)) if ["auto", "required", "none"].contains(&s.as_str()) => {}
            Some(Value::Object(o)) if o.get("type").and_then(Value::as_str) == Some("function") => {
            }
            Some(other) => {
                return Err(format!(
                    "`tool_choice` must be \"auto\", \"required\", \"none\" or {{type = \"function\", function = {{name = \"…\"}}}}, not {other}"
                ));
            }
        }
        if let Some(k) = RESERVED_FIELDS
            .iter()
            .find(|k| self.extra_body.contains_key(**k))
        {
            return Err(format!(
                "`extra_body` may not set `{k}`: the harness sets it (use the model's own key where there is one)"
            ));
        }
        if self.stop.iter().any(String::is_empty) {
            return Err("`stop` holds an empty sequence".into());
        }
        if self.prefill.as_deref() == Some("") {
            return Err(
                "`prefill` is empty: leave it out, or give the text every answer starts with"
                    .into(),
            );
        }
        if let Some(s) = &self.summariser {
            if s.max_tokens == Some(0) {
                return Err("`summariser.max_tokens` must be at least 1".into());
            }
            if let Some(t) = s.request_timeout_s
                && !(t > 0.0 && t.is_finite() && t <= 1e6)
            {
                return Err(format!(
                    "`summariser.request_timeout_s` must be a positive number of seconds, not {t}"
                ));
            }
        }
        Ok(())
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
        } else if LOCAL_SERVERS
            .iter()
            .any(|(p, _, _)| self.name.starts_with(p))
        {
            format!("`{}` (--base-url / --api-key-env)", self.name)
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
    fn prefixes_name_their_server_s_default_url_and_no_key() {
        for (spec, url) in [
            ("vllm:Qwen/Qwen2.5-7B-Instruct", "http://127.0.0.1:8000/v1"),
            ("ollama:llama3.1:8b", "http://127.0.0.1:11434/v1"),
            ("llamacpp:smollm2", "http://127.0.0.1:8080/v1"),
        ] {
            let m = ModelConfig::from_prefix(spec).expect("a prefix");
            assert_eq!((m.name.as_str(), m.base_url.as_str()), (spec, url));
            assert_eq!(m.model, spec.split_once(':').map(|x| x.1).unwrap_or(""));
            assert_eq!(m.api_key_env, None);
        }
        let o = ModelConfig::from_prefix("openai:gpt-4o").expect("openai");
        assert_eq!(o.api_key_env.as_deref(), Some("OPENAI_API_KEY"));
        assert_eq!(ModelConfig::from_prefix("vllm:"), None);
        assert_eq!(ModelConfig::from_prefix("qwen"), None);
    }

    #[test]
    fn request_fields_carry_the_table_s_settings_and_refuse_the_harness_s_own() {
        let mut m = ModelConfig::at("http://h/v1", "m");
        m.tool_choice = Some("required".into());
        m.stop = vec!["<|im_end|>".into()];
        m.extra_body.insert("top_k".into(), 20.into());
        m.max_tokens = Some(64);
        let f = m.request_fields();
        assert_eq!(f["tool_choice"], "required");
        assert_eq!(f["stop"], serde_json::json!(["<|im_end|>"]));
        assert_eq!(
            (f["top_k"].clone(), f["max_tokens"].clone()),
            (20.into(), 64.into())
        );
        assert_eq!(m.check_request(), Ok(()));
        m.summariser = Some(SummariserSettings {
            max_tokens: Some(300),
            ..Default::default()
        });
        assert_eq!(m.summary_body("p")["max_tokens"], 300);
        m.extra_body.insert("messages".into(), Value::Null);
        assert!(
            m.check_request()
                .expect_err("reserved")
                .contains("`messages`")
        );
        m.extra_body.remove("messages");
        m.prefill = Some(String::new());
        assert!(m.check_request().expect_err("empty").contains("`prefill`"));
        m.prefill = Some("<tool_call>\n".into());
        assert_eq!(m.check_request(), Ok(()));
        m.tool_choice = Some("always".into());
        assert!(m.check_request().expect_err("bad").contains("tool_choice"));
    }

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
