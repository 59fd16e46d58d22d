//! The summary of a run ([`Summary`]): aggregates per strategy × model and per strategy × model ×
//! interrupt point ([`super::group`]), the live figures, errored cells by class, the facts most often
//! lost, the provenance upgrades and the continuity eval per strategy, with the ranking and its
//! pairwise tests ([`super::ranking`]), the number of scenarios the conclusions rest on, the
//! analysis, the curve, the per-domain rows, the governance and transcript sections it gathers
//! from their modules.
//!
//! Owns: [`summarize`] and the types `summary.json` serialises. Must not: format a number for
//! a reader (the view does), write a file, or run a cell.

use std::collections::BTreeMap;

use serde::Serialize;

use super::group::{Group, LiveTotals, group};
use super::ranking::PairTest;
use super::ranking::{self, RankRow};
use super::{analysis, chains, curve, domain, governance, transcripts};
use crate::record::{RunRecord, Status};
use crate::results::scenario_cells;
use crate::stats::Spread;

/// Errored cells by class over a run (every errored cell, live or not).
pub fn errored_by_class(records: &[RunRecord]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for r in records.iter().filter(|r| r.status == Status::Errored) {
        let c = r.error_class.map(|c| c.as_str()).unwrap_or("unclassified");
        *m.entry(c.to_string()).or_default() += 1;
    }
    m
}

/// The live figures of one destination or summariser model.
#[derive(Debug, Clone, Serialize)]
pub struct LiveModelRow {
    pub model: String,
    pub totals: LiveTotals,
    /// Median wall time of its ok cells measured this run (no cache hit), ms.
    pub median_completion_ms: Option<f64>,
}

/// The summary of a run.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub by_strategy_model: Vec<Group>,
    pub by_strategy_model_interrupt: Vec<Group>,
    /// Strategy × model in ranking order (per model), with rank ranges.
    pub ranking: Vec<RankRow>,
    /// The pairwise tests behind the ranking (per model: every pair, safe success and the
    /// handoff-caused unsafe rate).
    pub rank_tests: Vec<PairTest>,
    /// The level of the ranking's pairwise tests; every interval is at `1 − alpha`.
    pub alpha: f64,
    /// Scenarios (clusters: a benign variant counts with its scenario) with an ok cell: the
    /// number of independent observations every interval rests on.
    pub scenarios: usize,
    /// Per scenario domain × strategy × model (empty when the manifest names no domains).
    pub domains: Vec<domain::DomainRow>,
    /// Facts most often lost per strategy: (strategy, fact id, count).
    pub lost_facts: Vec<(String, String, usize)>,
    /// Provenance upgrades in handoff texts per strategy: (strategy, upgrade kind, cells).
    pub provenance_upgrades: Vec<(String, String, usize)>,
    /// The seed-000 required eval per strategy (empty when the run folder has no
    /// `continuity.jsonl`).
    pub continuity: Vec<ContinuityRow>,
    /// Intervals, pass^k, injection numbers, paired comparisons.
    pub analysis: analysis::Analysis,
    /// The compaction curve: per destination × strategy × history scale.
    pub curve: Vec<curve::CurvePoint>,
    /// Compaction chains (`--cycles`): per strategy × destination × compactions (empty without
    /// a chain).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chains: Vec<chains::ChainRow>,
    /// Each chain arm against its single compaction on the same cells.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chain_paired: Vec<chains::ChainPaired>,
    /// Each strategy X against `gov:X` on the same cells (seed 004), with the paired test.
    pub governance: Vec<governance::GovernanceRow>,
    /// Where governed strategies block: required bytes and blocked cells per budget.
    pub governance_budgets: Vec<governance::BudgetRow>,
    /// Cells on imported transcripts (`source: transcript`), per strategy × model; the groups
    /// above count scenario cells only.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub transcripts: Vec<transcripts::TranscriptGroup>,
    /// Per live destination model: calls, retries, malformed tool calls, text-only turns,
    /// tokens, cost, errored cells by class (empty for an offline run).
    pub live: Vec<LiveModelRow>,
    /// Errored cells by class over the whole run.
    pub errored_by_class: BTreeMap<String, usize>,
    /// Each simulated destination against each live model on the same cells
    /// ([`super::calibration`]): the run's own when it has both, else one read from the run
    /// folder's `calibration.json` or `report --calibration FILE`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibration: Option<super::calibration::Calibration>,
    /// Where a calibration not computed from this run's records came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibration_from: Option<String>,
}

/// The same-or-stricter continuity eval of one strategy over every scenario × interrupt point.
#[derive(Debug, Clone, Serialize)]
pub struct ContinuityRow {
    pub strategy: String,
    pub passed: usize,
    pub total: usize,
    /// `scenario · point: full → compacted (why)` for each failure.
    pub failures: Vec<String>,
}

/// Aggregates `continuity.jsonl` per strategy, in first-seen order.
pub fn summarize_continuity(evals: &[crate::continuity::ContinuityEval]) -> Vec<ContinuityRow> {
    let mut rows: Vec<ContinuityRow> = Vec::new();
    for e in evals {
        let i = match rows.iter().position(|r| r.strategy == e.strategy) {
            Some(i) => i,
            None => {
                rows.push(ContinuityRow {
                    strategy: e.strategy.clone(),
                    passed: 0,
                    total: 0,
                    failures: vec![],
                });
                rows.len() - 1
            }
        };
        let r = &mut rows[i];
        r.total += 1;
        if e.passed {
            r.passed += 1;
        } else {
            r.failures.push(format!(
                "{} · {}: {} → {} ({})",
                e.scenario,
                e.interrupt,
                e.full_decision,
                e.compacted_decision,
                e.violations.join("; ")
            ));
        }
    }
    rows
}

