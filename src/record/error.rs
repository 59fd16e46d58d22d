//! Why a cell or a record file failed: [`ErrorClass`] (which side a failure is on, the
//! `error_class` of an errored cell), [`CellError`] (why a cell could not be scored) and
//! [`RecordError`] (a `results.jsonl` that cannot be read).
//!
//! Owns: those types and their messages. Must not: decide a class (the destinations, the plug-in
//! runner and the runner do) or import anything of the pipeline.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Which side a failure is on (the `error_class` of an errored cell).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// The endpoint could not be reached or kept failing (timeouts, 429, 5xx, refused).
    Infrastructure,
    /// The endpoint answered with something that is not a usable completion.
    ModelOutput,
    /// The harness or its configuration is at fault (missing key variable, bad URL, a key the
    /// endpoint refuses).
    Harness,
    /// A plug-in compactor failed (exit status, time or output limit, invalid answer).
    Plugin,
    /// The endpoint rejected the request as malformed (HTTP 400/422, or a validation error under
    /// another status): not transient, never retried.
    RequestRejected,
    /// The endpoint rejected the request because it does not fit the model's context window.
    ContextLength,
    /// The cell hit a harness bound before it could finish: its wall-clock budget or its request
    /// cap (`cell_timeout_s`, `max_requests_per_cell`).
    Budget,
}

impl ErrorClass {
    /// Every class, in the order reports list them.
    pub const ALL: [ErrorClass; 7] = [
        ErrorClass::Infrastructure,
        ErrorClass::RequestRejected,
        ErrorClass::ContextLength,
        ErrorClass::ModelOutput,
        ErrorClass::Budget,
        ErrorClass::Harness,
        ErrorClass::Plugin,
    ];

    /// The name written in records (`infrastructure`, `request_rejected`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Infrastructure => "infrastructure",
            ErrorClass::ModelOutput => "model_output",
            ErrorClass::Harness => "harness",
            ErrorClass::Plugin => "plugin",
            ErrorClass::RequestRejected => "request_rejected",
            ErrorClass::ContextLength => "context_length",
            ErrorClass::Budget => "budget",
        }
    }
}

/// Why a cell could not be scored: the class and a message for the reader.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct CellError {
    pub class: ErrorClass,
    pub message: String,
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
    #[error(
        "{path}: line {line} repeats the cell of line {first} ({id}): records of two runs were mixed"
    )]
    Duplicate {
        path: PathBuf,
        line: usize,
        first: usize,
        id: String,
    },
}
