//! The report's view: everything `report.md` and `report.html` show, taken from the records,
//! the [`Summary`] and the manifest, with every number already formatted, as one serialisable
//! value that both templates (`templates/report.md.j2`, `templates/report.html.j2`) render.
//!
//! It selects and formats only: it computes no statistic (that is [`super::summarize`] and
//! [`super::analysis`]), never escapes for an output format (the templates do), and never runs
//! a cell.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Group, Summary};
use crate::record::{RunRecord, Status};
use crate::stats::Spread;

/// At most this many facts per strategy in "facts most often omitted".
const FACTS_PER_STRATEGY: usize = 5;
/// At most this many errored cells are listed.
const ERRORED_LISTED: usize = 50;

#[derive(Debug, Serialize)]
pub struct View {
    pub cells: usize,
    pub ok: usize,
    pub errored_count: usize,
    pub seed: String,
    pub digest: String,
    pub config: Option<ConfigView>,
    pub ranking: Vec<RankView>,
    pub groups: Vec<GroupView>,
    pub groups_by_point: Vec<GroupView>,
    pub injection: Vec<InjectionView>,
    /// Column count of the pass^k table; 0 when no task has more than one repetition.
    pub pass_k_max: usize,
    pub pass_k: Vec<PassKView>,
    pub reference: String,
    pub paired: Vec<PairedView>,
    /// The unit of the paired comparisons, how many distinct units and scenarios, and the
    /// identical-repetitions warning.
    pub paired_units: Option<PairedUnitsView>,
    pub lost_facts: Vec<FactView>,
    /// Cells per strategy whose handoff presents a fact with more authority than it had.
    pub upgrades: Vec<UpgradeView>,
    pub continuity: Vec<ContinuityView>,
    pub checkpoints: Vec<CheckpointView>,
    pub errored: Vec<ErroredView>,
    /// The compaction curve (empty when the run has one scale only).
    pub curve: Vec<CurveView>,
    /// X against gov:X (empty without governed strategies).
    pub governance: Vec<GovernanceView>,
    pub governance_budgets: Vec<BudgetView>,
    /// The paired test the governance table uses (the report's one paired test).
    pub governance_test: &'static str,
    /// Transcript cells per strategy × model (empty without any).
    pub transcripts: Vec<TranscriptView>,
    /// The same per strategy × model × cut rule.
    pub transcripts_by_rule: Vec<TranscriptView>,
    /// What a transcript run read and how it cut (from the manifest).
    pub transcript_config: Option<String>,
    /// `class: n; …` over every errored cell (empty without any).
    pub errored_classes: String,
    /// One row per live model (empty for an offline run).
    pub live: Vec<LiveView>,
}

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
    /// `Δ p (Holm p; n units, k scenarios)` for task success and unsafe cells.
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
            "{:+.3}, p={:.3} (Holm {:.3}; n={}, {} scenarios)",
            t.mean_diff, t.p_value, t.p_holm, t.n, t.clusters
        ),
        None => "–".into(),
    }
}

