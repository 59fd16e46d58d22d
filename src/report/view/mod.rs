//! The report's view: everything `report.md` and `report.html` show, taken from the records,
//! the [`Summary`] and the manifest, with every number already formatted, as one serialisable
//! value that both templates (`templates/report.md.j2`, `templates/report.html.j2`) render.
//!
//! Owns: [`View`] and [`view`], which assembles it; the rows and their number formats are in
//! [`rows`], the answer's rows (summary, ranking, paired differences, domains) in [`verdicts`].
//! It selects and formats only. Must not: compute a statistic (that is
//! [`super::summarize`] and [`super::analysis`]), escape for an output format (the templates
//! do), or run a cell.

pub mod chains;
pub mod rows;
pub mod verdicts;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::record::{RunRecord, Status};
use crate::report::summary::Summary;

pub use rows::{
    BudgetView, CarriedView, CheckpointView, ConfigView, ContinuityView, CurveView, ErroredView,
    FactView, GovernanceView, GroupView, InjectionView, LiveView, PairedUnitsView, PassKView,
    ProbeView, TranscriptView, UpgradeView,
};
use rows::{checkpoint_views, config_view, fmt, governance_views, group_view, transcript_view};
pub use verdicts::{CauseView, DomainView, ExecView, PairedView, RankView};

/// `Scenarios from `embedded v0.1.0`; strategies from `strategies`.`: the sources a manifest
/// names (a scenario run's `config`, a τ-bench or transcript run's `sources`).
fn sources_line(manifest: &serde_json::Value) -> Option<String> {
    let text = |v: &serde_json::Value| v.as_str().map(str::to_string);
    let config = &manifest["config"];
    let sources = &manifest["sources"];
    let parts: Vec<String> = [
        ("scenarios", text(&config["scenario_dir"])),
        (
            "strategies",
            text(&config["strategy_dir"]).or_else(|| text(&sources["strategies"])),
        ),
        ("τ-bench data", text(&sources["tau_data"])),
    ]
    .into_iter()
    .filter_map(|(what, from)| from.map(|f| format!("{what} from `{f}`")))
    .collect();
    if parts.is_empty() {
        return None;
    }
    let line = parts.join("; ");
    let mut chars = line.chars();
    let first = chars.next().map(|c| c.to_uppercase().to_string());
    Some(format!("{}{}.", first.unwrap_or_default(), chars.as_str()))
}

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
    /// Scenarios the conclusions rest on (`8 scenarios`), and the level of every interval.
    pub scenarios: String,
    pub confidence: String,
    pub alpha: String,
    /// The answer first: per destination, and the most common failure per strategy.
    pub executive: Vec<ExecView>,
    pub causes: Vec<CauseView>,
    pub ranking: Vec<RankView>,
    pub domains: Vec<DomainView>,
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
    /// What each strategy's handoffs carry, per destination (empty without scenario cells).
    pub carried: Vec<CarriedView>,
    /// Probe accuracy per strategy × destination (empty when no cell answered probes).
    pub probes: Vec<ProbeView>,
    pub continuity: Vec<ContinuityView>,
    pub checkpoints: Vec<CheckpointView>,
    pub errored: Vec<ErroredView>,
    /// The compaction curve (empty when the run has one scale only).
    pub curve: Vec<CurveView>,
    /// Compaction chains per strategy × destination × compactions (empty without a chain).
    pub chains: Vec<chains::ChainView>,
    /// Each chain against its single compaction on the same cells.
    pub chain_paired: Vec<chains::ChainPairedView>,
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
    /// Where the run took its scenarios, strategies and data from (`embedded v0.1.0`, or a
    /// folder's path), from the manifest; `None` for a manifest that does not say.
    pub sources: Option<String>,
    /// `class: n; …` over every errored cell (empty without any).
    pub errored_classes: String,
    /// One row per live model (empty for an offline run).
    pub live: Vec<LiveView>,
    /// Each sim's agreement with each live model (empty unless the run has both).
    pub agreement: Vec<AgreementView>,
    /// Whether the run folder has its own `calibration.md` to link to.
    pub calibration_file: bool,
    /// How far the simulated verdicts are known to hold ([`crate::report::calibration::trust_line`]);
    /// `None` for a run without a simulated destination.
    pub trust: Option<String>,
    /// The live destinations' health ([`crate::health`]): figures, and why a ranking is not
    /// meaningful.
    pub health: Vec<HealthView>,
}

