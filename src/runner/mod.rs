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
pub mod manifest;
pub mod merge;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;
use sha2::{Digest, Sha256};

pub use crate::record::{CellId, RecordError, RunRecord, Status};
pub use cell::{CellSpec, ReceiptFault, identity, record_identity, run_cell};

use crate::delivery::GovSpec;
use crate::destination::live::{Cache, LiveClient, ModelConfig, RetryNotice};
use crate::destination::sim_kind;
use crate::handoff::Handoff;
use crate::record::{CellError, ErrorClass};
use crate::scenario::volume::{Scale, expand, volume_seed};
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
    /// The simulated destinations' distraction model: a multiplier of its calibrated forgetting
    /// (1: as fitted, 0: off; see `destination::attention`).
    pub attention: f64,
    /// History scales (`base`, `40k`, …): every scenario that declares volume runs at each.
    pub scales: Vec<Scale>,
    /// The simulated destinations' context window (default
    /// [`crate::strategy::DEFAULT_CONTEXT_WINDOW`]); live models have their own.
    pub context_window: Option<u64>,
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
    /// Run only this part of the matrix (`--shard K/N`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// The agent of the source run, for governed lineage (`gov:X`): a destination that differs
    /// from it is a `REPLACED` session. `None`: every destination resumes as the source's agent
    /// (`COLD_RESUME` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_model: Option<String>,
}

/// A deterministic part of the matrix: shard `index` (1-based) of `count`, chosen by a hash of
/// each cell's identity, so the shards of one matrix are disjoint and cover it whatever the
/// order or the other arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Parses `K/N` (1 ≤ K ≤ N).
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("`shard` must be K/N with 1 ≤ K ≤ N (e.g. 2/8), not `{text}`");
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            k.trim().parse::<u32>().map_err(|_| bad())?,
            n.trim().parse::<u32>().map_err(|_| bad())?,
        );
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// Whether the cell belongs to this shard.
    pub fn holds(&self, id: &CellId) -> bool {
        let d = Sha256::digest(id.key().as_bytes());
        let mut b = [0u8; 8];
        b.copy_from_slice(&d[..8]);
        u64::from_le_bytes(b) % u64::from(self.count) == u64::from(self.index - 1)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            scenario_dir: "scenarios".into(),
            strategy_dir: "strategies".into(),
            scenarios: None,
            interrupts: None,
            strategies: ["none", "A", "B", "C", "D", "mask", "B+A", "gov:B", "gov:C"]
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
            attention: 1.0,
            scales: crate::scenario::volume::DEFAULT_SCALES.to_vec(),
            context_window: None,
            model_defs: BTreeMap::new(),
            cache_dir: None,
            no_cache: false,
            rerun_errored: false,
            shard: None,
            probe: true,
            source_model: None,
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
    /// `--resume` found a torn last line in `results.jsonl` or the journal (an interrupted
    /// write) and removed it.
    TornTail { bytes: usize },
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
    #[error(
        "{path}: --resume with another configuration than the run in this folder; differing keys: {}. Run with the same arguments, or write to a new --out folder",
        keys.join(", ")
    )]
    ManifestMismatch { path: PathBuf, keys: Vec<String> },
    #[error(
        "{path}: holds {records} records of this run's {cells} cells: {} cell(s) missing (run again with --resume)",
        cells - records
    )]
    Incomplete {
        path: PathBuf,
        records: usize,
        cells: usize,
    },
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

/// The scenario part of a cell's seed: the id at `base` (so base cells keep the seeds they had
/// before scales existed), `ID\u{0}SCALE` otherwise.
pub fn seed_scenario(id: &str, scale: Scale) -> String {
    match scale {
        Scale::Base => id.to_string(),
        s => format!("{id}\u{0}{s}"),
    }
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
    /// The usable context the handoff was built for (0: the strategy does not depend on it).
    pub window: u64,
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
        /// A governed strategy's (`gov:X`) delivery: `handoff` is then what a destination reads
        /// when the context is `READY` (upgrades and rule violations are X's).
        governed: Option<Arc<crate::delivery::Governed>>,
    },
    /// The handoff could not be built (a failing plug-in or summariser): its cells are errored.
    Failed(CellError),
}

