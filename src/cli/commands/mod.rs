//! One file per subcommand: each reads its arguments, calls the library, prints the result and
//! returns an exit code from [`super::exit`].
//!
//! Owns: what a command prints to stdout and stderr, and the lookups several commands share
//! (a scenario by id). Must not: compute anything the library could be asked for, or format
//! output that is not the terminal's (files and reports belong to their library module).

/// `println!` for command output that survives a closed stdout (`… | head`): a reader that went
/// away is not an error, and the rest of the output is dropped.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, $($arg)*).and_then(|_| out.flush());
    }};
}

pub mod audit;
pub mod bench;
pub mod cache;
pub mod calibrate;
pub mod check_handoff;
pub mod compare;
pub mod context;
pub mod fit;
pub mod gate;
pub mod handoff;
pub mod inspect_continuity;
pub mod merge;
pub mod plugin_input;
pub mod plugin_schemas;
pub mod report;
pub mod run;
pub mod scenarios;
pub mod show;
pub mod strategies;
pub mod tau;
pub mod transcripts;

use crate::error::Error;
use crate::scenario::volume::{self, Scale};
use crate::scenario::{self, Scenario};
use crate::shipped::Source;

/// The strategies of a command: the folder `--strategy-dir` names, else `strategies/` in the
/// working directory when it is there, else the shipped ones.
pub fn strategy_registry(
    flag: &Option<std::path::PathBuf>,
) -> Result<crate::strategy::Registry, Error> {
    let source = Source::resolve(flag.clone(), "strategies");
    Ok(crate::strategy::Registry::from_source(&source)?)
}

/// The folders of a scenario source that plug-ins must not see (none for the embedded files).
pub fn hidden(source: &Source) -> Vec<std::path::PathBuf> {
    source
        .folder()
        .map(|p| p.to_path_buf())
        .into_iter()
        .collect()
}

/// Loads the scenario with `id` (a benign variant `ID@benign` included).
pub fn find_scenario(dir: &Source, id: &str) -> Result<Scenario, Error> {
    let base = id.strip_suffix(scenario::BENIGN_SUFFIX).unwrap_or(id);
    // Scenario files are named after their id; try that file first so that one broken file
    // elsewhere in the folder does not hide a good one.
    let all = match scenario::load_named(dir, &format!("{base}.yaml")) {
        Some(Ok(s)) if s.id == base => vec![s],
        _ => scenario::load_source(dir)?,
    };
    let found = all.iter().find(|s| s.id == base).cloned();
    match found {
        Some(s) if base != id => s.benign_variant().ok_or_else(|| {
            Error::Usage(format!(
                "scenario `{base}` carries no injection, so it has no benign variant"
            ))
        }),
        Some(s) => Ok(s),
        None => Err(unknown_scenario(id, &all)),
    }
}

/// The scenario with `id` at the history scale `scale` (`base`, `40k`, …), its volume drawn from
/// the run seed `seed` as `run` draws it (commands that build one handoff).
pub fn scenario_at(
    dir: &Source,
    id: &str,
    scale: &str,
    seed: Option<u64>,
) -> Result<(std::sync::Arc<Scenario>, Scale), Error> {
    let scale: Scale = scale
        .parse()
        .map_err(|e| Error::Usage(format!("--scale: {e}")))?;
    let base = find_scenario(dir, id)?;
    let seed = volume::volume_seed(seed.unwrap_or(crate::DEFAULT_SEED), &base.id, scale);
    let scenario = volume::expand(&base, scale, seed).map_err(|p| {
        Error::Usage(format!(
            "scenario `{}` at scale {scale}: {}",
            base.id,
            p.iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join("; ")
        ))
    })?;
    Ok((std::sync::Arc::new(scenario), scale))
}

/// Keeps the scenarios of `all` whose id is in `ids`; an id naming none of them is an error.
pub fn select_scenarios(all: &mut Vec<Scenario>, ids: &[String]) -> Result<(), Error> {
    if let Some(id) = ids.iter().find(|id| !all.iter().any(|s| &s.id == *id)) {
        return Err(unknown_scenario(id, all));
    }
    all.retain(|s| ids.contains(&s.id));
    Ok(())
}

/// The error for an unknown scenario id, listing the known ones.
fn unknown_scenario(id: &str, all: &[Scenario]) -> Error {
    Error::UnknownScenario {
        id: id.to_string(),
        known: all
            .iter()
            .map(|s| s.id.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    }
}