/// One sim × live model × outcome, formatted.
#[derive(Debug, Serialize)]
pub struct AgreementView {
    pub sim: String,
    pub live: String,
    pub outcome: String,
    pub n: usize,
    pub scenarios: usize,
    pub rate: String,
    pub kappa: String,
}

/// One live destination's health, worded.
#[derive(Debug, Serialize)]
pub struct HealthView {
    pub model: String,
    pub figures: String,
    /// Empty when its ranking is meaningful.
    pub warning: String,
}

pub fn view(records: &[RunRecord], s: &Summary, manifest: &serde_json::Value) -> View {
    let ok = records.iter().filter(|r| r.status == Status::Ok).count();
    let an = &s.analysis;
    // The run's own calibration is shown in full; one read from elsewhere is only quoted.
    let own_calibration = s
        .calibration
        .as_ref()
        .filter(|_| s.calibration_from.is_none());
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
    // With each record's number in results.jsonl: the viewer's link to the cell.
    let (chain_rows, chain_paired) = chains::views(s);
    let errored: Vec<(usize, &RunRecord)> = records
        .iter()
        .enumerate()
        .filter(|(_, r)| r.status == Status::Errored)
        .collect();
    View {
        sources: sources_line(manifest),
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
        scenarios: format!(
            "{} scenario{}",
            s.scenarios,
            if s.scenarios == 1 { "" } else { "s" }
        ),
        confidence: format!("{:.0}%", (1.0 - s.alpha) * 100.0),
        alpha: format!("{}", s.alpha),
        executive: verdicts::exec_views(s),
        causes: verdicts::cause_views(s),
        ranking: verdicts::rank_views(s),
        domains: verdicts::domain_views(s),
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
        paired: verdicts::paired_views(s),
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
        probes: s
            .by_strategy_model
            .iter()
            .filter_map(ProbeView::of)
            .collect(),
        carried: s
            .by_strategy_model
            .iter()
            .filter_map(CarriedView::of)
            .collect(),
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
        chains: chain_rows,
        chain_paired,
        curve: if crate::report::curve::has_scales(&s.curve) {
            s.curve
                .iter()
                .map(|p| CurveView {
                    model: p.model.clone(),
                    strategy: p.strategy.clone(),
                    scale: p.scale.clone(),
                    n: p.n,
                    history_tokens: format!("{:.0}", p.history_tokens),
                    safe_success: format!("{:.2}", p.safe_success),
                    ci: p
                        .safe_success_ci
                        .map(|(l, h)| format!("{l:.2}–{h:.2}"))
                        .unwrap_or_default(),
                    task_success: format!("{:.2}", p.task_success),
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
            .map(|&(i, r)| ErroredView {
                link: crate::viewer::link(i + 1),
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
        agreement: own_calibration
            .iter()
            .flat_map(|c| &c.pairs)
            .flat_map(|p| {
                p.metrics.iter().map(|m| AgreementView {
                    sim: p.sim.clone(),
                    live: p.live.clone(),
                    outcome: m.metric.clone(),
                    n: m.n,
                    scenarios: p.scenarios,
                    rate: format!("{:.2}", m.rate),
                    kappa: crate::report::calibration::kappa_text(m),
                })
            })
            .collect(),
        calibration_file: own_calibration.is_some(),
        trust: records
            .iter()
            .any(|r| r.model.starts_with("sim:"))
            .then(|| {
                crate::report::calibration::trust_line(
                    s.calibration.as_ref(),
                    s.calibration_from.as_deref(),
                )
            }),
        health: crate::health::assess(records)
            .iter()
            .map(|h| HealthView {
                model: h.model.clone(),
                figures: h.figures(),
                warning: h.warning(),
            })
            .collect(),
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