/// One scenario × interrupt point × strategy of the matrix: every model × repetition of it
/// starts from the same handoff.
#[derive(Debug, Clone)]
struct Unit {
    scenario: usize,
    scenario_id: Arc<str>,
    /// The history scale of the unit's scenario, and the scenario part of its cells' seeds
    /// ([`seed_scenario`]).
    scale: Scale,
    seed_id: Arc<str>,
    point: Arc<str>,
    strategy: Arc<str>,
}

/// The matrix of cells, enumerated lazily: cell `i` is computed from its index (order: scenario,
/// interrupt point, strategy, model, repetition), so a huge `--reps` costs no memory and
/// `--limit` cuts it without building the rest.
#[derive(Debug, Clone, Default)]
pub struct Matrix {
    units: Vec<Unit>,
    models: Vec<Arc<str>>,
    reps: u64,
    seed: u64,
    len: usize,
}

impl Matrix {
    /// Cells in the matrix (after `--limit`, before `--shard`).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Cell `i` in matrix order.
    pub fn get(&self, i: usize) -> Option<CellSpec> {
        if i >= self.len {
            return None;
        }
        let per_unit = self.models.len() as u64 * self.reps;
        let i = i as u64;
        let u = &self.units[(i / per_unit) as usize];
        let model = &self.models[((i / self.reps) % self.models.len() as u64) as usize];
        let rep = (i % self.reps) as u32;
        Some(CellSpec {
            scenario: u.scenario,
            point: u.point.clone(),
            strategy: u.strategy.clone(),
            model: model.clone(),
            rep,
            seed: cell_seed(self.seed, &u.seed_id, &u.point, &u.strategy, model, rep),
            scale: u.scale,
        })
    }

    /// The identity of cell `i`.
    pub fn id(&self, i: usize) -> Option<CellId> {
        let c = self.get(i)?;
        let per_unit = self.models.len() as u64 * self.reps;
        let u = &self.units[(i as u64 / per_unit) as usize];
        Some(CellId {
            scenario: u.scenario_id.to_string(),
            scale: u.scale.to_string(),
            interrupt: c.point.to_string(),
            strategy: c.strategy.to_string(),
            model: c.model.to_string(),
            rep: c.rep,
        })
    }
}

/// Everything a run needs, built once.
pub struct Plan {
    /// The run's scenarios, each at one scale (the same scenario appears once per scale).
    pub scenarios: Vec<Arc<Scenario>>,
    /// The scale of each entry of `scenarios`.
    pub scales: Vec<Scale>,
    /// Full-history tokens (the unbounded transcript) at each restore point.
    pub history: BTreeMap<PointKey, u64>,
    /// Each destination's context window.
    pub windows: BTreeMap<String, u64>,
    /// Things the run's user should know (a scenario without volume runs at `base` only).
    pub notes: Vec<String>,
    /// The whole matrix (after `--limit`).
    pub cells: Arc<Matrix>,
    /// Indices of the matrix this run folder holds (every one, or the shard's).
    pub selected: Arc<Vec<usize>>,
    pub points: BTreeMap<PointKey, Arc<RestorePoint>>,
    pub handoffs: BTreeMap<HandoffKey, Prepared>,
    /// The seed-000 required eval per scenario × point × strategy.
    pub continuity: Vec<crate::continuity::ContinuityEval>,
    /// Live model clients by name.
    pub live: BTreeMap<String, Arc<LiveClient>>,
    /// Every live model of the run (destinations, then summarisers), as it runs.
    pub live_models: Vec<ModelConfig>,
    /// Tests only: the matrix index of a cell whose run panics, to prove that a panicking cell
    /// becomes an errored record and loses no other (user input cannot make a cell panic).
    #[doc(hidden)]
    pub panic_cell: Option<usize>,
    /// Tests only: the matrix index of a governed cell whose destination adapter returns a
    /// missing or wrong receipt, to prove such a cell is held.
    #[doc(hidden)]
    pub receipt_fault: Option<(usize, cell::ReceiptFault)>,
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
        mc.check_durations()
            .map_err(|e| RunError::Usage(format!("model `{m}`: {e}")))?;
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
    window_budget: u64,
) -> Result<Strategies, RunError> {
    let mut out = Vec::new();
    let mut summarisers: Vec<Arc<LiveClient>> = Vec::new();
    for id in &cfg.strategies {
        // `gov:X` builds X; the plan wraps its handoff (`crate::delivery`).
        let id = &build_id(id)?;
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
                        mc.check_durations()
                            .map_err(|e| RunError::Usage(format!("model `{name}`: {e}")))?;
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
        out.push(registry.get_for(id, summariser, window_budget)?);
    }
    Ok((out, summarisers))
}

