//! The rows of the report's answer, formatted: the executive summary per destination (the best
//! group, its margin over the next group and over A with intervals), the most common failure
//! cause per strategy, the ranking with its rank ranges, n, denominators and intervals, the
//! paired differences against the reference, and the per-domain rows.
//!
//! Owns: those row types and their number formats (`rate [low–high] (k/n)`, `+d [low, high]`).
//! Must not: compute a statistic (the summary and the analysis do) or escape for a format.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::report::ranking::{PairTest, RankRow};
use crate::report::summary::Summary;
use crate::results::outcome::{ClusteredRate, FailureCause};

pub use super::rows::diff_view;

/// `rate [low–high] (k/n)`, or `–`.
pub fn rate_view(r: &Option<ClusteredRate>) -> String {
    match r {
        Some(r) => match r.interval {
            Some((lo, hi)) => format!("{:.2} [{lo:.2}–{hi:.2}] ({}/{})", r.rate, r.successes, r.n),
            None => format!("{:.2} (—; {}/{})", r.rate, r.successes, r.n),
        },
        None => "–".into(),
    }
}

/// The executive summary of one destination.
#[derive(Debug, Serialize)]
pub struct ExecView {
    pub model: String,
    /// The strategies no other strategy is significantly above.
    pub best_group: String,
    /// The first of them and its safe success.
    pub leader: String,
    pub leader_safe_success: String,
    /// `+d [low, high] over X` for the best strategy outside the group, or a sentence.
    pub over_next: String,
    /// The same against A (`–` without A, or when A leads).
    pub over_a: String,
}

/// One strategy's most common failure, pooled over destinations.
#[derive(Debug, Serialize)]
pub struct CauseView {
    pub strategy: String,
    pub failed: usize,
    pub cells: usize,
    /// `label (k cells)`, or `none` when every cell succeeded safely.
    pub cause: String,
}

/// One ranking row, formatted.
#[derive(Debug, Serialize)]
pub struct RankView {
    pub model: String,
    /// `1`, or a shared range `1–3`.
    pub rank: String,
    pub strategy: String,
    pub safe_success: String,
    pub task_success: String,
    pub unsafe_rate: String,
    /// `handoff / distraction` unsafe cells.
    pub causes: String,
    pub restore_tokens: String,
    /// Strategies significantly above it, with why; or the all-errored note.
    pub note: String,
}

/// One strategy × model against the reference: each metric's difference with its interval.
#[derive(Debug, Serialize)]
pub struct PairedView {
    pub strategy: String,
    pub model: String,
    pub cells: usize,
    pub clusters: usize,
    pub safe_success: String,
    pub task_success: String,
    pub handoff_unsafe: String,
    pub recovery_quality: String,
}

/// One domain × strategy × model, formatted.
#[derive(Debug, Serialize)]
pub struct DomainView {
    pub domain: String,
    pub strategy: String,
    pub model: String,
    pub scenarios: usize,
    pub safe_success: String,
    pub task_success: String,
    pub causes: String,
}

/// `a − b` of `metric` between two strategies of `model`, oriented as asked.
fn pair(
    tests: &[PairTest],
    model: &str,
    a: &str,
    b: &str,
    confidence: f64,
) -> Option<(f64, Option<(f64, f64)>)> {
    tests
        .iter()
        .filter(|t| t.model == model && t.metric == "safe_success")
        .find_map(|t| {
            let iv = t.diff.interval(confidence);
            if t.a == a && t.b == b {
                Some((t.diff.estimate, iv))
            } else if t.a == b && t.b == a {
                Some((-t.diff.estimate, iv.map(|(l, h)| (-h, -l))))
            } else {
                None
            }
        })
}

fn rank_label(r: &RankRow) -> String {
    if r.rank == r.rank_high {
        r.rank.to_string()
    } else {
        format!("{}–{}", r.rank, r.rank_high)
    }
}

pub(super) fn rank_views(s: &Summary) -> Vec<RankView> {
    s.ranking
        .iter()
        .map(|r| RankView {
            model: r.model.clone(),
            rank: rank_label(r),
            strategy: r.strategy.clone(),
            safe_success: rate_view(&r.safe_success),
            task_success: rate_view(&r.task_success),
            unsafe_rate: rate_view(&r.unsafe_rate),
            causes: format!("{} / {}", r.handoff_unsafe_cells, r.distraction_cells),
            restore_tokens: super::rows::fmt(r.median_restore_tokens),
            note: if r.all_errored {
                "every cell errored: ranked last".into()
            } else if r.below.is_empty() {
                String::new()
            } else {
                let mut by: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
                for (who, why) in &r.below {
                    by.entry(why).or_default().push(who);
                }
                format!(
                    "below {}",
                    by.iter()
                        .map(|(why, who)| format!("{} ({why})", who.join(", ")))
                        .collect::<Vec<_>>()
                        .join("; ")
                )
            },
        })
        .collect()
}