pub use super::analysis::DEFAULT_ALPHA;

/// [`summarize_at`] at [`DEFAULT_ALPHA`].
pub fn summarize(all: &[RunRecord]) -> Summary {
    summarize_at(all, DEFAULT_ALPHA)
}

/// Aggregates records; groups follow the order in which strategies and models first appear.
/// The ranking's pairwise tests are at level `alpha` and every interval at `1 − alpha`. Transcript cells go to [`Summary::transcripts`] only.
pub fn summarize_at(all: &[RunRecord], alpha: f64) -> Summary {
    let scenario_records = scenario_cells(all);
    let records = &*scenario_records;
    let mut order: Vec<(String, String)> = Vec::new();
    let mut by_sm: BTreeMap<(String, String), Vec<&RunRecord>> = BTreeMap::new();
    let mut by_smi: BTreeMap<(String, String, String), Vec<&RunRecord>> = BTreeMap::new();
    let mut points: Vec<String> = Vec::new();
    for r in records {
        let k = (r.strategy.clone(), r.model.clone());
        if !order.contains(&k) {
            order.push(k.clone());
        }
        if !points.contains(&r.interrupt) {
            points.push(r.interrupt.clone());
        }
        by_sm.entry(k).or_default().push(r);
        by_smi
            .entry((r.strategy.clone(), r.model.clone(), r.interrupt.clone()))
            .or_default()
            .push(r);
    }
    let by_strategy_model: Vec<Group> = order
        .iter()
        .map(|(s, m)| group(&by_sm[&(s.clone(), m.clone())], s, m, None))
        .collect();
    let mut by_strategy_model_interrupt = Vec::new();
    for (s, m) in &order {
        for p in &points {
            if let Some(rs) = by_smi.get(&(s.clone(), m.clone(), p.clone())) {
                by_strategy_model_interrupt.push(group(rs, s, m, Some(p)));
            }
        }
    }
    let (ranking, rank_tests) = ranking::rank(&by_strategy_model, &by_sm, alpha, 1.0 - alpha);
    let mut lost: BTreeMap<(String, String), usize> = BTreeMap::new();
    for r in records.iter().filter(|r| r.status == Status::Ok) {
        for o in &r.diagnostics.omitted {
            *lost
                .entry((r.strategy.clone(), format!("{}/{}", r.scenario, o.fact)))
                .or_default() += 1;
        }
    }
    let mut upgrades: BTreeMap<(String, String), usize> = BTreeMap::new();
    for r in records.iter().filter(|r| r.status == Status::Ok) {
        let kinds: std::collections::BTreeSet<&str> = r
            .diagnostics
            .provenance_upgrades
            .iter()
            .filter_map(|u| u.split_once(": ").map(|(_, k)| k))
            .collect();
        for k in kinds {
            *upgrades
                .entry((r.strategy.clone(), k.to_string()))
                .or_default() += 1;
        }
    }
    let provenance_upgrades: Vec<(String, String, usize)> =
        upgrades.into_iter().map(|((s, k), n)| (s, k, n)).collect();
    let mut lost_facts: Vec<(String, String, usize)> =
        lost.into_iter().map(|((s, f), n)| (s, f, n)).collect();
    lost_facts.sort_by(|a, b| a.0.cmp(&b.0).then(b.2.cmp(&a.2)).then(a.1.cmp(&b.1)));
    let mut live_models: Vec<String> = Vec::new();
    for r in records.iter().filter(|r| r.diagnostics.live.is_some()) {
        if !live_models.contains(&r.model) {
            live_models.push(r.model.clone());
        }
    }
    let live = live_models
        .into_iter()
        .filter_map(|m| {
            let of_model: Vec<&RunRecord> = records.iter().filter(|r| r.model == m).collect();
            let totals = LiveTotals::of(of_model.iter().copied())?;
            let measured: Vec<f64> = of_model
                .iter()
                .filter(|r| {
                    r.status == Status::Ok
                        && !r.diagnostics.live.as_ref().is_some_and(|l| l.from_cache())
                })
                .map(|r| r.metrics.completion_ms)
                .collect();
            Some(LiveModelRow {
                model: m,
                totals,
                median_completion_ms: Spread::of(&measured).map(|s| s.median),
            })
        })
        .collect();
    Summary {
        by_strategy_model,
        by_strategy_model_interrupt,
        ranking,
        rank_tests,
        alpha,
        scenarios: crate::results::outcome::scenario_count(records),
        domains: Vec::new(),
        lost_facts,
        provenance_upgrades,
        continuity: Vec::new(),
        analysis: analysis::Analysis::default(),
        curve: curve::curve(records, 1.0 - alpha),
        chains: chains::rows(records, 1.0 - alpha),
        chain_paired: chains::paired(records, alpha),
        governance: governance::compare(records, 1.0 - alpha),
        governance_budgets: governance::budgets(records),
        transcripts: transcripts::summarize(all),
        live,
        errored_by_class: errored_by_class(records),
        calibration: None,
        calibration_from: None,
    }
}
