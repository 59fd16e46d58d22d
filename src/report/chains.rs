//! Compaction chains in a report (`run --cycles`): per strategy × destination, what happens as
//! the number of compactions grows, and each chain against its single compaction on the same
//! cells.
//!
//! Owns which records form a row (a strategy's single-shot cells are its one-compaction row; a
//! chain's cells with k ≥ 2 compactions its k row) and the paired comparison of a chain arm
//! (`C×3`) with its strategy (`C`): computed from saved records only. It never formats for a
//! reader and never draws.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::record::{RunRecord, Status};
use crate::results::outcome::{clustered_rate, is_unsafe, paired_difference, safe_success};
use crate::results::paired::Pairing;
use crate::stats;
use crate::strategy::chain;

/// One strategy × destination × number of compactions.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ChainRow {
    /// The strategy (without the chain's `×N`).
    pub strategy: String,
    pub model: String,
    /// Compactions the cells' handoffs went through.
    pub compactions: u32,
    /// Ok cells.
    pub n: usize,
    pub safe_success: f64,
    pub safe_success_ci: Option<(f64, f64)>,
    /// Cells with a safety violation or a duplicate side effect.
    pub unsafe_cells: usize,
    /// Mean critical facts the continuation needed and the handoff lacked.
    pub omitted_context: f64,
    /// Cells whose handoff upgrades a statement's provenance.
    pub upgrade_cells: usize,
    pub restore_tokens: f64,
}

/// A chain arm against its strategy's single compaction, on the cells both ran where the chain
/// compacted more than once.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ChainPaired {
    pub strategy: String,
    /// The chain arm (`C×3`).
    pub chain: String,
    pub model: String,
    pub metric: &'static str,
    pub higher_is_better: bool,
    pub cells: usize,
    pub clusters: usize,
    pub single: f64,
    pub chained: f64,
    /// Chain − single, mean over cells, clustered by scenario.
    pub diff: f64,
    /// Two-sided, Bonferroni across every row of the table (family-wise at the report's level).
    pub interval: Option<(f64, f64)>,
}

fn compactions(r: &RunRecord) -> u32 {
    r.metrics.chain.as_ref().map_or(1, |c| c.compactions)
}

fn base(r: &RunRecord) -> (&str, u32) {
    chain::parse(&r.strategy).unwrap_or((&r.strategy, 1))
}

/// Whether the records hold a chain.
pub fn has_chains(records: &[RunRecord]) -> bool {
    records.iter().any(|r| r.metrics.chain.is_some())
}

/// The rows, in first-seen order of destination and strategy, by compactions; intervals at
/// `confidence`. Empty without a chain.
pub fn rows(records: &[RunRecord], confidence: f64) -> Vec<ChainRow> {
    if !has_chains(records) {
        return Vec::new();
    }
    let singles: BTreeSet<&str> = records
        .iter()
        .filter(|r| base(r).1 == 1)
        .map(|r| r.strategy.as_str())
        .collect();
    // One record per cell and number of compactions: a chain's cell that compacted once is its
    // strategy's single-shot cell (kept from the single arm when the run has it), and two chains
    // that compacted equally often at a cell built the same handoff.
    let mut seen = BTreeSet::new();
    let mut keys: Vec<(&str, &str, u32)> = Vec::new();
    let mut kept: Vec<(&str, u32, &RunRecord)> = Vec::new();
    for r in records.iter().filter(|r| r.status == Status::Ok) {
        let (s, cycles) = base(r);
        let k = compactions(r);
        if cycles > 1 && k == 1 && singles.contains(s) {
            continue;
        }
        if !seen.insert((s, k, &r.scenario, &r.scale, &r.interrupt, &r.model, r.rep)) {
            continue;
        }
        if !keys.contains(&(r.model.as_str(), s, k)) {
            keys.push((r.model.as_str(), s, k));
        }
        kept.push((s, k, r));
    }
    let seen_order = keys.clone();
    keys.sort_by_key(|&(m, s, k)| {
        let first = |f: &dyn Fn(&(&str, &str, u32)) -> bool| seen_order.iter().position(f);
        (first(&|x| x.0 == m), first(&|x| x.1 == s), k)
    });
    keys.into_iter()
        .map(|(model, strategy, k)| {
            let rs: Vec<&RunRecord> = kept
                .iter()
                .filter(|(s, kk, r)| *s == strategy && *kk == k && r.model == model)
                .map(|(_, _, r)| *r)
                .collect();
            let safe = clustered_rate(rs.iter().copied(), safe_success, confidence);
            let n = rs.len();
            ChainRow {
                strategy: strategy.to_string(),
                model: model.to_string(),
                compactions: k,
                n,
                safe_success: safe.map(|s| s.rate).unwrap_or(0.0),
                safe_success_ci: safe.and_then(|s| s.interval),
                unsafe_cells: rs.iter().filter(|r| is_unsafe(r)).count(),
                omitted_context: rs
                    .iter()
                    .map(|r| r.metrics.omitted_context as f64)
                    .sum::<f64>()
                    / n.max(1) as f64,
                upgrade_cells: rs
                    .iter()
                    .filter(|r| !r.diagnostics.provenance_upgrades.is_empty())
                    .count(),
                restore_tokens: stats::median(
                    &rs.iter()
                        .map(|r| r.metrics.restore_tokens as f64)
                        .collect::<Vec<_>>(),
                )
                .unwrap_or(0.0),
            }
        })
        .collect()
}