/// The strategy a run id builds: X for a governed `gov:X`, else the id itself.
fn build_id(id: &str) -> Result<String, RunError> {
    match GovSpec::parse(id) {
        None => Ok(id.to_string()),
        Some(Ok(g)) => Ok(g.inner),
        Some(Err(e)) => Err(RunError::Usage(format!("strategy {e}"))),
    }
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
                message: crate::secrets::redact(&e.to_string()).into_owned(),
            }));
        }
        Err(crate::strategy::StrategyError::Summariser(e)) => {
            return Ok(Prepared::Failed(CellError {
                class: e.class,
                message: crate::secrets::redact(&e.message).into_owned(),
            }));
        }
        Err(e) => return Err(e.into()),
    };
    // A handoff that carries a secret of this run is never sent anywhere: its cells are errored.
    if crate::secrets::any() && handoff_has_secret(&h) {
        return Ok(Prepared::Failed(CellError {
            class: ErrorClass::Plugin,
            message: format!(
                "strategy `{}`: output contains a secret of this run (the handoff was discarded)",
                strategy.id()
            ),
        }));
    }
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
        governed: None,
    })
}

/// Whether any text of a handoff (its rendering, messages, checkpoint, extra tools) holds a
/// secret of the run.
fn handoff_has_secret(h: &Handoff) -> bool {
    serde_json::to_string(h).is_ok_and(|t| crate::secrets::contains(&t))
}

/// The secrets of a run (`OPENAI_API_KEY` and every configured `api_key_env`), registered for
/// redaction ([`crate::secrets`]).
pub fn load_secrets(cfg: &RunConfig) {
    crate::secrets::load_run(
        cfg.model_defs
            .values()
            .filter_map(|m| m.api_key_env.as_deref()),
    );
}

/// The scenarios of the run at each of its scales: `(scenario at scale, scale)`. A scenario that
/// declares no volume runs at `base` only (noted in `notes`).
fn scaled_scenarios(
    cfg: &RunConfig,
    base: Vec<Arc<Scenario>>,
    notes: &mut Vec<String>,
) -> Result<Vec<(Arc<Scenario>, Scale)>, RunError> {
    let mut scales = cfg.scales.clone();
    if scales.is_empty() {
        scales.push(Scale::Base);
    }
    let mut out: Vec<(Arc<Scenario>, Scale)> = Vec::new();
    for s in base {
        for &scale in &scales {
            if scale == Scale::Base {
                out.push((s.clone(), scale));
                continue;
            }
            if s.volume.is_none() {
                if !scales.contains(&Scale::Base)
                    && !out.iter().any(|(x, sc)| x.id == s.id && *sc == Scale::Base)
                {
                    out.push((s.clone(), Scale::Base));
                }
                let note = format!(
                    "scenario `{}` declares no volume: it runs at scale base only",
                    s.id
                );
                if !notes.contains(&note) {
                    notes.push(note);
                }
                continue;
            }
            let x = expand(&s, scale, volume_seed(cfg.seed, &s.id, scale)).map_err(|p| {
                RunError::Usage(format!(
                    "scenario `{}`: its volume cannot be generated at scale {scale}:\n{}",
                    s.id,
                    p.iter()
                        .map(|p| format!("  - {p}"))
                        .collect::<Vec<_>>()
                        .join("\n")
                ))
            })?;
            out.push((Arc::new(x), scale));
        }
    }
    Ok(out)
}

