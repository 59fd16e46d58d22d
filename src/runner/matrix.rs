//! The matrix of cells: seeds, the keys of shared work ([`PointKey`], [`HandoffKey`]) and the
//! lazily enumerated [`Matrix`].
//!
//! Owns: the order of cells (scenario, interrupt point, strategy, model, repetition) and each
//! cell's seed, derived from the run seed and the cell's identity alone. Must not: build restore
//! points or handoffs, or run anything.

use std::sync::Arc;

use sha2::{Digest, Sha256};

use std::collections::{BTreeMap, BTreeSet};

use serde_json::json;

use super::{CellId, RunRecord};
use crate::scenario::volume::Scale;

/// A cell's seed: derived from the run seed and the cell's identity, so it does not depend on
/// which other cells run or in what order.
pub fn cell_seed(
    base: u64,
    scenario: &str,
    point: &str,
    strategy: &str,
    model: &str,
    rep: u32,
) -> u64 {
    let mut h = Sha256::new();
    h.update(base.to_le_bytes());
    for part in [scenario, point, strategy, model] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    h.update(rep.to_le_bytes());
    let d = h.finalize();
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    u64::from_le_bytes(b)
}

/// The scenario part of a cell's seed: the id at `base` (so base cells keep the seeds they had
/// before scales existed), `ID\u{0}SCALE` otherwise.
pub fn seed_scenario(id: &str, scale: Scale) -> String {
    match scale {
        Scale::Base => id.to_string(),
        s => format!("{id}\u{0}{s}"),
    }
}

/// A scenario's interrupt point in a plan.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PointKey {
    /// Index into the plan's scenarios.
    pub scenario: usize,
    pub point: Arc<str>,
}

/// The handoff of one strategy at one interrupt point: shared by every cell that starts from it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HandoffKey {
    pub scenario: usize,
    pub point: Arc<str>,
    pub strategy: Arc<str>,
    /// The usable context the handoff was built for; `None`: the strategy does not depend on the
    /// window, and one handoff serves every destination.
    pub window: Option<u64>,
}

/// One scenario × interrupt point × strategy of the matrix: every model × repetition of it
/// starts from the same handoff.
#[derive(Debug, Clone)]
pub(super) struct Unit {
    pub(super) scenario: usize,
    pub(super) scenario_id: Arc<str>,
    /// The history scale of the unit's scenario, and the scenario part of its cells' seeds
    /// ([`seed_scenario`]).
    pub(super) scale: Scale,
    pub(super) seed_id: Arc<str>,
    pub(super) point: Arc<str>,
    pub(super) strategy: Arc<str>,
}

/// The matrix of cells, enumerated lazily: cell `i` is computed from its index (order: scenario,
/// interrupt point, strategy, model, repetition), so a huge `--reps` costs no memory and
/// `--limit` cuts it without building the rest.
#[derive(Debug, Clone, Default)]
pub struct Matrix {
    pub(super) units: Vec<Unit>,
    pub(super) models: Vec<Arc<str>>,
    pub(super) reps: u64,
    pub(super) seed: u64,
    pub(super) len: usize,
}

impl Matrix {
    /// Cells in the matrix (after `--limit`, before `--shard`).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Cell `i` in matrix order.
    pub fn get(&self, i: usize) -> Option<CellSpec> {
        if i >= self.len {
            return None;
        }
        let per_unit = self.models.len() as u64 * self.reps;
        let i = i as u64;
        let u = &self.units[(i / per_unit) as usize];
        let model = &self.models[((i / self.reps) % self.models.len() as u64) as usize];
        let rep = (i % self.reps) as u32;
        Some(CellSpec {
            scenario: u.scenario,
            point: u.point.clone(),
            strategy: u.strategy.clone(),
            model: model.clone(),
            rep,
            // A chain (`C×3`) draws as its single-shot cell does: the two differ by the
            // handoff alone, so their paired comparison is not diluted by other draws.
            seed: cell_seed(
                self.seed,
                &u.seed_id,
                &u.point,
                crate::strategy::chain::parse(&u.strategy).map_or(&*u.strategy, |(s, _)| s),
                model,
                rep,
            ),
            scale: u.scale,
        })
    }

    /// The identity of cell `i`.
    pub fn id(&self, i: usize) -> Option<CellId> {
        let c = self.get(i)?;
        let per_unit = self.models.len() as u64 * self.reps;
        let u = &self.units[(i as u64 / per_unit) as usize];
        Some(CellId {
            scenario: u.scenario_id.to_string(),
            scale: u.scale.to_string(),
            interrupt: c.point.to_string(),
            strategy: c.strategy.to_string(),
            model: c.model.to_string(),
            rep: c.rep,
        })
    }
}

/// The identity of a cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellSpec {
    /// Index into the plan's scenarios.
    pub scenario: usize,
    // Shared strings: a 100,000-cell matrix holds each name once.
    pub point: Arc<str>,
    pub strategy: Arc<str>,
    pub model: Arc<str>,
    pub rep: u32,
    pub seed: u64,
    /// The history scale of the cell's scenario (the plan's `scales[scenario]`).
    pub scale: crate::scenario::volume::Scale,
}

