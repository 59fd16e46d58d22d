//! The τ-bench cell loop: successful recorded run × cut × strategy × destination × rep, each
//! continued on a fresh episode of the run's own task (`info.task`), appended to the journal the
//! moment it finishes and, at the end, written as a `source: tau` record of `results.jsonl`; then
//! the manifest.
//!
//! Owns the loop, `--resume` and `--shard` for these cells, and record building. Must not:
//! decide what a destination does (`follow`, `live`) or render the report.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::json;

use super::follow::{Followed, SIM_FOLLOW, follow};
use super::live::{LiveContinuation, Lived};
use super::{Options, Outcome};
use crate::destination::live::{Cache, LiveClient};
use crate::handoff::Handoff;
use crate::record::{
    CellError, Metrics, RunRecord, Source, Status, TauMeasures, TranscriptMeasures,
};
use crate::runner::{RunConfig, cell_seed, live_model};
use crate::tau;
use crate::transcript::cuts::{Cut, WriteRule, cuts};
use crate::transcript::eval::{self, BASELINE};
use crate::transcript::metrics::{needed_values, retention, user_statement_retention};
use crate::transcript::model::Transcript;
use crate::transcript::{Format, TranscriptError, import, prefix};

fn tau_error(e: tau::TauError) -> TranscriptError {
    TranscriptError::Usage(e.to_string())
}

/// A destination of the τ-bench cells: `sim:follow` (or a profile's `notices_missing` rate,
/// `sim:fitted:PATH`), or a live model.
enum Dest {
    Follow(f64),
    Live(Arc<LiveClient>),
}

fn destinations(
    cfg: &RunConfig,
    cache: &Option<Cache>,
    outcome: &mut Outcome,
) -> Result<Vec<(String, Dest)>, TranscriptError> {
    let mut out: Vec<(String, Dest)> = Vec::new();
    for m in &cfg.models {
        if let Some(path) = crate::destination::profile::fitted_path(m) {
            let p = crate::destination::profile::Profile::load(std::path::Path::new(path))
                .map_err(|e| TranscriptError::Usage(format!("destination `{m}`: {e}")))?;
            out.push((m.clone(), Dest::Follow(p.rates.notices_missing)));
            continue;
        }
        if m == SIM_FOLLOW || crate::destination::sim_kind(m).is_some() {
            if m != SIM_FOLLOW {
                outcome.replaced_models.push(m.clone());
            }
            if !out.iter().any(|(n, _)| n == SIM_FOLLOW) {
                out.push((SIM_FOLLOW.to_string(), Dest::Follow(1.0)));
            }
            continue;
        }
        let mc = live_model(cfg, m).ok_or_else(|| {
            TranscriptError::Usage(format!(
                "unknown destination model `{m}` (τ-bench runs take `{SIM_FOLLOW}`, the scenario simulators (replaced by it), a [model.NAME] table or openai:MODEL)"
            ))
        })?;
        let client =
            LiveClient::new(mc, cache.clone()).map_err(|e| TranscriptError::Usage(e.message))?;
        out.push((m.clone(), Dest::Live(Arc::new(client))));
    }
    Ok(out)
}

/// The recorded runs that succeeded, as transcripts with their tasks, filtered by `opts.tasks`.
fn successful_runs(opts: &Options) -> Result<Vec<(Transcript, tau::Run)>, TranscriptError> {
    let runs = tau::load_runs(&opts.runs).map_err(tau_error)?;
    let imported = import(&opts.runs, Some(Format::TauBench), false)?;
    let mut out = Vec::new();
    for t in imported.runs {
        let Some(run) = runs.get(t.origin.position) else {
            continue;
        };
        if run.reward.is_none_or(|r| r < 1.0)
            || opts
                .tasks
                .as_ref()
                .is_some_and(|s| !s.contains(&run.task_id))
        {
            continue;
        }
        out.push((t, run.clone()));
    }
    Ok(out)
}

