//! The τ-bench module's error type: what can go wrong reading the airline data, the task list
//! and recorded runs, and writing a replay.
//!
//! Owns: [`TauError`], whose messages name the file and the field at fault. Must not: describe
//! a tool's failure — a tool that fails answers an `Error: …` observation, never a `TauError`.

use std::path::{Path, PathBuf};

/// A data file, task list or runs file that cannot be used, or an output that cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum TauError {
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not valid JSON: {source}", path.display())]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// A field is missing, of the wrong type, or names something that does not exist.
    #[error("{}: {field}: {message}", path.display())]
    Field {
        path: PathBuf,
        field: String,
        message: String,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The shipped data could not be copied to disk for the loaders.
    #[error("the shipped τ-bench data: {0}")]
    Shipped(#[from] crate::shipped::ShippedError),
}

impl TauError {
    /// For `map_err`: an I/O error while reading `path`.
    pub(crate) fn read(path: &Path) -> impl FnOnce(std::io::Error) -> TauError + '_ {
        move |source| TauError::Read {
            path: path.to_path_buf(),
            source,
        }
    }

    /// For `map_err`: an I/O error while writing `path`.
    pub(crate) fn write(path: &Path) -> impl FnOnce(std::io::Error) -> TauError + '_ {
        move |source| TauError::Write {
            path: path.to_path_buf(),
            source,
        }
    }

    /// A field error in `path`.
    pub(crate) fn field(path: &Path, field: impl Into<String>, message: impl Into<String>) -> Self {
        TauError::Field {
            path: path.to_path_buf(),
            field: field.into(),
            message: message.into(),
        }
    }

    /// A typed read of `path` failed at a JSON path; `prefix` names the table (`users`, …), empty
    /// for a file whose root is the table.
    pub(crate) fn schema(
        path: &Path,
        prefix: &str,
        e: serde_path_to_error::Error<serde_json::Error>,
    ) -> Self {
        let at = e.path().to_string();
        let field = match (prefix.is_empty(), at.as_str()) {
            (true, at) => at.to_string(),
            (false, ".") => prefix.to_string(),
            (false, at) if at.starts_with('[') => format!("{prefix}{at}"),
            (false, at) => format!("{prefix}.{at}"),
        };
        TauError::field(path, field, e.into_inner().to_string())
    }
}
