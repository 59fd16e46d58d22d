//! `report`: re-render a run folder's outputs from its saved records.
//!
//! Owns: refusing a folder whose run is in progress (unless `--allow-incomplete`), the run's seed read back from `manifest.json` (for the bootstrap) and the summary line.
//! Must not: render anything itself ([`crate::report::render_dir_with`] does).

use std::path::Path;

use crate::cli::args::ReportArgs;
use crate::error::Error;
use crate::exit;
use crate::report::analysis::ReportOptions;

pub fn run(args: ReportArgs) -> Result<i32, Error> {
    // A folder a live run still writes has no final records: refused unless asked for.
    if !args.allow_incomplete {
        crate::runner::refuse_in_progress(&args.dir)?;
    }
    let opts = ReportOptions {
        seed: run_seed(&args.dir),
        reference: args.reference,
        resamples: args.resamples,
        calibration: args.calibration,
        ..ReportOptions::default()
    };
    crate::report::render_dir_with(&args.dir, Some(&opts))?;
    say!(
        "wrote runs.csv, summary.csv, summary.json, report.md in {}",
        args.dir.display()
    );
    Ok(exit::OK)
}

/// The base seed in the run's manifest, or the default seed when it has none.
fn run_seed(dir: &Path) -> u64 {
    std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|m| m.get("seed").and_then(|v| v.as_u64()))
        .unwrap_or(crate::DEFAULT_SEED)
}
