//! Scenarios as the harness loads them: reading files with errors that name file and field,
//! validation (`validate`, which replays the reference run in a [`crate::world`]), replaying the
//! reference run into a world (`replay`), executing scripted steps (`script`), the visible values
//! (`values`) and the history scale (`volume`). The format itself is [`crate::spec`], re-exported
//! here so `scenario::Scenario` names the same type.
//!
//! This module sits above the world (it runs one to check a scenario); it does not build
//! handoffs, run destinations or score anything.

pub mod coverage;
mod detect;
pub mod limits;
mod lint;
mod messages;
mod problem;
mod replay;
mod script;
mod validate;
pub mod values;
pub mod volume;

use std::path::{Path, PathBuf};

pub use crate::spec::*;
pub use detect::{any_detector_matches, normalize};
pub use replay::{Observed, Replay, event_text, replay_prefix};
pub use script::{Bindings, ScriptOutcome, run_script};
pub use validate::{HARNESS_TOOLS, Problem, validate};

/// A problem with a scenario file. Every variant names the file; `Invalid` also names the field.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("{file}: cannot read: {source}")]
    Io {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: not a valid scenario: {message}")]
    Parse { file: PathBuf, message: String },
    #[error("{file}: {} problem(s):\n{}", problems.len(), problems.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n"))]
    Invalid {
        file: PathBuf,
        problems: Vec<Problem>,
    },
    #[error("{dir}: no scenario files (*.yaml) found")]
    Empty { dir: PathBuf },
    #[error(
        "{second}: scenario id `{id}` is already the id of {first} (every cell would run twice)"
    )]
    DuplicateId {
        id: String,
        first: PathBuf,
        second: PathBuf,
    },
}

/// Parses one scenario from YAML text (no validation beyond the format). The error names the
/// field's path and says what is wrong in the document's terms (`messages`).
pub fn parse_scenario(text: &str, file: &Path) -> Result<Scenario, ScenarioError> {
    messages::parse(text).map_err(|message| ScenarioError::Parse {
        file: file.to_path_buf(),
        message,
    })
}

/// Reads, parses and validates one scenario file. A file over the [`limits`] is refused before
/// it is read (its size) or before it is validated (its strings and its volume), so no input
/// makes loading slow or large.
pub fn load_file(file: &Path) -> Result<Scenario, ScenarioError> {
    limits::check_file_size(file).map_err(|message| ScenarioError::Parse {
        file: file.to_path_buf(),
        message,
    })?;
    let text = crate::text::read_file(file).map_err(|source| ScenarioError::Io {
        file: file.to_path_buf(),
        source,
    })?;
    let scenario = parse_scenario(&text, file)?;
    drop(text);
    let problems = limits::check(&scenario);
    if !problems.is_empty() {
        return Err(ScenarioError::Invalid {
            file: file.to_path_buf(),
            problems,
        });
    }
    let problems = validate(&scenario);
    if !problems.is_empty() {
        return Err(ScenarioError::Invalid {
            file: file.to_path_buf(),
            problems,
        });
    }
    Ok(scenario)
}

/// The scenario files of a path: the file itself, or a directory's `*.yaml`/`*.yml`, sorted.
pub fn scenario_files(path: &Path) -> Result<Vec<PathBuf>, ScenarioError> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let entries = std::fs::read_dir(path).map_err(|source| ScenarioError::Io {
        file: path.to_path_buf(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(ScenarioError::Empty {
            dir: path.to_path_buf(),
        });
    }
    Ok(files)
}

/// Loads every scenario under `path`; stops at the first bad file.
pub fn load_dir(path: &Path) -> Result<Vec<Scenario>, ScenarioError> {
    let mut out = Vec::new();
    let mut files: std::collections::BTreeMap<String, PathBuf> = Default::default();
    for f in scenario_files(path)? {
        let s = load_file(&f)?;
        if let Some(first) = files.insert(s.id.clone(), f.clone()) {
            return Err(ScenarioError::DuplicateId {
                id: s.id,
                first,
                second: f,
            });
        }
        out.push(s);
    }
    Ok(out)
}

/// The JSON Schema of the scenario format, pretty-printed.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Scenario);
    let mut s = serde_json::to_string_pretty(&schema).unwrap_or_default();
    s.push('\n');
    s
}