fn governance_views(s: &super::Summary) -> (Vec<GovernanceView>, Vec<BudgetView>) {
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
    pub task_success: String,
    pub ci: String,
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

fn transcript_view(g: &super::transcripts::TranscriptGroup) -> TranscriptView {
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
pub struct RankView {
    pub model: String,
    pub rank: usize,
    pub strategy: String,
    pub unsafe_cells: usize,
    pub task_success: String,
    pub restore_tokens: String,
}

#[derive(Debug, Serialize)]
pub struct GroupView {
    pub strategy: String,
    pub model: String,
    pub interrupt: Option<String>,
    pub n: usize,
    pub task_success: String,
    /// ` [low–high]` (with the leading space) or empty.
    pub ci: String,
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

#[derive(Debug, Serialize)]
pub struct PairedView {
    pub strategy: String,
    pub model: String,
    pub metric: String,
    pub n: usize,
    pub cells: usize,
    pub clusters: usize,
    pub p_units: String,
    pub mean_diff: String,
    pub p_value: String,
    pub p_holm: String,
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
    pub scenario: String,
    pub interrupt: String,
    pub strategy: String,
    pub model: String,
    pub rep: u32,
    pub class: String,
    pub error: String,
}

/// `median [Q1–Q3]`, or `–` without ok cells.
fn med(s: &Option<Spread>) -> String {
    match s {
        Some(s) => format!("{} [{}–{}]", fmt(s.median), fmt(s.q1), fmt(s.q3)),
        None => "–".into(),
    }
}

/// Integers without decimals, others with two.
fn fmt(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

fn group_view(s: &Summary, g: &Group) -> GroupView {
    let ci = s
        .analysis
        .intervals
        .iter()
        .find(|i| i.strategy == g.strategy && i.model == g.model && i.interrupt == g.interrupt)
        .and_then(|i| i.task_success_ci)
        .map(|(lo, hi)| format!(" [{lo:.2}–{hi:.2}]"))
        .unwrap_or_default();
    GroupView {
        strategy: g.strategy.clone(),
        model: g.model.clone(),
        interrupt: g.interrupt.clone(),
        n: g.n,
        task_success: format!("{:.2}", g.task_success.rate),
        ci,
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

fn config_view(c: &serde_json::Value) -> ConfigView {
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
fn checkpoint_views(records: &[RunRecord]) -> Vec<CheckpointView> {
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

pub fn view(records: &[RunRecord], s: &Summary, manifest: &serde_json::Value) -> View {
    let ok = records.iter().filter(|r| r.status == Status::Ok).count();
    let an = &s.analysis;
    let mut per: BTreeMap<&str, usize> = BTreeMap::new();
    let lost_facts = s
        .lost_facts
        .iter()
        .filter(|(st, _, _)| {
            let c = per.entry(st).or_default();
            *c += 1;
            *c <= FACTS_PER_STRATEGY
        })
        .map(|(st, f, n)| FactView {
            strategy: st.clone(),
            fact: f.clone(),
            cells: *n,
        })
        .collect();
    let errored: Vec<&RunRecord> = records
        .iter()
        .filter(|r| r.status == Status::Errored)
        .collect();
    View {
        transcripts: s
            .transcripts
            .iter()
            .filter(|g| g.cut_rule.is_none())
            .map(transcript_view)
            .collect(),
        transcripts_by_rule: s
            .transcripts
            .iter()
            .filter(|g| g.cut_rule.is_some())
            .map(transcript_view)
            .collect(),
        transcript_config: manifest
            .get("config")
            .filter(|c| c.get("transcripts").is_some())
            .map(|c| {
                let text = |k: &str| match c.get(k) {
                    Some(serde_json::Value::String(s)) => s.clone(),
                    Some(serde_json::Value::Null) | None => "none".into(),
                    Some(v) => v.to_string(),
                };
                let list = |k: &str| {
                    c.get(k)
                        .and_then(|v| v.as_array())
                        .map(|a| a.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>().join(", "))
                        .unwrap_or_default()
                };
                format!(
                    "Transcripts from `{}`; strategies {}; models {}; cuts per run at most {}; write calls: {}.",
                    text("transcripts"),
                    list("strategies"),
                    list("models"),
                    text("cuts"),
                    text("write_rule")
                )
            }),
        cells: records.len(),
        ok,
        errored_count: errored.len(),
        seed: manifest
            .get("seed")
            .map(|v| v.to_string())
            .unwrap_or_else(|| "?".into()),
        digest: manifest
            .get("digest")
            .and_then(|v| v.as_str())
            .unwrap_or("?")
            .to_string(),
        config: manifest.get("config").map(config_view),
        ranking: s
            .ranking
            .iter()
            .map(|r| RankView {
                model: r.model.clone(),
                rank: r.rank,
                strategy: r.strategy.clone(),
                unsafe_cells: r.unsafe_cells,
                task_success: if r.all_errored {
                    "— (every cell errored: ranked last)".into()
                } else {
                    format!("{:.2}", r.task_success)
                },
                restore_tokens: fmt(r.median_restore_tokens),
            })
            .collect(),
        groups: s
            .by_strategy_model
            .iter()
            .map(|g| group_view(s, g))
            .collect(),
        groups_by_point: s
            .by_strategy_model_interrupt
            .iter()
            .map(|g| group_view(s, g))
            .collect(),
        injection: an
            .injection
            .iter()
            .map(|r| InjectionView {
                strategy: r.strategy.clone(),
                model: r.model.clone(),
                benign_utility: r
                    .benign_utility
                    .map(|u| format!("{u:.2} (n={})", r.benign_n))
                    .unwrap_or_else(|| "–".into()),
                utility_under_attack: format!("{:.2}", r.utility_under_attack),
                attacked_n: r.attacked_n,
                attack_success_rate: format!("{:.2}", r.attack_success_rate),
            })
            .collect(),
        pass_k_max: if an.pass_k.iter().any(|p| p.values.len() > 1) {
            an.pass_k.iter().map(|p| p.values.len()).max().unwrap_or(0)
        } else {
            0
        },
        pass_k: an
            .pass_k
            .iter()
            .map(|p| PassKView {
                strategy: p.strategy.clone(),
                model: p.model.clone(),
                values: p.values.iter().map(|(_, v)| format!("{v:.2}")).collect(),
            })
            .collect(),
        reference: an
            .options
            .as_ref()
            .map(|o| o.reference.clone())
            .unwrap_or_else(|| "C".into()),
        paired: an
            .paired
            .iter()
            .map(|p| PairedView {
                strategy: p.strategy.clone(),
                model: p.model.clone(),
                metric: p.metric.clone(),
                n: p.n,
                cells: p.cells,
                clusters: p.clusters,
                p_units: format!("{:.4}", p.p_units),
                mean_diff: format!("{:+.3}", p.mean_diff),
                p_value: format!("{:.4}", p.p_value),
                p_holm: format!("{:.4}", p.p_holm),
            })
            .collect(),
        paired_units: an.paired_units.as_ref().map(|u| PairedUnitsView {
            unit: u.unit.to_string(),
            test: u.test.to_string(),
            distinct_units: u.distinct_units,
            clusters: u.clusters,
            max_repetitions: u.max_repetitions,
            cells_differing: u.cells_differing,
            warning: u.warning.clone(),
        }),
        lost_facts,
        upgrades: s
            .provenance_upgrades
            .iter()
            .map(|(st, k, n)| UpgradeView {
                strategy: st.clone(),
                kind: k.clone(),
                cells: *n,
            })
            .collect(),
        continuity: s
            .continuity
            .iter()
            .map(|r| ContinuityView {
                strategy: r.strategy.clone(),
                passed: r.passed,
                total: r.total,
                first_failures: r
                    .failures
                    .iter()
                    .take(2)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("; "),
            })
            .collect(),
        checkpoints: checkpoint_views(records),
        governance: governance_views(s).0,
        governance_budgets: governance_views(s).1,
        governance_test: crate::results::paired::TEST,
        curve: if crate::report::curve::has_scales(&s.curve) {
            s.curve
                .iter()
                .map(|p| CurveView {
                    model: p.model.clone(),
                    strategy: p.strategy.clone(),
                    scale: p.scale.clone(),
                    n: p.n,
                    history_tokens: format!("{:.0}", p.history_tokens),
                    task_success: format!("{:.2}", p.task_success),
                    ci: p
                        .task_success_ci
                        .map(|(l, h)| format!("{l:.2}–{h:.2}"))
                        .unwrap_or_default(),
                    unsafe_cells: p.unsafe_cells,
                    restore_tokens: format!("{:.0}", p.restore_tokens),
                    compression_ratio: format!("{:.3}", p.compression_ratio),
                    overflow_cells: p.overflow_cells,
                })
                .collect()
        } else {
            Vec::new()
        },
        errored: errored
            .iter()
            .take(ERRORED_LISTED)
            .map(|r| ErroredView {
                scenario: r.scenario.clone(),
                interrupt: r.interrupt.clone(),
                strategy: r.strategy.clone(),
                model: r.model.clone(),
                rep: r.rep,
                class: r
                    .error_class
                    .map(|c| c.as_str().to_string())
                    .unwrap_or_else(|| "unclassified".into()),
                error: r.error.clone().unwrap_or_default(),
            })
            .collect(),
        errored_classes: s
            .errored_by_class
            .iter()
            .map(|(c, n)| format!("{c}: {n}"))
            .collect::<Vec<_>>()
            .join("; "),
        live: s
            .live
            .iter()
            .map(|m| {
                let t = &m.totals;
                LiveView {
                    model: m.model.clone(),
                    cells: t.cells,
                    errored: t.errored,
                    errored_by_class: t.classes(),
                    calls: t.stats.calls,
                    requests: t.stats.requests,
                    retries: t.stats.retries,
                    cache_hits: t.stats.cache_hits,
                    cached_cells: t.cached_cells,
                    malformed_tool_calls: t.stats.malformed_tool_calls,
                    unknown_tools: t.stats.unknown_tools,
                    text_only_turns: t.stats.text_only_turns,
                    input_tokens: t.stats.input_tokens,
                    output_tokens: t.stats.output_tokens,
                    cost: t
                        .stats
                        .cost_usd
                        .map(|c| format!("${c:.4}"))
                        .unwrap_or_else(|| "–".into()),
                    median_completion_ms: m
                        .median_completion_ms
                        .map(fmt)
                        .unwrap_or_else(|| "–".into()),
                }
            })
            .collect(),
    }
}

/// The two report templates, Markdown without escaping (strings go through the `cell` filter)
/// and HTML with minijinja's HTML auto-escaping.
fn environment() -> minijinja::Environment<'static> {
    let mut env = minijinja::Environment::new();
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(true)
            .build()
            .expect("default delimiters"),
    );
    env.set_auto_escape_callback(|name| {
        if name.ends_with(".html.j2") {
            minijinja::AutoEscape::Html
        } else {
            minijinja::AutoEscape::None
        }
    });
    // Markdown table cells must not break the table (model- or plug-in-written text may appear).
    env.add_filter("cell", |s: String| s.replace('|', "\\|").replace('\n', " "));
    env.add_template("report.md.j2", include_str!("templates/report.md.j2"))
        .expect("report.md.j2 parses");
    env.add_template("report.html.j2", include_str!("templates/report.html.j2"))
        .expect("report.html.j2 parses");
    env
}

/// Renders `template` with the view and any extra context.
pub fn render(template: &str, view: &View, extra: minijinja::Value) -> Result<String, String> {
    let env = environment();
    let tmpl = env.get_template(template).map_err(|e| e.to_string())?;
    tmpl.render(
        minijinja::context! { ..extra, ..minijinja::Value::from(minijinja::value::Serde(view)) },
    )
    .map_err(|e| format!("{template}: {e:#}"))
}
