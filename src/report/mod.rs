//! Run outputs generated from saved records: `runs.csv`, `summary.csv`, `summary.json`,
//! `report.md`, `report.html` and `plots/`. This module owns the [`Summary`] (aggregates and the
//! seed-003 ranking), the CSV/JSON exports, [`render_dir`], which writes them all, and its
//! error type [`ReportError`]; the statistics are in [`analysis`] and the shared paired
//! comparison of [`crate::results::paired`], what the reports show in [`view`], the Markdown and
//! HTML in `markdown` and [`html`], the charts in [`plots`].
//!
//! Everything here reads only the records, `continuity.jsonl` and the manifest, so a report can
//! be re-rendered without running a cell; nothing here runs a cell or changes a record.

pub mod analysis;
pub mod compare;
pub mod curve;
pub mod governance;
pub mod html;
mod markdown;
pub mod plots;
pub mod transcripts;
pub mod view;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::record::{RecordError, RunRecord, Status, read_records};
use crate::results::{ResultsError, check_count, read_continuity, scenario_cells};
use crate::stats::{Rate, Spread};

/// Why a run folder's report could not be written, with messages for the user.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// `results.jsonl` is missing, unreadable, corrupt or holds a cell twice.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The run folder is incomplete, or `continuity.jsonl` or `manifest.json` is corrupt.
    #[error(transparent)]
    Results(#[from] ResultsError),
    /// An export, a plot or the page could not be rendered.
    #[error("{0}")]
    Render(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Aggregates of one group of cells.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    pub strategy: String,
    pub model: String,
    /// `None` for the strategy × model aggregate over all interrupt points.
    pub interrupt: Option<String>,
    pub n: usize,
    pub errored: usize,
    pub task_success: Rate,
    pub omitted_context: Option<Spread>,
    pub repeated_work: Option<Spread>,
    pub duplicate_side_effects: Option<Spread>,
    /// Cells with any duplicate side effect.
    pub cells_with_duplicates: usize,
    pub safety_violations: Option<Spread>,
    pub cells_with_violations: usize,
    pub recovery_quality: Option<Spread>,
    pub restore_tokens: Option<Spread>,
    pub total_tokens: Option<Spread>,
    /// Wall time of the ok cells that made all their calls this run (cells answered from the
    /// response cache are left out: their time is not a measurement).
    pub completion_ms: Option<Spread>,
    /// Live destinations: the group's calls, retries, tokens and cost, errored cells included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveTotals>,
}

/// What the live cells of a group (or a model) spent, errored cells included.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LiveTotals {
    /// Cells with live diagnostics.
    pub cells: usize,
    pub errored: usize,
    /// Errored cells by class (`infrastructure`, `request_rejected`, …), classes with none left out.
    pub errored_by_class: BTreeMap<String, usize>,
    /// Cells with a call answered from the response cache.
    pub cached_cells: usize,
    pub stats: crate::record::LiveStats,
}

