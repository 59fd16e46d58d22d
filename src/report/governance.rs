//! The governed-context comparison (seed 004): each strategy X against `gov:X` on the same cells
//! — task success, unsafe cells, omitted context, followed injections, restore tokens, blocked
//! and held cells — with the paired difference and its scenario-clustered interval
//! ([`crate::results::outcome::paired_difference`]), and where each strategy starts blocking as
//! the byte budget shrinks.
//!
//! It reads records only (so a report can be re-rendered from a run folder); it never decides a
//! governed cell's status, which the runner recorded.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::delivery::GovSpec;
use crate::governed::ContextStatus;
use crate::record::{RunRecord, Status};
use crate::results::outcome::{is_unsafe, paired_difference};
use crate::results::paired::Pairing;

/// X against `gov:X` (one budget) for one destination model.
#[derive(Debug, Clone, Serialize)]
pub struct GovernanceRow {
    pub strategy: String,
    pub governed: String,
    pub model: String,
    pub max_bytes: u64,
    /// Paired cells (the same scenario, scale, interrupt point, model and repetition).
    pub cells: usize,
    /// `(X, gov:X)` over the paired cells.
    pub task_success: (f64, f64),
    pub unsafe_cells: (usize, usize),
    pub omitted_context: (u64, u64),
    pub injections_followed: (usize, usize),
    /// Median restore tokens: X over the paired cells, gov:X over those it delivered (a
    /// blocked cell delivers nothing).
    pub restore_tokens: (f64, f64),
    /// gov:X cells whose context was `BLOCKED` (never delivered, never trimmed).
    pub blocked: usize,
    /// gov:X cells held for a missing or wrong receipt (responsibility `UNKNOWN`).
    pub held: usize,
    /// gov:X cells of a scenario without a governed-context declaration.
    pub not_configured: usize,
    /// Paired difference gov:X − X of task success and of the unsafe-cell rate.
    pub task_success_test: Option<Test>,
    pub unsafe_test: Option<Test>,
}

/// One paired difference with its scenario-clustered interval.
#[derive(Debug, Clone, Serialize)]
pub struct Test {
    pub mean_diff: f64,
    /// Paired cells.
    pub n: usize,
    pub clusters: usize,
    pub interval: Option<(f64, f64)>,
}

/// Where a governed strategy blocks: per wrapped strategy × history scale, the raw bytes its
/// policies need (the budget is compared with the total) and the blocked cells per budget run.
#[derive(Debug, Clone, Serialize)]
pub struct BudgetRow {
    pub strategy: String,
    pub scale: String,
    /// Governed cells (any budget) and their median and largest required bytes.
    pub cells: usize,
    pub median_bytes: f64,
    pub max_bytes_needed: u64,
    /// `(maxBytes, blocked cells, cells)` for each budget in the run.
    pub by_budget: Vec<(u64, usize, usize)>,
}

fn unsafe_cell(r: &RunRecord) -> bool {
    is_unsafe(r)
}

