//! The runner: the matrix of cells, seeds, shared work, concurrency, and the record stream.
//!
//! A cell is (scenario, interrupt point, strategy, destination model, repetition). Interrupted
//! states and handoffs are built once and shared by every cell that starts from them. Before
//! them, every live model gets one cheap probe, so a missing key or an unreachable server stops
//! the run before its first cell. Cells run on tokio workers. A finished cell is appended to
//! `journal.jsonl` at once, whatever its place, so an interrupted run loses no finished cell;
//! `results.jsonl` gets the records in cell order (as a prefix while the run goes, rewritten
//! whole at its end and on `--resume` from the journal), so the file is the same whatever the
//! concurrency. The runner emits typed [`RunEvent`]s to a [`Reporter`] and never prints.

mod cell;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;
use sha2::{Digest, Sha256};

pub use crate::record::{RecordError, RunRecord, Status};
pub use cell::{CellSpec, identity, record_identity, run_cell};

use crate::destination::live::{Cache, LiveClient, ModelConfig, RetryNotice};
use crate::destination::sim_kind;
use crate::handoff::Handoff;
use crate::record::{CellError, ErrorClass};
use crate::scenario::{self, Scenario};
use crate::state::RestorePoint;
use crate::strategy::{Registry, Strategy};

/// What to run.
#[derive(Debug, Clone, Serialize)]
pub struct RunConfig {
    pub scenario_dir: PathBuf,
    pub strategy_dir: PathBuf,
    /// Scenario ids (`None`: all, benign variants included).
    pub scenarios: Option<Vec<String>>,
    pub interrupts: Option<Vec<String>>,
    pub strategies: Vec<String>,
    pub models: Vec<String>,
    pub reps: u32,
    pub seed: u64,
    pub limit: Option<usize>,
    pub concurrency: usize,
    pub out: PathBuf,
    pub resume: bool,
    pub step_budget: u32,
    /// The simulated destinations' attention parameter (0: off).
    pub attention: f64,
    /// Live models by name (`[model.NAME]` in the configuration file).
    pub model_defs: BTreeMap<String, crate::destination::live::ModelConfig>,
    /// Response cache folder (default: the user's cache directory).
    pub cache_dir: Option<PathBuf>,
    /// Bypass the response cache.
    pub no_cache: bool,
    /// With `resume`: drop the errored records first, so their cells run again.
    pub rerun_errored: bool,
    /// Probe every live model once before the first cell (`run --no-probe` turns it off).
    pub probe: bool,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            scenario_dir: "scenarios".into(),
            strategy_dir: "strategies".into(),
            scenarios: None,
            interrupts: None,
            strategies: ["none", "A", "B", "C", "D", "mask", "B+A"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            models: vec!["sim:careful".into(), "sim:literal".into()],
            reps: 3,
            seed: crate::DEFAULT_SEED,
            limit: None,
            concurrency: 2,
            out: "reports/latest".into(),
            resume: false,
            step_budget: 40,
            attention: 0.0,
            model_defs: BTreeMap::new(),
            cache_dir: None,
            no_cache: false,
            rerun_errored: false,
            probe: true,
        }
    }
}

/// Where a run stands, carried by every event after `Planned`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Cells this call runs.
    pub total: usize,
    /// Cells finished (whatever their place in cell order).
    pub finished: usize,
    /// Cells started and not finished.
    pub in_flight: usize,
    /// Requests waiting out a retry backoff right now.
    pub retrying: u64,
    /// Retries so far.
    pub retries: u64,
    /// Finished cells that errored.
    pub errored: usize,
}

/// Progress of a run, for reporters (the progress bar, the journal's tests, a log).
#[derive(Debug)]
pub enum RunEvent<'a> {
    /// The cells this call runs, and those `--resume` found done.
    Planned { total: usize, skipped: usize },
    /// A cell (by its index in the plan) started.
    CellStarted { index: usize, counts: Counts },
    /// A cell finished; its record is already in `journal.jsonl`.
    CellFinished {
        index: usize,
        record: &'a RunRecord,
        counts: Counts,
    },
    /// A live request failed and waits before its retry.
    Retrying {
        notice: &'a RetryNotice,
        counts: Counts,
    },
    /// Every cell finished; `results.jsonl` holds them in cell order.
    RunFinished { written: usize, counts: Counts },
}