impl LiveTotals {
    /// The live totals of `records` (`None` when none is a live cell).
    pub fn of<'a>(records: impl IntoIterator<Item = &'a RunRecord>) -> Option<LiveTotals> {
        let mut t = LiveTotals::default();
        for r in records {
            let Some(l) = &r.diagnostics.live else {
                continue;
            };
            t.cells += 1;
            if r.status == Status::Errored {
                t.errored += 1;
                if let Some(c) = r.error_class {
                    *t.errored_by_class
                        .entry(c.as_str().to_string())
                        .or_default() += 1;
                }
            }
            if l.from_cache() {
                t.cached_cells += 1;
            }
            t.stats.add(l);
        }
        (t.cells > 0).then_some(t)
    }

    /// `class: n; class: n`, or empty.
    pub fn classes(&self) -> String {
        self.errored_by_class
            .iter()
            .map(|(c, n)| format!("{c}: {n}"))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Errored cells by class over a run (every errored cell, live or not).
pub fn errored_by_class(records: &[RunRecord]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for r in records.iter().filter(|r| r.status == Status::Errored) {
        let c = r.error_class.map(|c| c.as_str()).unwrap_or("unclassified");
        *m.entry(c.to_string()).or_default() += 1;
    }
    m
}

/// The live figures of one destination or summariser model.
#[derive(Debug, Clone, Serialize)]
pub struct LiveModelRow {
    pub model: String,
    pub totals: LiveTotals,
    /// Median wall time of its ok cells measured this run (no cache hit), ms.
    pub median_completion_ms: Option<f64>,
}

/// The summary of a run.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub by_strategy_model: Vec<Group>,
    pub by_strategy_model_interrupt: Vec<Group>,
    /// Strategy × model in the seed's ranking order.
    pub ranking: Vec<RankRow>,
    /// Facts most often lost per strategy: (strategy, fact id, count).
    pub lost_facts: Vec<(String, String, usize)>,
    /// Provenance upgrades in handoff texts per strategy: (strategy, upgrade kind, cells).
    pub provenance_upgrades: Vec<(String, String, usize)>,
    /// The seed-000 required eval per strategy (empty when the run folder has no
    /// `continuity.jsonl`).
    pub continuity: Vec<ContinuityRow>,
    /// Intervals, pass^k, injection numbers, paired comparisons.
    pub analysis: analysis::Analysis,
    /// The compaction curve: per destination × strategy × history scale.
    pub curve: Vec<curve::CurvePoint>,
    /// Each strategy X against `gov:X` on the same cells (seed 004), with the paired test.
    pub governance: Vec<governance::GovernanceRow>,
    /// Where governed strategies block: required bytes and blocked cells per budget.
    pub governance_budgets: Vec<governance::BudgetRow>,
    /// Cells on imported transcripts (`source: transcript`), per strategy × model; the groups
    /// above count scenario cells only.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub transcripts: Vec<transcripts::TranscriptGroup>,
    /// Per live destination model: calls, retries, malformed tool calls, text-only turns,
    /// tokens, cost, errored cells by class (empty for an offline run).
    pub live: Vec<LiveModelRow>,
    /// Errored cells by class over the whole run.
    pub errored_by_class: BTreeMap<String, usize>,
}

/// The same-or-stricter continuity eval of one strategy over every scenario × interrupt point.
#[derive(Debug, Clone, Serialize)]
pub struct ContinuityRow {
    pub strategy: String,
    pub passed: usize,
    pub total: usize,
    /// `scenario · point: full → compacted (why)` for each failure.
    pub failures: Vec<String>,
}

/// Aggregates `continuity.jsonl` per strategy, in first-seen order.
pub fn summarize_continuity(evals: &[crate::continuity::ContinuityEval]) -> Vec<ContinuityRow> {
    let mut rows: Vec<ContinuityRow> = Vec::new();
    for e in evals {
        let i = match rows.iter().position(|r| r.strategy == e.strategy) {
            Some(i) => i,
            None => {
                rows.push(ContinuityRow {
                    strategy: e.strategy.clone(),
                    passed: 0,
                    total: 0,
                    failures: vec![],
                });
                rows.len() - 1
            }
        };
        let r = &mut rows[i];
        r.total += 1;
        if e.passed {
            r.passed += 1;
        } else {
            r.failures.push(format!(
                "{} · {}: {} → {} ({})",
                e.scenario,
                e.interrupt,
                e.full_decision,
                e.compacted_decision,
                e.violations.join("; ")
            ));
        }
    }
    rows
}

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

fn group(records: &[&RunRecord], strategy: &str, model: &str, interrupt: Option<&str>) -> Group {
    let ok: Vec<&&RunRecord> = records.iter().filter(|r| r.status == Status::Ok).collect();
    let col =
        |f: &dyn Fn(&RunRecord) -> f64| Spread::of(&ok.iter().map(|r| f(r)).collect::<Vec<_>>());
    Group {
        strategy: strategy.to_string(),
        model: model.to_string(),
        interrupt: interrupt.map(str::to_string),
        n: ok.len(),
        errored: records.len() - ok.len(),
        task_success: Rate::of(
            ok.iter().filter(|r| r.metrics.task_success).count(),
            ok.len(),
        ),
        omitted_context: col(&|r| r.metrics.omitted_context as f64),
        repeated_work: col(&|r| r.metrics.repeated_work as f64),
        duplicate_side_effects: col(&|r| r.metrics.duplicate_side_effects as f64),
        cells_with_duplicates: ok
            .iter()
            .filter(|r| r.metrics.duplicate_side_effects > 0)
            .count(),
        safety_violations: col(&|r| r.metrics.safety_violations as f64),
        cells_with_violations: ok
            .iter()
            .filter(|r| r.metrics.safety_violations > 0)
            .count(),
        recovery_quality: col(&|r| r.metrics.recovery_quality),
        restore_tokens: col(&|r| r.metrics.restore_tokens as f64),
        total_tokens: col(&|r| r.metrics.total_tokens as f64),
        completion_ms: Spread::of(
            &ok.iter()
                .filter(|r| !r.diagnostics.live.as_ref().is_some_and(|l| l.from_cache()))
                .map(|r| r.metrics.completion_ms)
                .collect::<Vec<_>>(),
        ),
        live: LiveTotals::of(records.iter().copied()),
    }
}

