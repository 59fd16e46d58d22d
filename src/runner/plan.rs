//! Planning a run: the named stages that turn a [`RunConfig`] into a [`Plan`].
//!
//! The stages, in order: the scenarios at their scales; the live clients and one set of strategy
//! instances per usable context (with the probe); then, per scenario × interrupt point, its
//! restore point, each strategy's handoff (built, restored, checked, wrapped for governed
//! delivery) and its continuity row; last the matrix and the shard's cells. Owns: what is built
//! once and shared by cells. Must not: run a cell or write a file.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::build::{Builder, Group, JobSpec, expand_at};
use super::clients::{self, Instances};
use super::matrix::{CellSpec, HandoffKey, Matrix, PointKey, Unit, seed_scenario};
use super::prepare::{FAIL_FAST_AFTER, Prepared};
use super::{RunConfig, RunError};
use crate::delivery::GovSpec;
use crate::destination::is_simulated;
use crate::destination::live::{LiveClient, ModelConfig};
use crate::scenario::volume::Scale;
use crate::scenario::{self, Scenario};
use crate::state::RestorePoint;
use crate::strategy::Registry;

/// The scenarios of a run: every file's scenario and the benign variants of injection scenarios,
/// filtered by id.
pub fn select_scenarios(cfg: &RunConfig) -> Result<Vec<Arc<Scenario>>, RunError> {
    let base = scenario::load_source(&cfg.scenario_dir)?;
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

/// Everything a run needs, built once.
pub struct Plan {
    /// The run's scenarios, one entry per scale (the same scenario appears once per scale), as
    /// written: a point's restore point holds the scenario at its scale (`at.scenario`).
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
    /// The behavioural rates of each `sim:fitted:PATH` destination, by id.
    pub profiles: BTreeMap<String, crate::destination::profile::Rates>,
    /// Every live model of the run (destinations, then summarisers), as it runs.
    pub live_models: Vec<ModelConfig>,
    /// Tests only: the matrix index of a cell whose run panics, to prove that a panicking cell
    /// becomes an errored record and loses no other (user input cannot make a cell panic).
    #[doc(hidden)]
    pub panic_cell: Option<usize>,
    /// Tests only: the matrix index of a governed cell whose destination adapter returns a
    /// missing or wrong receipt, to prove such a cell is held.
    #[doc(hidden)]
    pub receipt_fault: Option<(usize, ReceiptFault)>,
    /// Strategies whose handoff depends on the destination's usable context (one handoff per
    /// distinct usable context); every other strategy's handoff serves every destination.
    pub windowed: BTreeSet<Arc<str>>,
    /// Where every cell's conversation goes (`OUT/conversations.jsonl.gz`, opened by the first
    /// cell); a write that failed is in its `failure`.
    pub conversations: Arc<crate::conversation::Log>,
    /// Every interrupt point of the matrix, in matrix order.
    pub order: Vec<PointKey>,
    /// The points not built yet, in matrix order (a streaming plan's: `execute` builds them
    /// while cells run); `points`, `handoffs`, `history` and `continuity` hold the others.
    pub(super) pending: Vec<Group>,
    /// What builds the pending points.
    pub builder: Arc<Builder>,
}

impl Plan {
    /// The key of the handoff a cell starts from: the one lookup of a cell's handoff.
    pub fn handoff_key(&self, c: &CellSpec) -> HandoffKey {
        super::matrix::handoff_key(&self.windowed, &self.windows, c)
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
            // Expanded here to refuse a bad volume before anything is written, then dropped:
            // the builder expands each scenario again when it reaches its points, so a run
            // holds one expanded scenario at a time, not every one.
            expand_at(&s, scale, cfg.seed)?;
            out.push((s.clone(), scale));
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
            let w = match clients::live_model(cfg, m) {
                Some(mc) if !is_simulated(m) => mc.window(),
                _ => cfg
                    .context_window
                    .unwrap_or(crate::strategy::DEFAULT_CONTEXT_WINDOW),
            };
            (m.clone(), w)
        })
        .collect()
}

