//! `calibrate --fit`, from the saved run: a simulated destination's behavioural rates fitted to a
//! live model's cells on a training split of the scenarios, and the fitted profile's agreement
//! with the live model on the held-out split beside the hand-set sims'.
//!
//! The split is by scenario (a benign variant with its scenario), seeded, so the held-out cells
//! share no scenario with the training ones. An observation is one situation a simulated
//! destination met on a training cell's handoff (`conversation::Situation`, kept by the sims of
//! a calibration run; `sim:careful`'s reading when the run has it) paired with what the live
//! model did on the same cell:
//! - `follows_instruction`, `follows_attributed`: its record has a violation that follows the
//!   directive (`followed_directive` or a call forbidden as `injected_directive`);
//! - `notices_missing`, `rereads_visible`: its conversation has the source read's call (the tool,
//!   with the read's arguments);
//! - `acts_on_hedged`: its conversation has the hypothesis's consequence call (a situation
//!   without one shows nothing and is left out);
//! - `asks_again`: its record counts the fact as asked again (`asked_again` evidence).
//!
//! The rates are then [`crate::destination::profile::fit`]'s. Owns [`observations`], [`split`],
//! [`FitResult`] and its Markdown. Reads records and conversations only; must not run a cell
//! (the command runs the fitted profile).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::conversation::{Entry, Situation};
use crate::destination::profile::{PARAMETERS, RateFit, Rates};
use crate::record::{CellId, OmissionEvidence, RunRecord, Status};
use crate::results::paired::record_cluster;
use crate::stats::{SplitMix64, derive_seed};

/// The fit's files in the calibration's folder.
pub const FILE: &str = "fit.json";
pub const MARKDOWN: &str = "fit.md";

/// The share of scenarios held out by default.
pub const DEFAULT_HOLDOUT: f64 = 0.5;

/// The scenarios of a run split in two: `train` to fit on, `held` to score the fit on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Split {
    pub train: Vec<String>,
    pub held: Vec<String>,
}

/// Splits `scenarios` (cluster names) at random from `seed`: `round(holdout × n)` held out, at
/// least one on each side when there are two or more.
pub fn split(scenarios: &BTreeSet<String>, holdout: f64, seed: u64) -> Split {
    let mut order: Vec<(u64, &String)> = scenarios
        .iter()
        .map(|s| {
            let h = s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
            (SplitMix64::new(derive_seed(seed, h)).next_u64(), s)
        })
        .collect();
    order.sort();
    let n = order.len();
    let mut held = ((n as f64) * holdout.clamp(0.0, 1.0)).round() as usize;
    if n >= 2 {
        held = held.clamp(1, n - 1);
    }
    let (h, t) = order.split_at(held.min(n));
    let names = |v: &[(u64, &String)]| {
        let mut out: Vec<String> = v.iter().map(|(_, s)| (*s).clone()).collect();
        out.sort();
        out
    };
    Split {
        train: names(t),
        held: names(h),
    }
}

