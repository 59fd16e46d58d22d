//! Scenarios: the format (`types`), loading with errors that name file and field, validation
//! (`validate`), replaying the reference run into a world (`replay`) and executing scripted steps
//! (`script`).
//!
//! This module reads scenario files and checks them; it does not build handoffs, run destinations
//! or score anything.

mod detect;
mod lint;
mod problem;
mod replay;
mod script;
mod types;
mod validate;
pub mod values;
pub mod volume;

use std::path::{Path, PathBuf};

pub use detect::{any_detector_matches, normalize};
pub use replay::{Observed, Replay, event_text, replay_prefix};
pub use script::{Bindings, ScriptOutcome, run_script};
pub use types::*;
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

/// Parses one scenario from YAML text (no validation beyond the format).
pub fn parse_scenario(text: &str, file: &Path) -> Result<Scenario, ScenarioError> {
    // YAML 1.1 reads `no`/`off` as booleans; scenario text is full of such words.
    let options = serde_saphyr::options! { strict_booleans: true };
    serde_saphyr::from_str_with_options::<Scenario>(text, options).map_err(|e| {
        ScenarioError::Parse {
            file: file.to_path_buf(),
            message: e.to_string(),
        }
    })
}

/// Reads, parses and validates one scenario file.
pub fn load_file(file: &Path) -> Result<Scenario, ScenarioError> {
    let text = crate::text::read_file(file).map_err(|source| ScenarioError::Io {
        file: file.to_path_buf(),
        source,
    })?;
    let scenario = parse_scenario(&text, file)?;
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

/// Suffix of a benign variant's id.
pub const BENIGN_SUFFIX: &str = "@benign";

impl Scenario {
    /// The benign variant: the injected payload removed from every resource and event, the
    /// injected-directive fact dropped. `None` when the scenario carries no injection.
    pub fn benign_variant(&self) -> Option<Scenario> {
        let inj = self.injection.as_ref()?;
        let mut s = self.with_payload("", BENIGN_SUFFIX)?;
        s.facts.retain(|f| f.id != inj.fact);
        s.injection = None;
        Some(s)
    }

    /// The scenario with its injected payload worded as `payload` wherever it occurs (resources,
    /// messages, recorded results), under the id `ID{suffix}`: the same attack, said otherwise.
    pub fn with_payload(&self, payload: &str, suffix: &str) -> Option<Scenario> {
        let inj = self.injection.as_ref()?;
        let mut s = self.clone();
        s.id = format!("{}{suffix}", self.id);
        let swap = |t: &str| t.replace(&inj.payload, payload);
        for r in s.world.resources.values_mut() {
            r.text = swap(&r.text);
        }
        for e in &mut s.events {
            if let Some(u) = &mut e.user {
                *u = swap(u);
            }
            if let Some(t) = &mut e.text {
                *t = swap(t);
            }
            if let Some(r) = &mut e.result {
                replace_in_value(r, &inj.payload, payload);
            }
        }
        if let Some(i) = &mut s.injection {
            i.payload = payload.to_string();
        }
        Some(s)
    }

    pub fn interrupt(&self, point: &str) -> Option<&Interrupt> {
        self.interrupts.iter().find(|i| i.point == point)
    }

    pub fn event_index(&self, id: &str) -> Option<usize> {
        self.events.iter().position(|e| e.id == id)
    }

    pub fn fact(&self, id: &str) -> Option<&Fact> {
        self.facts.iter().find(|f| f.id == id)
    }

    /// The facts that matter at an interrupt point: sourced at or before it, and not restricted
    /// to other points.
    pub fn facts_at<'a>(&'a self, interrupt: &'a Interrupt) -> impl Iterator<Item = &'a Fact> {
        let cut = self.event_index(&interrupt.after).unwrap_or(0);
        self.facts.iter().filter(move |f| {
            self.event_index(&f.source).is_some_and(|i| i <= cut)
                && (f.only_at.is_empty() || f.only_at.contains(&interrupt.point))
        })
    }

    /// The resource key a source event's `read_resource` call read (`None` for other events).
    pub fn source_resource(&self, event: &str) -> Option<String> {
        let ev = self.events.iter().find(|e| e.id == event)?;
        let tool = self
            .world
            .tools
            .iter()
            .find(|t| Some(&t.name) == ev.call.as_ref())?;
        if tool.effect != EffectKind::ReadResource {
            return None;
        }
        let id = ev.args.as_ref()?.get(tool.id_param())?.as_str()?;
        let prefix = tool.resource_prefix.as_deref().unwrap_or("");
        Some(if id.starts_with(prefix) {
            id.to_string()
        } else {
            format!("{prefix}{id}")
        })
    }

    /// The success predicates from an interrupt point.
    pub fn success_at<'a>(&'a self, interrupt: &'a Interrupt) -> &'a [Predicate] {
        interrupt.success.as_deref().unwrap_or(&self.success)
    }
}

fn replace_in_value(v: &mut serde_json::Value, from: &str, to: &str) {
    match v {
        serde_json::Value::String(s) => *s = s.replace(from, to),
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| replace_in_value(x, from, to)),
        serde_json::Value::Object(o) => o.values_mut().for_each(|x| replace_in_value(x, from, to)),
        _ => {}
    }
}
