//! Run outputs generated from saved records: `runs.csv`, `summary.csv`, `summary.json`,
//! `report.md`, `report.html` and `plots/`. This module owns [`render_dir`], which writes them
//! all, and its error type [`ReportError`]. The parts: the [`summary`] (aggregates of each
//! [`group`] of cells, with the [`ranking`] and its ties), the per-[`domain`] rows, the statistics in [`analysis`] (with the
//! shared paired comparison of [`crate::results::paired`]), the [`curve`], [`governance`] and
//! [`transcripts`] sections (and [`tau`], the τ-bench section [`render_dir`] adds to the written
//! reports), what the reports show in [`view`], the files in [`export`] (one
//! module per format behind the [`Export`] trait), the charts a report shows in [`figures`] and
//! their drawing in [`plots`].
//!
//! Everything here reads only the records, `continuity.jsonl` and the manifest, so a report can
//! be re-rendered without running a cell. Must not: run a cell, change a record, or format
//! output outside an export.

pub mod analysis;
pub mod calibration;
pub mod chains;
pub mod compare;
pub mod curve;
pub mod domain;
pub mod export;
pub mod figures;
pub mod fit;
pub mod governance;
pub mod group;
pub mod plots;
pub mod ranking;
pub mod summary;
pub mod tau;
pub mod transcripts;
pub mod view;

use std::path::{Path, PathBuf};

use crate::record::{RecordError, RunRecord, read_records_with};
use crate::results::{ResultsError, check_count, read_continuity, scenario_cells};

pub use export::{
    Export, ExportError, ExportInput, HtmlReport, MarkdownReport, RunsCsv, SummaryCsv, SummaryJson,
};
pub use figures::render_plots;
pub use group::{Group, LiveTotals};
pub use ranking::RankRow;
pub use summary::{
    ContinuityRow, DEFAULT_ALPHA, LiveModelRow, Summary, errored_by_class, summarize, summarize_at,
    summarize_continuity,
};

