//! The pairing of cells and the clusters of the harness, used by the report (strategies against
//! each other in one run) and by the gate (a run against a baseline run): which cells pair, which
//! scenario a cell's cluster is, and what the repetitions of a run look like. It only pairs: it
//! never reads files, never runs a cell, and does not decide which metrics matter or what counts
//! as a regression.
//!
//! # Which unit, and why (issues 12 and 26)
//!
//! Records pair on the same cell (scenario, history scale, interrupt point, destination model,
//! repetition — and the strategy when asked). The paired differences are then averaged over
//! cells, and their uncertainty is taken **between scenarios**: the interrupt points, scales and
//! repetitions of one scenario share its world, its facts and the same handoff builder, and their
//! differences are strongly correlated (often equal); a repetition of a deterministic cell is an
//! identical copy. So every interval is clustered by scenario ([`cluster_of`]: a benign variant
//! belongs to its attacked scenario): the ratio estimator's cluster-robust standard error with
//! Student's t on `scenarios − 1` degrees of freedom ([`crate::stats::ClusteredMean`]). Identical
//! repetitions change neither the estimate nor its interval, and the effective n is the number of
//! scenarios.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::record::{RunRecord, Status};
use crate::spec::BENIGN_SUFFIX;

/// The cells a paired difference averages, and its cluster.
pub const UNIT: &str = "cells paired on scenario × history scale × interrupt point × model × repetition, clustered by scenario";

/// How every interval of the report and the gate is computed.
pub const TEST: &str = "mean paired difference with a scenario-clustered standard error (ratio estimator, CR1) and Student's t on scenarios − 1 degrees of freedom";

/// The cluster a scenario belongs to: a benign variant is the same scenario as its attacked one
/// (their cells are correlated).
pub fn cluster_of(scenario: &str) -> &str {
    scenario.strip_suffix(BENIGN_SUFFIX).unwrap_or(scenario)
}

/// The cluster a record belongs to: its scenario's ([`cluster_of`]), and for a τ-bench cell its
/// task — the recorded runs (trials) of one task share its instruction, database and ground
/// truth, so their cells are correlated like a scenario's.
pub fn record_cluster(r: &RunRecord) -> std::borrow::Cow<'_, str> {
    match r.transcript.as_ref().and_then(|t| t.tau.as_ref()) {
        Some(t) if r.source == crate::record::Source::Tau => {
            std::borrow::Cow::Owned(format!("tau-task-{}", t.task_id))
        }
        _ => std::borrow::Cow::Borrowed(cluster_of(&r.scenario)),
    }
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

/// What the repetitions of a run look like, for the report's note on the unit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Repetitions {
    /// The cells a paired difference averages ([`UNIT`]).
    pub unit: &'static str,
    /// How the intervals are computed ([`TEST`]).
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
        clusters.insert(record_cluster(r));
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