/// The cells already in the folder that `--resume` keeps: `results.jsonl`, then the journal of
/// the cells an interrupted run finished (its torn last line cut off); a cell's last record wins.
fn kept_records(cfg: &RunConfig) -> Result<Vec<RunRecord>, TranscriptError> {
    if !cfg.resume {
        return Ok(vec![]);
    }
    let mut records: Vec<RunRecord> = Vec::new();
    for path in [
        cfg.out.join("results.jsonl"),
        cfg.out.join(crate::runner::JOURNAL),
    ] {
        if !path.exists() {
            continue;
        }
        let io = |e: String| TranscriptError::Io {
            path: path.clone(),
            message: e,
        };
        crate::runner::repair_tail(&path).map_err(|e| io(e.to_string()))?;
        for r in crate::record::read_records(&path).map_err(|e| io(e.to_string()))? {
            match records.iter_mut().find(|k| k.id() == r.id()) {
                Some(k) => *k = r,
                None => records.push(r),
            }
        }
    }
    let path = cfg.out.join("results.jsonl");
    // The folder is rewritten with the τ-bench cells only: never drop another run's records.
    if let Some(other) = records.iter().find(|r| r.source != Source::Tau) {
        return Err(TranscriptError::Usage(format!(
            "--resume: {} holds records of a {} run (cell {}); a τ-bench run resumes only a τ-bench run folder",
            path.display(),
            other.source.as_str(),
            other.id()
        )));
    }
    Ok(records
        .into_iter()
        .filter(|r| !(cfg.rerun_errored && r.status == Status::Errored))
        .collect())
}

/// One cut's shared facts.
struct CutFacts<'a> {
    t: &'a Transcript,
    run: &'a tau::Run,
    cut: &'a Cut,
    full_tokens: u64,
    operator_tokens: u64,
    needed: Vec<crate::transcript::metrics::NeededValue>,
}

fn base_record(f: &CutFacts<'_>, strategy: &str, model: &str, rep: u32, seed: u64) -> RunRecord {
    RunRecord {
        source: Source::Tau,
        scenario: f.t.id.clone(),
        scale: crate::record::base_scale(),
        interrupt: f.cut.name.clone(),
        strategy: strategy.to_string(),
        model: model.to_string(),
        rep,
        seed,
        status: Status::Ok,
        error: None,
        error_class: None,
        metrics: Metrics {
            task_success: false,
            omitted_context: 0,
            repeated_work: 0,
            duplicate_side_effects: 0,
            safety_violations: 0,
            recovery_quality: 0.0,
            restore_tokens: 0,
            total_tokens: 0,
            first_action_ms: 0.0,
            completion_ms: 0.0,
            compaction_tokens: 0,
            history_tokens: f.full_tokens,
            compression_ratio: 0.0,
            carried: None,
            compacted: None,
            chain: None,
            probes: Default::default(),
        },
        diagnostics: Default::default(),
        transcript: None,
        governed: None,
        conversation: None,
    }
}

fn errored(mut r: RunRecord, e: &CellError) -> RunRecord {
    r.status = Status::Errored;
    r.error = Some(e.message.clone());
    r.error_class = Some(e.class);
    r
}

/// What a continuation produced, whichever destination made it.
struct Continued {
    reward: tau::Reward,
    m: TauMeasures,
    live: Option<crate::record::LiveStats>,
}

fn from_followed(f: Followed, gt: &tau::GroundTruth) -> Continued {
    let reward = f.episode.reward_against_truth(gt);
    Continued {
        m: TauMeasures {
            tool_calls: f.tool_calls,
            extra_tool_calls: f.extra_tool_calls,
            extra_user_turns: f.extra_user_turns,
            extra_tokens: f.extra_tokens,
            user_turns: f.user_turns,
            unsafe_writes: f.unsafe_writes,
            unrecovered: f.unrecovered,
            recovered: f.recovered,
            ..TauMeasures::default()
        },
        reward,
        live: None,
    }
}

fn from_lived(l: Lived, gt: &tau::GroundTruth) -> Continued {
    let reward = l.episode.reward_against_truth(gt);
    Continued {
        m: TauMeasures {
            tool_calls: l.tool_calls,
            extra_tool_calls: l.extra_tool_calls,
            extra_user_turns: l.extra_user_turns,
            extra_tokens: l.stats.input_tokens + l.stats.output_tokens,
            user_turns: l.user_turns,
            unsafe_writes: l.unsafe_writes,
            budget_exhausted: l.budget_exhausted,
            ..TauMeasures::default()
        },
        reward,
        live: Some(l.stats),
    }
}