/// The folders a run reads or writes besides the strategy folder, which plug-ins must not see:
/// the scenario folder, the run folder and the folder holding it (the other runs), the response
/// cache.
pub fn plugin_hidden(cfg: &RunConfig) -> Vec<std::path::PathBuf> {
    let mut v: Vec<std::path::PathBuf> = cfg
        .scenario_dir
        .folder()
        .map(Into::into)
        .into_iter()
        .collect();
    v.push(cfg.out.clone());
    v.extend(
        std::path::absolute(&cfg.out)
            .ok()
            .and_then(|o| o.parent().map(|p| p.to_path_buf())),
    );
    v.push(
        cfg.cache_dir
            .clone()
            .unwrap_or_else(crate::destination::live::Cache::default_dir),
    );
    v
}

/// The inputs a run reads, checked before anything is written (a failed start leaves no run
/// folder): its scenarios load and its ids and interrupt points name some, its strategy folder
/// loads and names every strategy. Returns the scenarios, for [`plan_with`].
pub fn check_inputs(cfg: &RunConfig) -> Result<Vec<Arc<Scenario>>, RunError> {
    let scenarios = select_scenarios(cfg)?;
    check_points(cfg, &scenarios)?;
    clients::profiles(cfg)?;
    let registry = Registry::from_source(&cfg.strategy_dir)?;
    for id in &cfg.strategies {
        let inner = clients::build_id(id)?;
        let Some(config) = registry.config(&inner) else {
            return Err(crate::strategy::StrategyError::Unknown {
                id: inner,
                known: registry.ids().join(", "),
            }
            .into());
        };
        // A plug-in that cannot be given its previous handoff cannot be chained: said before
        // anything is written, with the file and the key to change.
        let (_, cycles) = crate::strategy::chain::parse(id).map_err(RunError::Usage)?;
        let old_format = config.reads.as_deref() != Some(crate::plugin::protocol::STATE_FORMAT_4);
        if cycles > 1 && config.kind == crate::strategy::StrategyKind::Exec && old_format {
            return Err(crate::strategy::StrategyError::Config {
                file: registry.file_of(&inner),
                message: format!(
                    "`reads`: strategy `{inner}` runs chained as `{id}`, but {}",
                    crate::strategy::chain_refusal(config.reads.as_deref())
                ),
            }
            .into());
        }
    }
    Ok(scenarios)
}

/// Expands the matrix and builds every restore point and handoff, stage by stage (what tests
/// and tools that read a plan's handoffs use; a run streams them, [`plan_streaming`]).
pub fn plan(cfg: &RunConfig) -> Result<Plan, RunError> {
    plan_with(cfg, select_scenarios(cfg)?)
}

/// [`plan`] with the run's scenarios already selected ([`check_inputs`] returns them).
pub fn plan_with(cfg: &RunConfig, selected: Vec<Arc<Scenario>>) -> Result<Plan, RunError> {
    plan_stages(cfg, selected, usize::MAX)
}

/// The plan of a run that builds its points as its cells need them: the first
/// [`FAIL_FAST_AFTER`] points are built here (a plug-in that fails every one of its first
/// handoffs stops the run before anything is written), the rest by [`super::execute`] while
/// cells run, a few points ahead of them (`Plan::pending`).
pub fn plan_streaming(cfg: &RunConfig, selected: Vec<Arc<Scenario>>) -> Result<Plan, RunError> {
    plan_stages(cfg, selected, FAIL_FAST_AFTER)
}

