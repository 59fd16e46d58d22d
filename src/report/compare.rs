//! `compare.md`: two runs side by side over their shared cells, one row per strategy × model ×
//! metric: candidate − base in the metric's own direction (a "better" column says which way is
//! better), with its scenario-clustered interval and a verdict.
//!
//! Owns: the metrics compared and the Markdown text. Must not: read or write files, or compute
//! the comparisons ([`crate::results::baseline::paired_comparisons`] does).

use std::path::Path;

use crate::results::baseline::Comparison;
use crate::results::outcome::{Metric, metric};

/// The metrics `compare` shows, in row order.
pub const METRICS: [&str; 7] = [
    "safe_success",
    "task_success",
    "unsafe_rate",
    "handoff_unsafe_rate",
    "recovery_quality",
    "omitted_context",
    "repeated_work",
];

/// Family-wise level of the intervals (Bonferroni across all rows).
const ALPHA: f64 = 0.05;

/// [`METRICS`] as metrics.
pub fn metrics() -> Vec<Metric> {
    METRICS.iter().filter_map(|m| metric(m)).collect()
}

/// One side of a comparison: the run folder and how many records it has.
pub struct Side<'a> {
    pub dir: &'a Path,
    pub cells: usize,
}

/// The comparison's Markdown document.
pub fn markdown(base: Side<'_>, cand: Side<'_>, comps: &[Comparison]) -> String {
    let level = 1.0 - ALPHA / comps.len().max(1) as f64;
    let mut md = format!(
        "# compaction-eval comparison\n\nbase: `{}` ({} cells) · candidate: `{}` ({} cells). Each row is candidate − base as measured, never re-signed: the metric's mean over the cells both runs have (same scenario, history scale, interrupt point, strategy, model, repetition), candidate minus base; the `better` column says whether higher or lower values are better, so a negative difference is an improvement for a lower-is-better metric. Intervals are two-sided at {:.2}% (family-wise 95%, Bonferroni across the {} rows), with the standard error clustered by scenario (Student's t on scenarios − 1 df). Verdict: `better` or `worse` when the interval excludes 0, else `no clear change`.\n\n| strategy | model | metric | better | paired cells | scenarios | base | candidate | candidate − base | interval | verdict |\n| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |\n",
        base.dir.display(),
        base.cells,
        cand.dir.display(),
        cand.cells,
        level * 100.0,
        comps.len()
    );
    for x in comps {
        let interval = x.diff.interval(level);
        let verdict = match interval {
            Some((lo, hi)) if lo > 0.0 || hi < 0.0 => {
                let up = lo > 0.0;
                if up == x.higher_is_better {
                    "better"
                } else {
                    "worse"
                }
            }
            Some(_) => "no clear change",
            None => "fewer than two scenarios",
        };
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {:.3} | {:.3} | {:+.3} | {} | {} |\n",
            x.strategy.replace('|', "\\|"),
            x.model.replace('|', "\\|"),
            x.metric,
            if x.higher_is_better {
                "higher"
            } else {
                "lower"
            },
            x.cells,
            x.diff.clusters,
            x.base,
            x.cand,
            x.diff.estimate,
            interval
                .map(|(l, h)| format!("[{l:+.3}, {h:+.3}]"))
                .unwrap_or_else(|| "–".into()),
            verdict
        ));
    }
    md
}
