//! The one paired comparison of the harness: records paired on the same cell (scenario,
//! interrupt point, destination model, repetition — and the strategy when asked), a Wilcoxon
//! signed-rank test per group of differences, Holm correction across the groups.
//!
//! Used by the report (a strategy against the reference strategy) and by the gate (a run
//! against a baseline run). It only pairs and tests: it never reads files, never runs a cell,
//! and does not decide which metrics matter or what counts as a regression.

use std::collections::BTreeMap;

use crate::runner::{RunRecord, Status};
use crate::stats;

/// The identity of a cell for pairing: strategy (empty when pairing across strategies),
/// scenario, interrupt point, model, repetition.
type Key<'a> = (&'a str, &'a str, &'a str, &'a str, u32);

/// The ok records of one side, indexed by cell.
pub struct Pairing<'a> {
    with_strategy: bool,
    index: BTreeMap<Key<'a>, &'a RunRecord>,
}

impl<'a> Pairing<'a> {
    /// Indexes the ok records of `base`. With `with_strategy`, a record pairs only with a record
    /// of the same strategy; without, with any record of the same cell.
    pub fn new(base: impl IntoIterator<Item = &'a RunRecord>, with_strategy: bool) -> Self {
        let index = base
            .into_iter()
            .filter(|r| r.status == Status::Ok)
            .map(|r| (key(r, with_strategy), r))
            .collect();
        Pairing {
            with_strategy,
            index,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The ok records of `other` that have a partner, each with its partner, in `other`'s order.
    pub fn pairs<'b>(
        &self,
        other: impl IntoIterator<Item = &'b RunRecord>,
    ) -> Vec<(&'b RunRecord, &'a RunRecord)> {
        other
            .into_iter()
            .filter(|r| r.status == Status::Ok)
            .filter_map(|r| self.index.get(&key(r, self.with_strategy)).map(|b| (r, *b)))
            .collect()
    }
}

fn key(r: &RunRecord, with_strategy: bool) -> Key<'_> {
    (
        if with_strategy { &r.strategy } else { "" },
        &r.scenario,
        &r.interrupt,
        &r.model,
        r.rep,
    )
}

/// The test of one group of paired differences.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupTest {
    pub n: usize,
    pub mean_diff: f64,
    pub p_value: f64,
    /// Holm-adjusted across all groups passed to [`test_groups`].
    pub p_holm: f64,
    pub method: &'static str,
}

/// Wilcoxon signed-rank per group of differences, Holm-corrected across the groups (in order).
pub fn test_groups<'d>(groups: impl IntoIterator<Item = &'d [f64]>) -> Vec<GroupTest> {
    let mut out: Vec<GroupTest> = groups
        .into_iter()
        .map(|diffs| {
            let t = stats::wilcoxon_signed_rank(diffs);
            GroupTest {
                n: diffs.len(),
                mean_diff: diffs.iter().sum::<f64>() / diffs.len().max(1) as f64,
                p_value: t.as_ref().map(|t| t.p_value).unwrap_or(1.0),
                p_holm: 1.0,
                method: t.map(|t| t.method).unwrap_or("no non-zero differences"),
            }
        })
        .collect();
    let adjusted = stats::holm(&out.iter().map(|t| t.p_value).collect::<Vec<_>>());
    for (t, p) in out.iter_mut().zip(adjusted) {
        t.p_holm = p;
    }
    out
}
