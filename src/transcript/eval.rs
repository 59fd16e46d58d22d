//! `run --transcripts DIR`: every transcript × cut × strategy (with the no-compaction baseline
//! [`BASELINE`], the full prefix as a transcript) compacted, measured offline (model
//! [`OFFLINE_MODEL`]), and for each live model of the run, on runs the source rewarded (or that
//! carry no reward), the next-action agreement. Writes `results.jsonl` (records with `source:
//! transcript`, in transcript, cut, strategy, model order) and `manifest.json` into the run
//! folder.
//!
//! Owns the cell loop and record building for transcripts. Must not: render the report (the
//! `run` command asks [`crate::report`] afterwards) or touch a simulated world.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;

use super::cuts::{Cut, WriteRule, cuts};
use super::metrics::{lost, needed_values, retention, user_statement_retention};
use super::model::{Transcript, read_dir};
use super::{TranscriptError, agree, prefix};
use crate::destination::live::{Cache, LiveClient};
use crate::handoff::Handoff;
use crate::record::{
    CellError, ErrorClass, LiveStats, Metrics, RunRecord, Source, Status, TranscriptMeasures,
};
use crate::runner::{RunConfig, cell_seed, live_model};
use crate::strategy::{Registry, Strategy, StrategyConfig, StrategyError, StrategyKind};
use crate::tokens;

/// The no-compaction baseline: the whole prefix as a transcript, no budget.
pub const BASELINE: &str = "full";
/// The model column of offline transcript cells.
pub const OFFLINE_MODEL: &str = "offline";

/// The transcript part of a run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Folder of normalised transcripts (`transcripts import --out`).
    pub dir: PathBuf,
    /// At most this many cuts per run.
    pub cuts: Option<usize>,
    pub write_rule: WriteRule,
}

/// What a transcript run did.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub runs: usize,
    pub cuts: usize,
    pub records: usize,
    pub errored: usize,
    /// Simulated destinations of the run's models, which need a scenario world and were left out.
    pub skipped_models: Vec<String>,
}

pub(crate) fn baseline_config() -> StrategyConfig {
    let mut c = StrategyConfig::builtin("A").unwrap_or_else(|| unreachable!("A is built in"));
    c.id = BASELINE.into();
    c.kind = StrategyKind::Transcript;
    c.token_budget = None;
    c.rationale = Some("the full prefix: the no-compaction baseline of transcript runs".into());
    c
}

pub(crate) fn class_of(e: &StrategyError) -> ErrorClass {
    match e {
        StrategyError::Plugin(_) => ErrorClass::Plugin,
        StrategyError::Summariser(c) => c.class,
        _ => ErrorClass::Harness,
    }
}

/// The strategies of a transcript run (the baseline first), with summarisers for `llm_summary`.
pub(crate) fn strategies(
    cfg: &RunConfig,
    registry: &Registry,
    cache: &Option<Cache>,
) -> Result<Vec<Box<dyn Strategy>>, TranscriptError> {
    let mut ids = vec![BASELINE.to_string()];
    ids.extend(cfg.strategies.iter().filter(|s| *s != BASELINE).cloned());
    if let Some(id) = ids
        .iter()
        .find(|id| crate::strategy::chain::parse(id).is_ok_and(|(_, c)| c > 1))
    {
        return Err(TranscriptError::Usage(format!(
            "`{id}`: compaction chains (--cycles) run on scenarios and on τ-bench cuts (run --tau airline), not on an imported transcript's cuts"
        )));
    }
    strategies_for(cfg, registry, cache, &ids)
}

/// The strategies `ids` (no chain ids), with summarisers for `llm_summary`.
pub(crate) fn strategies_for(
    cfg: &RunConfig,
    registry: &Registry,
    cache: &Option<Cache>,
    ids: &[String],
) -> Result<Vec<Box<dyn Strategy>>, TranscriptError> {
    let mut out = Vec::new();
    for id in ids {
        let summariser = match registry
            .config(id)
            .filter(|c| c.kind == StrategyKind::LlmSummary)
        {
            None => None,
            Some(c) => {
                let name = c.summarizer.clone().unwrap_or_default();
                let mc = live_model(cfg, &name).ok_or_else(|| {
                    TranscriptError::Usage(format!(
                        "strategy `{id}`: summarizer `{name}` is not a configured model (add [model.{name}] to the configuration, or use openai:MODEL)"
                    ))
                })?;
                let client = LiveClient::new(mc, cache.clone())
                    .map_err(|e| TranscriptError::Usage(e.message))?;
                Some(Arc::new(client) as Arc<dyn crate::strategy::Summariser>)
            }
        };
        out.push(registry.get_with(id, summariser)?);
    }
    Ok(out)
}

