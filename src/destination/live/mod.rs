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

mod agent;
mod cache;
mod client;
mod config;

pub use crate::record::{CellError, ErrorClass, LiveStats};
pub use agent::{LiveAgent, NUDGE, tool_definitions, wire_message};
pub use cache::{Cache, canonical};
pub use client::{CallContext, LiveClient, RetryHook, RetryNotice, classify, error_text, redact};
pub use config::{
    DEFAULT_CELL_TIMEOUT_S, DEFAULT_MAX_REQUESTS_PER_CELL, DEFAULT_MAX_TOKENS, DurationError,
    LOCAL_SERVERS, ModelConfig, RESERVED_FIELDS, SummariserSettings, redact_userinfo,
};
