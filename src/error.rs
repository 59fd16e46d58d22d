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
    #[error(transparent)]
    Shipped(#[from] crate::shipped::ShippedError),
    #[error("{0}")]
    Usage(String),
    /// A configuration file or model table that cannot work.
    #[error("{0}")]
    Config(String),
}

impl Error {
    /// For `map_err`: an I/O error while writing `path`.
    pub fn write_to(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
        move |source| Error::Write {
            path: path.to_path_buf(),
            source,
        }
    }

    /// The exit code this error ends the process with ([`crate::exit`]).
    pub fn exit_code(&self) -> i32 {
        use crate::runner::RunError;
        match self {
            Error::Scenario(ScenarioError::Invalid { .. }) => exit::FAILED,
            Error::Write { source, .. } => io_code(source),
            Error::Run(e) => match e {
                RunError::Preflight(_) | RunError::PluginFailing { .. } => {
                    exit::run::PREFLIGHT_FAILED
                }
                RunError::Busy { .. } | RunError::InProgress { .. } => exit::BUSY,
                RunError::Incomplete { .. } => exit::run::INCOMPLETE,
                RunError::Io { source, .. } => io_code(source),
                RunError::Store { .. } => exit::IO,
                RunError::Config(_) => exit::CONFIG,
                RunError::Harness(_) => exit::HARNESS,
                _ => exit::USAGE,
            },
            Error::Report(e) => report_code(e),
            Error::Shipped(crate::shipped::ShippedError::Write { source, .. }) => io_code(source),
            Error::Config(_) => exit::CONFIG,
            _ => exit::USAGE,
        }
    }
}

/// A file that is not there was named by the user (usage); any other I/O failure is the file
/// system's.
fn io_code(e: &std::io::Error) -> i32 {
    if e.kind() == std::io::ErrorKind::NotFound {
        exit::USAGE
    } else {
        exit::IO
    }
}

fn report_code(e: &crate::report::ReportError) -> i32 {
    use crate::report::ReportError;
    match e {
        ReportError::Export(_) | ReportError::Plot(_) => exit::RENDER,
        ReportError::Io { source, .. } => io_code(source),
        _ => exit::USAGE,
    }
}
