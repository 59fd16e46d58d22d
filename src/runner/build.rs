//! Building what the cells of one interrupt point share: its restore point, each strategy's
//! handoffs (built, restored, checked, wrapped for governed delivery) and its continuity rows.
//!
//! Owns: [`Builder`] (the run's strategy instances, kept for as long as handoffs are built),
//! [`Group`] (one interrupt point's work, described before anything is built) and [`Built`]
//! (what building it gives), and the CPU time building took. Must not: decide which points a
//! run needs or when (the plan and the stream do), run a cell, or write a file.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::RunError;
use super::clients::{self, Instances};
use super::matrix::{HandoffKey, PointKey};
use super::prepare::{FAIL_FAST_AFTER, Prepared, plugin_failing, prepare, rule_breaks};
use crate::audit::rule_check;
use crate::delivery::GovSpec;
use crate::record::ErrorClass;
use crate::scenario::Scenario;
use crate::scenario::volume::{Scale, expand, volume_seed};
use crate::state::RestorePoint;
use crate::strategy::Registry;

/// The run's strategies and their instances: what building a handoff needs, shared by the plan
/// and the thread that builds points while cells run.
pub struct Builder {
    pub(super) registry: Registry,
    pub(super) instances: Instances,
    /// Each run strategy's id, governed spec (`gov:X`), whether its handoff depends on the
    /// window, and its chain's compactions (`--cycles`; 1 without a chain).
    pub(super) strategies: Vec<(Arc<str>, Option<GovSpec>, bool, u32)>,
    /// CPU time spent building, in microseconds (Linux: each building thread's own time).
    cpu_us: AtomicU64,
    /// The run's seed (volume is generated from it).
    seed: u64,
    /// The scenario last expanded to its scale: points come scenario by scenario, so each is
    /// expanded once and only one is held.
    expanded: std::sync::Mutex<Option<(usize, Arc<Scenario>)>>,
    /// The threads handoffs are built on, started by the first build with more than one worker.
    pool: std::sync::OnceLock<Pool>,
    /// Whether a simulated destination continues the handoffs: each is then read once here
    /// ([`crate::destination::Reading`]) rather than by its cells.
    reads: bool,
}

/// One interrupt point's work, described: the scenario (as written; the builder expands it to
/// `scale`), the point, and the handoffs its cells need, in matrix order.
#[derive(Clone)]
pub struct Group {
    pub key: PointKey,
    pub scenario: Arc<Scenario>,
    pub scale: Scale,
    pub jobs: Vec<JobSpec>,
}

/// One handoff a point needs: the strategy (`sti` among the run's strategies), the usable
/// context it is built for (`budget` among the instances), and whether its continuity row is
/// kept.
#[derive(Clone)]
pub struct JobSpec {
    pub key: HandoffKey,
    pub sti: usize,
    pub budget: usize,
    pub continuity: bool,
}

/// What building a group gives.
pub struct Built {
    pub key: PointKey,
    pub at: Arc<RestorePoint>,
    /// Full-history tokens (the unbounded transcript) at the point.
    pub history: u64,
    pub handoffs: Vec<(HandoffKey, Prepared)>,
    pub continuity: Vec<crate::continuity::ContinuityEval>,
}

struct Job<'a> {
    spec: &'a JobSpec,
    at: Arc<RestorePoint>,
    scale: Scale,
    full_history: Arc<str>,
    /// The point's inert identifiers (`crate::carried::inert_ids`), shared by its handoffs.
    inert: Arc<std::collections::BTreeSet<String>>,
    /// The restore points of the longest chain its point's jobs need, `at` last (empty when
    /// none is chained).
    chain: Arc<Vec<Arc<RestorePoint>>>,
}

impl Job<'_> {
    /// The chain this job's strategy compacts over, if it is chained: the last `cycles` points.
    fn chain(
        &self,
        strategies: &[(Arc<str>, Option<GovSpec>, bool, u32)],
    ) -> Option<(u32, &[Arc<RestorePoint>])> {
        let cycles = strategies[self.spec.sti].3;
        (cycles > 1).then(|| {
            let n = self.chain.len().min(cycles as usize);
            (cycles, &self.chain[self.chain.len() - n..])
        })
    }
}

impl Builder {
    pub(super) fn new(
        registry: Registry,
        instances: Instances,
        strategies: Vec<(Arc<str>, Option<GovSpec>, bool, u32)>,
        seed: u64,
        reads: bool,
    ) -> Builder {
        Builder {
            registry,
            instances,
            strategies,
            cpu_us: AtomicU64::new(0),
            seed,
            expanded: std::sync::Mutex::new(None),
            pool: std::sync::OnceLock::new(),
            reads,
        }
    }

