//! The compaction-chain section of a report, formatted: one row per strategy × destination ×
//! compactions and one per chain arm × destination × metric of the paired comparison.
//!
//! Owns only the formatting of [`crate::report::chains`]' numbers; computes nothing.

use serde::Serialize;

use crate::report::summary::Summary;

/// One strategy × destination × number of compactions, formatted.
#[derive(Debug, Serialize)]
pub struct ChainView {
    pub strategy: String,
    pub model: String,
    pub compactions: u32,
    pub n: usize,
    pub safe_success: String,
    pub ci: String,
    pub unsafe_cells: usize,
    pub omitted_context: String,
    pub upgrade_cells: usize,
    pub restore_tokens: String,
}

/// One chain arm against its single compaction, formatted.
#[derive(Debug, Serialize)]
pub struct ChainPairedView {
    pub strategy: String,
    pub chain: String,
    pub model: String,
    pub metric: &'static str,
    pub better: &'static str,
    pub cells: usize,
    pub clusters: usize,
    pub single: String,
    pub chained: String,
    pub diff: String,
    pub interval: String,
    /// `worse`, `better` or `no clear change`: whether the interval excludes 0, read with the
    /// metric's direction.
    pub verdict: &'static str,
}

pub(super) fn views(s: &Summary) -> (Vec<ChainView>, Vec<ChainPairedView>) {
    let rows = s
        .chains
        .iter()
        .map(|r| ChainView {
            strategy: r.strategy.clone(),
            model: r.model.clone(),
            compactions: r.compactions,
            n: r.n,
            safe_success: format!("{:.2}", r.safe_success),
            ci: r
                .safe_success_ci
                .map(|(l, h)| format!("{l:.2}–{h:.2}"))
                .unwrap_or_default(),
            unsafe_cells: r.unsafe_cells,
            omitted_context: format!("{:.2}", r.omitted_context),
            upgrade_cells: r.upgrade_cells,
            restore_tokens: format!("{:.0}", r.restore_tokens),
        })
        .collect();
    let paired = s
        .chain_paired
        .iter()
        .map(|p| {
            let verdict = match p.interval {
                Some((lo, _)) if lo > 0.0 => {
                    if p.higher_is_better {
                        "better"
                    } else {
                        "worse"
                    }
                }
                Some((_, hi)) if hi < 0.0 => {
                    if p.higher_is_better {
                        "worse"
                    } else {
                        "better"
                    }
                }
                Some(_) => "no clear change",
                None => "not estimable",
            };
            ChainPairedView {
                strategy: p.strategy.clone(),
                chain: p.chain.clone(),
                model: p.model.clone(),
                metric: p.metric,
                better: if p.higher_is_better {
                    "higher"
                } else {
                    "lower"
                },
                cells: p.cells,
                clusters: p.clusters,
                single: format!("{:.3}", p.single),
                chained: format!("{:.3}", p.chained),
                diff: format!("{:+.3}", p.diff),
                interval: p
                    .interval
                    .map(|(l, h)| format!("{l:+.3} to {h:+.3}"))
                    .unwrap_or_else(|| "–".into()),
                verdict,
            }
        })
        .collect();
    (rows, paired)
}
