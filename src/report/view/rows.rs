//! The rows of the report's view: one formatted type per table row (groups, injection,
//! pass^k, facts, upgrades, continuity, checkpoints, errored cells, the curve,
//! governance, transcripts, live models, the configuration) and the builders that format a
//! summary's rows into them.
//!
//! Owns: those types and the number formats (`median [Q1–Q3]`, two decimals, `–` for none).
//! Must not: compute a statistic, escape for an output format, or assemble the whole view (its
//! façade does).

use serde::Serialize;

use crate::record::RunRecord;
use crate::report::group::Group;
use crate::report::summary::Summary;
use crate::stats::Spread;

/// X against gov:X for one model, formatted: `X → gov:X` pairs.
#[derive(Debug, Serialize)]
pub struct GovernanceView {
    pub strategy: String,
    pub governed: String,
    pub model: String,
    pub cells: usize,
    pub task_success: String,
    pub unsafe_cells: String,
    pub omitted_context: String,
    pub injections_followed: String,
    pub restore_tokens: String,
    pub blocked: usize,
    pub held: usize,
    pub not_configured: usize,
    /// `Δ [interval] (n cells, k scenarios)` for task success and unsafe cells.
    pub success_test: String,
    pub unsafe_test: String,
}

/// Where one wrapped strategy blocks at one scale, formatted.
#[derive(Debug, Serialize)]
pub struct BudgetView {
    pub strategy: String,
    pub scale: String,
    pub cells: usize,
    pub median_bytes: String,
    pub max_bytes_needed: u64,
    /// `maxBytes: blocked/cells; …`
    pub by_budget: String,
}

fn test_view(t: &Option<crate::report::governance::Test>) -> String {
    match t {
        Some(t) => format!(
            "{} ({} cells, {} scenarios)",
            diff_view(t.mean_diff, t.interval),
            t.n,
            t.clusters
        ),
        None => "–".into(),
    }
}

pub(super) fn governance_views(s: &Summary) -> (Vec<GovernanceView>, Vec<BudgetView>) {
    let rows = s
        .governance
        .iter()
        .map(|r| GovernanceView {
            strategy: r.strategy.clone(),
            governed: r.governed.clone(),
            model: r.model.clone(),
            cells: r.cells,
            task_success: format!("{:.2} → {:.2}", r.task_success.0, r.task_success.1),
            unsafe_cells: format!("{} → {}", r.unsafe_cells.0, r.unsafe_cells.1),
            omitted_context: format!("{} → {}", r.omitted_context.0, r.omitted_context.1),
            injections_followed: format!(
                "{} → {}",
                r.injections_followed.0, r.injections_followed.1
            ),
            restore_tokens: format!("{:.0} → {:.0}", r.restore_tokens.0, r.restore_tokens.1),
            blocked: r.blocked,
            held: r.held,
            not_configured: r.not_configured,
            success_test: test_view(&r.task_success_test),
            unsafe_test: test_view(&r.unsafe_test),
        })
        .collect();
    let budgets = s
        .governance_budgets
        .iter()
        .map(|b| BudgetView {
            strategy: b.strategy.clone(),
            scale: b.scale.clone(),
            cells: b.cells,
            median_bytes: format!("{:.0}", b.median_bytes),
            max_bytes_needed: b.max_bytes_needed,
            by_budget: b
                .by_budget
                .iter()
                .map(|(m, k, n)| format!("{m}: {k}/{n}"))
                .collect::<Vec<_>>()
                .join("; "),
        })
        .collect();
    (rows, budgets)
}

/// One point of the compaction curve, formatted.
#[derive(Debug, Serialize)]
pub struct CurveView {
    pub model: String,
    pub strategy: String,
    pub scale: String,
    pub n: usize,
    pub history_tokens: String,
    pub safe_success: String,
    /// The safe-success interval, clustered by scenario.
    pub ci: String,
    pub task_success: String,
    pub unsafe_cells: usize,
    pub restore_tokens: String,
    pub compression_ratio: String,
    pub overflow_cells: usize,
}

/// One strategy × model of the transcript section, formatted.
#[derive(Debug, Serialize)]
pub struct TranscriptView {
    pub strategy: String,
    pub model: String,
    pub cut_rule: String,
    pub cells: usize,
    pub errored: usize,
    pub needed_value_retention: String,
    pub values: String,
    pub user_statement_retention: String,
    pub restore_tokens: String,
    pub compression_ratio: String,
    /// `rate [low–high] (k/n)`, or `–` offline.
    pub agreement: String,
}

pub(super) fn transcript_view(g: &crate::report::transcripts::TranscriptGroup) -> TranscriptView {
    let opt = |x: Option<f64>| x.map(|x| format!("{x:.3}")).unwrap_or_else(|| "–".into());
    TranscriptView {
        strategy: g.strategy.clone(),
        model: g.model.clone(),
        cut_rule: g.cut_rule.clone().unwrap_or_else(|| "all".into()),
        cells: g.cells,
        errored: g.errored,
        needed_value_retention: opt(g.needed_value_retention),
        values: format!("{} lost of {}", g.values_lost, g.values_needed),
        user_statement_retention: opt(g.user_statement_retention),
        restore_tokens: med(&g.restore_tokens),
        compression_ratio: med(&g.compression_ratio),
        agreement: match (g.agreement, g.agreement_ci) {
            (Some(a), Some((lo, hi))) => {
                format!("{:.2} [{lo:.2}–{hi:.2}] ({}/{})", a.rate, a.successes, a.n)
            }
            _ => "–".into(),
        },
    }
}

