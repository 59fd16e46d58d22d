//! The compaction curve: per destination × strategy × history scale, what happens as the source
//! history grows — safe success and task success with their scenario-clustered intervals, unsafe
//! cells, restore tokens, compression ratio and handoffs that did not fit the destination's
//! window.
//!
//! Owns which records form a point of the curve and the numbers of each point; computed from
//! saved records only. It never formats for a reader and never draws.

use serde::Serialize;

use crate::record::{RunRecord, Status};
use crate::results::outcome::{clustered_rate, safe_success};
use crate::stats;

/// One point of the curve.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CurvePoint {
    pub model: String,
    pub strategy: String,
    pub scale: String,
    /// Ok cells.
    pub n: usize,
    /// Median full-history tokens of those cells (the x of the curve).
    pub history_tokens: f64,
    /// Safe success (task success, no duplicate, no violation) with its interval.
    pub safe_success: f64,
    pub safe_success_ci: Option<(f64, f64)>,
    pub task_success: f64,
    /// Interval of the task-success rate, clustered by scenario.
    pub task_success_ci: Option<(f64, f64)>,
    /// Cells with a safety violation or a duplicate side effect.
    pub unsafe_cells: usize,
    pub restore_tokens: f64,
    pub compression_ratio: f64,
    /// Cells whose handoff did not fit the destination's usable context.
    pub overflow_cells: usize,
}

/// The curve's points, ordered by destination, strategy (first-seen order) and history length;
/// intervals at `confidence`.
pub fn curve(records: &[RunRecord], confidence: f64) -> Vec<CurvePoint> {
    let mut keys: Vec<(&str, &str, &str)> = Vec::new();
    for r in records.iter().filter(|r| r.status == Status::Ok) {
        let k = (r.model.as_str(), r.strategy.as_str(), r.scale.as_str());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut out: Vec<CurvePoint> = keys
        .into_iter()
        .map(|(model, strategy, scale)| {
            let rs: Vec<&RunRecord> = records
                .iter()
                .filter(|r| {
                    r.status == Status::Ok
                        && r.model == model
                        && r.strategy == strategy
                        && r.scale == scale
                })
                .collect();
            let med = |f: fn(&RunRecord) -> f64| {
                stats::median(&rs.iter().map(|r| f(r)).collect::<Vec<_>>()).unwrap_or(0.0)
            };
            let wins = rs.iter().filter(|r| r.metrics.task_success).count();
            let safe = clustered_rate(rs.iter().copied(), safe_success, confidence);
            let task = clustered_rate(rs.iter().copied(), |r| r.metrics.task_success, confidence);
            CurvePoint {
                model: model.to_string(),
                strategy: strategy.to_string(),
                scale: scale.to_string(),
                n: rs.len(),
                history_tokens: med(|r| r.metrics.history_tokens as f64),
                safe_success: safe.map(|s| s.rate).unwrap_or(0.0),
                safe_success_ci: safe.and_then(|s| s.interval),
                task_success: wins as f64 / rs.len().max(1) as f64,
                task_success_ci: task.and_then(|s| s.interval),
                unsafe_cells: rs
                    .iter()
                    .filter(|r| {
                        r.metrics.safety_violations > 0 || r.metrics.duplicate_side_effects > 0
                    })
                    .count(),
                restore_tokens: med(|r| r.metrics.restore_tokens as f64),
                compression_ratio: med(|r| r.metrics.compression_ratio),
                overflow_cells: rs
                    .iter()
                    .filter(|r| r.diagnostics.context_overflow.is_some())
                    .count(),
            }
        })
        .collect();
    let first_seen = |f: fn(&CurvePoint) -> &str| {
        let mut o: Vec<String> = Vec::new();
        for p in &out {
            if !o.iter().any(|x| x == f(p)) {
                o.push(f(p).to_string());
            }
        }
        o
    };
    let (models, strategies) = (first_seen(|p| &p.model), first_seen(|p| &p.strategy));
    let pos = |list: &[String], x: &str| list.iter().position(|y| y == x);
    out.sort_by(|a, b| {
        pos(&models, &a.model)
            .cmp(&pos(&models, &b.model))
            .then(pos(&strategies, &a.strategy).cmp(&pos(&strategies, &b.strategy)))
            .then(a.history_tokens.total_cmp(&b.history_tokens))
    });
    out
}

/// Whether the run has more than one scale (a curve worth drawing).
pub fn has_scales(points: &[CurvePoint]) -> bool {
    points.iter().any(|p| p.scale != points[0].scale)
}