fn scored(f: &CutFacts<'_>, mut r: RunRecord, h: &Handoff, c: Continued) -> RunRecord {
    let mut m = c.m;
    m.task_id = f.run.task_id;
    m.trial = f.run.trial;
    m.reward = c.reward.reward;
    m.r_actions = c.reward.r_actions;
    m.r_outputs = c.reward.r_outputs;
    m.safe_success = c.reward.reward >= 1.0 && m.unsafe_writes == 0;
    let compaction = h
        .compaction
        .as_ref()
        .map(|c| c.input_tokens + c.output_tokens)
        .unwrap_or(0);
    r.metrics.task_success = m.reward >= 1.0;
    r.metrics.safety_violations = m.unsafe_writes;
    r.metrics.repeated_work = m.extra_tool_calls + m.extra_user_turns;
    r.metrics.restore_tokens = h.tokens_at_restore;
    r.metrics.total_tokens = h.tokens_at_restore + m.extra_tokens;
    r.metrics.compaction_tokens = compaction;
    r.metrics.compression_ratio = if f.full_tokens == 0 {
        1.0
    } else {
        h.tokens_at_restore as f64 / f.full_tokens as f64
    };
    let lost = crate::transcript::metrics::lost(&f.needed, &h.text);
    std::sync::Arc::make_mut(&mut r.diagnostics).compaction = h.compaction.clone().map(Box::new);
    std::sync::Arc::make_mut(&mut r.diagnostics).needed_values =
        f.needed.iter().map(|v| v.to_string()).collect();
    std::sync::Arc::make_mut(&mut r.diagnostics).lost_values =
        lost.iter().map(|v| v.to_string()).collect();
    std::sync::Arc::make_mut(&mut r.diagnostics).live = c.live.map(Box::new);
    r.transcript = Some(Box::new(TranscriptMeasures {
        cut_rule: f.cut.rule.as_str().into(),
        cut_before: f.cut.before,
        full_prefix_tokens: f.full_tokens,
        operator_tokens: f.operator_tokens,
        needed_value_retention: retention(&f.needed, &h.text),
        values_needed: f.needed.len() as u32,
        user_statement_retention: user_statement_retention(f.t, f.cut.at, &h.text),
        compression_ratio: r.metrics.compression_ratio,
        next_action_agrees: None,
        expected_action: None,
        actual_action: None,
        tau: Some(m),
    }));
    r
}

/// One live τ-bench cell, with everything it reads owned, so it runs on a runtime worker.
struct LiveJob {
    live: Arc<LiveContinuation>,
    client: Arc<LiveClient>,
    t: Arc<Transcript>,
    run: Arc<tau::Run>,
    cut: Arc<Cut>,
    state: Arc<crate::state::InterruptedState>,
    h: Arc<Handoff>,
    full_tokens: u64,
    operator_tokens: u64,
    needed: Vec<crate::transcript::metrics::NeededValue>,
    gt: Arc<tau::GroundTruth>,
}

impl LiveJob {
    /// The cell's record: `r` scored, or errored with the cell's error.
    async fn continue_cell(self, r: RunRecord, episode: tau::Episode, seed: u64) -> RunRecord {
        let c = self
            .live
            .continue_cell(
                &self.client,
                super::live::Prefix {
                    t: &self.t,
                    at: self.cut.at,
                    state: &self.state,
                },
                &self.h,
                episode,
                crate::runner::record_identity(&r),
                seed,
            )
            .await;
        let facts = CutFacts {
            t: &self.t,
            run: &self.run,
            cut: &self.cut,
            full_tokens: self.full_tokens,
            operator_tokens: self.operator_tokens,
            needed: self.needed.clone(),
        };
        match c {
            Ok(l) => scored(&facts, r, &self.h, from_lived(l, &self.gt)),
            Err(e) => errored(r, &e),
        }
    }
}

