//! The harness's top-level error type and the exit code each error ends the process with.
//!
//! The codes themselves live in [`crate::exit`]; this module only maps errors onto them.

use std::path::{Path, PathBuf};

use crate::exit;
use crate::scenario::ScenarioError;

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
    #[error(transparent)]
    Report(#[from] crate::report::ReportError),
    #[error(transparent)]
    Transcript(#[from] crate::transcript::TranscriptError),
    #[error(transparent)]
    Tau(#[from] crate::tau::TauError),
    #[error("{0}")]
    Usage(String),
}

impl Error {
    /// For `map_err`: an I/O error while writing `path`.
    pub fn write_to(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
        move |source| Error::Write {
            path: path.to_path_buf(),
            source,
        }
    }

    /// The exit code this error ends the process with.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Scenario(ScenarioError::Invalid { .. }) => exit::FAILED,
            Error::Run(crate::runner::RunError::Preflight(_)) => exit::run::PREFLIGHT_FAILED,
            _ => exit::USAGE,
        }
    }
}
