//! [`RunError`]: what stops a run before or while it writes, with messages written for the user.
//!
//! Owns: the variants and their messages. Must not: choose an exit code (`crate::error` maps
//! errors onto `crate::exit`).

use std::path::{Path, PathBuf};

use super::RecordError;
use crate::scenario;

/// A problem that stops a run before or while it writes. `crate::error::Error::exit_code` gives
/// each kind its exit code: usage, configuration, I/O and harness failures are told apart.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Scenario(#[from] scenario::ScenarioError),
    #[error(transparent)]
    Strategy(#[from] crate::strategy::StrategyError),
    #[error("unknown {what} `{id}`; known: {known}")]
    Unknown {
        what: &'static str,
        id: String,
        known: String,
    },
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
    #[error(transparent)]
    Record(#[from] RecordError),
    /// Arguments that cannot be used together or name something malformed (a `gov:X` spec,
    /// folders `merge` cannot combine).
    #[error("{0}")]
    Usage(String),
    /// A model or strategy configuration that cannot work (a summariser that names no
    /// configured model, impossible durations, a client that cannot be built).
    #[error("{0}")]
    Config(String),
    /// A scenario's volume cannot be generated at a scale the run asks for.
    #[error("scenario `{scenario}`: its volume cannot be generated at scale {scale}:\n{}", problems.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n"))]
    Volume {
        scenario: String,
        scale: String,
        problems: Vec<String>,
    },
    /// The run folder's artifact store could not take a governed handoff's documents.
    #[error("{}: {source}", path.display())]
    Store {
        path: PathBuf,
        #[source]
        source: crate::governed::StoreError,
    },
    /// A malformed governed strategy id.
    #[error(transparent)]
    GovSpec(#[from] crate::delivery::GovSpecError),
    /// A scenario's governed context gives no valid delivery (seed 004).
    #[error(transparent)]
    Delivery(#[from] crate::delivery::DeliveryError),
    /// The harness itself failed (its async runtime, a value it could not serialise): a bug or
    /// an exhausted machine, never the user's input.
    #[error("the harness failed: {0}")]
    Harness(String),
    /// `read_from` says where the folder's run took its scenarios and strategies from.
    #[error(
        "{path}: --resume with another configuration than the run in this folder; differing keys: {}.{read_from} Run with the same arguments, or write to a new --out folder",
        keys.join(", ")
    )]
    ManifestMismatch {
        path: PathBuf,
        keys: Vec<String>,
        read_from: String,
    },
    #[error(
        "{path}: holds {records} records of this run's {cells} cells: {} cell(s) missing (run again with --resume)",
        cells - records
    )]
    Incomplete {
        path: PathBuf,
        records: usize,
        cells: usize,
    },
    /// Another live process writes the run folder (a run, a `--resume` or a `merge` holds its
    /// lock): one writer per folder.
    #[error(
        "{}: another process is writing this run folder: {holder}. Wait for it to end, or write to another --out folder",
        path.display()
    )]
    Busy { path: PathBuf, holder: String },
    /// A reader was asked for a folder whose run is still being written.
    #[error(
        "{}: its run is in progress ({holder}); its records are not final. Wait for it to end, or pass --allow-incomplete to read it as it is now",
        path.display()
    )]
    InProgress { path: PathBuf, holder: String },
    /// A plug-in failed on each of its first handoffs ([`super::FAIL_FAST_AFTER`]): the run
    /// stopped before its first cell.
    #[error(
        "the run stopped before its first cell: plug-in strategy `{id}` failed on each of its first {failed} handoffs (it was given {format}). The first failure: {first}\n{advice}"
    )]
    PluginFailing {
        id: String,
        failed: usize,
        format: String,
        first: String,
        advice: String,
    },
    /// A live model failed its probe (missing key, unreachable URL, refused key): one line per
    /// model.
    #[error("the run did not start: {}", .0.join("\n"))]
    Preflight(Vec<String>),
}

pub(super) fn io(path: &Path) -> impl Fn(std::io::Error) -> RunError + '_ {
    move |source| RunError::Io {
        path: path.to_path_buf(),
        source,
    }
}