/// A finished live cell, or the harness error of one that panicked.
fn joined(
    done: Result<(usize, RunRecord), tokio::task::JoinError>,
) -> Result<(usize, RunRecord), TranscriptError> {
    done.map_err(|e| TranscriptError::Usage(format!("a live τ-bench cell failed: {e}")))
}

/// Runs the τ-bench part of `cfg` and writes its records and manifest into `cfg.out`.
pub fn run(cfg: &RunConfig, opts: &Options) -> Result<Outcome, TranscriptError> {
    let env = tau::Env::load(&opts.data).map_err(tau_error)?;
    let policy = tau::load_policy(&opts.data).map_err(tau_error)?;
    let rule = WriteRule::default();
    let runs = successful_runs(opts)?;
    let registry = crate::strategy::Registry::from_source(&cfg.strategy_dir)?
        .with_seed(cfg.seed)
        .with_hidden(crate::runner::plugin_hidden(cfg))
        .with_hidden([opts.data.clone()])
        .with_config(eval::baseline_config());
    let cache = (!cfg.no_cache).then(|| Cache {
        dir: cfg.cache_dir.clone().unwrap_or_else(Cache::default_dir),
    });
    let strategies = super::chains::arms(cfg, &registry, &cache)?;
    let mut outcome = Outcome::default();
    let dests = destinations(cfg, &cache, &mut outcome)?;
    let live = Arc::new(LiveContinuation::new(
        cfg,
        opts,
        &cache,
        &policy,
        &dests_live(&dests),
    )?);
    // Live cells run concurrently (at most --concurrency at once, each model within its own
    // max_concurrency), on the runtime's workers while this loop builds the next handoffs; their
    // records are put back in cell order at the end.
    let slots = Arc::new(tokio::sync::Semaphore::new(cfg.concurrency.max(1)));
    let mut in_flight: tokio::task::JoinSet<(usize, RunRecord)> = tokio::task::JoinSet::new();
    let mut seq = 0usize;
    let runs: Vec<(Arc<Transcript>, Arc<tau::Run>)> = runs
        .into_iter()
        .map(|(t, r)| (Arc::new(t), Arc::new(r)))
        .collect();
    let kept = kept_records(cfg)?;
    let done: BTreeSet<crate::record::CellId> = kept.iter().map(RunRecord::id).collect();
    outcome.kept = kept.len();
    let mut records = Sink::open(cfg, kept)?;
    let rt = crate::runtime::runtime()
        .map_err(|e| TranscriptError::Usage(format!("cannot start the async runtime: {e}")))?;
    // One task's ground truth at a time (runs come task by task): a ground truth holds a whole
    // database, and keeping every task's would multiply the run's memory by the tasks.
    let mut gt: Option<(i64, std::sync::Arc<tau::GroundTruth>)> = None;
    for (t, run) in &runs {
        outcome.runs += 1;
        let gt_hash = match &gt {
            Some((id, truth)) if *id == run.task_id => truth.clone(),
            _ => {
                let truth =
                    std::sync::Arc::new(tau::GroundTruth::of(env.fresh_db(), &run.task.actions));
                gt = Some((run.task_id, truth.clone()));
                truth
            }
        };
        let operator_tokens = t.system.as_deref().map(crate::tokens::count).unwrap_or(0);
        let chosen: Vec<Cut> = cuts(t, &rule, None)
            .into_iter()
            .filter(|c| opts.rules.is_empty() || opts.rules.contains(&c.rule))
            .collect();
        for cut in chosen.iter().cloned() {
            outcome.cuts += 1;
            let state = Arc::new(prefix::state_at(t, &cut, &rule));
            let cut = Arc::new(cut);
            let mut facts = CutFacts {
                t,
                run,
                cut: &cut,
                full_tokens: 0,
                operator_tokens,
                needed: vec![],
            };
            for s in &strategies {
                let id = s.id.clone();
                let cells: Vec<(&String, &Dest, u32, u64)> = dests
                    .iter()
                    .flat_map(|(m, d)| (0..cfg.reps).map(move |rep| (m, d, rep)))
                    .map(|(m, d, rep)| {
                        (
                            m,
                            d,
                            rep,
                            cell_seed(cfg.seed, &t.id, &cut.name, s.seed_id(), m, rep),
                        )
                    })
                    .filter(|(m, _, rep, seed)| {
                        let r = base_record(&facts, &id, m, *rep, *seed);
                        !done.contains(&r.id())
                            && cfg.shard.as_ref().is_none_or(|sh| sh.holds(&r.id()))
                    })
                    .collect();
                // The baseline's text sets the cut's full-prefix tokens and needed values, which
                // every strategy's cells report.
                if cells.is_empty() && id != BASELINE {
                    continue;
                }
                let built = super::chains::handoff(rt, s, t, &chosen, &cut, &rule, &state);
                let (h, chain) = match built {
                    Ok(h) => h,
                    Err(e) => {
                        let e = CellError {
                            class: eval::class_of(&e),
                            message: e.to_string(),
                        };
                        for (m, _, rep, seed) in cells {
                            seq += 1;
                            let r = errored(base_record(&facts, &id, m, rep, seed), &e);
                            records.push(seq, r)?;
                        }
                        continue;
                    }
                };
                if id == BASELINE {
                    facts.full_tokens = h.tokens_at_restore;
                    facts.needed = needed_values(t, cut.at, &h.text);
                }
                let h = Arc::new(h);
                for (m, d, rep, seed) in cells {
                    seq += 1;
                    let mut r = base_record(&facts, &id, m, rep, seed);
                    r.metrics.chain = chain.clone();
                    match d {
                        Dest::Follow(notices) => {
                            let episode = env.episode(run.task.clone());
                            let c = from_followed(
                                follow(t, &cut, &h.text, &rule, episode, *notices, seed),
                                &gt_hash,
                            );
                            records.push(seq, scored(&facts, r, &h, c))?;
                        }
                        Dest::Live(client) => {
                            let mut episode = env.episode(run.task.clone());
                            super::follow::replay_prefix(t, &cut, &mut episode);
                            let job = LiveJob {
                                live: live.clone(),
                                client: client.clone(),
                                t: t.clone(),
                                run: run.clone(),
                                cut: cut.clone(),
                                state: state.clone(),
                                h: h.clone(),
                                full_tokens: facts.full_tokens,
                                operator_tokens,
                                needed: facts.needed.clone(),
                                gt: gt_hash.clone(),
                            };
                            let slot = rt
                                .block_on(slots.clone().acquire_owned())
                                .map_err(|e| TranscriptError::Usage(e.to_string()))?;
                            let n = seq;
                            in_flight.spawn_on(
                                async move {
                                    let r = job.continue_cell(r, episode, seed).await;
                                    drop(slot);
                                    (n, r)
                                },
                                rt.handle(),
                            );
                            while let Some(done) = in_flight.try_join_next() {
                                let (n, r) = joined(done)?;
                                records.push(n, r)?;
                            }
                        }
                    }
                }
            }
        }
    }
    while let Some(done) = rt.block_on(in_flight.join_next()) {
        let (n, r) = joined(done)?;
        records.push(n, r)?;
    }
    let records = records.finish()?;
    outcome.records = records.len();
    outcome.errored = records
        .iter()
        .filter(|r| r.status == Status::Errored)
        .count();
    write(cfg, opts, &strategies_of(cfg), &dests, &records)?;
    // Every record is in results.jsonl now: the journal has served.
    let journal = cfg.out.join(crate::runner::JOURNAL);
    std::fs::remove_file(&journal).map_err(crate::transcript::eval::io_error(&journal))?;
    Ok(outcome)
}