/// The plan, with its first `build_now` points built.
fn plan_stages(
    cfg: &RunConfig,
    selected: Vec<Arc<Scenario>>,
    build_now: usize,
) -> Result<Plan, RunError> {
    clients::load_secrets(cfg);
    let mut notes = Vec::new();
    let scaled = scaled_scenarios(cfg, selected, &mut notes)?;
    let registry = Registry::from_source(&cfg.strategy_dir)?
        .with_seed(cfg.seed)
        .with_hidden(plugin_hidden(cfg));
    let cache = clients::cache(cfg);
    let live = clients::live_clients(cfg, &cache)?;
    let profiles = clients::profiles(cfg)?;
    let scenarios: Vec<Arc<Scenario>> = scaled.iter().map(|(s, _)| s.clone()).collect();
    check_points(cfg, &scenarios)?;
    let windows = windows(cfg);
    let instances = clients::instances(cfg, &registry, &live, &cache, &windows)?;
    let mut shared = Shared::new(cfg, &registry, &instances)?;
    'scenarios: for (si, (s, scale)) in scaled.iter().enumerate() {
        for it in &s.interrupts {
            if cfg
                .interrupts
                .as_ref()
                .is_some_and(|p| !p.contains(&it.point))
            {
                continue;
            }
            if shared.full() {
                break 'scenarios;
            }
            shared.interrupt_point(si, s, *scale, &it.point);
        }
    }
    if let Some(n) = cfg.sample {
        if cfg.limit.is_some() {
            return Err(RunError::Usage(
                "--sample and --limit both choose the cells to run: give one".into(),
            ));
        }
        shared.sample(n, cfg.seed)?;
        let (units, per_point) = (shared.units.len(), shared.strategies.len().max(1));
        if units != n {
            notes.push(format!(
                "--sample {n} runs {units} units: {} interrupt points × {per_point} strategies (every strategy on each point)",
                units / per_point
            ));
        }
    }
    let cells = shared.matrix(cfg);
    let selected = select_cells(cfg, &cells);
    let live_models = instances.live_models.clone();
    let mut groups = std::mem::take(&mut shared.groups);
    let order: Vec<PointKey> = groups.iter().map(|g| g.key.clone()).collect();
    let pending = groups.split_off(build_now.min(groups.len()));
    let windowed = shared.windowed;
    let builder = Arc::new(Builder::new(
        registry,
        instances,
        shared.strategies,
        cfg.seed,
        cfg.models
            .iter()
            .any(|m| crate::destination::is_simulated(m)),
    ));
    let built = builder.build(&groups, cfg.concurrency, cfg.fail_fast)?;
    let mut plan = Plan {
        scales: scaled.iter().map(|(_, sc)| *sc).collect(),
        scenarios,
        history: BTreeMap::new(),
        windows,
        notes,
        cells: Arc::new(cells),
        selected: Arc::new(selected),
        points: BTreeMap::new(),
        handoffs: BTreeMap::new(),
        continuity: Vec::new(),
        live,
        profiles,
        live_models,
        panic_cell: None,
        receipt_fault: None,
        windowed,
        conversations: Arc::new(crate::conversation::Log::new(&cfg.out, cfg.resume)),
        order,
        pending,
        builder,
    };
    for b in built {
        plan.history.insert(b.key.clone(), b.history);
        plan.points.insert(b.key, b.at);
        plan.continuity.extend(b.continuity);
        plan.handoffs.extend(b.handoffs);
    }
    Ok(plan)
}

/// The matrix indices a run folder holds: every one, or the shard's.
fn select_cells(cfg: &RunConfig, cells: &Matrix) -> Vec<usize> {
    match cfg.shard {
        None => (0..cells.len()).collect(),
        Some(sh) => (0..cells.len())
            .filter(|&i| cells.id(i).is_some_and(|id| sh.holds(&id)))
            .collect(),
    }
}

/// The matrix as the plan grows it point by point (in matrix order: the cells of a unit are its
/// models × repetitions, so `--limit` stops where the matrix is cut), and each point's work.
struct Shared {
    /// Each run strategy's governed spec (`gov:X`) and whether its handoff depends on the window.
    strategies: Vec<(Arc<str>, Option<GovSpec>, bool, u32)>,
    /// The usable context of each set of strategy instances, smallest first.
    budgets: Vec<u64>,
    windowed: BTreeSet<Arc<str>>,
    /// Each interrupt point's work, in matrix order.
    groups: Vec<Group>,
    units: Vec<Unit>,
    models: Vec<Arc<str>>,
    per_unit: u64,
    total: u64,
    limit: u64,
}

