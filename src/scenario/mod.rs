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
pub mod variety;
pub mod volume;

use std::path::{Path, PathBuf};

use crate::shipped::Set;
pub use crate::shipped::Source;
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
    load_text(text, file)
}

/// Parses and validates one scenario's text; `file` names it in every error.
fn load_text(text: String, file: &Path) -> Result<Scenario, ScenarioError> {
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

/// Whether a file name is a scenario file's (`*.yaml`, `*.yml`).
fn is_scenario_file(name: &str) -> bool {
    name.ends_with(".yaml") || name.ends_with(".yml")
}

/// How an embedded scenario file is named in errors: `embedded v0.1.0/scenarios/NAME`.
fn embedded_name(f: &crate::shipped::File) -> PathBuf {
    PathBuf::from(format!(
        "{}/{}/{}",
        crate::shipped::embedded_label(),
        Set::Scenarios.name(),
        f.path
    ))
}

/// Parses and validates one embedded scenario file (held to the same limits as a file on disk).
fn load_embedded(f: &crate::shipped::File) -> Result<Scenario, ScenarioError> {
    let file = embedded_name(f);
    if f.bytes.len() as u64 > limits::MAX_FILE_BYTES {
        return Err(ScenarioError::Parse {
            file,
            message: format!(
                "is larger than a scenario file may be ({} bytes)",
                limits::MAX_FILE_BYTES
            ),
        });
    }
    let text = String::from_utf8(f.bytes.to_vec()).map_err(|e| ScenarioError::Parse {
        file: file.clone(),
        message: format!(
            "not UTF-8 text: invalid byte sequence at byte offset {}",
            e.utf8_error().valid_up_to()
        ),
    })?;
    load_text(text, &file)
}

/// The embedded scenario files, sorted by name.
fn embedded_files() -> impl Iterator<Item = &'static crate::shipped::File> {
    Set::Scenarios
        .files()
        .iter()
        .filter(|f| !f.path.contains('/') && is_scenario_file(f.path))
}

/// Every scenario of a source: a folder's (or single file's) as [`load_dir`] reads them, or the
/// embedded ones; stops at the first bad file.
pub fn load_source(source: &Source) -> Result<Vec<Scenario>, ScenarioError> {
    match source {
        Source::Folder(p) => load_dir(p),
        Source::Embedded => {
            let mut out = Vec::new();
            let mut files: std::collections::BTreeMap<String, PathBuf> = Default::default();
            for f in embedded_files() {
                let s = load_embedded(f)?;
                if let Some(first) = files.insert(s.id.clone(), embedded_name(f)) {
                    return Err(ScenarioError::DuplicateId {
                        id: s.id,
                        first,
                        second: embedded_name(f),
                    });
                }
                out.push(s);
            }
            Ok(out)
        }
    }
}

/// One scenario file of a source, to load ([`Entry::load`]) and name in messages.
#[derive(Debug, Clone)]
pub enum Entry {
    File(PathBuf),
    Embedded(&'static crate::shipped::File),
}

impl Entry {
    /// How messages name it: the file's path, or `embedded v0.1.0/scenarios/NAME`.
    pub fn name(&self) -> PathBuf {
        match self {
            Entry::File(p) => p.clone(),
            Entry::Embedded(f) => embedded_name(f),
        }
    }

    /// Reads, parses and validates it ([`load_file`]).
    pub fn load(&self) -> Result<Scenario, ScenarioError> {
        match self {
            Entry::File(p) => load_file(p),
            Entry::Embedded(f) => load_embedded(f),
        }
    }
}

/// The scenario files of a source, sorted: a folder's (or the one file) as [`scenario_files`]
/// lists them, or the embedded ones.
pub fn entries(source: &Source) -> Result<Vec<Entry>, ScenarioError> {
    match source {
        Source::Folder(p) => Ok(scenario_files(p)?.into_iter().map(Entry::File).collect()),
        Source::Embedded => Ok(embedded_files().map(Entry::Embedded).collect()),
    }
}

/// The scenario named by its file `NAME.yaml` in a source, when that file is there (a lookup by
/// id that does not read the other files); `None` when there is no such file.
pub fn load_named(source: &Source, name: &str) -> Option<Result<Scenario, ScenarioError>> {
    match source {
        Source::Folder(p) => {
            let file = p.join(name);
            file.is_file().then(|| load_file(&file))
        }
        Source::Embedded => embedded_files().find(|f| f.path == name).map(load_embedded),
    }
}

/// The scenario files of a source, each as its path inside the folder (`/` between parts) and
/// its bytes: what identifies a run's scenarios in its manifest, wherever the folder is.
pub fn source_files(source: &Source) -> Result<Vec<(String, Vec<u8>)>, ScenarioError> {
    match source {
        Source::Embedded => Ok(embedded_files()
            .map(|f| (f.path.to_string(), f.bytes.to_vec()))
            .collect()),
        Source::Folder(dir) => {
            let mut out = Vec::new();
            for f in scenario_files(dir)? {
                let bytes = std::fs::read(&f).map_err(|source| ScenarioError::Io {
                    file: f.clone(),
                    source,
                })?;
                let rel = f.strip_prefix(dir).unwrap_or(&f);
                let inside = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                out.push((inside, bytes));
            }
            Ok(out)
        }
    }
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
