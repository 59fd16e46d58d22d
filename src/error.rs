//! The harness's top-level error type and its process exit codes.

use std::path::PathBuf;

use crate::scenario::ScenarioError;

/// Exit codes of the `compaction-eval` binary.
pub mod exit {
    /// Success (for `gate`: every rule held).
    pub const OK: i32 = 0;
    /// The command ran and found a failure (invalid scenarios; for `gate`: a rule failed).
    pub const FAILED: i32 = 1;
    /// Unusable input: bad arguments, unreadable or corrupt files, unknown ids.
    pub const USAGE: i32 = 2;
}

/// Errors a user can cause, with messages written for them.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error("unknown scenario `{id}`; known scenarios: {known}")]
    UnknownScenario { id: String, known: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Strategy(#[from] crate::strategy::StrategyError),
    #[error(transparent)]
    Run(#[from] crate::runner::RunError),
    #[error("{0}")]
    Usage(String),
}

impl Error {
    /// The exit code this error ends the process with.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Scenario(ScenarioError::Invalid { .. }) => exit::FAILED,
            _ => exit::USAGE,
        }
    }
}