/// One cut's shared facts: the state, the baseline text and the values needed.
struct CutFacts<'a> {
    t: &'a Transcript,
    cut: &'a Cut,
    state: crate::state::InterruptedState,
    full_tokens: u64,
    needed: Vec<super::metrics::NeededValue>,
    operator_tokens: u64,
}

/// The measures of a handoff, and the diagnostics' needed and lost values.
fn measures(f: &CutFacts<'_>, h: &Handoff) -> (TranscriptMeasures, Vec<String>, Vec<String>) {
    let lost_values = lost(&f.needed, &h.text);
    let m = TranscriptMeasures {
        cut_rule: f.cut.rule.as_str().into(),
        cut_before: f.cut.before,
        full_prefix_tokens: f.full_tokens,
        operator_tokens: f.operator_tokens,
        needed_value_retention: retention(&f.needed, &h.text),
        values_needed: f.needed.len() as u32,
        user_statement_retention: user_statement_retention(f.t, f.cut.at, &h.text),
        compression_ratio: if f.full_tokens == 0 {
            1.0
        } else {
            h.tokens_at_restore as f64 / f.full_tokens as f64
        },
        next_action_agrees: None,
        expected_action: None,
        actual_action: None,
        tau: None,
    };
    (
        m,
        f.needed.iter().map(|v| v.to_string()).collect(),
        lost_values.iter().map(|v| v.to_string()).collect(),
    )
}

fn metrics(restore_tokens: u64, total_tokens: u64, compaction_tokens: u64) -> Metrics {
    Metrics {
        task_success: false,
        omitted_context: 0,
        repeated_work: 0,
        duplicate_side_effects: 0,
        safety_violations: 0,
        recovery_quality: 0.0,
        restore_tokens,
        total_tokens,
        first_action_ms: 0.0,
        completion_ms: 0.0,
        compaction_tokens,
        history_tokens: 0,
        compression_ratio: 0.0,
        carried: None,
        compacted: None,
        chain: None,
        probes: Default::default(),
    }
}

fn record(f: &CutFacts<'_>, strategy: &str, model: &str, seed: u64) -> RunRecord {
    RunRecord {
        source: Source::Transcript,
        scenario: f.t.id.clone(),
        scale: crate::record::base_scale(),
        interrupt: f.cut.name.clone(),
        strategy: strategy.to_string(),
        model: model.to_string(),
        rep: 0,
        seed,
        status: Status::Ok,
        error: None,
        error_class: None,
        metrics: metrics(0, 0, 0),
        diagnostics: Default::default(),
        transcript: None,
        governed: None,
        conversation: None,
    }
}

fn errored(mut r: RunRecord, e: CellError) -> RunRecord {
    r.status = Status::Errored;
    r.error = Some(e.message);
    r.error_class = Some(e.class);
    r
}

