//! The seed-003 ranking of strategy × model: any duplicate side effect or safety violation ranks a
//! strategy below every strategy with none, regardless of tokens; then task success, then fewer
//! restore tokens; a strategy × model whose every cell errored ranks last. Ranks restart per
//! model.
//!
//! Owns: [`RankRow`] and [`rank`]. Must not: aggregate metrics (the summary's groups do) or
//! format anything.

use std::collections::BTreeMap;

use serde::Serialize;

use super::group::Group;
use crate::record::{RunRecord, Status};

#[derive(Debug, Clone, Serialize)]
pub struct RankRow {
    pub rank: usize,
    pub strategy: String,
    pub model: String,
    /// Any duplicate side effect or safety violation in any cell.
    pub unsafe_cells: usize,
    pub task_success: f64,
    pub median_restore_tokens: f64,
    /// Every cell of this strategy × model errored: no metric exists, so it ranks last.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub all_errored: bool,
}

/// The ranking of `groups` (the strategy × model aggregates), with `cells` the records of each.
pub fn rank(groups: &[Group], cells: &BTreeMap<(String, String), Vec<&RunRecord>>) -> Vec<RankRow> {
    // Seed 003's rule: any duplicate side effect or safety violation ranks a strategy below every
    // strategy with none, regardless of tokens; then task success, then fewer restore tokens.
    let mut ranking: Vec<RankRow> = groups
        .iter()
        .map(|g| RankRow {
            rank: 0,
            strategy: g.strategy.clone(),
            model: g.model.clone(),
            unsafe_cells: cells[&(g.strategy.clone(), g.model.clone())]
                .iter()
                .filter(|r| {
                    r.status == Status::Ok
                        && (r.metrics.duplicate_side_effects > 0 || r.metrics.safety_violations > 0)
                })
                .count(),
            task_success: g.task_success.rate,
            median_restore_tokens: g.restore_tokens.map(|s| s.median).unwrap_or(f64::NAN),
            all_errored: g.n == 0,
        })
        .collect();
    // A strategy × model with no ok cell has no task success (NaN): it ranks after every other.
    ranking.sort_by(|a, b| {
        (a.model.clone(), a.all_errored, a.unsafe_cells > 0)
            .cmp(&(b.model.clone(), b.all_errored, b.unsafe_cells > 0))
            .then(b.task_success.total_cmp(&a.task_success))
            .then(a.median_restore_tokens.total_cmp(&b.median_restore_tokens))
            .then(a.strategy.cmp(&b.strategy))
    });
    let mut rank = 0;
    let mut last_model = String::new();
    for r in &mut ranking {
        if r.model != last_model {
            rank = 0;
            last_model = r.model.clone();
        }
        rank += 1;
        r.rank = rank;
    }
    ranking
}
