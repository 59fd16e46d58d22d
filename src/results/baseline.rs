//! A run against a baseline run: one paired comparison per strategy × model × metric over the
//! cells both have, tested as the report tests ([`super::paired`]), Holm-corrected across all;
//! and the metrics such a comparison may name, each as a number where higher is better.
//!
//! Used by the gate's no-regression rule and by `compare` (whose Markdown is
//! `report::compare`). Must not: decide what counts as a regression (the gate's policy does) or
//! format anything.

use std::collections::BTreeMap;

use serde::Serialize;

use super::paired::{CellDiff, Pairing, test_groups};
use crate::record::RunRecord;

/// Paired comparison of each strategy × model × metric between baseline and candidate, on the
/// cells both have, averaged to units (scenario × interrupt point × model, mean over
/// repetitions) and tested at the scenario level as the report does
/// ([`super::paired`]); Holm-corrected across all of them.
pub fn paired_comparisons(
    base: &[RunRecord],
    cand: &[RunRecord],
    metrics: &[String],
) -> Vec<Comparison> {
    let mut groups: BTreeMap<(String, String, String), Vec<CellDiff>> = BTreeMap::new();
    for (r, br) in Pairing::new(base, true).pairs(cand) {
        for m in metrics {
            if let Some(f) = metric(m) {
                groups
                    .entry((r.strategy.clone(), r.model.clone(), m.clone()))
                    .or_default()
                    .push(CellDiff::of(r, br, f));
            }
        }
    }
    let tests = test_groups(groups.values().map(Vec::as_slice));
    groups
        .into_keys()
        .zip(tests)
        .map(|((strategy, model, metric), t)| Comparison {
            strategy,
            model,
            metric,
            n: t.n,
            cells: t.cells,
            clusters: t.clusters,
            mean_diff: t.mean_diff,
            p_value: t.p_value,
            p_holm: t.p_holm,
            p_units: t.p_units,
            method: t.method,
        })
        .collect()
}

/// One paired comparison (candidate minus baseline; positive is better).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub strategy: String,
    pub model: String,
    pub metric: String,
    /// Distinct units (scenario × interrupt point × model).
    pub n: usize,
    /// Paired cells (repetitions included).
    pub cells: usize,
    /// Distinct scenarios: the n of the cluster-level test.
    pub clusters: usize,
    /// Mean over units.
    pub mean_diff: f64,
    pub p_value: f64,
    pub p_holm: f64,
    /// Unit-level p-value ignoring clustering (information only).
    pub p_units: f64,
    pub method: &'static str,
}

/// A metric as a number where higher is better.
pub fn metric(name: &str) -> Option<fn(&RunRecord) -> f64> {
    Some(match name {
        "task_success" => |r| f64::from(u8::from(r.metrics.task_success)),
        "recovery_quality" => |r| r.metrics.recovery_quality,
        "omitted_context" => |r| -f64::from(r.metrics.omitted_context),
        "repeated_work" => |r| -f64::from(r.metrics.repeated_work),
        _ => return None,
    })
}