/// What one live model spent over the run.
#[derive(Debug, Serialize)]
pub struct LiveView {
    pub model: String,
    pub cells: usize,
    pub errored: usize,
    pub errored_by_class: String,
    pub calls: u32,
    pub requests: u32,
    pub retries: u32,
    pub cache_hits: u32,
    pub cached_cells: usize,
    pub malformed_tool_calls: u32,
    pub unknown_tools: u32,
    pub text_only_turns: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost: String,
    pub median_completion_ms: String,
}

#[derive(Debug, Serialize)]
pub struct ConfigView {
    pub strategies: String,
    pub models: String,
    pub scenarios: String,
    pub interrupts: String,
    pub reps: String,
    pub step_budget: String,
    pub attention: String,
    /// History scales (`base, 40k, 120k`; `base` for runs written before scales existed).
    pub scales: String,
    /// The simulated destinations' context window.
    pub context_window: String,
}

#[derive(Debug, Serialize)]
pub struct GroupView {
    pub strategy: String,
    pub model: String,
    pub interrupt: Option<String>,
    pub n: usize,
    pub safe_success: String,
    pub task_success: String,
    /// ` [low–high]` (with the leading space) or empty: the interval of safe success,
    /// clustered by scenario.
    pub ci: String,
    /// `handoff / distraction` unsafe cells.
    pub causes: String,
    pub omitted_context: String,
    pub repeated_work: String,
    pub cells_with_duplicates: usize,
    pub cells_with_violations: usize,
    pub recovery_quality: String,
    pub restore_tokens: String,
    pub total_tokens: String,
    pub completion_ms: String,
}

#[derive(Debug, Serialize)]
pub struct InjectionView {
    pub strategy: String,
    pub model: String,
    pub benign_utility: String,
    pub utility_under_attack: String,
    pub attacked_n: usize,
    pub attack_success_rate: String,
}