/// Runs the transcript part of `cfg` and writes its records and manifest into `cfg.out`.
pub fn run(cfg: &RunConfig, opts: &Options) -> Result<Outcome, TranscriptError> {
    let transcripts = read_dir(&opts.dir)?;
    let registry = Registry::from_source(&cfg.strategy_dir)?
        .with_seed(cfg.seed)
        .with_hidden(crate::runner::plugin_hidden(cfg))
        .with_hidden([opts.dir.clone()])
        .with_config(baseline_config());
    let cache = (!cfg.no_cache).then(|| Cache {
        dir: cfg.cache_dir.clone().unwrap_or_else(Cache::default_dir),
    });
    let strategies = strategies(cfg, &registry, &cache)?;
    let mut outcome = Outcome::default();
    let mut live: Vec<(String, Arc<LiveClient>)> = Vec::new();
    for m in &cfg.models {
        if crate::destination::is_simulated(m) {
            outcome.skipped_models.push(m.clone());
            continue;
        }
        let mc = live_model(cfg, m).ok_or_else(|| {
            TranscriptError::Usage(format!(
                "unknown destination model `{m}` (transcript runs take live models: a [model.NAME] table or openai:MODEL)"
            ))
        })?;
        let client =
            LiveClient::new(mc, cache.clone()).map_err(|e| TranscriptError::Usage(e.message))?;
        live.push((m.clone(), Arc::new(client)));
    }
    let mut records: Vec<RunRecord> = Vec::new();
    let rt = crate::runtime::runtime()
        .map_err(|e| TranscriptError::Usage(format!("cannot start the async runtime: {e}")))?;
    for t in &transcripts {
        outcome.runs += 1;
        let operator_tokens = t.system.as_deref().map(tokens::count).unwrap_or(0);
        for cut in cuts(t, &opts.write_rule, opts.cuts) {
            outcome.cuts += 1;
            let state = prefix::state_at(t, &cut, &opts.write_rule);
            let mut facts = CutFacts {
                t,
                cut: &cut,
                state,
                full_tokens: 0,
                needed: vec![],
                operator_tokens,
            };
            let expected = agree::expected_next(t, &cut);
            let rewarded = t.reward.is_none_or(|r| r >= 1.0);
            for s in &strategies {
                let id = s.id().to_string();
                let seed = cell_seed(cfg.seed, &t.id, &cut.name, &id, OFFLINE_MODEL, 0);
                let base = record(&facts, &id, OFFLINE_MODEL, seed);
                let h = match rt.block_on(s.build(&facts.state)) {
                    Ok(h) => h,
                    Err(e) => {
                        let class = class_of(&e);
                        records.push(errored(
                            base,
                            CellError {
                                class,
                                message: e.to_string(),
                            },
                        ));
                        for (m, _) in &live {
                            let seed = cell_seed(cfg.seed, &t.id, &cut.name, &id, m, 0);
                            let r = record(&facts, &id, m, seed);
                            records.push(errored(
                                r,
                                CellError {
                                    class,
                                    message: e.to_string(),
                                },
                            ));
                        }
                        continue;
                    }
                };
                if id == BASELINE {
                    facts.full_tokens = h.tokens_at_restore;
                    facts.needed = needed_values(t, cut.at, &h.text);
                }
                let compaction = h.compaction.clone();
                let compaction_tokens = compaction
                    .as_ref()
                    .map(|c| c.input_tokens + c.output_tokens)
                    .unwrap_or(0);
                let (m, needed_values, lost_values) = measures(&facts, &h);
                let mut r = base;
                r.metrics = metrics(h.tokens_at_restore, 0, compaction_tokens);
                r.metrics.history_tokens = m.full_prefix_tokens;
                r.metrics.compression_ratio = m.compression_ratio;
                std::sync::Arc::make_mut(&mut r.diagnostics).compaction =
                    compaction.clone().map(Box::new);
                std::sync::Arc::make_mut(&mut r.diagnostics).needed_values = needed_values.clone();
                std::sync::Arc::make_mut(&mut r.diagnostics).lost_values = lost_values.clone();
                r.transcript = Some(Box::new(m.clone()));
                records.push(r);
                let Some((user, call)) = expected.filter(|_| rewarded) else {
                    continue;
                };
                for (model, client) in &live {
                    let seed = cell_seed(cfg.seed, &t.id, &cut.name, &id, model, 0);
                    let mut r = record(&facts, &id, model, seed);
                    let messages = agree::request_messages(
                        t.system.as_deref(),
                        &h,
                        user.map(|u| u.content.as_str()),
                    );
                    let tools = agree::tools_for(&facts.state, &h);
                    let mut stats = LiveStats::default();
                    let step = rt.block_on(agree::next_step(
                        client,
                        messages,
                        &tools,
                        &facts.state,
                        crate::runner::record_identity(&r),
                        seed,
                        &mut stats,
                    ));
                    let mut m = m.clone();
                    m.expected_action = Some(agree::show(&call.name, &call.arguments));
                    match step {
                        Err(e) => {
                            std::sync::Arc::make_mut(&mut r.diagnostics).compaction =
                                compaction.clone().map(Box::new);
                            std::sync::Arc::make_mut(&mut r.diagnostics).live =
                                Some(Box::new(stats));
                            records.push(errored(r, e));
                            continue;
                        }
                        Ok(agree::NextStep::Call(name, args)) => {
                            m.next_action_agrees = Some(agree::agrees(call, &name, &args));
                            m.actual_action = Some(agree::show(&name, &args));
                        }
                        Ok(agree::NextStep::Malformed(name, raw)) => {
                            m.next_action_agrees = Some(false);
                            m.actual_action =
                                Some(format!("{name} {raw} (arguments are not a JSON object)"));
                        }
                        Ok(agree::NextStep::Text) => {
                            m.next_action_agrees = Some(false);
                            m.actual_action = Some("(a text reply, no tool call)".into());
                        }
                    }
                    r.metrics = metrics(
                        h.tokens_at_restore,
                        stats.input_tokens + stats.output_tokens,
                        compaction_tokens,
                    );
                    r.metrics.history_tokens = m.full_prefix_tokens;
                    r.metrics.compression_ratio = m.compression_ratio;
                    std::sync::Arc::make_mut(&mut r.diagnostics).compaction =
                        compaction.clone().map(Box::new);
                    std::sync::Arc::make_mut(&mut r.diagnostics).needed_values =
                        needed_values.clone();
                    std::sync::Arc::make_mut(&mut r.diagnostics).lost_values = lost_values.clone();
                    std::sync::Arc::make_mut(&mut r.diagnostics).live = Some(Box::new(stats));
                    r.transcript = Some(Box::new(m));
                    records.push(r);
                }
            }
        }
    }
    outcome.records = records.len();
    outcome.errored = records
        .iter()
        .filter(|r| r.status == Status::Errored)
        .count();
    write(cfg, opts, &transcripts, &live, &records)?;
    Ok(outcome)
}

