//! The run record: one line of `results.jsonl` per cell. This is a public contract (README).

use serde::{Deserialize, Serialize};

use crate::score::{Diagnostics, Metrics};

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
    pub error_class: Option<crate::agent::live::ErrorClass>,
    pub metrics: Metrics,
    pub diagnostics: Diagnostics,
}
