//! A run against a baseline run: one paired comparison per strategy × model × metric over the
//! cells both have (same strategy, scenario, scale, interrupt point, model, repetition), the
//! difference candidate − baseline with its scenario-clustered standard error
//! ([`super::outcome::paired_difference`]).
//!
//! Used by the gate's regression rules and by `compare` (whose Markdown is `report::compare`).
//! Must not: decide what counts as a regression (the gate's policy does) or format anything.

use std::collections::BTreeMap;

use serde::Serialize;

use super::outcome::{Metric, paired_difference};
use super::paired::Pairing;
use crate::record::RunRecord;
use crate::stats::ClusteredMean;

/// One paired comparison: candidate − baseline in the metric's own units and direction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub strategy: String,
    pub model: String,
    pub metric: String,
    /// Whether a higher value of the metric is better (a difference above 0 is an improvement).
    pub higher_is_better: bool,
    /// Paired cells (repetitions included).
    pub cells: usize,
    /// Paired cells whose metric differs between the runs (0: identical on every shared cell).
    pub differing: usize,
    /// The metric's mean over the paired cells, baseline and candidate.
    pub base: f64,
    pub cand: f64,
    /// Candidate − baseline, clustered by scenario (`diff.clusters` scenarios).
    pub diff: ClusteredMean,
}

impl Comparison {
    /// The difference in the better direction: positive is better whichever way the metric
    /// points (for the gate's margins).
    pub fn gain(&self) -> f64 {
        if self.higher_is_better {
            self.diff.estimate
        } else {
            -self.diff.estimate
        }
    }
}

/// Paired comparison of each strategy × model × metric between baseline and candidate, on the
/// ok cells both have; strategies and models in the candidate's first-seen order, metrics in the
/// given order.
pub fn paired_comparisons(
    base: &[RunRecord],
    cand: &[RunRecord],
    metrics: &[Metric],
) -> Vec<Comparison> {
    let pairing = Pairing::new(base, true);
    let mut order: Vec<(&str, &str)> = Vec::new();
    let mut groups: BTreeMap<(&str, &str), Vec<(&RunRecord, &RunRecord)>> = BTreeMap::new();
    for (c, b) in pairing.pairs(cand) {
        let k = (c.strategy.as_str(), c.model.as_str());
        if !order.contains(&k) {
            order.push(k);
        }
        groups.entry(k).or_default().push((c, b));
    }
    let mut out = Vec::new();
    for k in order {
        let pairs = &groups[&k];
        for m in metrics {
            let Some(diff) = paired_difference(pairs, m.value) else {
                continue;
            };
            let n = pairs.len() as f64;
            out.push(Comparison {
                strategy: k.0.to_string(),
                model: k.1.to_string(),
                metric: m.name.to_string(),
                higher_is_better: m.higher_is_better,
                cells: pairs.len(),
                differing: pairs
                    .iter()
                    .filter(|(c, b)| (m.value)(c) != (m.value)(b))
                    .count(),
                base: pairs.iter().map(|(_, b)| (m.value)(b)).sum::<f64>() / n,
                cand: pairs.iter().map(|(c, _)| (m.value)(c)).sum::<f64>() / n,
                diff,
            });
        }
    }
    out
}
