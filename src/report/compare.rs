//! `compare.md`: two runs side by side over their shared cells, one row per strategy × model ×
//! metric with the paired test's verdict.
//!
//! Owns: the metrics compared and the Markdown text. Must not: read or write files, or compute
//! the comparisons ([`crate::results::baseline::paired_comparisons`] does).

use std::path::Path;

use crate::results::baseline::Comparison;

/// The metrics `compare` tests, in row order.
pub const METRICS: [&str; 4] = [
    "task_success",
    "recovery_quality",
    "omitted_context",
    "repeated_work",
];

/// A Holm-corrected p-value below this is a significant change.
const ALPHA: f64 = 0.05;

/// One side of a comparison: the run folder and how many records it has.
pub struct Side<'a> {
    pub dir: &'a Path,
    pub cells: usize,
}

/// The comparison's Markdown document.
pub fn markdown(base: Side<'_>, cand: Side<'_>, comps: &[Comparison]) -> String {
    let mut md = format!(
        "# compaction-eval comparison\n\nbase: `{}` ({} cells) · candidate: `{}` ({} cells). Differences are candidate − base over the cells both runs have (same scenario, interrupt point, strategy, model, repetition), averaged per unit (scenario × interrupt point × model, over repetitions) and then per scenario; positive is better (omitted context and repeated work are negated). Wilcoxon signed-rank on the per-scenario means, Holm-corrected across all rows.\n\n| strategy | model | metric | units | paired cells | scenarios | mean difference | p | p (Holm) | verdict |\n| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n",
        base.dir.display(),
        base.cells,
        cand.dir.display(),
        cand.cells
    );
    for x in comps {
        let verdict = if x.p_holm < ALPHA {
            if x.mean_diff > 0.0 { "better" } else { "worse" }
        } else {
            "no significant change"
        };
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {:+.3} | {:.4} | {:.4} | {} |\n",
            x.strategy.replace('|', "\\|"),
            x.model.replace('|', "\\|"),
            x.metric,
            x.n,
            x.cells,
            x.clusters,
            x.mean_diff,
            x.p_value,
            x.p_holm,
            verdict
        ));
    }
    md
}