/// The error of an I/O step on `path`, for `map_err`.
pub(crate) fn io_error(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> TranscriptError {
    let path = path.to_path_buf();
    move |e: std::io::Error| TranscriptError::Io {
        path,
        message: e.to_string(),
    }
}

/// Writes `records` as the run folder's `results.jsonl`, whole or not at all (the transcript and
/// τ-bench runs share it).
pub(crate) fn write_records(
    out: &std::path::Path,
    records: &[RunRecord],
) -> Result<(), TranscriptError> {
    std::fs::create_dir_all(out).map_err(io_error(out))?;
    let mut text = String::new();
    for r in records {
        text.push_str(&serde_json::to_string(r).unwrap_or_default());
        text.push('\n');
    }
    let path = out.join("results.jsonl");
    crate::durable::write(&path, text.as_bytes()).map_err(io_error(&path))
}

fn write(
    cfg: &RunConfig,
    opts: &Options,
    transcripts: &[Transcript],
    live: &[(String, Arc<LiveClient>)],
    records: &[RunRecord],
) -> Result<(), TranscriptError> {
    let io = io_error;
    write_records(&cfg.out, records)?;
    let digests: BTreeMap<&str, String> = transcripts
        .iter()
        .map(|t| {
            let doc = serde_json::to_string(t).unwrap_or_default();
            (t.id.as_str(), crate::world::sha256_digest(doc.as_bytes()))
        })
        .collect();
    let mut strategies = vec![BASELINE.to_string()];
    strategies.extend(cfg.strategies.iter().filter(|s| *s != BASELINE).cloned());
    let mut models = vec![OFFLINE_MODEL.to_string()];
    models.extend(live.iter().map(|(m, _)| m.clone()));
    let mut m = json!({
        "tool": "compaction-eval",
        "version": env!("CARGO_PKG_VERSION"),
        "source": "transcript",
        "seed": cfg.seed,
        "config": {
            "strategies": strategies,
            "models": models,
            "transcripts": opts.dir,
            "cuts": opts.cuts,
            "write_rule": opts.write_rule.describe(),
        },
        "cells": records.len(),
        "transcript_digests": digests,
        // Where the strategies came from (`embedded v0.1.0`, or the folder's path).
        "sources": { "strategies": cfg.strategy_dir.label() },
        "tokenizer": "o200k_base",
    });
    let digest = crate::world::sha256_digest(m.to_string().as_bytes());
    m["digest"] = serde_json::Value::String(digest);
    let path = cfg.out.join("manifest.json");
    crate::durable::write(&path, &serde_json::to_vec_pretty(&m).unwrap_or_default())
        .map_err(io(&path))
}
