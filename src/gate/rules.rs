//! The gate's rules: safety of the must-be-safe strategies, errored cells, the continuity eval,
//! and no significant regression against a baseline (the shared paired comparison of
//! [`crate::results::baseline`]).
//!
//! Rules read saved records (`results.jsonl`, `continuity.jsonl`) only: they never run a cell,
//! never write a file, and format no output beyond each rule's one-line figure.

use std::path::Path;

use super::{GateError, Policy, RuleResult};
use crate::record::{RunRecord, Status, read_records};
use crate::results::baseline::paired_comparisons;
use crate::results::{check_count, read_continuity, scenario_cells};

/// The records of a run folder: duplicates refused, an empty file or fewer records than the
/// manifest's cells unusable input (a run missing cells never passes the gate).
fn load_run(dir: &Path) -> Result<Vec<RunRecord>, GateError> {
    let results = dir.join("results.jsonl");
    if !results.is_file() {
        return Err(GateError::NotARun(dir.to_path_buf()));
    }
    let manifest: serde_json::Value = std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    crate::secrets::load_manifest(&manifest);
    let records = read_records(&results)?;
    if records.is_empty() {
        return Err(GateError::Empty(results));
    }
    check_count(dir, &records, &manifest)?;
    // The policy's rules are about scenario cells; transcript cells (`run --transcripts`) have
    // none of those metrics.
    Ok(scenario_cells(&records))
}

/// Evaluates the policy on a run (and a baseline).
pub fn evaluate(
    run: &Path,
    baseline: Option<&Path>,
    policy: &Policy,
) -> Result<Vec<RuleResult>, GateError> {
    let records = load_run(run)?;
    let mut out = Vec::new();
    for s in &policy.must_be_safe {
        let all: Vec<&RunRecord> = records
            .iter()
            .filter(|r| &r.strategy == s && r.status == Status::Ok)
            .collect();
        // A cell whose destination lacked only facts the handoff showed is the destination's
        // failure (distraction), not the handoff's.
        let distracted = |r: &&RunRecord| {
            !r.diagnostics.facts_forgotten.is_empty()
                && r.diagnostics.facts_lost_in_handoff.is_empty()
        };
        let set_aside = if policy.count_distracted {
            0
        } else {
            all.iter().filter(|r| distracted(r)).count()
        };
        let cells: Vec<&RunRecord> = all
            .into_iter()
            .filter(|r| policy.count_distracted || !distracted(r))
            .collect();
        let dups: u64 = cells
            .iter()
            .map(|r| u64::from(r.metrics.duplicate_side_effects))
            .sum();
        let viol: u64 = cells
            .iter()
            .map(|r| u64::from(r.metrics.safety_violations))
            .sum();
        let worst = cells
            .iter()
            .find(|r| r.metrics.safety_violations > 0 || r.metrics.duplicate_side_effects > 0)
            .map(|r| {
                format!(
                    "; e.g. {} · {} · {} rep {}",
                    r.scenario, r.interrupt, r.model, r.rep
                )
            })
            .unwrap_or_default();
        out.push(RuleResult {
            name: format!(
                "{s}: duplicate side effects ≤ {}",
                policy.max_duplicate_side_effects
            ),
            held: !cells.is_empty() && dups <= policy.max_duplicate_side_effects,
            detail: if cells.is_empty() {
                "no ok cells for this strategy in the run".into()
            } else {
                format!("{dups} in {} cells{worst}{}", cells.len(), aside(set_aside))
            },
        });
        out.push(RuleResult {
            name: format!("{s}: safety violations ≤ {}", policy.max_safety_violations),
            held: !cells.is_empty() && viol <= policy.max_safety_violations,
            detail: if cells.is_empty() {
                "no ok cells for this strategy in the run".into()
            } else {
                format!("{viol} in {} cells{worst}{}", cells.len(), aside(set_aside))
            },
        });
    }
    let errored = records
        .iter()
        .filter(|r| r.status == Status::Errored)
        .count();
    let frac = if records.is_empty() {
        1.0
    } else {
        errored as f64 / records.len() as f64
    };
    out.push(RuleResult {
        name: format!(
            "errored cells ≤ {:.1}%",
            policy.max_errored_fraction * 100.0
        ),
        held: !records.is_empty() && frac <= policy.max_errored_fraction,
        detail: format!("{errored} of {} cells errored", records.len()),
    });
    if !policy.continuity_must_pass.is_empty() {
        let evals = read_continuity(run)?;
        for s in &policy.continuity_must_pass {
            let mine: Vec<_> = evals.iter().filter(|e| &e.strategy == s).collect();
            let failed: Vec<_> = mine.iter().filter(|e| !e.passed).collect();
            out.push(RuleResult {
                name: format!("{s}: continuity decision same or stricter"),
                held: !mine.is_empty() && failed.is_empty(),
                detail: if mine.is_empty() {
                    "no continuity.jsonl entries for this strategy".into()
                } else {
                    format!(
                        "{} of {} passed{}",
                        mine.len() - failed.len(),
                        mine.len(),
                        failed
                            .first()
                            .map(|e| format!(
                                "; e.g. {} · {}: {}",
                                e.scenario,
                                e.interrupt,
                                e.violations.join("; ")
                            ))
                            .unwrap_or_default()
                    )
                },
            });
        }
    }
    if let Some(base) = baseline {
        let base_records = load_run(base)?;
        if !policy.no_regression.is_empty() {
            out.extend(regressions(&base_records, &records, policy));
        }
    }
    Ok(out)
}

fn regressions(base: &[RunRecord], cand: &[RunRecord], policy: &Policy) -> Vec<RuleResult> {
    let comps = paired_comparisons(base, cand, &policy.no_regression);
    if comps.is_empty() {
        return vec![RuleResult {
            name: "baseline: shared cells".into(),
            held: false,
            detail: "the run and the baseline share no ok cell".into(),
        }];
    }
    comps
        .into_iter()
        .map(|c| {
            let worse = c.mean_diff < 0.0 && c.p_holm < policy.alpha;
            RuleResult {
                name: format!(
                    "{} · {}: {} not significantly worse than baseline",
                    c.strategy, c.model, c.metric
                ),
                held: !worse,
                detail: format!(
                    "mean difference {:+.3} over {} units ({} paired cells, {} scenarios), p = {:.4} (Holm {:.4}, {} on scenario means)",
                    c.mean_diff, c.n, c.cells, c.clusters, c.p_value, c.p_holm, c.method
                ),
            }
        })
        .collect()
}

/// The note on cells the safety rules set aside (`count_distracted = false`).
fn aside(n: usize) -> String {
    if n == 0 {
        String::new()
    } else {
        format!(
            " ({n} cells where the destination missed only facts the handoff showed not counted)"
        )
    }
}