/// Why a run folder's report could not be written, with messages for the user.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// `results.jsonl` is missing, unreadable, corrupt or holds a cell twice.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The run folder is incomplete, or `continuity.jsonl` or `manifest.json` is corrupt.
    #[error(transparent)]
    Results(#[from] ResultsError),
    /// An export (a CSV, JSON, Markdown or HTML file) could not be rendered.
    #[error(transparent)]
    Export(#[from] ExportError),
    /// A plot could not be drawn.
    #[error(transparent)]
    Plot(#[from] plots::PlotError),
    /// A calibration file (`report --calibration FILE`, or the folder's `calibration.json`)
    /// that cannot be read.
    #[error("{path}: not a calibration file (`compaction-eval calibrate` writes one): {message}")]
    Calibration { path: PathBuf, message: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A rendered file with every secret of the run redacted (the records already are; this also
/// covers anything else a template quotes).
fn redact_bytes(bytes: Vec<u8>) -> Vec<u8> {
    if !crate::secrets::any() {
        return bytes;
    }
    match String::from_utf8(bytes) {
        Ok(t) => crate::secrets::redact_text(&t).into_owned().into_bytes(),
        Err(e) => e.into_bytes(),
    }
}

/// The run's calibration (`calibration.json`, `calibration.md`) when it continued shared cells on
/// a simulated and a live destination; else one read from `opts.calibration` or the folder's
/// `calibration.json`, quoted by the summary's trust line.
fn attach_calibration(
    dir: &Path,
    records: &[crate::record::RunRecord],
    opts: &analysis::ReportOptions,
    summary: &mut Summary,
) -> Result<(), ReportError> {
    let own_file = dir.join(calibration::FILE);
    if let Some(c) = calibration::calibrate(records, opts.resamples, opts.seed) {
        let json = serde_json::to_vec_pretty(&c).map_err(|e| ReportError::Io {
            path: own_file.clone(),
            source: std::io::Error::other(e),
        })?;
        let md = dir.join(calibration::MARKDOWN);
        let text = calibration::markdown(&c, &dir.display().to_string());
        for (p, bytes) in [
            (&own_file, redact_bytes(json)),
            (&md, redact_bytes(text.into_bytes())),
        ] {
            crate::durable::write(p, &bytes).map_err(|source| ReportError::Io {
                path: p.clone(),
                source,
            })?;
        }
        summary.calibration = Some(c);
        return Ok(());
    }
    let from = match &opts.calibration {
        Some(p) => p.clone(),
        None if own_file.is_file() => own_file,
        None => return Ok(()),
    };
    summary.calibration = Some(calibration::read(&from)?);
    summary.calibration_from = Some(from.display().to_string());
    Ok(())
}

/// Writes every export into `dir` from the records there and the manifest, with the default
/// analysis options and the run's seed.
pub fn render_dir(dir: &Path) -> Result<Summary, ReportError> {
    render_dir_with(dir, None)
}

/// As [`render_dir`], with explicit analysis options (`None`: reference C, 1000 resamples, the
/// manifest's seed, α 0.05).
pub fn render_dir_with(
    dir: &Path,
    opts: Option<&analysis::ReportOptions>,
) -> Result<Summary, ReportError> {
    let mut held = Held::default();
    let records = read_records_with(&dir.join("results.jsonl"), |r| held.keep(r))?;
    drop(held);
    render_records(dir, &records, opts)
}

/// The records as the report holds them: each through [`for_aggregates`], and equal
/// diagnostics shared, one copy for every record that has them (a `--reps 10` run's 61,920
/// records have 3,565 distinct ones once slimmed: repetitions and destinations that behaved
/// alike).
#[derive(Default)]
struct Held {
    /// The diagnostics kept, by a digest of their JSON (equal digests compared in full).
    by_digest: std::collections::HashMap<u64, Vec<std::sync::Arc<crate::record::Diagnostics>>>,
}

impl Held {
    fn keep(&mut self, r: &mut RunRecord) {
        for_aggregates(r);
        let Ok(json) = serde_json::to_string(&*r.diagnostics) else {
            return;
        };
        let same = self
            .by_digest
            .entry(crate::text::digest(&json))
            .or_default();
        match same.iter().find(|d| ***d == *r.diagnostics) {
            Some(d) => r.diagnostics = d.clone(),
            None => same.push(r.diagnostics.clone()),
        }
    }
}

/// What no aggregate, table or plot of the report reads, dropped from a record as the report
/// reads it: the report holds every record of a run at once, and these parts were 37 % of a
/// record's memory, 967 of 2,611 bytes (the governed lineage and digests, the checkpoint
/// rules' places and details, the evidence of each omission beside its kind, the reads and
/// intents repeated, the per-value lists). The viewer, which shows every part of a cell, reads the file again a
/// record at a time. A section that starts reading one of these parts takes it off this list;
/// `tests/report_held.rs` renders a run from full and from these records and compares files.
pub fn for_aggregates(r: &mut RunRecord) {
    r.conversation = None;
    if let Some(g) = r.governed.as_deref_mut() {
        g.lineage = Vec::new();
        g.policy_digest = None;
        g.envelope_digest = None;
        g.receipt = None;
    }
    let d = std::sync::Arc::make_mut(&mut r.diagnostics);
    d.repeated = Vec::new();
    d.duplicates = Vec::new();
    d.recovery_missed = Vec::new();
    d.failed_predicates = Vec::new();
    d.facts_overridden = Vec::new();
    d.needed_values = Vec::new();
    for b in &mut d.checkpoint_rule_violations {
        b.at = String::new();
        b.detail = String::new();
    }
    for o in &mut d.omitted {
        match &mut o.evidence {
            crate::record::OmissionEvidence::Contradicted { tool } => *tool = String::new(),
            crate::record::OmissionEvidence::Reran { tool, event } => {
                *tool = String::new();
                *event = String::new();
            }
            crate::record::OmissionEvidence::NeverDid { target } => *target = String::new(),
            crate::record::OmissionEvidence::AskedAgain { question } => *question = String::new(),
        }
    }
}

/// Writes the report's files of `dir` from `records` (the folder's, in file order: whole, or as
/// [`render_dir_with`] holds them, through [`for_aggregates`]); the viewer reads the folder's
/// records itself.
pub fn render_records(
    dir: &Path,
    records: &[RunRecord],
    opts: Option<&analysis::ReportOptions>,
) -> Result<Summary, ReportError> {
    let manifest_path = dir.join("manifest.json");
    let manifest: serde_json::Value = match std::fs::read_to_string(&manifest_path) {
        Ok(t) => serde_json::from_str(&t).map_err(|e| ResultsError::Corrupt {
            path: manifest_path.clone(),
            line: e.line(),
            message: e.to_string(),
        })?,
        Err(_) => serde_json::Value::Null,
    };
    crate::secrets::load_manifest(&manifest);
    check_count(dir, records, &manifest)?;
    let opts = match opts {
        Some(o) => o.clone(),
        None => analysis::ReportOptions {
            seed: manifest
                .get("seed")
                .and_then(|v| v.as_u64())
                .unwrap_or(crate::DEFAULT_SEED),
            ..Default::default()
        },
    };
    let mut summary = summarize_at(records, opts.alpha);
    summary.continuity = summarize_continuity(&read_continuity(dir)?);
    let scenario_records = scenario_cells(records);
    summary.domains = domain::rows(&scenario_records, &manifest, 1.0 - opts.alpha);
    summary.analysis = analysis::analyse(&scenario_records, &opts);
    attach_calibration(dir, records, &opts, &mut summary)?;
    let plots = render_plots(&scenario_records, &summary)?;
    let input = ExportInput {
        records,
        summary: &summary,
        manifest: &manifest,
        plots: &plots,
    };
    for e in export::ALL {
        let bytes = redact_bytes(e.render(&input)?);
        let p = dir.join(e.file_name());
        crate::durable::write(&p, &bytes).map_err(|source| ReportError::Io { path: p, source })?;
    }
    crate::viewer::write(dir).map_err(|e| ReportError::Io {
        path: dir.join(crate::viewer::FILE),
        source: std::io::Error::other(e.to_string()),
    })?;
    let plot_dir = dir.join("plots");
    for p in &plots {
        plots::write(&plot_dir, p).map_err(|source| ReportError::Io {
            path: plot_dir.clone(),
            source,
        })?;
    }
    // The τ-bench section (its own file): added to the written reports when the run has any.
    tau::attach(dir, records, opts.seed).map_err(|source| ReportError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    Ok(summary)
}