impl Shared {
    fn new(
        cfg: &RunConfig,
        registry: &Registry,
        instances: &Instances,
    ) -> Result<Shared, RunError> {
        let mut strategies = Vec::new();
        let mut windowed = BTreeSet::new();
        for id in &cfg.strategies {
            let (base, cycles) = crate::strategy::chain::parse(id).map_err(RunError::Usage)?;
            let gov = GovSpec::parse(base).transpose()?;
            let depends = registry.depends_on_window(&clients::build_id(id)?);
            let id: Arc<str> = Arc::from(id.as_str());
            if depends {
                windowed.insert(id.clone());
            }
            strategies.push((id, gov, depends, cycles));
        }
        let models: Vec<Arc<str>> = cfg.models.iter().map(|m| Arc::from(m.as_str())).collect();
        Ok(Shared {
            strategies,
            budgets: instances.by_budget.iter().map(|(b, _)| *b).collect(),
            windowed,
            groups: Vec::new(),
            per_unit: (models.len() as u64).saturating_mul(u64::from(cfg.reps)),
            models,
            units: Vec::new(),
            total: 0,
            limit: cfg.limit.map(|l| l as u64).unwrap_or(u64::MAX),
        })
    }

    /// Keeps the points of a stratified sample of `n` units ([`super::matrix::sample_points`])
    /// and drops the rest, with their handoffs (never built).
    fn sample(&mut self, n: usize, seed: u64) -> Result<(), RunError> {
        let chosen = super::matrix::sample_points(&self.units, self.strategies.len(), n, seed)
            .map_err(RunError::Usage)?;
        let keep = |s: usize, p: &Arc<str>| chosen.contains(&(s, p.clone()));
        self.units.retain(|u| keep(u.scenario, &u.point));
        self.groups.retain(|g| keep(g.key.scenario, &g.key.point));
        self.total = (self.units.len() as u64).saturating_mul(self.per_unit);
        Ok(())
    }

    /// Whether `--limit` is reached.
    fn full(&self) -> bool {
        self.total >= self.limit
    }

    /// One interrupt point: its units of the matrix and the handoffs they need (one per usable
    /// context for a strategy that depends on the window, else one), described, not built.
    fn interrupt_point(&mut self, si: usize, s: &Arc<Scenario>, scale: Scale, point: &str) {
        let point: Arc<str> = Arc::from(point);
        let scenario_id: Arc<str> = Arc::from(s.id.as_str());
        let seed_id: Arc<str> = Arc::from(seed_scenario(&s.id, scale).as_str());
        let largest = self.budgets.last().copied();
        let mut jobs = Vec::new();
        for sti in 0..self.strategies.len() {
            if self.full() {
                break;
            }
            let (strategy, _, depends, _) = self.strategies[sti].clone();
            for (bi, b) in self.budgets.iter().enumerate() {
                let key = HandoffKey {
                    scenario: si,
                    point: point.clone(),
                    strategy: strategy.clone(),
                    window: depends.then_some(*b),
                };
                if jobs.iter().any(|j: &JobSpec| j.key == key) {
                    continue;
                }
                jobs.push(JobSpec {
                    key,
                    sti,
                    budget: bi,
                    // One continuity line per scenario × scale × point × strategy: for a
                    // window-bounded strategy, the handoff for the largest window.
                    continuity: !depends || Some(*b) == largest,
                });
            }
            self.units.push(Unit {
                scenario: si,
                scenario_id: scenario_id.clone(),
                scale,
                seed_id: seed_id.clone(),
                point: point.clone(),
                strategy: self.strategies[sti].0.clone(),
            });
            self.total = self.total.saturating_add(self.per_unit);
        }
        self.groups.push(Group {
            key: PointKey {
                scenario: si,
                point,
            },
            scenario: s.clone(),
            scale,
            jobs,
        });
    }

    /// The matrix of the units built (after `--limit`).
    fn matrix(&mut self, cfg: &RunConfig) -> Matrix {
        let len = self.total.min(self.limit).min(usize::MAX as u64) as usize;
        Matrix {
            units: std::mem::take(&mut self.units),
            models: self.models.clone(),
            reps: u64::from(cfg.reps.max(1)),
            seed: cfg.seed,
            len: if self.per_unit == 0 { 0 } else { len },
        }
    }
}

/// Tests only: how the destination adapter of one cell misbehaves, to prove that a missing or
/// wrong receipt holds the cell (nothing a user supplies can make an adapter do this).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiptFault {
    /// The adapter returns no receipt.
    Missing,
    /// The adapter received altered bytes (its receipt then differs).
    Altered,
}