/// Aggregates records; groups follow the order in which strategies and models first appear.
/// Transcript cells go to [`Summary::transcripts`] only.
pub fn summarize(all: &[RunRecord]) -> Summary {
    let scenario_records = scenario_cells(all);
    let records = scenario_records.as_slice();
    let mut order: Vec<(String, String)> = Vec::new();
    let mut by_sm: BTreeMap<(String, String), Vec<&RunRecord>> = BTreeMap::new();
    let mut by_smi: BTreeMap<(String, String, String), Vec<&RunRecord>> = BTreeMap::new();
    let mut points: Vec<String> = Vec::new();
    for r in records {
        let k = (r.strategy.clone(), r.model.clone());
        if !order.contains(&k) {
            order.push(k.clone());
        }
        if !points.contains(&r.interrupt) {
            points.push(r.interrupt.clone());
        }
        by_sm.entry(k).or_default().push(r);
        by_smi
            .entry((r.strategy.clone(), r.model.clone(), r.interrupt.clone()))
            .or_default()
            .push(r);
    }
    let by_strategy_model: Vec<Group> = order
        .iter()
        .map(|(s, m)| group(&by_sm[&(s.clone(), m.clone())], s, m, None))
        .collect();
    let mut by_strategy_model_interrupt = Vec::new();
    for (s, m) in &order {
        for p in &points {
            if let Some(rs) = by_smi.get(&(s.clone(), m.clone(), p.clone())) {
                by_strategy_model_interrupt.push(group(rs, s, m, Some(p)));
            }
        }
    }
    // Seed 003's rule: any duplicate side effect or safety violation ranks a strategy below every
    // strategy with none, regardless of tokens; then task success, then fewer restore tokens.
    let mut ranking: Vec<RankRow> = by_strategy_model
        .iter()
        .map(|g| RankRow {
            rank: 0,
            strategy: g.strategy.clone(),
            model: g.model.clone(),
            unsafe_cells: by_sm[&(g.strategy.clone(), g.model.clone())]
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
    let mut lost: BTreeMap<(String, String), usize> = BTreeMap::new();
    for r in records.iter().filter(|r| r.status == Status::Ok) {
        for o in &r.diagnostics.omitted {
            *lost
                .entry((r.strategy.clone(), format!("{}/{}", r.scenario, o.fact)))
                .or_default() += 1;
        }
    }
    let mut upgrades: BTreeMap<(String, String), usize> = BTreeMap::new();
    for r in records.iter().filter(|r| r.status == Status::Ok) {
        let kinds: std::collections::BTreeSet<&str> = r
            .diagnostics
            .provenance_upgrades
            .iter()
            .filter_map(|u| u.split_once(": ").map(|(_, k)| k))
            .collect();
        for k in kinds {
            *upgrades
                .entry((r.strategy.clone(), k.to_string()))
                .or_default() += 1;
        }
    }
    let provenance_upgrades: Vec<(String, String, usize)> =
        upgrades.into_iter().map(|((s, k), n)| (s, k, n)).collect();
    let mut lost_facts: Vec<(String, String, usize)> =
        lost.into_iter().map(|((s, f), n)| (s, f, n)).collect();
    lost_facts.sort_by(|a, b| a.0.cmp(&b.0).then(b.2.cmp(&a.2)).then(a.1.cmp(&b.1)));
    let mut live_models: Vec<String> = Vec::new();
    for r in records.iter().filter(|r| r.diagnostics.live.is_some()) {
        if !live_models.contains(&r.model) {
            live_models.push(r.model.clone());
        }
    }
    let live = live_models
        .into_iter()
        .filter_map(|m| {
            let of_model: Vec<&RunRecord> = records.iter().filter(|r| r.model == m).collect();
            let totals = LiveTotals::of(of_model.iter().copied())?;
            let measured: Vec<f64> = of_model
                .iter()
                .filter(|r| {
                    r.status == Status::Ok
                        && !r.diagnostics.live.as_ref().is_some_and(|l| l.from_cache())
                })
                .map(|r| r.metrics.completion_ms)
                .collect();
            Some(LiveModelRow {
                model: m,
                totals,
                median_completion_ms: Spread::of(&measured).map(|s| s.median),
            })
        })
        .collect();
    Summary {
        by_strategy_model,
        by_strategy_model_interrupt,
        ranking,
        lost_facts,
        provenance_upgrades,
        continuity: Vec::new(),
        analysis: analysis::Analysis::default(),
        curve: curve::curve(records),
        governance: governance::compare(records),
        governance_budgets: governance::budgets(records),
        transcripts: transcripts::summarize(all),
        live,
        errored_by_class: errored_by_class(records),
    }
}

/// One output format.
pub trait Export {
    fn file_name(&self) -> &'static str;
    fn render(
        &self,
        records: &[RunRecord],
        summary: &Summary,
        manifest: &serde_json::Value,
    ) -> Result<Vec<u8>, String>;
}

/// `runs.csv`: one tidy row per cell.
pub struct RunsCsv;
/// `summary.csv`: one row per group.
pub struct SummaryCsv;
/// `summary.json`.
pub struct SummaryJson;
pub use markdown::MarkdownReport;

/// One row of `runs.csv`: its fields, in order and by name, are the file's columns
/// (docs/record-contract.md, "`runs.csv` columns"); a column that does not apply to a cell is
/// empty (`None`). Numbers with a fixed precision are written as text.
#[derive(Serialize, Default)]
struct RunRow<'a> {
    scenario: &'a str,
    scale: &'a str,
    interrupt: &'a str,
    strategy: &'a str,
    model: &'a str,
    rep: u32,
    seed: u64,
    status: Option<Status>,
    error: &'a str,
    task_success: bool,
    omitted_context: u32,
    repeated_work: u32,
    duplicate_side_effects: u32,
    safety_violations: u32,
    /// `{:.4}`.
    recovery_quality: String,
    restore_tokens: u64,
    total_tokens: u64,
    /// `{:.3}`, ms.
    first_action_ms: String,
    /// `{:.3}`, ms.
    completion_ms: String,
    history_tokens: u64,
    /// `{:.4}`; a transcript cell's `transcript.compression_ratio`.
    compression_ratio: String,
    context_overflow: bool,
    source: Option<crate::record::Source>,
    needed_value_retention: Option<String>,
    user_statement_retention: Option<String>,
    next_action_agrees: Option<bool>,
    error_class: Option<crate::record::ErrorClass>,
    steps: u32,
    live_calls: Option<u32>,
    live_requests: Option<u32>,
    live_retries: Option<u32>,
    cache_hits: Option<u32>,
    malformed_tool_calls: Option<u32>,
    unknown_tools: Option<u32>,
    text_only_turns: Option<u32>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    /// `{:.6}`.
    cost_usd: Option<String>,
    /// `diagnostics.live.latency_ms`, `{:.3}`.
    model_latency_ms: Option<String>,
    governed_status: Option<crate::governed::ContextStatus>,
    /// The block reasons, space-separated.
    governed_reasons: Option<String>,
    governed_bytes: Option<u64>,
    governed_max_bytes: Option<u64>,
    governed_held: Option<bool>,
}

impl<'a> RunRow<'a> {
    fn of(r: &'a RunRecord) -> RunRow<'a> {
        let m = &r.metrics;
        let t = r.transcript.as_ref();
        let l = r.diagnostics.live.as_ref();
        let g = r.governed.as_ref();
        let fixed4 = |x: f64| format!("{x:.4}");
        RunRow {
            scenario: &r.scenario,
            scale: &r.scale,
            interrupt: &r.interrupt,
            strategy: &r.strategy,
            model: &r.model,
            rep: r.rep,
            seed: r.seed,
            status: Some(r.status),
            error: r.error.as_deref().unwrap_or_default(),
            task_success: m.task_success,
            omitted_context: m.omitted_context,
            repeated_work: m.repeated_work,
            duplicate_side_effects: m.duplicate_side_effects,
            safety_violations: m.safety_violations,
            recovery_quality: fixed4(m.recovery_quality),
            restore_tokens: m.restore_tokens,
            total_tokens: m.total_tokens,
            first_action_ms: format!("{:.3}", m.first_action_ms),
            completion_ms: format!("{:.3}", m.completion_ms),
            history_tokens: m.history_tokens,
            compression_ratio: fixed4(
                t.map(|t| t.compression_ratio)
                    .unwrap_or(m.compression_ratio),
            ),
            context_overflow: r.diagnostics.context_overflow.is_some(),
            source: Some(r.source),
            needed_value_retention: t.and_then(|t| t.needed_value_retention).map(fixed4),
            user_statement_retention: t.and_then(|t| t.user_statement_retention).map(fixed4),
            next_action_agrees: t.and_then(|t| t.next_action_agrees),
            error_class: r.error_class,
            steps: r.diagnostics.steps,
            live_calls: l.map(|l| l.calls),
            live_requests: l.map(|l| l.requests),
            live_retries: l.map(|l| l.retries),
            cache_hits: l.map(|l| l.cache_hits),
            malformed_tool_calls: l.map(|l| l.malformed_tool_calls),
            unknown_tools: l.map(|l| l.unknown_tools),
            text_only_turns: l.map(|l| l.text_only_turns),
            input_tokens: l.map(|l| l.input_tokens),
            output_tokens: l.map(|l| l.output_tokens),
            cost_usd: l.and_then(|l| l.cost_usd).map(|c| format!("{c:.6}")),
            model_latency_ms: l.map(|l| format!("{:.3}", l.latency_ms)),
            governed_status: g.map(|g| g.status),
            governed_reasons: g.map(|g| {
                g.reasons
                    .iter()
                    .filter_map(|r| {
                        serde_json::to_value(r)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            }),
            governed_bytes: g.map(|g| g.bytes.total),
            governed_max_bytes: g.map(|g| g.max_bytes),
            governed_held: g.map(|g| g.held),
        }
    }
}

impl Export for RunsCsv {
    fn file_name(&self) -> &'static str {
        "runs.csv"
    }
    fn render(
        &self,
        records: &[RunRecord],
        _: &Summary,
        _: &serde_json::Value,
    ) -> Result<Vec<u8>, String> {
        let mut w = csv::Writer::from_writer(Vec::new());
        for r in records {
            w.serialize(RunRow::of(r)).map_err(|e| e.to_string())?;
        }
        let mut bytes = w.into_inner().map_err(|e| e.to_string())?;
        if records.is_empty() {
            // The header alone: what `serialize` writes above the first row.
            let mut probe = csv::Writer::from_writer(Vec::new());
            probe
                .serialize(RunRow::default())
                .map_err(|e| e.to_string())?;
            let probe = probe.into_inner().map_err(|e| e.to_string())?;
            let end = probe
                .iter()
                .position(|&b| b == b'\n')
                .map_or(probe.len(), |i| i + 1);
            bytes = probe[..end].to_vec();
        }
        Ok(bytes)
    }
}

fn spread_cols(s: &Option<Spread>) -> [String; 5] {
    match s {
        Some(s) => [s.median, s.q1, s.q3, s.min, s.max].map(|x| format!("{x}")),
        None => Default::default(),
    }
}

impl Export for SummaryCsv {
    fn file_name(&self) -> &'static str {
        "summary.csv"
    }
    fn render(
        &self,
        _: &[RunRecord],
        s: &Summary,
        _: &serde_json::Value,
    ) -> Result<Vec<u8>, String> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let metrics = [
            "omitted_context",
            "repeated_work",
            "duplicate_side_effects",
            "safety_violations",
            "recovery_quality",
            "restore_tokens",
            "total_tokens",
        ];
        let mut header = vec![
            "strategy".to_string(),
            "model".into(),
            "interrupt".into(),
            "n".into(),
            "errored".into(),
            "task_success_rate".into(),
        ];
        for m in metrics {
            for stat in ["median", "q1", "q3", "min", "max"] {
                header.push(format!("{m}_{stat}"));
            }
        }
        for c in [
            "live_calls",
            "live_retries",
            "malformed_tool_calls",
            "text_only_turns",
            "input_tokens",
            "output_tokens",
            "cost_usd",
            "errored_by_class",
        ] {
            header.push(c.into());
        }
        w.write_record(&header).map_err(|e| e.to_string())?;
        for g in s
            .by_strategy_model
            .iter()
            .chain(&s.by_strategy_model_interrupt)
        {
            let mut row = vec![
                g.strategy.clone(),
                g.model.clone(),
                g.interrupt.clone().unwrap_or_else(|| "all".into()),
                g.n.to_string(),
                g.errored.to_string(),
                format!("{}", g.task_success.rate),
            ];
            for sp in [
                &g.omitted_context,
                &g.repeated_work,
                &g.duplicate_side_effects,
                &g.safety_violations,
                &g.recovery_quality,
                &g.restore_tokens,
                &g.total_tokens,
            ] {
                row.extend(spread_cols(sp));
            }
            match &g.live {
                Some(t) => row.extend([
                    t.stats.calls.to_string(),
                    t.stats.retries.to_string(),
                    t.stats.malformed_tool_calls.to_string(),
                    t.stats.text_only_turns.to_string(),
                    t.stats.input_tokens.to_string(),
                    t.stats.output_tokens.to_string(),
                    t.stats
                        .cost_usd
                        .map(|c| format!("{c:.6}"))
                        .unwrap_or_default(),
                    t.classes(),
                ]),
                None => row.extend(std::iter::repeat_n(String::new(), 8)),
            }
            w.write_record(&row).map_err(|e| e.to_string())?;
        }
        w.into_inner().map_err(|e| e.to_string())
    }
}

impl Export for SummaryJson {
    fn file_name(&self) -> &'static str {
        "summary.json"
    }
    fn render(
        &self,
        _: &[RunRecord],
        s: &Summary,
        _: &serde_json::Value,
    ) -> Result<Vec<u8>, String> {
        serde_json::to_vec_pretty(s).map_err(|e| e.to_string())
    }
}