pub(super) fn exec_views(s: &Summary) -> Vec<ExecView> {
    let confidence = 1.0 - s.alpha;
    let mut models: Vec<&str> = Vec::new();
    for r in &s.ranking {
        if !models.contains(&r.model.as_str()) {
            models.push(&r.model);
        }
    }
    models
        .into_iter()
        .filter_map(|m| {
            let rows: Vec<&RankRow> = s
                .ranking
                .iter()
                .filter(|r| r.model == m && !r.all_errored)
                .collect();
            let leader = *rows.first()?;
            let best: Vec<&str> = rows
                .iter()
                .filter(|r| r.rank == 1)
                .map(|r| r.strategy.as_str())
                .collect();
            let margin = |other: &RankRow| {
                pair(
                    &s.rank_tests,
                    m,
                    &leader.strategy,
                    &other.strategy,
                    confidence,
                )
                .map(|(d, iv)| format!("{} over {}", diff_view(d, iv), other.strategy))
                .unwrap_or_else(|| format!("no shared cells with {}", other.strategy))
            };
            Some(ExecView {
                model: m.to_string(),
                best_group: best.join(", "),
                leader: leader.strategy.clone(),
                leader_safe_success: rate_view(&leader.safe_success),
                over_next: rows
                    .iter()
                    .find(|r| r.rank > 1)
                    .map(|r| margin(r))
                    .unwrap_or_else(|| "no strategy is told apart from it".into()),
                over_a: rows
                    .iter()
                    .find(|r| r.strategy == "A" && r.strategy != leader.strategy)
                    .map(|r| margin(r))
                    .unwrap_or_else(|| "–".into()),
            })
        })
        .collect()
}

pub(super) fn cause_views(s: &Summary) -> Vec<CauseView> {
    let mut order: Vec<&str> = Vec::new();
    let mut pooled: BTreeMap<&str, (BTreeMap<FailureCause, usize>, usize)> = BTreeMap::new();
    for r in &s.ranking {
        if !order.contains(&r.strategy.as_str()) {
            order.push(&r.strategy);
        }
        let e = pooled.entry(&r.strategy).or_default();
        e.1 += r.safe_success.map(|x| x.n).unwrap_or(0);
        for (c, n) in &r.failure_causes {
            *e.0.entry(*c).or_default() += n;
        }
    }
    order
        .into_iter()
        .map(|st| {
            let (causes, cells) = &pooled[st];
            let top = causes.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)));
            CauseView {
                strategy: st.to_string(),
                failed: causes.values().sum(),
                cells: *cells,
                cause: top
                    .map(|(c, n)| format!("{} ({n} cells)", c.label()))
                    .unwrap_or_else(|| "none".into()),
            }
        })
        .collect()
}

pub(super) fn paired_views(s: &Summary) -> Vec<PairedView> {
    let mut out: Vec<PairedView> = Vec::new();
    for p in &s.analysis.paired {
        let i = match out
            .iter()
            .position(|v| v.strategy == p.strategy && v.model == p.model)
        {
            Some(i) => i,
            None => {
                out.push(PairedView {
                    strategy: p.strategy.clone(),
                    model: p.model.clone(),
                    cells: p.cells,
                    clusters: p.clusters,
                    safe_success: "–".into(),
                    task_success: "–".into(),
                    handoff_unsafe: "–".into(),
                    recovery_quality: "–".into(),
                });
                out.len() - 1
            }
        };
        let text = diff_view(p.mean_diff, p.interval);
        let v = &mut out[i];
        match p.metric.as_str() {
            "safe_success" => v.safe_success = text,
            "task_success" => v.task_success = text,
            "handoff_unsafe_rate" => v.handoff_unsafe = text,
            "recovery_quality" => v.recovery_quality = text,
            _ => {}
        }
    }
    out
}

pub(super) fn domain_views(s: &Summary) -> Vec<DomainView> {
    s.domains
        .iter()
        .map(|d| DomainView {
            domain: d.domain.clone(),
            strategy: d.strategy.clone(),
            model: d.model.clone(),
            scenarios: d.scenarios,
            safe_success: rate_view(&d.safe_success),
            task_success: rate_view(&d.task_success),
            causes: format!("{} / {}", d.handoff_unsafe_cells, d.distraction_cells),
        })
        .collect()
}
