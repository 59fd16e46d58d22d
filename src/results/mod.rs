//! A saved run folder as the report and the gate both read it: the record count checked against
//! the manifest ([`check_count`]), the scenario cells ([`scenario_cells`]), `continuity.jsonl`
//! ([`read_continuity`]), what a cell's outcome is and the scenario-clustered figures of cells
//! ([`outcome`]: safe success, the cause of an unsafe cell, rates and paired differences with
//! their intervals), the pairing of cells and their clusters ([`paired`]), and a run against a
//! baseline run, per strategy × model × metric ([`baseline`]).
//!
//! Owns: what the report and the gate share, so neither imports the other, and its error type
//! [`ResultsError`]. Reads records through [`crate::record`]. Must not: render a report, judge a
//! gate rule, run a cell or write a file.

pub mod baseline;
pub mod outcome;
pub mod paired;

use std::path::{Path, PathBuf};

use crate::continuity::ContinuityEval;
use crate::record::{RunRecord, Source};

/// Why a saved run folder cannot be read as a whole run, with a message for the user.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("{path}: line {line} is not a run record: {message}")]
    Corrupt {
        path: PathBuf,
        line: usize,
        message: String,
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
}

/// A run folder whose manifest names more cells than `results.jsonl` holds is incomplete: it is
/// an error, never a report of part of a run. (Duplicates are refused when the records are read.)
pub fn check_count(
    dir: &Path,
    records: &[RunRecord],
    manifest: &serde_json::Value,
) -> Result<(), ResultsError> {
    if let Some(cells) = manifest.get("cells").and_then(|c| c.as_u64()) {
        let cells = cells as usize;
        if records.len() < cells {
            return Err(ResultsError::Incomplete {
                path: dir.join("results.jsonl"),
                records: records.len(),
                cells,
            });
        }
    }
    Ok(())
}

/// The records of scenario cells (what every section but the transcript one reads): the
/// records themselves when every one is (the usual run), so a report holds them once.
pub fn scenario_cells(records: &[RunRecord]) -> std::borrow::Cow<'_, [RunRecord]> {
    if records.iter().all(|r| r.source == Source::Scenario) {
        return std::borrow::Cow::Borrowed(records);
    }
    records
        .iter()
        .filter(|r| r.source == Source::Scenario)
        .cloned()
        .collect()
}

/// The cells the gate's rules read: scenario cells and τ-bench cells (whose task success is the
/// environment's reward, whose safety violations are its unsafe writes). Transcript cells
/// (`run --transcripts`) measure retention only and have none of those metrics.
pub fn gated_cells(records: &[RunRecord]) -> Vec<RunRecord> {
    records
        .iter()
        .filter(|r| matches!(r.source, Source::Scenario | Source::Tau))
        .cloned()
        .collect()
}

/// Reads `continuity.jsonl` (absent: empty).
pub fn read_continuity(dir: &Path) -> Result<Vec<ContinuityEval>, ResultsError> {
    let path = dir.join("continuity.jsonl");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(Vec::new());
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| ResultsError::Corrupt {
                path: path.clone(),
                line: i + 1,
                message: e.to_string(),
            })
        })
        .collect()
}