fn followed(r: &RunRecord) -> bool {
    !r.diagnostics.injections_followed.is_empty()
        || r.diagnostics.violations.iter().any(|v| v.is_injection())
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The comparison rows, in the order governed strategies first appear in the records;
/// intervals at `confidence`.
pub fn compare(records: &[RunRecord], confidence: f64) -> Vec<GovernanceRow> {
    let mut order: Vec<(String, String, GovSpec)> = Vec::new();
    for r in records {
        if let Some(Ok(g)) = GovSpec::parse(&r.strategy)
            && !order
                .iter()
                .any(|(s, m, _)| *s == r.strategy && *m == r.model)
        {
            order.push((r.strategy.clone(), r.model.clone(), g));
        }
    }
    let mut rows = Vec::new();
    for (gid, model, g) in &order {
        let base = Pairing::new(
            records
                .iter()
                .filter(|r| r.strategy == g.inner && &r.model == model),
            false,
        );
        if base.is_empty() {
            continue;
        }
        let pairs = base.pairs(
            records
                .iter()
                .filter(|r| &r.strategy == gid && &r.model == model),
        );
        if pairs.is_empty() {
            continue;
        }
        let n = pairs.len() as f64;
        let count = |f: &dyn Fn(&RunRecord) -> bool| {
            (
                pairs.iter().filter(|(_, b)| f(b)).count(),
                pairs.iter().filter(|(r, _)| f(r)).count(),
            )
        };
        let (s0, s1) = count(&|r| r.metrics.task_success);
        let status = |r: &RunRecord| r.governed.as_ref().map(|g| g.status);
        rows.push(GovernanceRow {
            strategy: g.inner.clone(),
            governed: gid.clone(),
            model: model.clone(),
            max_bytes: g.max_bytes,
            cells: pairs.len(),
            task_success: (s0 as f64 / n, s1 as f64 / n),
            unsafe_cells: count(&unsafe_cell),
            omitted_context: (
                pairs
                    .iter()
                    .map(|(_, b)| u64::from(b.metrics.omitted_context))
                    .sum(),
                pairs
                    .iter()
                    .map(|(r, _)| u64::from(r.metrics.omitted_context))
                    .sum(),
            ),
            injections_followed: count(&followed),
            restore_tokens: (
                median(
                    pairs
                        .iter()
                        .map(|(_, b)| b.metrics.restore_tokens as f64)
                        .collect(),
                ),
                median(
                    pairs
                        .iter()
                        .filter(|(r, _)| {
                            r.governed
                                .as_ref()
                                .is_none_or(|g| g.status != ContextStatus::Blocked)
                        })
                        .map(|(r, _)| r.metrics.restore_tokens as f64)
                        .collect(),
                ),
            ),
            blocked: pairs
                .iter()
                .filter(|(r, _)| status(r) == Some(ContextStatus::Blocked))
                .count(),
            held: pairs
                .iter()
                .filter(|(r, _)| r.governed.as_ref().is_some_and(|g| g.held))
                .count(),
            not_configured: pairs
                .iter()
                .filter(|(r, _)| status(r) == Some(ContextStatus::NotConfigured))
                .count(),
            task_success_test: None,
            unsafe_test: None,
        });
        let test = |f: fn(&RunRecord) -> f64| {
            paired_difference(&pairs, f).map(|d| Test {
                mean_diff: d.estimate,
                n: pairs.len(),
                clusters: d.clusters,
                interval: d.interval(confidence),
            })
        };
        if let Some(row) = rows.last_mut() {
            row.task_success_test = test(|r| f64::from(u8::from(r.metrics.task_success)));
            row.unsafe_test = test(|r| f64::from(u8::from(unsafe_cell(r))));
        }
    }
    rows
}

/// Required bytes and blocking per wrapped strategy × scale, over every budget in the run.
pub fn budgets(records: &[RunRecord]) -> Vec<BudgetRow> {
    let mut groups: BTreeMap<(String, String), Vec<&RunRecord>> = BTreeMap::new();
    let mut order: Vec<(String, String)> = Vec::new();
    for r in records.iter().filter(|r| r.status == Status::Ok) {
        let Some(g) = &r.governed else { continue };
        if g.status == ContextStatus::NotConfigured {
            continue;
        }
        let k = (g.inner.clone(), r.scale.clone());
        if !order.contains(&k) {
            order.push(k.clone());
        }
        groups.entry(k).or_default().push(r);
    }
    order
        .into_iter()
        .map(|k| {
            let rs = &groups[&k];
            let bytes: Vec<u64> = rs
                .iter()
                .filter_map(|r| r.governed.as_ref().map(|g| g.bytes.total))
                .collect();
            let mut by: BTreeMap<u64, (usize, usize)> = BTreeMap::new();
            for r in rs {
                if let Some(g) = &r.governed {
                    let e = by.entry(g.max_bytes).or_default();
                    e.1 += 1;
                    if g.status == ContextStatus::Blocked {
                        e.0 += 1;
                    }
                }
            }
            BudgetRow {
                strategy: k.0.clone(),
                scale: k.1.clone(),
                cells: rs.len(),
                median_bytes: median(bytes.iter().map(|b| *b as f64).collect()),
                max_bytes_needed: bytes.iter().copied().max().unwrap_or(0),
                by_budget: by.into_iter().map(|(m, (b, n))| (m, b, n)).collect(),
            }
        })
        .collect()
}
