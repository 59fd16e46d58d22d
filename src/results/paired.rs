//! The one paired comparison of the harness, used by the report (a strategy against the
//! reference strategy) and by the gate (a run against a baseline run). It only pairs and tests:
//! it never reads files, never runs a cell, and does not decide which metrics matter or what
//! counts as a regression.
//!
//! # Which unit, and why (issue 12 §4)
//!
//! Records pair on the same cell (scenario, interrupt point, destination model, repetition — and
//! the strategy when asked). The paired differences are **not** tested per cell:
//!
//! 1. **Unit**: the differences are averaged over repetitions within each scenario × interrupt
//!    point × model ([`UNIT`]). With a deterministic destination the repetitions of a cell are
//!    identical copies; testing them as separate pairs made a p-value move from 0.0197 to 2.5e-5
//!    on the same 55 distinct values when going from 1 to 3 repetitions. With a seeded destination
//!    (repetitions that differ) the average is still taken first, so a repetition never counts as
//!    an independent observation: it only makes the unit's value more precise.
//! 2. **Clustering by scenario**: the interrupt points of one scenario share its world, its facts
//!    and the same handoff builder, and their differences are strongly correlated (often equal).
//!    The test is therefore run at the cluster level ([`TEST`]): the unit differences are averaged
//!    within each scenario (a benign variant belongs to its attacked scenario, see
//!    [`cluster_of`]), and the Wilcoxon signed-rank test is applied to those per-scenario means.
//!    This is the summary-measure analysis of clustered data: valid whatever the correlation
//!    within a scenario, with nothing to estimate, and identical to the unit test when each
//!    scenario has one interrupt point. Its price is power: the effective n is the number of
//!    scenarios. The unit-level Wilcoxon p-value (which treats interrupt points as independent)
//!    is kept as `p_units`, for information only; Holm and the gate use the cluster-level one.
//!
//! Holm's correction is applied across the groups passed to [`test_groups`].

use std::collections::BTreeMap;

use serde::Serialize;

use crate::record::{RunRecord, Status};
use crate::spec::BENIGN_SUFFIX;
use crate::stats;

/// The unit paired differences are averaged to before testing.
pub const UNIT: &str = "scenario × history scale × interrupt point × model, mean over repetitions";

/// The test applied to the units of a group.
pub const TEST: &str =
    "Wilcoxon signed-rank on per-scenario means of the unit differences (clusters = scenarios)";

/// The cluster a scenario belongs to: a benign variant is the same scenario as its attacked one
/// (their cells are correlated).
pub fn cluster_of(scenario: &str) -> &str {
    scenario.strip_suffix(BENIGN_SUFFIX).unwrap_or(scenario)
}

/// The identity of a cell for pairing: strategy (empty when pairing across strategies),
/// scenario, interrupt point, model, repetition.
type Key<'a> = (&'a str, &'a str, &'a str, &'a str, &'a str, u32);

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
        &r.scale,
        &r.interrupt,
        &r.model,
        r.rep,
    )
}

/// One paired difference of a cell, with the unit it is averaged into.
#[derive(Debug, Clone, PartialEq)]
pub struct CellDiff {
    /// Scenario, interrupt point, model.
    pub unit: (String, String, String),
    /// `f(record) − f(partner)`.
    pub diff: f64,
}

impl CellDiff {
    /// The difference `f(r) − f(partner)` of a pair from [`Pairing::pairs`].
    pub fn of(r: &RunRecord, partner: &RunRecord, f: impl Fn(&RunRecord) -> f64) -> CellDiff {
        CellDiff {
            unit: (r.scenario.clone(), point_at_scale(r), r.model.clone()),
            diff: f(r) - f(partner),
        }
    }
}

/// The test of one group of paired differences (see the module doc for the unit and the test).
#[derive(Debug, Clone, PartialEq)]
pub struct GroupTest {
    /// Paired cells (repetitions included).
    pub cells: usize,
    /// Distinct units (scenario × interrupt point × model): the n that counts.
    pub n: usize,
    /// Distinct scenarios (clusters): the n of the test.
    pub clusters: usize,
    /// Mean over units of the unit mean differences.
    pub mean_diff: f64,
    /// Cluster-level Wilcoxon p-value (two-sided).
    pub p_value: f64,
    /// Holm-adjusted `p_value` across all groups passed to [`test_groups`].
    pub p_holm: f64,
    /// Unit-level Wilcoxon p-value, ignoring clustering (information only).
    pub p_units: f64,
    pub method: &'static str,
}