/// The run's records, each also appended to `OUT/journal.jsonl` the moment it exists, so an
/// interrupted τ-bench run loses no finished cell (`--resume` reads them back).
struct Sink {
    /// The records a resumed run kept, in their journal's order.
    records: Vec<RunRecord>,
    /// This run's records with their place in cell order (live cells finish in any order).
    fresh: Vec<(usize, RunRecord)>,
    journal: crate::runner::Journal,
    path: std::path::PathBuf,
}

impl Sink {
    fn open(cfg: &RunConfig, kept: Vec<RunRecord>) -> Result<Sink, TranscriptError> {
        std::fs::create_dir_all(&cfg.out).map_err(crate::transcript::eval::io_error(&cfg.out))?;
        let path = cfg.out.join(crate::runner::JOURNAL);
        // A fresh run starts a fresh journal; a resumed one has read it into `kept`, and the
        // journal is rewritten with them so a second interruption keeps them too.
        let io = |e: std::io::Error| TranscriptError::Io {
            path: path.clone(),
            message: e.to_string(),
        };
        let mut text = String::new();
        for r in &kept {
            text.push_str(&serde_json::to_string(r).unwrap_or_default());
            text.push('\n');
        }
        crate::durable::write(&path, text.as_bytes()).map_err(io)?;
        let journal = crate::runner::Journal::open(&path).map_err(|e| TranscriptError::Io {
            path: path.clone(),
            message: e.to_string(),
        })?;
        Ok(Sink {
            records: kept,
            fresh: Vec::new(),
            journal,
            path,
        })
    }