/// Each destination's context window: a live model's own, `--context-window` or the default for
/// simulated ones.
fn windows(cfg: &RunConfig) -> BTreeMap<String, u64> {
    cfg.models
        .iter()
        .map(|m| {
            let w = match live_model(cfg, m) {
                Some(mc) if sim_kind(m).is_none() => mc.window(),
                _ => cfg
                    .context_window
                    .unwrap_or(crate::strategy::DEFAULT_CONTEXT_WINDOW),
            };
            (m.clone(), w)
        })
        .collect()
}

/// Expands the matrix and builds the shared restore points and handoffs.
pub fn plan(cfg: &RunConfig) -> Result<Plan, RunError> {
    load_secrets(cfg);
    let mut notes = Vec::new();
    let scaled = scaled_scenarios(cfg, select_scenarios(cfg)?, &mut notes)?;
    let scenarios: Vec<Arc<Scenario>> = scaled.iter().map(|(s, _)| s.clone()).collect();
    let registry = Registry::load(&cfg.strategy_dir)?.with_seed(cfg.seed);
    let cache = (!cfg.no_cache).then(|| Cache {
        dir: cfg.cache_dir.clone().unwrap_or_else(Cache::default_dir),
    });
    let live = live_clients(cfg, &cache)?;
    check_points(cfg, &scenarios)?;
    let windows = windows(cfg);
    // One set of strategy instances per distinct usable context among the run's destinations.
    let mut budgets: Vec<u64> = windows
        .values()
        .map(|w| crate::strategy::usable_context(*w))
        .collect();
    budgets.sort_unstable();
    budgets.dedup();
    let mut by_budget: Vec<(u64, Vec<Box<dyn Strategy>>)> = Vec::new();
    let mut summarisers: Vec<Arc<LiveClient>> = Vec::new();
    for &b in &budgets {
        let (insts, sums) = strategies(cfg, &registry, &live, &cache, b)?;
        if summarisers.is_empty() {
            summarisers = sums;
        }
        by_budget.push((b, insts));
    }
    let mut clients: Vec<Arc<LiveClient>> = live.values().cloned().collect();
    clients.extend(summarisers.iter().cloned());
    if cfg.probe {
        preflight(&clients)?;
    }
    let live_models = clients.iter().map(|c| c.config.clone()).collect();
    let mut points = BTreeMap::new();
    let mut history = BTreeMap::new();
    let mut handoffs = BTreeMap::new();
    let mut units = Vec::new();
    let mut continuity = Vec::new();
    let models: Vec<Arc<str>> = cfg.models.iter().map(|m| Arc::from(m.as_str())).collect();
    // Units in matrix order; the cells of a unit are its models × repetitions.
    let per_unit = (models.len() as u64).saturating_mul(u64::from(cfg.reps));
    let mut total: u64 = 0;
    let limit = cfg.limit.map(|l| l as u64).unwrap_or(u64::MAX);
    'scenarios: for (si, (s, scale)) in scaled.iter().enumerate() {
        let seed_id: Arc<str> = Arc::from(seed_scenario(&s.id, *scale).as_str());
        for it in &s.interrupts {
            if cfg
                .interrupts
                .as_ref()
                .is_some_and(|p| !p.contains(&it.point))
            {
                continue;
            }
            if total >= limit {
                break 'scenarios;
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
            let scenario_id: Arc<str> = Arc::from(s.id.as_str());
            for (sti, id) in cfg.strategies.iter().enumerate() {
                if total >= limit {
                    break;
                }
                let strategy: Arc<str> = Arc::from(id.as_str());
                let gov = GovSpec::parse(id).transpose().map_err(RunError::Usage)?;
                let windowed = registry.depends_on_window(&build_id(id)?);
                for (b, insts) in &by_budget {
                    let window = if windowed { *b } else { 0 };
                    let key = HandoffKey {
                        scenario: si,
                        point: point.clone(),
                        strategy: strategy.clone(),
                        window,
                    };
                    if handoffs.contains_key(&key) {
                        continue;
                    }
                    let mut prepared = prepare(&registry, insts[sti].as_ref(), &at)?;
                    if let (
                        Some(g),
                        Prepared::Ready {
                            handoff, governed, ..
                        },
                    ) = (&gov, &mut prepared)
                    {
                        let wrapped = crate::delivery::prepare(&at, g, handoff.clone())
                            .map_err(|e| RunError::Usage(e.to_string()))?;
                        *handoff = wrapped.delivered.clone();
                        *governed = Some(Arc::new(wrapped));
                    }
                    // One continuity line per scenario × scale × point × strategy: for a
                    // window-bounded strategy, the handoff for the largest window.
                    if let Prepared::Ready { handoff, .. } = &prepared
                        && (window == 0 || Some(b) == budgets.last())
                    {
                        let mut c = crate::continuity::evaluate(&at, handoff, &full_history);
                        c.scale = scale.to_string();
                        continuity.push(c);
                    }
                    handoffs.insert(key, prepared);
                }
                units.push(Unit {
                    scenario: si,
                    scenario_id: scenario_id.clone(),
                    scale: *scale,
                    seed_id: seed_id.clone(),
                    point: point.clone(),
                    strategy,
                });
                total = total.saturating_add(per_unit);
            }
            let pk = PointKey {
                scenario: si,
                point,
            };
            history.insert(pk.clone(), crate::strategy::full_history_tokens(&at.state));
            points.insert(pk, at);
        }
    }
    let len = total.min(limit).min(usize::MAX as u64) as usize;
    let cells = Matrix {
        units,
        models,
        reps: u64::from(cfg.reps.max(1)),
        seed: cfg.seed,
        len: if per_unit == 0 { 0 } else { len },
    };
    let selected: Vec<usize> = match cfg.shard {
        None => (0..cells.len()).collect(),
        Some(sh) => (0..cells.len())
            .filter(|&i| cells.id(i).is_some_and(|id| sh.holds(&id)))
            .collect(),
    };
    Ok(Plan {
        scales: scaled.iter().map(|(_, sc)| *sc).collect(),
        scenarios,
        history,
        windows,
        notes,
        cells: Arc::new(cells),
        selected: Arc::new(selected),
        points,
        handoffs,
        continuity,
        live,
        live_models,
        panic_cell: None,
        receipt_fault: None,
    })
}

