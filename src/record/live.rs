//! The per-cell counters of live calls ([`LiveStats`], a record's `diagnostics.live` and
//! `diagnostics.compaction`).
//!
//! Owns: the counters and how two sets add up. Must not: count a call itself (the live client
//! does) or import anything of the crate.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Per-cell counters of live calls (recorded in diagnostics).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LiveStats {
    pub calls: u32,
    pub cache_hits: u32,
    pub retries: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_input_tokens: u64,
    /// Tokens counted with tiktoken because the provider reported no usage.
    pub estimated_tokens: u64,
    pub malformed_tool_calls: u32,
    pub unknown_tools: u32,
    pub text_only_turns: u32,
    /// The model name the endpoint reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_fingerprint: Option<String>,
    /// HTTP requests sent (first attempts and retries; cache hits send none).
    #[serde(default)]
    pub requests: u32,
    /// Summed latency of this run's HTTP calls, ms (the cell's wall time is
    /// `metrics.completion_ms`, which adds backoff, queueing and the harness's own work).
    pub latency_ms: f64,
    /// The latency the first run measured for the calls answered from the cache, ms.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_latency_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Completions with at least one valid tool call (a known tool, arguments a JSON object).
    #[serde(default)]
    pub tool_call_turns: u32,
    /// Completions with at least one tool call whose arguments are not a JSON object.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub malformed_turns: u32,
    /// Completions cut at `max_tokens` (`finish_reason` `length`).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub length_turns: u32,
    /// How many completions ended with each `finish_reason` (`none` when the endpoint gave none).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub finish_reasons: BTreeMap<String, u32>,
    /// The cell's first request: wall time until its answer (retries included), ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_request_ms: Option<f64>,
    /// The cell's first request: its prompt tokens (reported, else counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_prompt_tokens: Option<u64>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn is_zero_u32(x: &u32) -> bool {
    *x == 0
}

impl LiveStats {
    /// Whether any call of the cell was answered from the response cache: its timings are not
    /// this run's, so latency medians leave it out.
    pub fn from_cache(&self) -> bool {
        self.cache_hits > 0
    }

    /// Adds another set of counters (a cell's destination and summariser, or a model's cells).
    pub fn add(&mut self, o: &LiveStats) {
        self.calls += o.calls;
        self.cache_hits += o.cache_hits;
        self.retries += o.retries;
        self.requests += o.requests;
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.cached_input_tokens += o.cached_input_tokens;
        self.estimated_tokens += o.estimated_tokens;
        self.malformed_tool_calls += o.malformed_tool_calls;
        self.unknown_tools += o.unknown_tools;
        self.text_only_turns += o.text_only_turns;
        self.latency_ms += o.latency_ms;
        self.cache_latency_ms += o.cache_latency_ms;
        self.tool_call_turns += o.tool_call_turns;
        self.malformed_turns += o.malformed_turns;
        self.length_turns += o.length_turns;
        for (k, n) in &o.finish_reasons {
            *self.finish_reasons.entry(k.clone()).or_default() += n;
        }
        // A cell's first request stays its own; a sum of cells keeps the first one's.
        self.first_request_ms = self.first_request_ms.or(o.first_request_ms);
        self.first_prompt_tokens = self.first_prompt_tokens.or(o.first_prompt_tokens);
        if let Some(c) = o.cost_usd {
            self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + c);
        }
    }
}