#[derive(Debug, Serialize)]
pub struct PassKView {
    pub strategy: String,
    pub model: String,
    pub values: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct PairedUnitsView {
    pub unit: String,
    pub test: String,
    pub distinct_units: usize,
    pub clusters: usize,
    pub max_repetitions: usize,
    pub cells_differing: usize,
    pub warning: Option<String>,
}

/// What one strategy's handoffs carry for one destination: retention, forgetting precision and
/// inert identifiers carried (`median [Q1–Q3]`), beside restore tokens.
#[derive(Debug, Serialize)]
pub struct CarriedView {
    pub strategy: String,
    pub model: String,
    pub n: usize,
    pub retention: String,
    pub forgetting_precision: String,
    pub inert_carried: String,
    pub restore_tokens: String,
    /// `k/n` cells whose handoff is longer than the whole history it replaces.
    pub longer_than_transcript: String,
    /// `k/n` cells a trigger left uncompacted (`—` when none did).
    pub not_compacted: String,
}

impl CarriedView {
    /// The row of a group whose cells have `metrics.carried` (`None` otherwise).
    pub fn of(g: &Group) -> Option<CarriedView> {
        g.retention.as_ref()?;
        Some(CarriedView {
            strategy: g.strategy.clone(),
            model: g.model.clone(),
            n: g.n,
            retention: med(&g.retention),
            forgetting_precision: med(&g.forgetting_precision),
            inert_carried: med(&g.inert_carried),
            restore_tokens: med(&g.restore_tokens),
            longer_than_transcript: format!("{}/{}", g.longer_than_transcript, g.n),
            not_compacted: if g.not_compacted == 0 {
                "—".into()
            } else {
                format!("{}/{}", g.not_compacted, g.n)
            },
        })
    }
}

/// One strategy × destination's probe accuracy: per dimension (in `probe::DIMENSIONS` order)
/// `rate (correct/asked)`, and over all of them.
#[derive(Debug, Serialize)]
pub struct ProbeView {
    pub strategy: String,
    pub model: String,
    pub n: usize,
    pub dimensions: Vec<String>,
    pub all: String,
}

impl ProbeView {
    /// The row of a group whose cells answered probes (`None` otherwise).
    pub fn of(g: &Group) -> Option<ProbeView> {
        let cell = |(a, c): (u64, u64)| {
            if a == 0 {
                "–".to_string()
            } else {
                format!("{:.2} ({c}/{a})", c as f64 / a as f64)
            }
        };
        let total = g
            .probes
            .values()
            .fold((0u64, 0u64), |(a, c), (x, y)| (a + x, c + y));
        (total.0 > 0).then(|| ProbeView {
            strategy: g.strategy.clone(),
            model: g.model.clone(),
            n: g.n,
            dimensions: crate::destination::probe::DIMENSIONS
                .iter()
                .map(|d| cell(g.probes.get(*d).copied().unwrap_or_default()))
                .collect(),
            all: cell(total),
        })
    }
}

#[derive(Debug, Serialize)]
pub struct UpgradeView {
    pub strategy: String,
    pub kind: String,
    pub cells: usize,
}

#[derive(Debug, Serialize)]
pub struct FactView {
    pub strategy: String,
    pub fact: String,
    pub cells: usize,
}

#[derive(Debug, Serialize)]
pub struct ContinuityView {
    pub strategy: String,
    pub passed: usize,
    pub total: usize,
    pub first_failures: String,
}

#[derive(Debug, Serialize)]
pub struct CheckpointView {
    pub strategy: String,
    pub cells: usize,
    pub broken: usize,
    pub rules: String,
}

#[derive(Debug, Serialize)]
pub struct ErroredView {
    /// The cell in `viewer.html`.
    pub link: String,
    pub scenario: String,
    pub interrupt: String,
    pub strategy: String,
    pub model: String,
    pub rep: u32,
    pub class: String,
    pub error: String,
}

/// `+d [low, high]`, or `+d` without an interval.
pub fn diff_view(d: f64, interval: Option<(f64, f64)>) -> String {
    match interval {
        Some((lo, hi)) => format!("{d:+.2} [{lo:+.2}, {hi:+.2}]"),
        None => format!("{d:+.2} (no interval: one scenario)"),
    }
}

/// `median [Q1–Q3]`, or `–` without ok cells.
pub(super) fn med(s: &Option<Spread>) -> String {
    match s {
        Some(s) => format!("{} [{}–{}]", fmt(s.median), fmt(s.q1), fmt(s.q3)),
        None => "–".into(),
    }
}

/// Integers without decimals, others with two.
pub(super) fn fmt(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

pub(super) fn group_view(s: &Summary, g: &Group) -> GroupView {
    let ci = s
        .analysis
        .intervals
        .iter()
        .find(|i| i.strategy == g.strategy && i.model == g.model && i.interrupt == g.interrupt)
        .and_then(|i| i.safe_success_ci)
        .map(|(lo, hi)| format!(" [{lo:.2}–{hi:.2}]"))
        .unwrap_or_default();
    GroupView {
        strategy: g.strategy.clone(),
        model: g.model.clone(),
        interrupt: g.interrupt.clone(),
        n: g.n,
        safe_success: format!("{:.2}", g.safe_success.rate),
        task_success: format!("{:.2}", g.task_success.rate),
        ci,
        causes: format!("{} / {}", g.handoff_unsafe_cells, g.distraction_cells),
        omitted_context: med(&g.omitted_context),
        repeated_work: med(&g.repeated_work),
        cells_with_duplicates: g.cells_with_duplicates,
        cells_with_violations: g.cells_with_violations,
        recovery_quality: med(&g.recovery_quality),
        restore_tokens: med(&g.restore_tokens),
        total_tokens: med(&g.total_tokens),
        completion_ms: med(&g.completion_ms),
    }
}

pub(super) fn config_view(c: &serde_json::Value) -> ConfigView {
    let list = |k: &str| {
        c.get(k)
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_else(|| "all".into())
    };
    let text = |k: &str| c.get(k).map(|v| v.to_string()).unwrap_or_default();
    ConfigView {
        strategies: list("strategies"),
        models: list("models"),
        scenarios: list("scenarios"),
        interrupts: list("interrupts"),
        reps: text("reps"),
        step_budget: text("step_budget"),
        attention: text("attention"),
        scales: c
            .get("scales")
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_else(|| "base".into()),
        context_window: c
            .get("context_window")
            .and_then(|v| v.as_u64())
            .unwrap_or(crate::strategy::DEFAULT_CONTEXT_WINDOW)
            .to_string(),
    }
}

/// Checkpoint rule checks per strategy, in first-seen order.
pub(super) fn checkpoint_views(records: &[RunRecord]) -> Vec<CheckpointView> {
    let checked: Vec<&RunRecord> = records
        .iter()
        .filter(|r| r.diagnostics.checkpoint_checked)
        .collect();
    let mut out: Vec<CheckpointView> = Vec::new();
    for r in &checked {
        if out.iter().any(|c| c.strategy == r.strategy) {
            continue;
        }
        let mine: Vec<&&RunRecord> = checked
            .iter()
            .filter(|x| x.strategy == r.strategy)
            .collect();
        let mut names: Vec<&str> = mine
            .iter()
            .flat_map(|x| x.diagnostics.checkpoint_rule_violations.iter())
            .map(|v| v.rule.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        out.push(CheckpointView {
            strategy: r.strategy.clone(),
            cells: mine.len(),
            broken: mine
                .iter()
                .filter(|x| !x.diagnostics.checkpoint_rule_violations.is_empty())
                .count(),
            rules: names.join(", "),
        });
    }
    out
}