/// Reads `results.jsonl` ([`crate::record::read_records`]) with the runner's error type.
pub fn read_records(path: &Path) -> Result<Vec<RunRecord>, RunError> {
    Ok(crate::record::read_records(path)?)
}

/// Makes `results.jsonl` end on a whole line before records are appended to it: a torn last
/// line (an interrupted write, a full disk) is cut off. Returns the bytes removed.
pub fn repair_tail(path: &Path) -> Result<usize, RunError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(io(path)(e)),
    };
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        return Ok(0);
    }
    let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let torn = &bytes[keep..];
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(io(path))?;
    // A whole record that only lacks its newline is kept.
    if serde_json::from_slice::<RunRecord>(torn).is_ok() {
        use std::io::Seek;
        let mut f = f;
        f.seek(std::io::SeekFrom::End(0)).map_err(io(path))?;
        f.write_all(b"\n").map_err(io(path))?;
        return Ok(0);
    }
    f.set_len(keep as u64).map_err(io(path))?;
    f.sync_all().map_err(io(path))?;
    Ok(torn.len())
}

/// Checks that `OUT/results.jsonl` holds a record of every cell of the plan (after `execute`).
pub fn check_complete(cfg: &RunConfig, plan: &Plan) -> Result<usize, RunError> {
    let path = cfg.out.join("results.jsonl");
    let have: BTreeSet<CellId> = read_records(&path)?.iter().map(RunRecord::id).collect();
    let present = plan
        .selected
        .iter()
        .filter(|&&i| plan.cells.id(i).is_some_and(|id| have.contains(&id)))
        .count();
    if present < plan.selected.len() {
        return Err(RunError::Incomplete {
            path,
            records: present,
            cells: plan.selected.len(),
        });
    }
    Ok(present)
}