    /// The scenario of `g` at its scale.
    fn scenario(&self, g: &Group) -> Result<Arc<Scenario>, RunError> {
        let mut last = self.expanded.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((si, s)) = &*last
            && *si == g.key.scenario
        {
            return Ok(s.clone());
        }
        let s = expand_at(&g.scenario, g.scale, self.seed)?;
        *last = Some((g.key.scenario, s.clone()));
        Ok(s)
    }

    /// CPU seconds spent building so far (0 where the platform does not say).
    pub fn cpu_seconds(&self) -> f64 {
        self.cpu_us.load(Ordering::Relaxed) as f64 / 1e6
    }

    /// Builds `groups` together, `concurrency` handoffs at a time (plug-ins and live
    /// summarisers mostly wait: a slow plug-in costs its time once per `concurrency` handoffs),
    /// in the groups' order whatever the scheduling. With `fail_fast`, a strategy whose first
    /// [`FAIL_FAST_AFTER`] handoffs (in job order) all fail with a plug-in error stops the
    /// building with [`RunError`] before anything else is built.
    pub fn build(
        self: &Arc<Self>,
        groups: &[Group],
        concurrency: usize,
        fail_fast: bool,
    ) -> Result<Vec<Built>, RunError> {
        let cpu0 = thread_cpu_us();
        let mut points = Vec::with_capacity(groups.len());
        let mut jobs: Vec<Job> = Vec::new();
        for g in groups {
            let at = Arc::new(
                RestorePoint::build(self.scenario(g)?, &g.key.point)
                    .map_err(crate::strategy::StrategyError::from)?,
            );
            let full_history: Arc<str> = Arc::from(
                at.state
                    .events
                    .iter()
                    .map(|e| e.text.as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
            let history = crate::strategy::full_history_tokens(&at.state);
            let inert = Arc::new(crate::carried::inert_ids(&at));
            let longest = g
                .jobs
                .iter()
                .map(|j| self.strategies[j.sti].3)
                .max()
                .unwrap_or(1);
            let chain = Arc::new(if longest > 1 {
                crate::strategy::chain::restore_points(&at, longest)
                    .map_err(crate::strategy::StrategyError::from)?
            } else {
                Vec::new()
            });
            for spec in &g.jobs {
                jobs.push(Job {
                    spec,
                    at: at.clone(),
                    scale: g.scale,
                    full_history: full_history.clone(),
                    inert: inert.clone(),
                    chain: chain.clone(),
                });
            }
            points.push((g.key.clone(), at, history));
        }
        self.add_cpu(cpu0);
        let built = self.build_jobs(&jobs, concurrency, fail_fast)?;
        let cpu1 = thread_cpu_us();
        let mut out: Vec<Built> = points
            .into_iter()
            .map(|(key, at, history)| Built {
                key,
                at,
                history,
                handoffs: Vec::new(),
                continuity: Vec::new(),
            })
            .collect();
        let mut gi = 0usize;
        for (j, mut prepared) in jobs.iter().zip(built) {
            while out[gi].key.scenario != j.spec.key.scenario
                || out[gi].key.point != j.spec.key.point
            {
                gi += 1;
            }
            let gov = self.strategies[j.spec.sti].1.clone();
            if let (
                Some(g),
                Prepared::Ready {
                    handoff,
                    governed,
                    rule_violations,
                    ..
                },
            ) = (&gov, &mut prepared)
            {
                let wrapped = crate::delivery::prepare(&j.at, g, handoff.clone())?;
                // X's rules, with its constraints judged on what the destination receives.
                let checked = rule_check(&wrapped.inner, &wrapped.delivered, &j.at);
                *rule_violations = Some(rule_breaks(checked));
                *handoff = wrapped.delivered.clone();
                *governed = Some(Arc::new(wrapped));
            }
            // A governed handoff is measured and read as delivered (the others were, by the job).
            self.measure(&j.at, &j.inert, &mut prepared);
            if let Prepared::Ready { handoff, .. } = &prepared
                && j.spec.continuity
            {
                let mut c = crate::continuity::evaluate(&j.at, handoff, &j.full_history);
                c.scale = j.scale.to_string();
                if let Some(chain) = chain_of(&prepared) {
                    // A chain's row is the run id's, and it passes only if every compaction did.
                    c.strategy = self.strategies[j.spec.sti].0.to_string();
                    let n = chain.steps.len();
                    for (k, st) in chain.steps[..n - 1].iter().enumerate() {
                        if st.continuity_passed == Some(false) {
                            c.passed = false;
                            c.violations.push(format!(
                                "compaction {} of {n} (at {}) failed the continuity eval",
                                k + 1,
                                st.interrupt
                            ));
                        }
                    }
                }
                out[gi].continuity.push(c);
            }
            out[gi].handoffs.push((j.spec.key.clone(), prepared));
        }
        self.add_cpu(cpu1);
        Ok(out)
    }

    /// A job's handoff, with what [`Builder::measure`] adds when the handoff is delivered as
    /// built (a governed one is measured once it is wrapped).
    fn prepare_measured(
        &self,
        strategy: &dyn crate::strategy::Strategy,
        sti: usize,
        at: &RestorePoint,
        chain: Option<(u32, &[Arc<RestorePoint>])>,
        inert: &BTreeSet<String>,
    ) -> Result<Prepared, RunError> {
        let mut p = prepare(&self.registry, strategy, at, chain);
        if let Ok(p) = &mut p
            && self.strategies[sti].1.is_none()
        {
            self.measure(at, inert, p);
        }
        p
    }

    /// What depends on the handoff alone, done once for all its cells: what it carries
    /// ([`crate::carried`]) and, when a simulated destination continues it, its reading.
    /// Skips what is done already.
    fn measure(&self, at: &RestorePoint, inert: &BTreeSet<String>, prepared: &mut Prepared) {
        if let Prepared::Ready {
            handoff,
            carried,
            reading,
            ..
        } = prepared
        {
            if carried.is_none() {
                *carried = Some(crate::carried::measure_with(at, handoff, inert));
            }
            if self.reads && reading.is_none() {
                let facts = at.scenario.facts_at(&at.interrupt);
                *reading = Some(crate::destination::Reading::prepare(handoff, facts));
            }
        }
    }

    fn add_cpu(&self, since: Option<u64>) {
        if let (Some(a), Some(b)) = (since, thread_cpu_us()) {
            self.cpu_us
                .fetch_add(b.saturating_sub(a), Ordering::Relaxed);
        }
    }

    /// Every job's handoff, in job order. With more than one worker the jobs go to the
    /// builder's threads ([`Pool`]), which live as long as the builder: the per-thread memos
    /// (token counts, lowered texts, verdicts) stay warm from one point to the next, as when a
    /// plan built every point at once.
    fn build_jobs(
        self: &Arc<Self>,
        jobs: &[Job],
        concurrency: usize,
        fail_fast: bool,
    ) -> Result<Vec<Prepared>, RunError> {
        let mut slots: Vec<Option<Result<Prepared, RunError>>> =
            jobs.iter().map(|_| None).collect();
        // Each strategy's first handoffs, in job order: when they all fail with a plug-in error
        // the run stops (decided on the same jobs whatever the scheduling).
        let mut firsts: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (i, j) in jobs.iter().enumerate() {
            let f = firsts.entry(j.spec.sti).or_default();
            if f.len() < FAIL_FAST_AFTER {
                f.push(i);
            }
        }
        let failed_start = |slots: &[Option<Result<Prepared, RunError>>], sti: usize| -> bool {
            firsts.get(&sti).is_some_and(|f| {
                f.iter().all(|&k| {
                    matches!(&slots[k], Some(Ok(Prepared::Failed(e))) if e.class == ErrorClass::Plugin)
                })
            })
        };
        let stop = Arc::new(AtomicBool::new(false));
        let workers = concurrency.clamp(1, jobs.len().max(1));
        if workers == 1 {
            let cpu0 = thread_cpu_us();
            for (i, j) in jobs.iter().enumerate() {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let strategy = self.instances.by_budget[j.spec.budget].1[j.spec.sti].as_ref();
                let chain = j.chain(&self.strategies);
                slots[i] =
                    Some(self.prepare_measured(strategy, j.spec.sti, &j.at, chain, &j.inert));
                if fail_fast && firsts[&j.spec.sti].contains(&i) && failed_start(&slots, j.spec.sti)
                {
                    stop.store(true, Ordering::Relaxed);
                }
            }
            self.add_cpu(cpu0);
        } else {
            let pool = self.pool.get_or_init(|| Pool::new(workers));
            let (tx, rx) = std::sync::mpsc::channel();
            for (i, j) in jobs.iter().enumerate() {
                let (b, at, spec, stop, tx, chain, inert) = (
                    self.clone(),
                    j.at.clone(),
                    j.spec.clone(),
                    stop.clone(),
                    tx.clone(),
                    j.chain.clone(),
                    j.inert.clone(),
                );
                pool.run(Box::new(move || {
                    // A job not started when the run stopped is not built.
                    let built = (!stop.load(Ordering::Relaxed)).then(|| {
                        let cpu0 = thread_cpu_us();
                        let strategy = b.instances.by_budget[spec.budget].1[spec.sti].as_ref();
                        let cycles = b.strategies[spec.sti].3;
                        let n = chain.len().min(cycles as usize);
                        let points = (cycles > 1).then(|| (cycles, &chain[chain.len() - n..]));
                        let p = b.prepare_measured(strategy, spec.sti, &at, points, &inert);
                        b.add_cpu(cpu0);
                        p
                    });
                    let _ = tx.send((i, built));
                }));
            }
            drop(tx);
            // One answer per job (a job that panicked past `prepare` drops its sender: the
            // loop ends when every sender is gone).
            for (i, built) in rx.iter() {
                slots[i] = built;
                let sti = jobs[i].spec.sti;
                if fail_fast && firsts[&sti].contains(&i) && failed_start(&slots, sti) {
                    stop.store(true, Ordering::Relaxed);
                }
            }
        }
        if stop.load(Ordering::Relaxed) {
            // The first strategy, in job order, whose start failed.
            for (&sti, f) in &firsts {
                if failed_start(&slots, sti) {
                    let errors: Vec<&crate::record::CellError> = f
                        .iter()
                        .filter_map(|&k| match &slots[k] {
                            Some(Ok(Prepared::Failed(e))) => Some(e),
                            _ => None,
                        })
                        .collect();
                    let id = clients::build_id(&self.strategies[sti].0)?;
                    return Err(plugin_failing(&self.registry, &id, &errors, &jobs[f[0]].at));
                }
            }
        }
        slots
            .into_iter()
            .map(|slot| {
                slot.ok_or_else(|| RunError::Harness("a handoff's build did not finish".into()))?
            })
            .collect()
    }
}

/// The builder's threads: each takes the next task and runs it, until the builder (holding
/// the only sender) is dropped.
struct Pool {
    tx: std::sync::Mutex<std::sync::mpsc::Sender<Task>>,
}

type Task = Box<dyn FnOnce() + Send>;

impl Pool {
    fn new(threads: usize) -> Pool {
        let (tx, rx) = std::sync::mpsc::channel::<Task>();
        let rx = Arc::new(std::sync::Mutex::new(rx));
        for _ in 0..threads {
            let rx = rx.clone();
            std::thread::spawn(move || {
                loop {
                    let task = match rx.lock() {
                        Ok(r) => r.recv(),
                        Err(_) => break,
                    };
                    match task {
                        Ok(t) => t(),
                        Err(_) => break,
                    }
                }
            });
        }
        Pool {
            tx: std::sync::Mutex::new(tx),
        }
    }

    fn run(&self, t: Task) {
        if let Ok(tx) = self.tx.lock() {
            let _ = tx.send(t);
        }
    }
}

/// `s` at `scale` (its volume generated from the run's seed); `base` is `s` itself.
pub(super) fn expand_at(
    s: &Arc<Scenario>,
    scale: Scale,
    seed: u64,
) -> Result<Arc<Scenario>, RunError> {
    if scale == Scale::Base || s.volume.is_none() {
        return Ok(s.clone());
    }
    let x = expand(s, scale, volume_seed(seed, &s.id, scale)).map_err(|p| RunError::Volume {
        scenario: s.id.clone(),
        scale: scale.to_string(),
        problems: p.iter().map(|p| p.to_string()).collect(),
    })?;
    Ok(Arc::new(x))
}

/// This thread's CPU time in microseconds, from /proc's scheduler statistics (Linux, in
/// nanoseconds: the clock-tick figures of `stat` are too coarse for a point's few
/// milliseconds); `None` elsewhere.
fn thread_cpu_us() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1_000)
}

/// The chain a prepared handoff comes from, if it is chained.
fn chain_of(p: &Prepared) -> Option<&crate::record::Chain> {
    match p {
        Prepared::Ready { chain, .. } => chain.as_deref(),
        Prepared::Failed(_) => None,
    }
}
