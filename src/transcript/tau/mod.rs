//! `run --tau airline`: recorded τ-bench airline runs that succeeded, cut by rule (before the
//! first write, before each later write, before the final answer), every strategy's handoff
//! built from the prefix (the transcript path, with the no-compaction baseline [`BASELINE`]),
//! and continued on the native environment ([`crate::tau`]) — by the simulated destination
//! [`follow::SIM_FOLLOW`] and by live models with a live simulated customer ([`live`]). Writes
//! records with `source: tau` (τ-bench's reward, safe success and the rediscovery cost in
//! `transcript.tau`) and the manifest into the run folder; `--resume` keeps the cells already
//! there and `--shard K/N` runs the run's part.
//!
//! Owns the τ-bench cell loop (`cells`), the simulated destination (`follow`), the live
//! continuation and customer (`live`, `user`) and the airline tool definitions a live model
//! receives (`schema`). Must not: change the environment's semantics (`crate::tau` owns them),
//! fork a strategy, or render the report.

mod cells;
mod chains;
pub mod follow;
pub mod live;
pub mod schema;
pub mod user;

use std::collections::BTreeSet;
use std::path::PathBuf;

pub use cells::run;

use super::TranscriptError;
use super::cuts::CutRule;
pub use super::eval::BASELINE;

/// The τ-bench part of a run.
#[derive(Debug, Clone)]
pub struct Options {
    /// The data folder (`env/` and the runs file).
    pub data: PathBuf,
    /// Where `data` came from (a folder, or the shipped data's copy), for the manifest.
    pub source: crate::shipped::Source,
    /// The recorded runs (a τ-bench trajectory file).
    pub runs: PathBuf,
    /// Only these task ids (`None`: every task with a successful run).
    pub tasks: Option<BTreeSet<i64>>,
    /// The cut rules to use (empty: all three).
    pub rules: Vec<CutRule>,
    /// The live simulated customer's model (a configured model name or `openai:MODEL`); `None`:
    /// live destinations are left out.
    pub user_model: Option<String>,
}

impl Options {
    /// The shipped data and runs ([`crate::tau::data_source`]), every task, every rule.
    pub fn shipped() -> Result<Options, crate::tau::TauError> {
        let source = crate::tau::data_source();
        let data = crate::tau::data_dir_of(&source)?;
        Ok(Options {
            runs: data.join(crate::tau::RUNS_FILE),
            data,
            source,
            tasks: None,
            rules: vec![],
            user_model: None,
        })
    }
}

/// What a τ-bench run did.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Successful recorded runs continued, and their cuts.
    pub runs: usize,
    pub cuts: usize,
    pub records: usize,
    pub errored: usize,
    /// Cells kept from the folder (`--resume`).
    pub kept: usize,
    /// Simulated destinations of the run's models replaced by [`follow::SIM_FOLLOW`].
    pub replaced_models: Vec<String>,
}

/// Parses a task list: ids and inclusive ranges, comma-separated (`0-9,12,20-29`).
pub fn parse_tasks(text: &str) -> Result<BTreeSet<i64>, TranscriptError> {
    let bad = |part: &str| {
        TranscriptError::Usage(format!(
            "--tasks: `{part}` is not a task id or a range (e.g. `0-9,12`)"
        ))
    };
    let mut out = BTreeSet::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (i64, i64) = (
                    a.trim().parse().map_err(|_| bad(part))?,
                    b.trim().parse().map_err(|_| bad(part))?,
                );
                if a > b {
                    return Err(bad(part));
                }
                out.extend(a..=b);
            }
            None => {
                out.insert(part.parse().map_err(|_| bad(part))?);
            }
        }
    }
    if out.is_empty() {
        return Err(bad(text));
    }
    Ok(out)
}

/// Parses cut rules, comma-separated: `first_write`, `later_write`, `final_assistant` (also
/// `first-write`, `later-write`, `final`).
pub fn parse_rules(text: &str) -> Result<Vec<CutRule>, TranscriptError> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let rule = match part.replace('-', "_").as_str() {
            "first_write" => CutRule::FirstWrite,
            "later_write" => CutRule::LaterWrite,
            "final_assistant" | "final" => CutRule::FinalAssistant,
            _ => {
                return Err(TranscriptError::Usage(format!(
                    "--cut-rules: `{part}` is not a cut rule (first_write, later_write, final_assistant)"
                )));
            }
        };
        if !out.contains(&rule) {
            out.push(rule);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_lists_and_rules_parse() {
        let t = parse_tasks("0-2, 7").expect("valid");
        assert_eq!(t.into_iter().collect::<Vec<_>>(), vec![0, 1, 2, 7]);
        assert!(parse_tasks("3-1").is_err());
        assert!(parse_tasks("x").is_err());
        assert_eq!(
            parse_rules("final,first-write").expect("valid"),
            vec![CutRule::FinalAssistant, CutRule::FirstWrite]
        );
        assert!(parse_rules("middle").is_err());
    }
}