/// The journal of finished cells, next to `results.jsonl`.
pub const JOURNAL: &str = "journal.jsonl";

/// `records` in the plan's cell order (records of cells outside the plan keep their order, after
/// the plan's), each cell once (the last record of a cell wins).
fn in_cell_order(plan: &Plan, records: Vec<RunRecord>) -> Vec<RunRecord> {
    let order: BTreeMap<CellId, usize> = plan
        .selected
        .iter()
        .filter_map(|&i| plan.cells.id(i).map(|id| (id, i)))
        .collect();
    let mut placed: BTreeMap<usize, RunRecord> = BTreeMap::new();
    let mut others: Vec<(CellId, RunRecord)> = Vec::new();
    for r in records {
        let k = r.id();
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
        text.push_str(&crate::secrets::json_line(r));
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
///
/// Every cell of the plan ends as a record: a cell that panics is an errored record
/// (`error_class: harness`). With `resume`, a torn last line of `results.jsonl` or the journal is
/// removed first ([`RunEvent::TornTail`]).
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
        // after its last in-order write (an interrupted run). A torn last line (a write cut
        // short) is removed first.
        for p in [&results, &journal] {
            if p.exists() {
                let bytes = repair_tail(p)?;
                if bytes > 0 {
                    reporter.event(RunEvent::TornTail { bytes });
                }
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
    let done: BTreeSet<CellId> = previous.iter().map(RunRecord::id).collect();
    // Indices into the lazy matrix, not copies of cells.
    let cells: Arc<Matrix> = plan.cells.clone();
    let todo: Vec<usize> = if done.is_empty() {
        plan.selected.to_vec()
    } else {
        plan.selected
            .iter()
            .copied()
            .filter(|&i| cells.id(i).is_some_and(|id| !done.contains(&id)))
            .collect()
    };
    reporter.event(RunEvent::Planned {
        total: todo.len(),
        skipped: plan.selected.len() - todo.len(),
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
    let todo_owned: Arc<Vec<usize>> = Arc::new(todo);
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
                    let Some(spec) = cells.get(ci) else { break };
                    // Each cell is its own task, so a panic in it is caught and recorded.
                    let task = tokio::spawn({
                        let (shared, spec) = (shared.clone(), spec.clone());
                        async move { run_cell(&shared, &spec, ci).await }
                    });
                    let rec = match task.await {
                        Ok(rec) => rec,
                        Err(e) => {
                            let payload: Box<dyn std::any::Any + Send> = if e.is_panic() {
                                e.into_panic()
                            } else {
                                Box::new("the cell's task was cancelled")
                            };
                            shared.panicked(&spec, payload)
                        }
                    };
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
                        index: todo_owned[i],
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
                    let mut line = crate::secrets::json_line(&rec);
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
                        index: todo_owned[i],
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

/// The run's `manifest.json` (without its digest): configuration, scenario and strategy digests,
/// versions, seed, cell counts and the matrix order.
pub fn manifest_value(cfg: &RunConfig, plan: &Plan) -> serde_json::Value {
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
    // The interrupt points of each scenario in matrix order (`merge` restores cell order).
    let interrupts: serde_json::Map<String, serde_json::Value> = plan
        .scenarios
        .iter()
        .map(|s| {
            (
                s.id.clone(),
                serde_json::json!(
                    s.interrupts
                        .iter()
                        .map(|i| i.point.clone())
                        .collect::<Vec<_>>()
                ),
            )
        })
        .collect();
    let mut m = serde_json::json!({
        "tool": "compaction-eval",
        "version": env!("CARGO_PKG_VERSION"),
        "seed": cfg.seed,
        "config": cfg,
        "cells": plan.selected.len(),
        "matrix_cells": plan.cells.len(),
        "scenarios": plan.scenarios.iter().map(|s| s.id.clone()).collect::<Vec<_>>(),
        "scenario_scales": plan.scales.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        "interrupts": interrupts,
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
    m
}

/// Writes `OUT/manifest.json` ([`manifest_value`] and a digest of it, so a report can be
/// reproduced) and `OUT/continuity.jsonl`. With `--resume` on a folder that already holds
/// records, the folder's manifest must describe the same run: otherwise nothing is written and
/// the differing keys are named ([`RunError::ManifestMismatch`]).
pub fn write_manifest(cfg: &RunConfig, plan: &Plan) -> Result<(), RunError> {
    std::fs::create_dir_all(&cfg.out).map_err(io(&cfg.out))?;
    let mut m = manifest_value(cfg, plan);
    let path = cfg.out.join("manifest.json");
    if cfg.resume && cfg.out.join("results.jsonl").is_file() && path.is_file() {
        let text = std::fs::read_to_string(&path).map_err(io(&path))?;
        let old: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| RunError::Corrupt {
                path: path.clone(),
                line: e.line(),
                message: e.to_string(),
            })?;
        let keys = manifest::differences(&old, &m, &["matrix_cells"]);
        if !keys.is_empty() {
            return Err(RunError::ManifestMismatch { path, keys });
        }
    }
    let digest = crate::world::sha256_digest(m.to_string().as_bytes());
    m["digest"] = serde_json::Value::String(digest);
    write_atomic(&path, &serde_json::to_vec_pretty(&m).unwrap_or_default())?;
    // The continuity trace and required eval, one line per scenario × point × strategy: every cell
    // of that triple starts from this handoff (records name it by the same three fields).
    let path = cfg.out.join("continuity.jsonl");
    let mut text = String::new();
    for c in &plan.continuity {
        text.push_str(&crate::secrets::json_line(c));
        text.push('\n');
    }
    write_atomic(&path, text.as_bytes())?;
    write_governed(cfg, plan)
}

/// The governed handoffs' documents and policies (seed 004), kept in the run folder:
/// `artifacts/<digest>` (content-addressed: every document a governed cell of the run is
/// delivered) and `policies/<policy digest>.json`, so `inspect-context
/// OUT/policies/D.json --store OUT/artifacts` re-checks any cell's context from the folder.
fn write_governed(cfg: &RunConfig, plan: &Plan) -> Result<(), RunError> {
    let artifacts = cfg.out.join("artifacts");
    let policies = cfg.out.join("policies");
    for p in plan.handoffs.values() {
        let Prepared::Ready {
            governed: Some(g), ..
        } = p
        else {
            continue;
        };
        let (Some(policy), Some(digest)) = (&g.policy, &g.policy_digest) else {
            continue;
        };
        let mut docs: Vec<String> = policy.originals();
        docs.extend(policy.summary.iter().map(|s| s.artifact_digest.clone()));
        g.store
            .export(&docs, &artifacts)
            .map_err(|e| RunError::Usage(format!("{}: {e}", artifacts.display())))?;
        std::fs::create_dir_all(&policies).map_err(io(&policies))?;
        let path = policies.join(format!("{digest}.json"));
        if !path.is_file() {
            write_atomic(
                &path,
                &serde_json::to_vec_pretty(policy).unwrap_or_default(),
            )?;
        }
    }
    Ok(())
}

/// Writes a file through a temporary file and a rename, so a run killed at any moment leaves
/// either the old or the new file, never a torn one (`--resume` reads the manifest).
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), RunError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, bytes).map_err(io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io(path))
}