type MetricFn = fn(&RunRecord) -> f64;

/// The metrics a chain is compared on: name, higher is better, value.
const METRICS: [(&str, bool, MetricFn); 5] = [
    ("safe_success", true, |r| {
        f64::from(u8::from(safe_success(r)))
    }),
    ("unsafe", false, |r| f64::from(u8::from(is_unsafe(r)))),
    ("omitted_context", false, |r| {
        r.metrics.omitted_context as f64
    }),
    ("provenance_upgrades", false, |r| {
        r.diagnostics.provenance_upgrades.len() as f64
    }),
    ("restore_tokens", false, |r| r.metrics.restore_tokens as f64),
];

/// Every chain arm against its strategy, per destination and metric, on the cells both ran
/// where the chain compacted at least twice; intervals two-sided at `1 − alpha / rows`.
pub fn paired(records: &[RunRecord], alpha: f64) -> Vec<ChainPaired> {
    let mut arms: Vec<(&str, &str, &str)> = Vec::new();
    for r in records.iter().filter(|r| r.metrics.chain.is_some()) {
        let (s, _) = base(r);
        if !arms.contains(&(r.strategy.as_str(), s, r.model.as_str())) {
            arms.push((r.strategy.as_str(), s, r.model.as_str()));
        }
    }
    let mut out = Vec::new();
    let mut diffs = Vec::new();
    for (arm, s, model) in arms {
        let single = Pairing::new(
            records
                .iter()
                .filter(|r| r.strategy == s && r.model == model),
            false,
        );
        let pairs = single.pairs(
            records
                .iter()
                .filter(|r| r.strategy == arm && r.model == model && compactions(r) >= 2),
        );
        for (metric, higher, f) in METRICS {
            let Some(d) = paired_difference(&pairs, f) else {
                continue;
            };
            let mean = |side: &dyn Fn(&(&RunRecord, &RunRecord)) -> f64| {
                pairs.iter().map(side).sum::<f64>() / pairs.len() as f64
            };
            out.push(ChainPaired {
                strategy: s.to_string(),
                chain: arm.to_string(),
                model: model.to_string(),
                metric,
                higher_is_better: higher,
                cells: pairs.len(),
                clusters: d.clusters,
                single: mean(&|p| f(p.1)),
                chained: mean(&|p| f(p.0)),
                diff: d.estimate,
                interval: None,
            });
            diffs.push(d);
        }
    }
    // Bonferroni across the table's rows, known only now.
    let level = 1.0 - alpha / out.len().max(1) as f64;
    for (row, d) in out.iter_mut().zip(&diffs) {
        row.interval = d.interval(level);
    }
    out
}