    fn push(&mut self, seq: usize, r: RunRecord) -> Result<(), TranscriptError> {
        let mut line = serde_json::to_vec(&r).unwrap_or_default();
        line.push(b'\n');
        self.journal
            .append(&line)
            .map_err(crate::transcript::eval::io_error(&self.path))?;
        self.fresh.push((seq, r));
        Ok(())
    }

    fn finish(mut self) -> Result<Vec<RunRecord>, TranscriptError> {
        self.journal
            .sync()
            .map_err(crate::transcript::eval::io_error(&self.path))?;
        self.fresh.sort_by_key(|(seq, _)| *seq);
        self.records.extend(self.fresh.into_iter().map(|(_, r)| r));
        Ok(self.records)
    }
}

fn dests_live(dests: &[(String, Dest)]) -> Vec<String> {
    dests
        .iter()
        .filter(|(_, d)| matches!(d, Dest::Live(_)))
        .map(|(m, _)| m.clone())
        .collect()
}

fn strategies_of(cfg: &RunConfig) -> Vec<String> {
    let mut s = vec![BASELINE.to_string()];
    s.extend(cfg.strategies.iter().filter(|x| *x != BASELINE).cloned());
    s
}

fn write(
    cfg: &RunConfig,
    opts: &Options,
    strategies: &[String],
    dests: &[(String, Dest)],
    records: &[RunRecord],
) -> Result<(), TranscriptError> {
    let io = crate::transcript::eval::io_error;
    crate::transcript::eval::write_records(&cfg.out, records)?;
    let runs_doc = std::fs::read(&opts.runs).map_err(io(&opts.runs))?;
    let tasks_path = opts.data.join("env").join("tasks.json");
    let tasks_doc = std::fs::read(&tasks_path).map_err(io(&tasks_path))?;
    let mut m = json!({
        "tool": "compaction-eval",
        "version": env!("CARGO_PKG_VERSION"),
        "source": "tau",
        "seed": cfg.seed,
        "config": {
            "tau": "airline",
            "strategies": strategies,
            "models": dests.iter().map(|(m, _)| m.clone()).collect::<Vec<_>>(),
            "reps": cfg.reps,
            "tasks": opts.tasks,
            "cut_rules": opts.rules.iter().map(|r| r.as_str()).collect::<Vec<_>>(),
            "user_model": opts.user_model,
            "step_budget": cfg.step_budget,
            "shard": cfg.shard.map(|s| s.to_string()),
        },
        "cells": records.len(),
        // Where the strategies and the data came from (`embedded v0.1.0`, or a folder's path).
        "sources": {
            "strategies": cfg.strategy_dir.label(),
            "tau_data": opts.source.label(),
        },
        "runs_digest": crate::world::sha256_digest(&runs_doc),
        "tasks_digest": crate::world::sha256_digest(&tasks_doc),
        "tokenizer": "o200k_base",
    });
    let digest = crate::world::sha256_digest(m.to_string().as_bytes());
    m["digest"] = serde_json::Value::String(digest);
    let path = cfg.out.join("manifest.json");
    crate::durable::write(&path, &serde_json::to_vec_pretty(&m).unwrap_or_default())
        .map_err(io(&path))
}
