//! `calibrate --fit`, after the calibration's run: per live model, the scenarios split in two, a
//! profile fitted on the training split and written (`OUT/profile-NAME.toml`), every fitted
//! profile run offline on the same sample (`OUT/fitted/`, a run folder of its own), and the
//! held-out κ of the fitted and the hand-set sims written (`OUT/fit.json`, `OUT/fit.md`).
//!
//! Owns the order of those steps and what they print. Must not: compute the fit or κ (the
//! library's `destination::profile` and `report::fit` do).

use std::collections::BTreeSet;
use std::path::Path;

use crate::cli::args::RunArgs;
use crate::destination::profile::{FITTED_PREFIX, FitReport, Profile};
use crate::error::Error;
use crate::record::{Status, read_records};
use crate::report::fit::{self, FitResult};
use crate::results::paired::record_cluster;
use crate::shipped::Source;

/// Bootstrap resamples of the held-out κ intervals.
const RESAMPLES: usize = 1000;

/// A live model's name as a file name's part.
fn slug(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Checks `--fit`'s arguments before anything runs.
pub fn check(holdout: f64, a: &RunArgs) -> Result<(), Error> {
    if !(holdout > 0.0 && holdout < 1.0) {
        return Err(Error::Usage(format!(
            "--fit-holdout is the share of scenarios held out for scoring, between 0 and 1 (exclusive), not {holdout}"
        )));
    }
    if a.tau.is_some() || a.transcripts.is_some() {
        return Err(Error::Usage(
            "--fit fits the scenario sims' rates on scenario cells; a τ-bench calibration is measured only (a τ-bench run takes a profile's notices_missing: --models sim:fitted:PATH)".into(),
        ));
    }
    if a.shard.is_some() {
        return Err(Error::Usage(
            "--fit needs the whole calibration in one folder: merge the shards first, then fit from the merged folder's run with --resume".into(),
        ));
    }
    Ok(())
}

/// The fit of every live model of the calibration in `out`; `fa` is the calibration's run
/// arguments (the fitted run reuses its sample, scales and seed).
pub fn run(
    dir: &Source,
    fa: RunArgs,
    out: &Path,
    live: &[String],
    holdout: f64,
) -> Result<(), Error> {
    let results_file = out.join("results.jsonl");
    let records = read_records(&results_file).map_err(crate::report::ReportError::from)?;
    let (cfg, _) = super::run::config(dir, fa.clone())?;
    let mut results = Vec::new();
    for l in live {
        let scored: BTreeSet<String> = records
            .iter()
            .filter(|r| r.model == *l && r.status == Status::Ok)
            .map(|r| record_cluster(r).into_owned())
            .collect();
        if scored.len() < 2 {
            return Err(Error::Usage(format!(
                "--fit: `{l}` scored cells of {} scenario(s); a fit needs two or more (one to fit on, one to hold out): raise --sample",
                scored.len()
            )));
        }
        let split = fit::split(&scored, holdout, cfg.seed);
        let entries = fit::entries(out, l).map_err(Error::Usage)?;
        let (obs, cells) = fit::observations(&records, &entries, l, &split.train);
        if cells == 0 {
            return Err(Error::Usage(format!(
                "--fit: no training cell of `{l}` has a simulated destination's reading of the same handoff; calibrate with --models sim:careful"
            )));
        }
        let (rates, rate_fits) = crate::destination::profile::fit(&obs);
        let path = out.join(format!("profile-{}.toml", slug(l)));
        let mut profile = Profile::new(&format!("fitted to {l}"), rates);
        profile.fit = Some(FitReport {
            live: l.clone(),
            cells,
            scenarios: split.train.clone(),
            rates: rate_fits.clone(),
        });
        crate::durable::write(&path, profile.to_toml().as_bytes())
            .map_err(Error::write_to(&path))?;
        say!(
            "fit: {l}: {cells} training cells, {} observations → {}",
            obs.len(),
            path.display()
        );
        results.push(FitResult {
            live: l.clone(),
            profile: path.display().to_string(),
            split,
            train_cells: cells,
            rates,
            fit: rate_fits,
            held_out: Vec::new(),
        });
    }
    // Every fitted profile, offline, on the calibration's own sample (a folder of its own: the
    // calibration's records stay as they are).
    let fitted_out = out.join("fitted");
    if fitted_out.join("results.jsonl").exists() {
        std::fs::remove_dir_all(&fitted_out).map_err(Error::write_to(&fitted_out))?;
    }
    let mut a = fa;
    a.models = Some(
        results
            .iter()
            .map(|r| format!("{FITTED_PREFIX}{}", r.profile))
            .collect(),
    );
    a.model_name = None;
    a.base_url = None;
    a.resume = false;
    a.out = Some(fitted_out.clone());
    let (code, _) = super::run::run_into(dir, a)?;
    if code != crate::exit::OK {
        return Err(Error::Usage(format!(
            "--fit: the fitted profiles' offline run in {} ended with exit {code}",
            fitted_out.display()
        )));
    }
    let mut all = records;
    all.extend(
        read_records(&fitted_out.join("results.jsonl"))
            .map_err(crate::report::ReportError::from)?,
    );
    for r in &mut results {
        r.held_out = fit::held_out(&all, &r.live, &r.split.held, RESAMPLES, cfg.seed);
        for h in &r.held_out {
            if let Some(m) = h.metrics.first() {
                say!(
                    "fit: {} held out, {} against {}: κ on {} {} (n {})",
                    r.live,
                    h.sim,
                    r.live,
                    m.metric,
                    crate::report::calibration::kappa_text(m),
                    m.n
                );
            }
        }
    }
    let json = out.join(fit::FILE);
    let text = serde_json::to_string_pretty(&results).unwrap_or_default();
    crate::durable::write(&json, text.as_bytes()).map_err(Error::write_to(&json))?;
    let md = out.join(fit::MARKDOWN);
    crate::durable::write(&md, fit::markdown(&results).as_bytes()).map_err(Error::write_to(&md))?;
    say!("wrote {} and {}", json.display(), md.display());
    Ok(())
}