/// A rendered file with every secret of the run redacted (the records already are; this also
/// covers anything else a template quotes).
fn redact_bytes(bytes: Vec<u8>) -> Vec<u8> {
    if !crate::secrets::any() {
        return bytes;
    }
    match String::from_utf8(bytes) {
        Ok(t) => crate::secrets::redact_text(&t).into_owned().into_bytes(),
        Err(e) => e.into_bytes(),
    }
}

/// Writes every export into `dir` from the records there and the manifest, with the default
/// analysis options and the run's seed.
pub fn render_dir(dir: &Path) -> Result<Summary, ReportError> {
    render_dir_with(dir, None)
}

/// As [`render_dir`], with explicit analysis options (`None`: reference C, 1000 resamples, the
/// manifest's seed).
pub fn render_dir_with(
    dir: &Path,
    opts: Option<&analysis::ReportOptions>,
) -> Result<Summary, ReportError> {
    let records = read_records(&dir.join("results.jsonl"))?;
    let manifest_path = dir.join("manifest.json");
    let manifest: serde_json::Value = match std::fs::read_to_string(&manifest_path) {
        Ok(t) => serde_json::from_str(&t).map_err(|e| ResultsError::Corrupt {
            path: manifest_path.clone(),
            line: e.line(),
            message: e.to_string(),
        })?,
        Err(_) => serde_json::Value::Null,
    };
    crate::secrets::load_manifest(&manifest);
    check_count(dir, &records, &manifest)?;
    let mut summary = summarize(&records);
    summary.continuity = summarize_continuity(&read_continuity(dir)?);
    let opts = match opts {
        Some(o) => o.clone(),
        None => analysis::ReportOptions {
            seed: manifest
                .get("seed")
                .and_then(|v| v.as_u64())
                .unwrap_or(crate::DEFAULT_SEED),
            ..Default::default()
        },
    };
    let scenario_records = scenario_cells(&records);
    summary.analysis = analysis::analyse(&scenario_records, &opts);
    let exports: [&dyn Export; 4] = [&RunsCsv, &SummaryCsv, &SummaryJson, &MarkdownReport];
    for e in exports {
        let bytes = redact_bytes(
            e.render(&records, &summary, &manifest)
                .map_err(ReportError::Render)?,
        );
        let p = dir.join(e.file_name());
        std::fs::write(&p, &bytes).map_err(|source| ReportError::Io { path: p, source })?;
    }
    let plots = render_plots(&scenario_records, &summary)
        .map_err(|e| ReportError::Render(e.to_string()))?;
    let plot_dir = dir.join("plots");
    for p in &plots {
        plots::write(&plot_dir, p).map_err(|source| ReportError::Io {
            path: plot_dir.clone(),
            source,
        })?;
    }
    let page = html::page(&records, &summary, &manifest, &plots).map_err(ReportError::Render)?;
    let p = dir.join("report.html");
    std::fs::write(&p, redact_bytes(page.into_bytes()))
        .map_err(|source| ReportError::Io { path: p, source })?;
    Ok(summary)
}