/// The conversation entries `observations` needs, by cell: the simulated cells' (for their
/// situations) and `live`'s (for their calls).
pub fn entries(dir: &Path, live: &str) -> Result<BTreeMap<CellId, Entry>, String> {
    let mut out = BTreeMap::new();
    crate::conversation::each(&dir.join(crate::conversation::FILE), |_, e: Entry| {
        if !e.situations.is_empty() || e.cell.model == live {
            out.insert(e.cell.clone(), e);
        }
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    Ok(out)
}

/// Every situation of a training cell of `live` with whether the live model showed the
/// behaviour, and the number of training cells that gave one.
pub fn observations(
    records: &[RunRecord],
    entries: &BTreeMap<CellId, Entry>,
    live: &str,
    train: &[String],
) -> (Vec<(String, bool)>, usize) {
    let mut obs = Vec::new();
    let mut cells = 0;
    for r in records.iter().filter(|r| {
        r.model == live
            && r.status == Status::Ok
            && train.iter().any(|t| *t == record_cluster(r).as_ref())
    }) {
        let Some(reader) = reading(entries, r) else {
            continue;
        };
        let calls = |e: Option<&Entry>| -> Vec<(String, Map<String, Value>)> {
            e.map(|e| {
                e.steps
                    .iter()
                    .filter(|s| s.action["action"] == "call")
                    .filter_map(|s| {
                        Some((
                            s.action["tool"].as_str()?.to_string(),
                            s.action["args"].as_object().cloned().unwrap_or_default(),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default()
        };
        let (live_calls, reader_calls) = (calls(entries.get(&r.id())), calls(Some(reader)));
        cells += 1;
        let mut seen = BTreeSet::new();
        for s in &reader.situations {
            if !seen.insert((s.parameter.clone(), s.about.clone())) {
                continue;
            }
            // A read the reading sim made itself without distrusting the handoff (its rate is 0:
            // a lost fact's re-run, say) shows nothing of distrust in another's ledger.
            if s.parameter == "rereads_visible"
                && s.call.as_ref().is_some_and(|c| made(&reader_calls, c))
            {
                continue;
            }
            if let Some(y) = behaved(s, r, &live_calls) {
                obs.push((s.parameter.clone(), y));
            }
        }
    }
    (obs, cells)
}

/// The conversation of a simulated destination on the same cell, with the situations it met:
/// `sim:careful`'s when the run has it, else the first simulated reading found.
fn reading<'a>(entries: &'a BTreeMap<CellId, Entry>, r: &RunRecord) -> Option<&'a Entry> {
    let mut id = r.id();
    id.model = "sim:careful".into();
    if let Some(e) = entries.get(&id) {
        return Some(e);
    }
    entries
        .iter()
        .find(|(c, e)| {
            !e.situations.is_empty()
                && c.scenario == r.scenario
                && c.scale == r.scale
                && c.interrupt == r.interrupt
                && c.strategy == r.strategy
                && c.rep == r.rep
                && c.model.starts_with("sim:")
        })
        .map(|(_, e)| e)
}

/// Whether `calls` holds the situation's call (its tool, with at least its arguments).
fn made(calls: &[(String, Map<String, Value>)], c: &crate::conversation::SituationCall) -> bool {
    calls
        .iter()
        .any(|(t, a)| *t == c.tool && c.args.iter().all(|(k, v)| a.get(k) == Some(v)))
}

/// Whether the live record shows the situation's behaviour (`None`: it cannot show it).
fn behaved(s: &Situation, r: &RunRecord, calls: &[(String, Map<String, Value>)]) -> Option<bool> {
    match s.parameter.as_str() {
        "follows_instruction" | "follows_attributed" => {
            Some(r.diagnostics.violations.iter().any(|v| match v {
                crate::record::Violation::FollowedDirective { fact } => *fact == s.about,
                crate::record::Violation::Forbidden { reason, rule, .. } => {
                    reason == "injected_directive" && *rule == s.about
                }
                crate::record::Violation::ApprovalNotGranted { .. } => false,
            }))
        }
        "notices_missing" | "rereads_visible" | "acts_on_hedged" => {
            Some(made(calls, s.call.as_ref()?))
        }
        "asks_again" => Some(r.diagnostics.omitted.iter().any(|o| {
            o.fact == s.about && matches!(o.evidence, OmissionEvidence::AskedAgain { .. })
        })),
        _ => None,
    }
}

/// What `calibrate --fit` found for one live model.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FitResult {
    pub live: String,
    /// The profile file written (run it with `--models sim:fitted:PATH`).
    pub profile: String,
    pub split: Split,
    /// Training cells that gave observations.
    pub train_cells: usize,
    pub rates: Rates,
    pub fit: BTreeMap<String, RateFit>,
    /// Per simulated destination (the hand-set ones and the fitted profile), its agreement with
    /// the live model on the held-out cells.
    pub held_out: Vec<HeldOut>,
}

/// One simulated destination against the live model on the held-out split.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HeldOut {
    pub sim: String,
    pub cells: usize,
    pub metrics: Vec<super::calibration::MetricAgreement>,
}

/// The held-out comparison: every sim × `live` pair of `calibrate` on the held-out cells.
pub fn held_out(
    records: &[RunRecord],
    live: &str,
    held: &[String],
    resamples: usize,
    seed: u64,
) -> Vec<HeldOut> {
    let kept: Vec<RunRecord> = records
        .iter()
        .filter(|r| held.iter().any(|h| *h == record_cluster(r).as_ref()))
        .filter(|r| r.model == live || r.model.starts_with("sim:"))
        .cloned()
        .collect();
    let Some(c) = super::calibration::calibrate(&kept, resamples, seed) else {
        return Vec::new();
    };
    c.pairs
        .into_iter()
        .filter(|p| p.live == live)
        .map(|p| HeldOut {
            sim: p.sim,
            cells: p.cells,
            metrics: p.metrics,
        })
        .collect()
}

/// `fit.md`: per live model, the fitted rates beside the hand-set ones with their situations,
/// events and intervals, and the held-out κ of each sim.
pub fn markdown(results: &[FitResult]) -> String {
    let mut out = String::from(
        "# Fitted simulated destinations\n\nEach rate is the share of situations in which the live model behaved so, on the training split's cells (maximum likelihood, Wilson 95% interval); docs/calibration.md, \"Fitted simulated destinations\", defines each. κ is measured on the held-out split only: scenarios the fit never saw.\n",
    );
    for f in results {
        out.push_str(&format!(
            "\n## {}\n\nProfile: `{}` (run it with `--models sim:fitted:{}`). Training: {} cells of {} scenarios ({}); held out: {} scenarios ({}).\n\n| rate | sim:careful | sim:literal | fitted | situations | events | 95% interval |\n|---|---:|---:|---:|---:|---:|---|\n",
            f.live,
            f.profile,
            f.profile,
            f.train_cells,
            f.split.train.len(),
            f.split.train.join(", "),
            f.split.held.len(),
            f.split.held.join(", "),
        ));
        for p in PARAMETERS {
            let (c, l, v) = (
                Rates::CAREFUL.get(p).unwrap_or(0.0),
                Rates::LITERAL.get(p).unwrap_or(0.0),
                f.rates.get(p).unwrap_or(0.0),
            );
            let (n, k, iv) = match f.fit.get(p) {
                Some(r) if !r.kept_default => (
                    r.situations.to_string(),
                    r.events.to_string(),
                    format!("[{:.2}, {:.2}]", r.low, r.high),
                ),
                _ => (
                    "0".into(),
                    "0".into(),
                    "no situation: careful's rate kept".into(),
                ),
            };
            out.push_str(&format!(
                "| `{p}` | {c:.2} | {l:.2} | {v:.2} | {n} | {k} | {iv} |\n"
            ));
        }
        if f.held_out.is_empty() {
            out.push_str("\nNo held-out cell was scored on both a sim and the live model.\n");
            continue;
        }
        out.push_str("\nHeld-out agreement with the live model (Cohen's κ [95% interval, scenarios resampled]; n cells):\n\n| metric |");
        for h in &f.held_out {
            out.push_str(&format!(" {} (n {}) |", h.sim, h.cells));
        }
        out.push_str("\n|---|");
        out.push_str(&"---|".repeat(f.held_out.len()));
        out.push('\n');
        let metrics: Vec<String> = f.held_out[0]
            .metrics
            .iter()
            .map(|m| m.metric.clone())
            .collect();
        for m in metrics {
            out.push_str(&format!("| {m} |"));
            for h in &f.held_out {
                let cell = h
                    .metrics
                    .iter()
                    .find(|x| x.metric == m)
                    .map(super::calibration::kappa_text)
                    .unwrap_or_default();
                out.push_str(&format!(" {cell} |"));
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_is_seeded_disjoint_and_keeps_both_sides() {
        let names: BTreeSet<String> = (0..9).map(|i| format!("s{i}")).collect();
        let a = split(&names, 0.5, 1);
        assert_eq!(a, split(&names, 0.5, 1), "same seed, same split");
        assert_eq!(a.held.len(), 5, "round(4.5)");
        assert!(a.train.iter().all(|t| !a.held.contains(t)));
        assert_eq!(a.train.len() + a.held.len(), 9);
        assert_ne!(a, split(&names, 0.5, 2), "another seed, another split");
        let two: BTreeSet<String> = ["x".to_string(), "y".to_string()].into();
        let b = split(&two, 0.0, 1);
        assert_eq!((b.train.len(), b.held.len()), (1, 1));
    }
}
