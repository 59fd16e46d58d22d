//! The run record: one line of `results.jsonl` per cell — the cell's identity, its status, the
//! eight metrics and the diagnostics that explain them. This is a public contract (README).
//!
//! A leaf data module: every later stage (score, runner, report, gate) reads and writes records
//! through it, and it imports nothing of the pipeline. It never computes a metric.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::scenario::FinishStatus;

/// Whether a cell produced metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    Errored,
}

/// One cell's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub scenario: String,
    pub interrupt: String,
    pub strategy: String,
    pub model: String,
    pub rep: u32,
    pub seed: u64,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// For errored cells: `infrastructure`, `model_output` or `harness`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<ErrorClass>,
    pub metrics: Metrics,
    pub diagnostics: Diagnostics,
}

/// The metrics of one cell (the record contract's `metrics`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub task_success: bool,
    pub omitted_context: u32,
    pub repeated_work: u32,
    pub duplicate_side_effects: u32,
    pub safety_violations: u32,
    pub recovery_quality: f64,
    pub restore_tokens: u64,
    pub total_tokens: u64,
    /// Wall time to the first useful action (a scenario tool call or approval request), ms.
    pub first_action_ms: f64,
    pub completion_ms: f64,
    /// Tokens a live summariser spent building the handoff (0 for offline strategies), charged
    /// apart from the destination's `total_tokens`.
    #[serde(default)]
    pub compaction_tokens: u64,
}

/// Why the metrics are what they are.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Diagnostics {
    /// Facts the handoff text did not show (as the destination reported them; simulated only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub facts_lost_in_handoff: Vec<String>,
    /// Facts the continuation contradicted, ignored or asked for again, with the evidence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub omitted: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeated: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub duplicates: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recovery_missed: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_predicates: Vec<usize>,
    /// Injected directives the destination followed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub injections_followed: Vec<String>,
    pub finish: Option<FinishStatus>,
    pub degraded: bool,
    pub steps: u32,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub step_budget_exhausted: bool,
    /// Live destinations: calls, cache hits, retries, tokens, cost, reported model identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveStats>,
    /// The handoff was a checkpoint and the seed-003 §9.2 rules were checked on it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub checkpoint_checked: bool,
    /// Rules the handoff's checkpoint breaks (`rule at where: detail`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checkpoint_rule_violations: Vec<String>,
    /// The live summariser's calls for this cell's handoff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compaction: Option<LiveStats>,
}

/// Which side a failure is on (the `error_class` of an errored cell).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// The endpoint could not be reached or kept failing (timeouts, 429, 5xx, refused).
    Infrastructure,
    /// The endpoint answered with something that is not a usable completion.
    ModelOutput,
    /// The harness or its configuration is at fault (missing key variable, bad URL).
    Harness,
    /// A plug-in compactor failed (exit status, time or output limit, invalid answer).
    Plugin,
}

/// Why a cell could not be scored: the class and a message for the reader.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct CellError {
    pub class: ErrorClass,
    pub message: String,
}

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
    /// Wall time of the live calls (original latency for cache hits), ms.
    pub latency_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// A `results.jsonl` that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: line {line} is not a run record: {message}")]
    Corrupt {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// Reads `results.jsonl`. A torn last line (a killed run) is ignored; any other bad line is an
/// error naming the line.
pub fn read_records(path: &Path) -> Result<Vec<RunRecord>, RecordError> {
    let f = std::fs::File::open(path).map_err(|source| RecordError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let lines: Vec<String> = std::io::BufReader::new(f)
        .lines()
        .collect::<Result<_, _>>()
        .map_err(|source| RecordError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    let mut out = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<RunRecord>(line) {
            Ok(r) => out.push(r),
            Err(_) if i + 1 == lines.len() => {}
            Err(e) => {
                return Err(RecordError::Corrupt {
                    path: path.to_path_buf(),
                    line: i + 1,
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(out)
}