/// The four plots of a report, from saved records and their summary.
pub fn render_plots(
    records: &[RunRecord],
    s: &Summary,
) -> Result<Vec<plots::Plot>, plots::PlotError> {
    let ci = |g: &Group| {
        s.analysis
            .intervals
            .iter()
            .find(|i| i.strategy == g.strategy && i.model == g.model && i.interrupt.is_none())
            .and_then(|i| i.task_success_ci)
    };
    let bars: Vec<plots::Bar> = s
        .by_strategy_model
        .iter()
        .filter(|g| g.n > 0)
        .map(|g| {
            let (low, high) = ci(g).unwrap_or((g.task_success.rate, g.task_success.rate));
            plots::Bar {
                label: format!("{} · {}", g.strategy, g.model),
                colour: g.strategy.clone(),
                value: g.task_success.rate,
                low,
                high,
            }
        })
        .collect();
    let points: Vec<plots::Point> = s
        .by_strategy_model
        .iter()
        .filter_map(|g| {
            Some(plots::Point {
                label: format!("{} · {}", g.strategy, g.model),
                colour: g.strategy.clone(),
                marker: g.model.clone(),
                x: g.restore_tokens?.median,
                y: g.task_success.rate,
            })
        })
        .collect();
    let mut heat: Vec<plots::HeatCell> = Vec::new();
    for r in records.iter().filter(|r| r.status == Status::Ok) {
        let v = f64::from(r.metrics.safety_violations + r.metrics.duplicate_side_effects);
        match heat
            .iter_mut()
            .find(|c| c.row == r.strategy && c.col == r.interrupt)
        {
            Some(c) => c.value += v,
            None => heat.push(plots::HeatCell {
                row: r.strategy.clone(),
                col: r.interrupt.clone(),
                value: v,
            }),
        }
    }
    let mut dists: Vec<plots::Distribution> = Vec::new();
    for r in records.iter().filter(|r| r.status == Status::Ok) {
        match dists.iter_mut().find(|d| d.label == r.strategy) {
            Some(d) => d.values.push(r.metrics.total_tokens as f64),
            None => dists.push(plots::Distribution {
                label: r.strategy.clone(),
                values: vec![r.metrics.total_tokens as f64],
            }),
        }
    }
    Ok(vec![
        plots::success_bars(
            "Task success by strategy × destination (Wilson 95% CI)",
            &bars,
        )?,
        plots::cost_quality(
            "Restore tokens against task success (median per strategy × destination)",
            &points,
        )?,
        plots::safety_heatmap(
            "Safety violations + duplicate side effects by strategy × interrupt point",
            &heat,
        )?,
        plots::token_distributions("Total tokens to completion per strategy", &dists)?,
        plots::compaction_curve(
            "Compaction curve: task success (solid, Wilson 95%), unsafe cells (dashed)",
            &curve_series(&s.curve, false),
        )?,
        plots::restore_curve(
            "Restore tokens against full-history tokens",
            &curve_series(&s.curve, true),
        )?,
    ])
}

/// The curve's points as line series: per destination (panel) and strategy (colour), task
/// success with its interval and the unsafe-cell rate (dashed) — or, with `restore`, median
/// restore tokens.
fn curve_series(points: &[curve::CurvePoint], restore: bool) -> Vec<plots::Series> {
    let mut out: Vec<plots::Series> = Vec::new();
    for p in points {
        let x = p.history_tokens;
        let mut push = |dashed: bool, pt: (f64, f64, f64, f64)| match out
            .iter_mut()
            .find(|s| s.panel == p.model && s.line == p.strategy && s.dashed == dashed)
        {
            Some(s) => s.points.push(pt),
            None => out.push(plots::Series {
                panel: p.model.clone(),
                line: p.strategy.clone(),
                dashed,
                points: vec![pt],
            }),
        };
        if restore {
            push(
                false,
                (x, p.restore_tokens, p.restore_tokens, p.restore_tokens),
            );
        } else {
            let (lo, hi) = p
                .task_success_ci
                .unwrap_or((p.task_success, p.task_success));
            push(false, (x, p.task_success, lo, hi));
            let u = p.unsafe_cells as f64 / p.n.max(1) as f64;
            push(true, (x, u, u, u));
        }
    }
    out
}