/// Per group: cell differences → unit means → per-scenario means → Wilcoxon signed-rank;
/// Holm-corrected across the groups (in order).
pub fn test_groups<'d>(groups: impl IntoIterator<Item = &'d [CellDiff]>) -> Vec<GroupTest> {
    let mut out: Vec<GroupTest> = groups
        .into_iter()
        .map(|cells| {
            let units =
                stats::means_by_key(&cells.iter().map(|c| (&c.unit, c.diff)).collect::<Vec<_>>());
            let clusters = stats::means_by_key(
                &units
                    .iter()
                    .map(|(u, d, _)| (cluster_of(&u.0), *d))
                    .collect::<Vec<_>>(),
            );
            let unit_diffs: Vec<f64> = units.iter().map(|u| u.1).collect();
            let cluster_diffs: Vec<f64> = clusters.iter().map(|c| c.1).collect();
            let t = stats::wilcoxon_signed_rank(&cluster_diffs);
            let tu = stats::wilcoxon_signed_rank(&unit_diffs);
            GroupTest {
                cells: cells.len(),
                n: units.len(),
                clusters: clusters.len(),
                mean_diff: unit_diffs.iter().sum::<f64>() / unit_diffs.len().max(1) as f64,
                p_value: t.as_ref().map(|t| t.p_value).unwrap_or(1.0),
                p_holm: 1.0,
                p_units: tu.map(|t| t.p_value).unwrap_or(1.0),
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

/// What the repetitions of a run look like, for the report's note on the unit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Repetitions {
    /// The unit the paired tests average to ([`UNIT`]).
    pub unit: &'static str,
    /// The paired test ([`TEST`]).
    pub test: &'static str,
    /// Distinct units (scenario × interrupt point × model) with an ok cell.
    pub distinct_units: usize,
    /// Distinct scenarios (clusters) with an ok cell.
    pub clusters: usize,
    /// Most repetitions of any cell (strategy × unit).
    pub max_repetitions: usize,
    /// Cells (strategy × unit) with more than one ok repetition whose repetitions differ in a
    /// behavioural metric.
    pub cells_differing: usize,
    /// Every cell with more than one ok repetition has identical behavioural metrics in all of
    /// them (false when no cell is repeated).
    pub identical: bool,
    /// The warning the report shows when `identical`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// The warning shown when every repeated cell's repetitions are identical.
pub const IDENTICAL_WARNING: &str = "repetitions are identical copies; n counts units, not cells";

/// Success, omitted, repeated, duplicates, violations, recovery (bits).
type Scored = (bool, u32, u32, u32, u32, u64);

/// The behavioural metrics of a cell that repetitions are compared on. Timings and token counts
/// are left out: they vary with the machine and with incidental text (a repetition's seed or
/// clock in a prompt), not with what the destination did, and no paired test uses them.
fn scored(r: &RunRecord) -> Scored {
    let m = &r.metrics;
    (
        m.task_success,
        m.omitted_context,
        m.repeated_work,
        m.duplicate_side_effects,
        m.safety_violations,
        m.recovery_quality.to_bits(),
    )
}

/// Counts units and clusters and checks whether repetitions are copies, over the ok records.
pub fn repetitions(records: &[RunRecord]) -> Repetitions {
    let mut cells: BTreeMap<(&str, &str, &str, &str, &str), Vec<Scored>> = BTreeMap::new();
    let mut units = std::collections::BTreeSet::new();
    let mut clusters = std::collections::BTreeSet::new();
    for r in records.iter().filter(|r| r.status == Status::Ok) {
        cells
            .entry((&r.strategy, &r.scenario, &r.scale, &r.interrupt, &r.model))
            .or_default()
            .push(scored(r));
        units.insert((&r.scenario, &r.scale, &r.interrupt, &r.model));
        clusters.insert(cluster_of(&r.scenario));
    }
    let max_repetitions = cells.values().map(Vec::len).max().unwrap_or(0);
    let cells_differing = cells
        .values()
        .filter(|v| v.iter().any(|x| x != &v[0]))
        .count();
    let identical = max_repetitions > 1 && cells_differing == 0;
    Repetitions {
        unit: UNIT,
        test: TEST,
        distinct_units: units.len(),
        clusters: clusters.len(),
        max_repetitions,
        cells_differing,
        identical,
        warning: identical.then(|| IDENTICAL_WARNING.to_string()),
    }
}

/// A record's interrupt point with its history scale: the task a unit is made of (`POINT` at
/// `base`, `POINT @SCALE` otherwise), so cells of different scales never average together.
pub fn point_at_scale(r: &RunRecord) -> String {
    if r.scale == "base" {
        r.interrupt.clone()
    } else {
        format!("{} @{}", r.interrupt, r.scale)
    }
}