/// A cell's identity as records name it (scenario id, interrupt point, strategy, model,
/// repetition): the one definition that the response cache key, `--resume` and the journal build
/// on, for cells ([`CellSpec::identity`]) and records ([`record_identity`]) alike, so a field
/// added to the identity reaches all of them.
pub fn identity(
    scenario: &str,
    scale: &str,
    interrupt: &str,
    strategy: &str,
    model: &str,
    rep: u32,
) -> serde_json::Value {
    let mut v = json!({
        "scenario": scenario,
        "interrupt": interrupt,
        "strategy": strategy,
        "model": model,
        "rep": rep,
    });
    // A base-scale cell keeps the identity (and so the cache key) it had before scales existed.
    if scale != "base" {
        v["scale"] = json!(scale);
    }
    v
}

/// The identity of the cell a record is of.
pub fn record_identity(r: &RunRecord) -> serde_json::Value {
    identity(
        &r.scenario,
        &r.scale,
        &r.interrupt,
        &r.strategy,
        &r.model,
        r.rep,
    )
}

impl CellSpec {
    /// The cell's [`identity`].
    pub fn identity(&self, scenario_id: &str) -> serde_json::Value {
        identity(
            scenario_id,
            &self.scale.to_string(),
            &self.point,
            &self.strategy,
            &self.model,
            self.rep,
        )
    }
}

/// The key of the handoff cell `c` starts from: its strategy's handoff for the usable context
/// of its model's window when the strategy is in `windowed`, else its only one.
pub(super) fn handoff_key(
    windowed: &BTreeSet<Arc<str>>,
    windows: &BTreeMap<String, u64>,
    c: &CellSpec,
) -> HandoffKey {
    HandoffKey {
        scenario: c.scenario,
        point: c.point.clone(),
        strategy: c.strategy.clone(),
        window: windowed.contains(&c.strategy).then(|| {
            crate::strategy::usable_context(
                windows
                    .get(&*c.model)
                    .copied()
                    .unwrap_or(crate::strategy::DEFAULT_CONTEXT_WINDOW),
            )
        }),
    }
}

/// The interrupt points of a stratified sample (`--sample N`): `N / strategies` points (every
/// strategy runs on each, so strategies are compared on the same points), spread over the
/// scenarios round-robin — each scenario × scale gives one point before any gives a second —,
/// the scenarios' order and each scenario's points shuffled from `seed`. `units` are the
/// matrix's, in matrix order; returns the chosen points as (scenario index, point). Errors name
/// what is wrong: a sample smaller than one point's strategies, or larger than the matrix.
pub(super) fn sample_points(
    units: &[Unit],
    strategies: usize,
    n: usize,
    seed: u64,
) -> Result<BTreeSet<(usize, Arc<str>)>, String> {
    let mut points: Vec<(usize, Arc<str>)> = Vec::new();
    for u in units {
        let p = (u.scenario, u.point.clone());
        if points.last() != Some(&p) {
            points.push(p);
        }
    }
    let strategies = strategies.max(1);
    if n < strategies {
        return Err(format!(
            "--sample {n} is smaller than one interrupt point's {strategies} strategies: the sample runs every strategy on each point it picks, so it needs at least {strategies} units"
        ));
    }
    if n > units.len() {
        return Err(format!(
            "--sample {n} is larger than the matrix: it has {} units (scenario × scale × interrupt point × strategy; {} points × {strategies} strategies)",
            units.len(),
            points.len()
        ));
    }
    let k = n / strategies;
    let mut rng = crate::stats::SplitMix64::new(crate::stats::derive_seed(seed, 0x5341_4d50_4c45));
    // Per scenario (× scale: one plan entry each), its points, shuffled.
    let mut by_scenario: BTreeMap<usize, Vec<(usize, Arc<str>)>> = BTreeMap::new();
    for p in points {
        by_scenario.entry(p.0).or_default().push(p);
    }
    let mut order: Vec<usize> = by_scenario.keys().copied().collect();
    shuffle(&mut order, &mut rng);
    let mut queues: Vec<Vec<(usize, Arc<str>)>> = order
        .iter()
        .map(|s| by_scenario.remove(s).unwrap_or_default())
        .collect();
    for q in &mut queues {
        shuffle(q, &mut rng);
    }
    let mut chosen = BTreeSet::new();
    while chosen.len() < k {
        let before = chosen.len();
        for q in &mut queues {
            if chosen.len() == k {
                break;
            }
            if let Some(p) = q.pop() {
                chosen.insert(p);
            }
        }
        if chosen.len() == before {
            break;
        }
    }
    Ok(chosen)
}

/// Fisher–Yates, from `rng`.
fn shuffle<T>(v: &mut [T], rng: &mut crate::stats::SplitMix64) {
    for i in (1..v.len()).rev() {
        v.swap(i, rng.below(i + 1));
    }
}
