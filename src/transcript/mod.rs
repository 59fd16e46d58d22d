//! Real transcripts: logged agent runs (OpenAI chat messages, τ-bench trajectories) as a
//! first-class input. A run is imported into a normalised transcript (`model`, `import`), cut at
//! its natural interrupt points (`cuts`), each prefix turned into an
//! [`crate::state::InterruptedState`] (`prefix`) that every strategy compacts unchanged, and the
//! handoffs measured against what the rest of the run needed (`metrics`) — offline, and with a
//! live model for next-action agreement (`agree`). `eval` runs all of it and writes records with
//! `source: transcript` under the one record contract.
//!
//! Data flow: it reads state, strategy, handoff, the live client and record types, and writes
//! records; nothing before it in the pipeline imports it, and it never touches a scenario world
//! (a log has none: no restoration step). The one environment it drives is τ-bench's airline
//! (`tau`: recorded τ-bench runs cut and continued on [`crate::tau`], `source: tau` records). Must not: fork a strategy,
//! score with the scenario scorer, or render reports (the report reads the records).

pub mod agree;
pub mod cuts;
pub mod eval;
pub mod import;
pub mod metrics;
pub mod model;
pub mod prefix;
pub mod tau;

use std::path::{Path, PathBuf};

pub use cuts::{Cut, CutRule, WriteRule, cuts};
pub use import::{BadRun, Format, Imported, import};
pub use model::{Transcript, read, read_dir};

/// Problems with transcript input, written for the user: each names the file, and for a bad run
/// the run, the message index and the field.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    #[error("{path}: {message}")]
    Io { path: PathBuf, message: String },
    #[error("{path}: not JSON or JSONL: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: {message}")]
    Shape { path: PathBuf, message: String },
    #[error("{path}: {bad} (use --skip-bad to skip such runs)")]
    BadRun { path: PathBuf, bad: BadRun },
    #[error("{path}: not a normalised transcript (run `transcripts import` first): {message}")]
    NotATranscript { path: PathBuf, message: String },
    #[error("{path}: holds no transcript (*.json written by `transcripts import`)")]
    Empty { path: PathBuf },
    #[error("no run `{run}` in {dir}; runs there: {known}")]
    UnknownRun {
        run: String,
        dir: PathBuf,
        known: String,
    },
    #[error(transparent)]
    Strategy(#[from] crate::strategy::StrategyError),
    #[error("{0}")]
    Usage(String),
}

/// What `transcripts import` did.
#[derive(Debug, Clone)]
pub struct ImportReport {
    pub written: Vec<(String, PathBuf)>,
    pub skipped: Vec<BadRun>,
}

/// Imports `file` and writes one transcript per run into `out` (created if missing).
pub fn import_to(
    file: &Path,
    format: Option<Format>,
    skip_bad: bool,
    out: &Path,
) -> Result<ImportReport, TranscriptError> {
    let imported = import(file, format, skip_bad)?;
    std::fs::create_dir_all(out).map_err(|e| TranscriptError::Io {
        path: out.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut written = Vec::new();
    for t in &imported.runs {
        written.push((t.id.clone(), t.write(out)?));
    }
    Ok(ImportReport {
        written,
        skipped: imported.skipped,
    })
}

/// The run `id` of the transcripts in `dir`.
pub fn find(dir: &Path, id: &str) -> Result<Transcript, TranscriptError> {
    let direct = dir.join(format!("{}.json", model::safe_id(id)));
    if let Ok(t) = read(&direct)
        && t.id == id
    {
        return Ok(t);
    }
    let all = read_dir(dir)?;
    let known = all
        .iter()
        .map(|t| t.id.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    all.into_iter()
        .find(|t| t.id == id)
        .ok_or_else(|| TranscriptError::UnknownRun {
            run: id.to_string(),
            dir: dir.to_path_buf(),
            known,
        })
}