/// Consumes run events (a progress bar, a log, a test's collector).
pub trait Reporter {
    fn event(&mut self, e: RunEvent<'_>);
}

/// A reporter that ignores everything.
pub struct Silent;
impl Reporter for Silent {
    fn event(&mut self, _: RunEvent<'_>) {}
}

/// A problem that stops a run before or while it writes.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Scenario(#[from] scenario::ScenarioError),
    #[error(transparent)]
    Strategy(#[from] crate::strategy::StrategyError),
    #[error("unknown {what} `{id}`; known: {known}")]
    Unknown {
        what: &'static str,
        id: String,
        known: String,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: line {line} is not a run record: {message}")]
    Corrupt {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error("{0}")]
    Usage(String),
    /// A live model failed its probe (missing key, unreachable URL, refused key): one line per
    /// model.
    #[error("the run did not start: {}", .0.join("\n"))]
    Preflight(Vec<String>),
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> RunError + '_ {
    move |source| RunError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A cell's seed: derived from the run seed and the cell's identity, so it does not depend on
/// which other cells run or in what order.
pub fn cell_seed(
    base: u64,
    scenario: &str,
    point: &str,
    strategy: &str,
    model: &str,
    rep: u32,
) -> u64 {
    let mut h = Sha256::new();
    h.update(base.to_le_bytes());
    for part in [scenario, point, strategy, model] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    h.update(rep.to_le_bytes());
    let d = h.finalize();
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    u64::from_le_bytes(b)
}

/// The scenarios of a run: every file's scenario and the benign variants of injection scenarios,
/// filtered by id.
pub fn select_scenarios(cfg: &RunConfig) -> Result<Vec<Arc<Scenario>>, RunError> {
    let base = scenario::load_dir(&cfg.scenario_dir)?;
    let mut all: Vec<Scenario> = Vec::new();
    for s in base {
        let benign = s.benign_variant();
        all.push(s);
        all.extend(benign);
    }
    if let Some(ids) = &cfg.scenarios {
        for id in ids {
            if !all.iter().any(|s| &s.id == id) {
                return Err(RunError::Unknown {
                    what: "scenario",
                    id: id.clone(),
                    known: all
                        .iter()
                        .map(|s| s.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
        }
        all.retain(|s| ids.contains(&s.id));
    }
    Ok(all.into_iter().map(Arc::new).collect())
}

/// A scenario's interrupt point in a plan.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PointKey {
    /// Index into the plan's scenarios.
    pub scenario: usize,
    pub point: Arc<str>,
}

/// The handoff of one strategy at one interrupt point: shared by every cell that starts from it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HandoffKey {
    pub scenario: usize,
    pub point: Arc<str>,
    pub strategy: Arc<str>,
}

/// A handoff as the plan prepared it.
#[derive(Debug, Clone)]
pub enum Prepared {
    Ready {
        handoff: Arc<Handoff>,
        /// Provenance upgrades in the handoff's text (`upgrades`).
        upgrades: Vec<String>,
        /// Seed 003 §9.2 rule violations (`rule at where: detail`), for checkpoint handoffs.
        rule_violations: Option<Vec<crate::record::RuleBreak>>,
    },
    /// The handoff could not be built (a failing plug-in or summariser): its cells are errored.
    Failed(CellError),
}

/// Everything a run needs, built once.
pub struct Plan {
    pub scenarios: Vec<Arc<Scenario>>,
    pub cells: Arc<Vec<CellSpec>>,
    pub points: BTreeMap<PointKey, Arc<RestorePoint>>,
    pub handoffs: BTreeMap<HandoffKey, Prepared>,
    /// The seed-000 required eval per scenario × point × strategy.
    pub continuity: Vec<crate::continuity::ContinuityEval>,
    /// Live model clients by name.
    pub live: BTreeMap<String, Arc<LiveClient>>,
    /// Every live model of the run (destinations, then summarisers), as it runs.
    pub live_models: Vec<ModelConfig>,
}

/// The configuration of a live destination named on the command line, if it is one.
pub fn live_model(cfg: &RunConfig, name: &str) -> Option<ModelConfig> {
    if let Some(m) = cfg.model_defs.get(name) {
        let mut m = m.clone();
        m.name = name.to_string();
        return Some(m);
    }
    // `openai:MODEL` has no table to set a limit in: it runs as many requests as cells.
    name.strip_prefix("openai:")
        .filter(|m| !m.is_empty())
        .map(|m| {
            let mut c = ModelConfig::openai(m);
            c.max_concurrency = cfg.concurrency.max(1);
            c
        })
}

/// The live clients of the run's destination models, by name.
fn live_clients(
    cfg: &RunConfig,
    cache: &Option<Cache>,
) -> Result<BTreeMap<String, Arc<LiveClient>>, RunError> {
    let mut live = BTreeMap::new();
    for m in &cfg.models {
        if sim_kind(m).is_some() {
            continue;
        }
        let Some(mc) = live_model(cfg, m) else {
            let mut known: Vec<String> = crate::destination::SIM_MODELS
                .iter()
                .map(|s| s.to_string())
                .collect();
            known.extend(cfg.model_defs.keys().cloned());
            known.push("openai:MODEL".into());
            return Err(RunError::Unknown {
                what: "destination model",
                id: m.clone(),
                known: known.join(", "),
            });
        };
        let client = LiveClient::new(mc, cache.clone()).map_err(|e| RunError::Usage(e.message))?;
        live.insert(m.clone(), Arc::new(client));
    }
    Ok(live)
}

/// The run's strategies, and the live clients of their summarisers.
type Strategies = (Vec<Box<dyn Strategy>>, Vec<Arc<LiveClient>>);

/// The run's strategies; `llm_summary` strategies get their summariser model's client.
fn strategies(
    cfg: &RunConfig,
    registry: &Registry,
    live: &BTreeMap<String, Arc<LiveClient>>,
    cache: &Option<Cache>,
) -> Result<Strategies, RunError> {
    let mut out = Vec::new();
    let mut summarisers: Vec<Arc<LiveClient>> = Vec::new();
    for id in &cfg.strategies {
        let summariser = match registry
            .config(id)
            .filter(|c| c.kind == crate::strategy::StrategyKind::LlmSummary)
        {
            None => None,
            Some(c) => {
                let name = c.summarizer.clone().unwrap_or_default();
                let client = match live.get(&name) {
                    Some(cl) => cl.clone(),
                    None => {
                        let mc = live_model(cfg, &name).ok_or_else(|| {
                            RunError::Usage(format!(
                                "strategy `{id}`: summarizer `{name}` is not a configured model (add [model.{name}] to the configuration, or use openai:MODEL)"
                            ))
                        })?;
                        Arc::new(
                            LiveClient::new(mc, cache.clone())
                                .map_err(|e| RunError::Usage(e.message))?,
                        )
                    }
                };
                if !summarisers.iter().any(|s| Arc::ptr_eq(s, &client)) {
                    summarisers.push(client.clone());
                }
                Some(client as Arc<dyn crate::strategy::Summariser>)
            }
        };
        out.push(registry.get_with(id, summariser)?);
    }
    Ok((out, summarisers))
}

/// Probes every live model once (concurrently): the key variable is set, the base URL answers,
/// the key is not refused. Every failure is reported, each naming its model's table.
pub fn preflight(clients: &[Arc<LiveClient>]) -> Result<(), RunError> {
    if clients.is_empty() {
        return Ok(());
    }
    let results = crate::runtime::block_on(async {
        let tasks: Vec<_> = clients
            .iter()
            .map(|c| {
                let c = c.clone();
                tokio::spawn(async move { c.probe().await })
            })
            .collect();
        let mut out = Vec::new();
        for t in tasks {
            out.push(
                t.await
                    .unwrap_or_else(|e| Err(format!("the probe failed: {e}"))),
            );
        }
        out
    })
    .map_err(|e| RunError::Io {
        path: PathBuf::from("<async runtime>"),
        source: e,
    })?;
    let failures: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    if failures.is_empty() {
        Ok(())
    } else {
        Err(RunError::Preflight(failures))
    }
}

/// Checks `--interrupts` against the scenarios' points.
fn check_points(cfg: &RunConfig, scenarios: &[Arc<Scenario>]) -> Result<(), RunError> {
    let Some(points) = &cfg.interrupts else {
        return Ok(());
    };
    let known: BTreeSet<&str> = scenarios
        .iter()
        .flat_map(|s| s.interrupts.iter().map(|i| i.point.as_str()))
        .collect();
    for p in points {
        if !known.contains(p.as_str()) {
            return Err(RunError::Unknown {
                what: "interrupt point",
                id: p.clone(),
                known: known.into_iter().collect::<Vec<_>>().join(", "),
            });
        }
    }
    Ok(())
}

/// Builds one handoff (on the process's runtime), restores it, and checks its checkpoint.
/// A failing plug-in or summariser errors the handoff's cells; any other error stops the run.
fn prepare(
    registry: &Registry,
    strategy: &dyn Strategy,
    at: &RestorePoint,
) -> Result<Prepared, RunError> {
    let built = crate::runtime::block_on(strategy.build(&at.state)).map_err(|e| RunError::Io {
        path: PathBuf::from("<async runtime>"),
        source: e,
    })?;
    let h = match built.and_then(|h| registry.restore(h, &at.world)) {
        Ok(h) => h,
        Err(crate::strategy::StrategyError::Plugin(e)) => {
            return Ok(Prepared::Failed(CellError {
                class: ErrorClass::Plugin,
                message: e.to_string(),
            }));
        }
        Err(crate::strategy::StrategyError::Summariser(e)) => return Ok(Prepared::Failed(e)),
        Err(e) => return Err(e.into()),
    };
    // Checkpoints get every seed-003 §9.2 rule; text handoffs the rules checkable on text.
    let checked = match &h.checkpoint {
        Some(cp) => crate::checkpoint::rules::check(cp, at),
        None => crate::checkpoint::rules::check_text(&h.text, at),
    };
    let rule_violations = Some(checked).map(|v| {
        v.into_iter()
            .map(|v| crate::record::RuleBreak {
                rule: v.rule.to_string(),
                at: v.at,
                detail: v.detail,
            })
            .collect()
    });
    Ok(Prepared::Ready {
        upgrades: crate::upgrades::provenance_upgrades(at, &h),
        handoff: Arc::new(h),
        rule_violations,
    })
}

/// Expands the matrix and builds the shared restore points and handoffs.
pub fn plan(cfg: &RunConfig) -> Result<Plan, RunError> {
    let scenarios = select_scenarios(cfg)?;
    let registry = Registry::load(&cfg.strategy_dir)?.with_seed(cfg.seed);
    let cache = (!cfg.no_cache).then(|| Cache {
        dir: cfg.cache_dir.clone().unwrap_or_else(Cache::default_dir),
    });
    let live = live_clients(cfg, &cache)?;
    check_points(cfg, &scenarios)?;
    let (strategies, summarisers) = strategies(cfg, &registry, &live, &cache)?;
    let mut clients: Vec<Arc<LiveClient>> = live.values().cloned().collect();
    clients.extend(summarisers.iter().cloned());
    if cfg.probe {
        preflight(&clients)?;
    }
    let live_models = clients.iter().map(|c| c.config.clone()).collect();
    let mut points = BTreeMap::new();
    let mut handoffs = BTreeMap::new();
    let mut cells = Vec::new();
    let mut continuity = Vec::new();
    let models: Vec<Arc<str>> = cfg.models.iter().map(|m| Arc::from(m.as_str())).collect();
    for (si, s) in scenarios.iter().enumerate() {
        for it in &s.interrupts {
            if cfg
                .interrupts
                .as_ref()
                .is_some_and(|p| !p.contains(&it.point))
            {
                continue;
            }
            let at = Arc::new(
                RestorePoint::build(s.clone(), &it.point)
                    .map_err(crate::strategy::StrategyError::from)?,
            );
            let full_history: String = at
                .state
                .events
                .iter()
                .map(|e| e.text.as_str())
                .collect::<Vec<_>>()
                .join("\n");
            let point: Arc<str> = Arc::from(it.point.as_str());
            for st in &strategies {
                let strategy: Arc<str> = Arc::from(st.id());
                let prepared = prepare(&registry, st.as_ref(), &at)?;
                if let Prepared::Ready { handoff, .. } = &prepared {
                    continuity.push(crate::continuity::evaluate(&at, handoff, &full_history));
                }
                handoffs.insert(
                    HandoffKey {
                        scenario: si,
                        point: point.clone(),
                        strategy: strategy.clone(),
                    },
                    prepared,
                );
                for m in &models {
                    for rep in 0..cfg.reps {
                        cells.push(CellSpec {
                            scenario: si,
                            point: point.clone(),
                            strategy: strategy.clone(),
                            model: m.clone(),
                            rep,
                            seed: cell_seed(cfg.seed, &s.id, &it.point, st.id(), m, rep),
                        });
                    }
                }
            }
            points.insert(
                PointKey {
                    scenario: si,
                    point,
                },
                at,
            );
        }
    }
    if let Some(limit) = cfg.limit {
        cells.truncate(limit);
    }
    Ok(Plan {
        scenarios,
        cells: Arc::new(cells),
        points,
        handoffs,
        continuity,
        live,
        live_models,
    })
}

/// The identity of a record, for `--resume` and the journal.
fn record_key(r: &RunRecord) -> String {
    record_identity(r).to_string()
}

/// Reads `results.jsonl` ([`crate::record::read_records`]) with the runner's error type.
pub fn read_records(path: &Path) -> Result<Vec<RunRecord>, RunError> {
    Ok(crate::record::read_records(path)?)
}

/// The journal of finished cells, next to `results.jsonl`.
pub const JOURNAL: &str = "journal.jsonl";

/// `records` in the plan's cell order (records of cells outside the plan keep their order, after
/// the plan's), each cell once (the last record of a cell wins).
fn in_cell_order(plan: &Plan, records: Vec<RunRecord>) -> Vec<RunRecord> {
    let order: BTreeMap<String, usize> = plan
        .cells
        .iter()
        .enumerate()
        .map(|(i, c)| (c.identity(&plan.scenarios[c.scenario].id).to_string(), i))
        .collect();
    let mut placed: BTreeMap<usize, RunRecord> = BTreeMap::new();
    let mut others: Vec<(String, RunRecord)> = Vec::new();
    for r in records {
        let k = record_key(&r);
        match order.get(&k) {
            Some(&i) => {
                placed.insert(i, r);
            }
            None => match others.iter_mut().find(|(ok, _)| *ok == k) {
                Some(slot) => slot.1 = r,
                None => others.push((k, r)),
            },
        }
    }
    placed
        .into_values()
        .chain(others.into_iter().map(|(_, r)| r))
        .collect()
}

/// Writes `records` as `path` (to a temporary file, then renamed: a crash loses nothing).
fn write_records(path: &Path, records: &[RunRecord]) -> Result<(), RunError> {
    let tmp = path.with_extension("jsonl.tmp");
    let mut text = String::new();
    for r in records {
        text.push_str(&serde_json::to_string(r).unwrap_or_default());
        text.push('\n');
    }
    std::fs::write(&tmp, text).map_err(io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io(path))
}

/// What a worker tells the run loop.
enum Msg {
    Started(usize),
    Finished(usize, Box<RunRecord>),
    Retry(RetryNotice),
}

/// Runs the plan. Each finished cell goes to `OUT/journal.jsonl` at once; `OUT/results.jsonl`
/// gets the records in cell order, and at the end holds every record (those `--resume` kept
/// included) in cell order, and the journal is removed. Returns the number of records written by
/// this call.
pub fn execute(
    cfg: &RunConfig,
    plan: &Plan,
    reporter: &mut dyn Reporter,
) -> Result<usize, RunError> {
    std::fs::create_dir_all(&cfg.out).map_err(io(&cfg.out))?;
    let results = cfg.out.join("results.jsonl");
    let journal = cfg.out.join(JOURNAL);
    let mut previous: Vec<RunRecord> = Vec::new();
    if cfg.resume {
        // The records of the last run: results.jsonl, and the journal of cells that finished
        // after its last in-order write (an interrupted run).
        for p in [&results, &journal] {
            if p.exists() {
                previous.extend(read_records(p)?);
            }
        }
        if cfg.rerun_errored {
            previous.retain(|r| r.status == Status::Ok);
        }
        previous = in_cell_order(plan, previous);
        write_records(&results, &previous)?;
    } else if results.exists() {
        std::fs::remove_file(&results).map_err(io(&results))?;
    }
    if journal.exists() {
        std::fs::remove_file(&journal).map_err(io(&journal))?;
    }
    let done: BTreeSet<String> = previous.iter().map(record_key).collect();
    // Indices, not copies: a 100,000-cell matrix should not hold its cells twice.
    let cells: Arc<Vec<CellSpec>> = plan.cells.clone();
    let todo: Vec<u32> = (0..cells.len() as u32)
        .filter(|&i| {
            let c = &cells[i as usize];
            !done.contains(&c.identity(&plan.scenarios[c.scenario].id).to_string())
        })
        .collect();
    reporter.event(RunEvent::Planned {
        total: todo.len(),
        skipped: plan.cells.len() - todo.len(),
    });
    let mut file = std::io::BufWriter::new(
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&results)
            .map_err(io(&results))?,
    );
    let mut journal_file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&journal)
        .map_err(io(&journal))?;

    // Cells of live models mostly wait on the network: `concurrency` cells run at once on the
    // process's runtime (one worker per core).
    let runtime = crate::runtime::runtime().map_err(io(&cfg.out))?;
    let next = Arc::new(AtomicUsize::new(0));
    // Unbounded: a retry hook is a plain function and must not wait.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Msg>();
    // The hooks hold weak senders: the channel closes when the last worker ends, even if a
    // worker ends without sending its record.
    for client in plan.live.values() {
        let weak = tx.downgrade();
        let hook: crate::destination::live::RetryHook = Arc::new(move |n: RetryNotice| {
            if let Some(tx) = weak.upgrade() {
                let _ = tx.send(Msg::Retry(n));
            }
        });
        client.set_retry_hook(Some(hook));
    }
    let todo_owned: Arc<Vec<u32>> = Arc::new(todo);
    let total = todo_owned.len();
    let shared = Arc::new(cell::Shared::new(plan, cfg));
    let mut written = 0usize;
    let mut write_err: Option<RunError> = None;
    let mut counts = Counts {
        total,
        ..Counts::default()
    };
    // Only a resumed run needs its new records again (to merge them with the kept ones).
    let keep_new = cfg.resume && !previous.is_empty();
    let mut new_records: Vec<RunRecord> = Vec::new();
    let live: Vec<Arc<LiveClient>> = plan.live.values().cloned().collect();
    let retrying = || {
        live.iter()
            .map(|c| c.retrying.load(Ordering::Relaxed))
            .sum::<u64>()
    };
    runtime.block_on(async {
        for _ in 0..cfg.concurrency.max(1) {
            let (tx, next, todo, shared, cells) = (
                tx.clone(),
                next.clone(),
                todo_owned.clone(),
                shared.clone(),
                cells.clone(),
            );
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&ci) = todo.get(i) else { break };
                    if tx.send(Msg::Started(i)).is_err() {
                        break;
                    }
                    let rec = run_cell(&shared, &cells[ci as usize], ci as usize).await;
                    if tx.send(Msg::Finished(i, Box::new(rec))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        // Reorder into cell order so the file does not depend on scheduling.
        let mut pending: BTreeMap<usize, (String, RunRecord)> = BTreeMap::new();
        let mut expected = 0usize;
        while counts.finished < total {
            let Some(msg) = rx.recv().await else { break };
            match msg {
                Msg::Started(i) => {
                    counts.in_flight += 1;
                    counts.retrying = retrying();
                    reporter.event(RunEvent::CellStarted {
                        index: todo_owned[i] as usize,
                        counts,
                    });
                }
                Msg::Retry(n) => {
                    counts.retries += 1;
                    counts.retrying = retrying();
                    reporter.event(RunEvent::Retrying { notice: &n, counts });
                }
                Msg::Finished(i, rec) => {
                    // Durable first: the journal line is written before anything else happens.
                    let mut line = serde_json::to_string(&rec).unwrap_or_default();
                    line.push('\n');
                    if write_err.is_none()
                        && let Err(e) = journal_file.write_all(line.as_bytes())
                    {
                        write_err = Some(RunError::Io {
                            path: journal.clone(),
                            source: e,
                        });
                    }
                    counts.finished += 1;
                    counts.in_flight = counts.in_flight.saturating_sub(1);
                    if rec.status == Status::Errored {
                        counts.errored += 1;
                    }
                    counts.retrying = retrying();
                    reporter.event(RunEvent::CellFinished {
                        index: todo_owned[i] as usize,
                        record: &rec,
                        counts,
                    });
                    pending.insert(i, (line, *rec));
                    while let Some((line, rec)) = pending.remove(&expected) {
                        expected += 1;
                        if write_err.is_none() {
                            if let Err(e) =
                                file.write_all(line.as_bytes()).and_then(|_| file.flush())
                            {
                                write_err = Some(RunError::Io {
                                    path: results.clone(),
                                    source: e,
                                });
                            } else {
                                written += 1;
                            }
                        }
                        if keep_new {
                            new_records.push(rec);
                        }
                    }
                }
            }
        }
    });
    for client in plan.live.values() {
        client.set_retry_hook(None);
    }
    if let Some(e) = write_err {
        return Err(e);
    }
    drop(file);
    if keep_new {
        previous.extend(new_records);
        write_records(&results, &in_cell_order(plan, previous))?;
    }
    std::fs::remove_file(&journal).map_err(io(&journal))?;
    debug_assert_eq!(written, total);
    counts.retrying = 0;
    reporter.event(RunEvent::RunFinished { written, counts });
    Ok(written)
}

fn file_digest(path: &Path) -> String {
    std::fs::read(path)
        .map(|b| crate::world::sha256_digest(&b))
        .unwrap_or_else(|_| "unreadable".into())
}

/// A live model as the manifest records it: name, endpoint and limits, never the key (only the
/// name of its variable).
fn live_model_entry(c: &ModelConfig) -> serde_json::Value {
    serde_json::json!({
        "name": c.name,
        "model": c.model,
        "base_url": c.display_url(),
        "api_key_env": c.api_key_env,
        "max_concurrency": c.max_concurrency,
        "requests_per_minute": c.requests_per_minute,
        "max_tokens": c.max_tokens_sent(),
        "temperature": c.temperature,
        "seed": c.seed,
        "request_timeout_s": c.request_timeout_s,
        "retries": c.retries,
        "max_requests_per_cell": c.max_requests_per_cell,
        "cell_timeout_s": c.cell_timeout_s,
    })
}

/// Writes `OUT/manifest.json`: configuration, every live model's name, base URL and limits (never
/// a key), scenario and strategy digests, versions, seed, and a digest of all of it, so a report
/// can be reproduced.
pub fn write_manifest(cfg: &RunConfig, plan: &Plan) -> Result<(), RunError> {
    std::fs::create_dir_all(&cfg.out).map_err(io(&cfg.out))?;
    let mut scenario_digests = BTreeMap::new();
    if let Ok(files) = scenario::scenario_files(&cfg.scenario_dir) {
        for f in files {
            scenario_digests.insert(f.display().to_string(), file_digest(&f));
        }
    }
    let mut strategy_digests = BTreeMap::new();
    for sub in [cfg.strategy_dir.clone(), cfg.strategy_dir.join("templates")] {
        if let Ok(entries) = std::fs::read_dir(&sub) {
            let mut files: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .collect();
            files.sort();
            for f in files {
                strategy_digests.insert(f.display().to_string(), file_digest(&f));
            }
        }
    }
    let mut m = serde_json::json!({
        "tool": "compaction-eval",
        "version": env!("CARGO_PKG_VERSION"),
        "seed": cfg.seed,
        "config": cfg,
        "cells": plan.cells.len(),
        "scenarios": plan.scenarios.iter().map(|s| s.id.clone()).collect::<Vec<_>>(),
        "scenario_digests": scenario_digests,
        "strategy_digests": strategy_digests,
        "tokenizer": "o200k_base",
        "live_models": plan.live_models.iter().map(live_model_entry).collect::<Vec<_>>(),
    });
    // A base URL may carry `user:password@`: the manifest shows it without.
    if let Some(defs) = m["config"]["model_defs"].as_object_mut() {
        for def in defs.values_mut() {
            if let Some(url) = def["base_url"].as_str() {
                def["base_url"] = crate::destination::live::redact_userinfo(url).into();
            }
        }
    }
    let digest = crate::world::sha256_digest(m.to_string().as_bytes());
    m["digest"] = serde_json::Value::String(digest);
    let path = cfg.out.join("manifest.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&m).unwrap_or_default()).map_err(io(&path))?;
    // The continuity trace and required eval, one line per scenario × point × strategy: every cell
    // of that triple starts from this handoff (records name it by the same three fields).
    let path = cfg.out.join("continuity.jsonl");
    let mut text = String::new();
    for c in &plan.continuity {
        text.push_str(&serde_json::to_string(c).unwrap_or_default());
        text.push('\n');
    }
    std::fs::write(&path, text).map_err(io(&path))
}
