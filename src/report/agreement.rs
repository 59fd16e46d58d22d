//! How far to trust the simulated destinations: when a run continued the same cells on a simulated
//! destination (`sim:…`) and on a live model, each sim's agreement with each live model per scored
//! outcome — the share of cells on which both reached the same outcome and Cohen's κ, with a
//! percentile bootstrap interval that resamples whole scenarios (cells of one scenario are not
//! independent). Reads records only; knows no destination's internals.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::record::{RunRecord, Status};
use crate::stats::{Interval, agreement, derive_seed, kappa_ci};

/// One sim × live model × outcome.
#[derive(Debug, Clone, Serialize)]
pub struct AgreementRow {
    pub sim: String,
    pub live: String,
    /// The outcome compared ([`OUTCOMES`]).
    pub outcome: &'static str,
    /// Cells scored on both (same scenario, scale, point, strategy and repetition).
    pub n: usize,
    /// Scenarios those cells come from (the bootstrap's clusters).
    pub scenarios: usize,
    pub rate: f64,
    pub kappa: Option<f64>,
    /// 95% interval of κ, scenarios resampled.
    pub kappa_ci: Option<Interval>,
}

type Outcome = fn(&RunRecord) -> bool;

/// The binary outcomes compared, in report order.
pub const OUTCOMES: [(&str, Outcome); 6] = [
    ("safe success", |r| {
        let m = &r.metrics;
        m.task_success && m.duplicate_side_effects == 0 && m.safety_violations == 0
    }),
    ("task success", |r| r.metrics.task_success),
    ("duplicate side effect", |r| {
        r.metrics.duplicate_side_effects > 0
    }),
    ("safety violation", |r| r.metrics.safety_violations > 0),
    ("omitted context", |r| r.metrics.omitted_context > 0),
    ("repeated work", |r| r.metrics.repeated_work > 0),
];

/// Whether a record was continued by a simulated destination.
fn is_sim(r: &RunRecord) -> bool {
    r.model.starts_with("sim:")
}

/// Whether a record was continued by a live model (it carries live diagnostics).
fn is_live(r: &RunRecord) -> bool {
    r.diagnostics.live.is_some()
}

/// Every sim × live pair of the run, per outcome; empty unless the run has both on shared cells.
pub fn sim_live_agreement(records: &[RunRecord], resamples: usize, seed: u64) -> Vec<AgreementRow> {
    type Key = (String, String, String, String, u32);
    let key = |r: &RunRecord| -> Key {
        (
            r.scenario.clone(),
            r.scale.clone(),
            r.interrupt.clone(),
            r.strategy.clone(),
            r.rep,
        )
    };
    let scored = records.iter().filter(|r| r.status == Status::Ok);
    let mut sims: BTreeMap<&str, BTreeMap<Key, &RunRecord>> = BTreeMap::new();
    let mut lives: BTreeMap<&str, BTreeMap<Key, &RunRecord>> = BTreeMap::new();
    for r in scored {
        if is_sim(r) {
            sims.entry(&r.model).or_default().insert(key(r), r);
        } else if is_live(r) {
            lives.entry(&r.model).or_default().insert(key(r), r);
        }
    }
    let mut rows = Vec::new();
    for (si, (sim, sim_cells)) in sims.iter().enumerate() {
        for (li, (live, live_cells)) in lives.iter().enumerate() {
            let shared: Vec<(&RunRecord, &RunRecord)> = sim_cells
                .iter()
                .filter_map(|(k, s)| live_cells.get(k).map(|l| (*s, *l)))
                .collect();
            if shared.is_empty() {
                continue;
            }
            for (oi, (name, outcome)) in OUTCOMES.iter().enumerate() {
                let mut by_scenario: BTreeMap<&str, Vec<(bool, bool)>> = BTreeMap::new();
                for (s, l) in &shared {
                    by_scenario
                        .entry(&s.scenario)
                        .or_default()
                        .push((outcome(s), outcome(l)));
                }
                let pairs: Vec<(bool, bool)> = by_scenario.values().flatten().copied().collect();
                let Some(a) = agreement(&pairs) else {
                    continue;
                };
                let clusters: Vec<Vec<(bool, bool)>> = by_scenario.into_values().collect();
                let stream = ((si * 64 + li) * 8 + oi) as u64;
                let ci = kappa_ci(
                    &clusters,
                    resamples,
                    0.95,
                    derive_seed(seed, 0x6b61_7070_6100 + stream),
                )
                .map(|(low, high)| Interval { low, high });
                rows.push(AgreementRow {
                    sim: sim.to_string(),
                    live: live.to_string(),
                    outcome: name,
                    n: a.n,
                    scenarios: clusters.len(),
                    rate: a.rate,
                    kappa: a.kappa,
                    kappa_ci: ci,
                });
            }
        }
    }
    rows
}
