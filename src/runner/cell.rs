//! One cell: a destination continues from a handoff in a fresh copy of the interrupted world,
//! within its step budget (every model turn counts) and, for live destinations, its wall-clock
//! budget; a cell that fails keeps what it spent (`diagnostics.live`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;

use super::{HandoffKey, Plan, PointKey, Prepared, RunConfig, RunRecord, Status};
use crate::destination::live::{CallContext, LiveAgent, LiveClient};
use crate::destination::{Action, ActionResult, Destination, SimAgent, sim_kind};
use crate::record::{ErrorClass, GovernedCell};
use crate::scenario::{Object, Scenario};
use crate::score::{self, Run};
use crate::state::RestorePoint;
use crate::tokens;
use crate::world::{CallResult, Phase};

/// The identity of a cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellSpec {
    /// Index into the plan's scenarios.
    pub scenario: usize,
    // Shared strings: a 100,000-cell matrix holds each name once.
    pub point: Arc<str>,
    pub strategy: Arc<str>,
    pub model: Arc<str>,
    pub rep: u32,
    pub seed: u64,
    /// The history scale of the cell's scenario (the plan's `scales[scenario]`).
    pub scale: crate::scenario::volume::Scale,
}

/// A cell's identity as records name it (scenario id, interrupt point, strategy, model,
/// repetition): the one definition that the response cache key, `--resume` and the journal build
/// on, for cells ([`CellSpec::identity`]) and records ([`record_identity`]) alike, so a field
/// added to the identity reaches all of them.
pub fn identity(
    scenario: &str,
    scale: &str,
    interrupt: &str,
    strategy: &str,
    model: &str,
    rep: u32,
) -> serde_json::Value {
    let mut v = json!({
        "scenario": scenario,
        "interrupt": interrupt,
        "strategy": strategy,
        "model": model,
        "rep": rep,
    });
    // A base-scale cell keeps the identity (and so the cache key) it had before scales existed.
    if scale != "base" {
        v["scale"] = json!(scale);
    }
    v
}

/// The identity of the cell a record is of.
pub fn record_identity(r: &RunRecord) -> serde_json::Value {
    identity(
        &r.scenario,
        &r.scale,
        &r.interrupt,
        &r.strategy,
        &r.model,
        r.rep,
    )
}

impl CellSpec {
    /// The cell's [`identity`].
    pub fn identity(&self, scenario_id: &str) -> serde_json::Value {
        identity(
            scenario_id,
            &self.scale.to_string(),
            &self.point,
            &self.strategy,
            &self.model,
            self.rep,
        )
    }
}

/// The harness's system prompt for destinations: the same for every strategy.
pub const SYSTEM_PROMPT: &str = "You are continuing a task that another agent session started and could not finish. \
The user message that follows is the handoff from that session. Use the tools to finish the task. \
Call ask_user to ask the user, request_approval to ask for an approval, and finish(status, report, degraded) \
when you are done or must stop.";

/// What all cells share, read-only.
pub struct Shared {
    scenarios: Vec<Arc<Scenario>>,
    history: BTreeMap<PointKey, u64>,
    windows: BTreeMap<String, u64>,
    points: BTreeMap<PointKey, Arc<RestorePoint>>,
    handoffs: BTreeMap<HandoffKey, Prepared>,
    /// Fixed context tokens (system prompt + tool definitions) per handoff.
    context: BTreeMap<HandoffKey, u64>,
    step_budget: u32,
    attention: f64,
    /// Live models by name.
    pub live: BTreeMap<String, Arc<LiveClient>>,
    panic_cell: Option<usize>,
    receipt_fault: Option<(usize, ReceiptFault)>,
    source_model: Option<String>,
}

impl Shared {
    pub fn new(plan: &Plan, cfg: &RunConfig) -> Shared {
        let mut context = BTreeMap::new();
        let mut per_scenario: BTreeMap<(usize, Arc<str>), u64> = BTreeMap::new();
        for (key, p) in &plan.handoffs {
            let Prepared::Ready { handoff: h, .. } = p else {
                continue;
            };
            // The first handoff of a strategy in a scenario fixes its context (tools and extra
            // tools do not change between interrupt points).
            let tokens = *per_scenario
                .entry((key.scenario, key.strategy.clone()))
                .or_insert_with(|| {
                    let tools = json!(plan.scenarios[key.scenario]
                        .world
                        .tools
                        .iter()
                        .map(|t| json!({"name": t.name, "description": t.description, "parameters": t.params}))
                        .collect::<Vec<_>>());
                    tokens::count(SYSTEM_PROMPT)
                        + tokens::count(&tools.to_string())
                        + h.extra_tools
                            .iter()
                            .map(|t| tokens::count(&t.parameters.to_string()) + tokens::count(&t.description))
                            .sum::<u64>()
                });
            context.insert(key.clone(), tokens);
        }
        Shared {
            scenarios: plan.scenarios.clone(),
            history: plan.history.clone(),
            windows: plan.windows.clone(),
            points: plan.points.clone(),
            handoffs: plan.handoffs.clone(),
            context,
            step_budget: cfg.step_budget,
            attention: cfg.attention,
            live: plan.live.clone(),
            panic_cell: plan.panic_cell,
            receipt_fault: plan.receipt_fault,
            source_model: cfg.source_model.clone(),
        }
    }
}

impl Shared {
    /// The record of a cell whose run panicked: an errored cell (`error_class: harness`), never a
    /// lost one.
    pub fn panicked(&self, c: &CellSpec, payload: Box<dyn std::any::Any + Send>) -> RunRecord {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into());
        let scenario = self
            .scenarios
            .get(c.scenario)
            .map(|s| s.id.clone())
            .unwrap_or_else(|| format!("<scenario #{}>", c.scenario));
        errored(
            &scenario,
            c,
            ErrorClass::Harness,
            format!("the harness failed in this cell (a bug; please report it): {what}"),
        )
    }
}

fn to_result(r: &CallResult) -> ActionResult {
    ActionResult {
        text: r.text(),
        value: r.output.as_ref().ok().cloned(),
        ok: r.output.is_ok(),
    }
}

fn errored(scenario: &str, c: &CellSpec, class: ErrorClass, message: String) -> RunRecord {
    RunRecord {
        source: crate::record::Source::Scenario,
        transcript: None,
        governed: None,
        error_class: Some(class),
        scenario: scenario.to_string(),
        scale: c.scale.to_string(),
        interrupt: c.point.to_string(),
        strategy: c.strategy.to_string(),
        model: c.model.to_string(),
        rep: c.rep,
        seed: c.seed,
        status: Status::Errored,
        error: Some(message),
        metrics: score::Metrics {
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
            history_tokens: 0,
            compression_ratio: 0.0,
        },
        diagnostics: Default::default(),
    }
}

/// An errored record that keeps what the destination spent before the failure.
fn errored_with(
    scenario: &str,
    c: &CellSpec,
    class: ErrorClass,
    message: String,
    dest: &mut dyn Destination,
    started: &Instant,
    steps: u32,
) -> RunRecord {
    let mut r = errored(scenario, c, class, message);
    r.metrics.completion_ms = dest.clock_ms(started);
    r.diagnostics.steps = steps;
    r.diagnostics.live = dest.report().live;
    if let Some(l) = &r.diagnostics.live {
        r.metrics.total_tokens = l.input_tokens + l.output_tokens;
    }
    r
}

/// Runs one cell to its record. Never panics on scenario content: anything that goes wrong is an
/// errored record. `index` is the cell's place in the run (for progress events).
pub async fn run_cell(shared: &Shared, c: &CellSpec, index: usize) -> RunRecord {
    if shared.panic_cell == Some(index) {
        panic!("test hook: cell {index} panics");
    }
    let started = Instant::now();
    let s = &shared.scenarios[c.scenario];
    let window = shared
        .windows
        .get(&*c.model)
        .copied()
        .unwrap_or(crate::strategy::DEFAULT_CONTEXT_WINDOW);
    let usable = crate::strategy::usable_context(window);
    let key = [usable, 0]
        .into_iter()
        .map(|w| HandoffKey {
            scenario: c.scenario,
            point: c.point.clone(),
            strategy: c.strategy.clone(),
            window: w,
        })
        .find(|k| shared.handoffs.contains_key(k))
        .unwrap_or(HandoffKey {
            scenario: c.scenario,
            point: c.point.clone(),
            strategy: c.strategy.clone(),
            window: 0,
        });
    let history_tokens = shared
        .history
        .get(&PointKey {
            scenario: c.scenario,
            point: c.point.clone(),
        })
        .copied()
        .unwrap_or(0);
    let at = shared.points.get(&PointKey {
        scenario: c.scenario,
        point: c.point.clone(),
    });
    let (at, handoff, (rule_violations, upgrades), governed) = match (at, shared.handoffs.get(&key))
    {
        (
            Some(at),
            Some(Prepared::Ready {
                handoff,
                rule_violations,
                upgrades,
                governed,
            }),
        ) => (at, handoff.clone(), (rule_violations, upgrades), governed),
        (_, Some(Prepared::Failed(e))) => {
            return errored(
                &s.id,
                c,
                e.class,
                format!("building the handoff: {}", e.message),
            );
        }
        _ => {
            return errored(
                &s.id,
                c,
                ErrorClass::Harness,
                "no prepared state for this cell".into(),
            );
        }
    };
    // Governed delivery: lineage, the context report, the envelope and the adapter's receipt.
    let mut gov_cell = None;
    let handoff = match governed {
        None => handoff,
        Some(g) => match admit(shared, g, c, s, at, index) {
            Ok(Admitted::Deliver(h, cell)) => {
                gov_cell = Some(cell);
                h
            }
            Ok(Admitted::Stop(cell)) => {
                let mut r = not_continued(s, c, at, 0, history_tokens, started);
                r.governed = Some(cell);
                return r;
            }
            Err(message) => return errored(&s.id, c, ErrorClass::Harness, message),
        },
    };
    let handoff = &handoff;
    if handoff.tokens_at_restore > usable {
        // The handoff cannot be delivered at all: a failed continuation, recorded as such —
        // never cut to fit behind the strategy's back.
        let mut r = overflow(s, c, at, handoff, history_tokens, window, started);
        r.governed = gov_cell;
        return r;
    }
    let mut world = at.world.clone();
    // A live cell's wall-clock budget: (deadline, seconds).
    let mut deadline: Option<(tokio::time::Instant, f64)> = None;
    let mut dest: Box<dyn Destination> = if let Some(kind) = sim_kind(&c.model) {
        Box::new(SimAgent::new(
            kind,
            s.clone(),
            &at.interrupt,
            handoff,
            c.seed,
            shared.attention,
        ))
    } else if let Some(client) = shared.live.get(&*c.model) {
        deadline = Some((
            tokio::time::Instant::now()
                + std::time::Duration::from_secs_f64(
                    client.config.cell_timeout_s.clamp(0.001, 1e7),
                ),
            client.config.cell_timeout_s,
        ));
        Box::new(LiveAgent::new(
            client.clone(),
            SYSTEM_PROMPT,
            s,
            handoff,
            CallContext {
                identity: c.identity(&s.id),
                seed: c.seed,
                cell: Some(index),
            },
            shared.step_budget,
        ))
    } else {
        return errored(
            &s.id,
            c,
            ErrorClass::Harness,
            format!("unknown destination `{}`", c.model),
        );
    };
    let offers_retrieve = handoff.extra_tools.iter().any(|t| t.name == "retrieve");

    // Token accounting of a chat loop: every turn re-reads the whole context.
    let mut context = shared.context.get(&key).copied().unwrap_or(0) + handoff.tokens_at_restore;
    let mut total_tokens = 0u64;
    let mut first_action_ms = None;
    let mut last: Option<ActionResult> = None;
    let mut finish = None;
    let mut degraded = false;
    let mut steps = 0u32;
    let mut actions = 0u32;
    while steps < shared.step_budget {
        let next = match deadline {
            Some((at, _)) => tokio::time::timeout_at(at, dest.next_action(last.as_ref()))
                .await
                .ok(),
            None => Some(dest.next_action(last.as_ref()).await),
        };
        let action = match next {
            Some(Ok(Action::OutOfSteps)) => {
                steps = actions + dest.steps_without_action();
                break;
            }
            Some(Ok(a)) => a,
            Some(Err(e)) => {
                let steps = actions + dest.steps_without_action();
                return errored_with(&s.id, c, e.class, e.message, dest.as_mut(), &started, steps);
            }
            None => {
                let steps = actions + dest.steps_without_action();
                let secs = deadline.map(|d| d.1).unwrap_or_default();
                let message = format!(
                    "model `{}`: the cell's wall-clock budget of {secs} s (cell_timeout_s) ran out after {steps} steps; the request in flight was abandoned",
                    c.model
                );
                return errored_with(
                    &s.id,
                    c,
                    ErrorClass::Budget,
                    message,
                    dest.as_mut(),
                    &started,
                    steps,
                );
            }
        };
        actions += 1;
        steps = actions + dest.steps_without_action();
        let action_tokens =
            tokens::count_cached(&serde_json::to_string(&action).unwrap_or_default());
        total_tokens += context + action_tokens;
        let result = match &action {
            Action::Call { tool, args } => {
                first_action_ms.get_or_insert_with(|| dest.clock_ms(&started));
                to_result(&world.call(Phase::Continuation, tool, args, None, None))
            }
            Action::AskUser { question } => {
                let mut a = Object::new();
                a.insert("question".into(), json!(question));
                let answer = s.user.answer(question).to_string();
                to_result(&world.record_harness(
                    Phase::Continuation,
                    "ask_user",
                    a,
                    None,
                    Ok(json!(answer)),
                ))
            }
            Action::RequestApproval { approval_id } => {
                first_action_ms.get_or_insert_with(|| dest.clock_ms(&started));
                to_result(&world.request_approval(Phase::Continuation, approval_id))
            }
            Action::Retrieve { resource } => {
                if offers_retrieve {
                    let mut r = to_result(&world.retrieve(Phase::Continuation, resource));
                    if let Some(seen) = handoff
                        .checkpoint
                        .as_ref()
                        .and_then(|cp| cp.resources.iter().find(|x| &x.key == resource))
                        && world
                            .resource(resource)
                            .is_some_and(|now| now.revision != seen.revision)
                    {
                        r.text = format!(
                            "STALE: {resource} changed since the checkpoint (revision {} then).\n{}",
                            seen.revision, r.text
                        );
                    }
                    r
                } else {
                    ActionResult {
                        text: "ERROR: unknown tool `retrieve`".into(),
                        value: None,
                        ok: false,
                    }
                }
            }
            Action::Finish {
                status,
                report,
                degraded: d,
            } => {
                let mut a = Object::new();
                a.insert("status".into(), json!(status.as_str()));
                a.insert("report".into(), json!(report));
                a.insert("degraded".into(), json!(d));
                world.record_harness(
                    Phase::Continuation,
                    "finish",
                    a,
                    None,
                    Ok(json!("finished")),
                );
                finish = Some(*status);
                degraded = *d;
                break;
            }
            Action::OutOfSteps => break,
        };
        context += action_tokens + tokens::count_cached(&result.text);
        last = Some(result);
    }
    let completion_ms = dest.clock_ms(&started);
    let run = Run {
        scenario: s,
        interrupt: &at.interrupt,
        world: &world,
        finish,
        degraded,
        restore_tokens: handoff.tokens_at_restore,
        total_tokens,
        first_action_ms: first_action_ms.unwrap_or(completion_ms),
        completion_ms,
        steps,
        step_budget_exhausted: finish.is_none(),
    };
    let report = dest.report();
    let live = report.live;
    let mut run = run;
    if let Some(l) = &live {
        // A live cell's cost is what the provider reported (or tiktoken counted).
        run.total_tokens = l.input_tokens + l.output_tokens;
    }
    // Facts the handoff did not show, apart from those it showed and the distraction model made
    // the destination miss: the first are the handoff's, the second the destination's.
    let forgotten = report.forgotten.clone();
    let not_shown: Vec<String> = report
        .lost_facts
        .into_iter()
        .filter(|f| !forgotten.contains(f))
        .collect();
    let (metrics, mut diagnostics) = score::score(&run, not_shown, report.obeyed);
    diagnostics.facts_forgotten = forgotten;
    diagnostics.live = live;
    let compaction = handoff.compaction.as_ref();
    let mut metrics = metrics;
    metrics.compaction_tokens = compaction
        .map(|l| l.input_tokens + l.output_tokens)
        .unwrap_or(0);
    diagnostics.compaction = compaction.cloned();
    diagnostics.provenance_upgrades = upgrades.clone();
    diagnostics.checkpoint_checked = rule_violations.is_some();
    diagnostics.checkpoint_rule_violations = rule_violations.clone().unwrap_or_default();
    metrics.history_tokens = history_tokens;
    metrics.compression_ratio = ratio(handoff.tokens_at_restore, history_tokens);
    if gov_cell.as_ref().is_some_and(|g| g.held) {
        // A held run's outcome cannot be accepted: responsibility for it is unknown.
        metrics.task_success = false;
    }
    let mut r = scored(s, c, metrics, diagnostics);
    r.governed = gov_cell;
    r
}

/// What governed admission decided for a cell.
enum Admitted {
    /// Deliver this handoff (rendered by the adapter from the envelope, or X's handoff as is
    /// when the scenario declares no governed context).
    Deliver(Arc<crate::handoff::Handoff>, GovernedCell),
    /// Nothing is delivered: the context is `BLOCKED`, or the adapter could not take it (held).
    Stop(GovernedCell),
}

/// The cell's `run` in its lineage records: the cell's identity as one line.
fn task_of(s: &Scenario, c: &CellSpec) -> String {
    format!(
        "{}{}/{}/{}/{}/{}",
        s.id,
        if c.scale == crate::scenario::volume::Scale::Base {
            String::new()
        } else {
            format!("@{}", c.scale)
        },
        c.point,
        c.strategy,
        c.model,
        c.rep
    )
}

/// Seed 004 at a cell: FRESH at the source run's start, COLD_RESUME (and REPLACED for another
/// agent) at the restore, the context report, and — when `READY` — the envelope delivered to the
/// destination's adapter, whose receipt is checked against the envelope's digest.
fn admit(
    shared: &Shared,
    g: &crate::delivery::Governed,
    c: &CellSpec,
    s: &Scenario,
    at: &RestorePoint,
    index: usize,
) -> Result<Admitted, String> {
    use crate::governed::{ContextStatus, Responsibility};
    let source = shared.source_model.as_deref().unwrap_or(&c.model);
    let a = crate::delivery::admit(
        g,
        &task_of(s, c),
        source,
        &c.model,
        &s.world.clock,
        &at.world.clock().to_string(),
    )
    .map_err(|e| format!("governed lineage: {e}"))?;
    let mut cell = GovernedCell {
        inner: g.spec.inner.clone(),
        max_bytes: g.spec.max_bytes,
        status: a.report.status,
        reasons: a.report.reasons.clone(),
        policy_digest: g.policy_digest.clone(),
        bytes: g.bytes,
        lineage: a.lineage.records().to_vec(),
        envelope_digest: None,
        receipt: None,
        responsibility: None,
        held: false,
    };
    match a.report.status {
        ContextStatus::NotConfigured => {
            cell.lineage.clear();
            return Ok(Admitted::Deliver(g.inner.clone(), cell));
        }
        ContextStatus::Blocked => return Ok(Admitted::Stop(cell)),
        ContextStatus::Ready => {}
    }
    let Some(env) = a.envelope else {
        return Err("the context report is READY but the envelope could not be assembled".into());
    };
    let expected = crate::governed::envelope_digest(&env);
    cell.envelope_digest = Some(expected.clone());
    let fault = shared
        .receipt_fault
        .filter(|(i, _)| *i == index)
        .map(|f| f.1);
    let mut sent = env.clone();
    if fault == Some(ReceiptFault::Altered) {
        // Tests only: the adapter receives an envelope that differs from the committed one.
        sent.handoff.definition.push_str(" (altered in transit)");
    }
    let bytes = serde_json::to_vec(&sent).map_err(|e| e.to_string())?;
    let received = crate::delivery::receive(&bytes, &g.spec.inner, &g.spec.id());
    let receipt = match (&received, fault) {
        (_, Some(ReceiptFault::Missing)) | (Err(_), _) => None,
        (Ok(r), _) => Some(r.receipt.clone()),
    };
    cell.responsibility = Some(crate::governed::check_receipt(
        &expected,
        receipt.as_deref(),
    ));
    cell.receipt = receipt;
    cell.held = cell.responsibility == Some(Responsibility::Unknown);
    match received {
        Ok(r) => {
            let mut h = r.handoff;
            h.compaction = g.inner.compaction.clone();
            Ok(Admitted::Deliver(Arc::new(h), cell))
        }
        // Delivery committed but the adapter could not take the context: held, not run.
        Err(_) => Ok(Admitted::Stop(cell)),
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

/// The record of a cell that was not continued at all (its context was `BLOCKED`, or it was
/// held before execution): scored on the interrupted world with no continuation, never a success.
fn not_continued(
    s: &Arc<Scenario>,
    c: &CellSpec,
    at: &RestorePoint,
    restore_tokens: u64,
    history_tokens: u64,
    started: Instant,
) -> RunRecord {
    let (mut metrics, diagnostics) = uncontinued(s, at, restore_tokens, history_tokens, started);
    metrics.task_success = false;
    scored(s, c, metrics, diagnostics)
}

/// The score of the interrupted world as it stands, with no continuation: what a cell that ran
/// nothing (a blocked context, a handoff that does not fit) leaves.
fn uncontinued(
    s: &Arc<Scenario>,
    at: &RestorePoint,
    restore_tokens: u64,
    history_tokens: u64,
    started: Instant,
) -> (score::Metrics, crate::record::Diagnostics) {
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let run = Run {
        scenario: s,
        interrupt: &at.interrupt,
        world: &at.world,
        finish: None,
        degraded: false,
        restore_tokens,
        total_tokens: 0,
        first_action_ms: ms,
        completion_ms: ms,
        steps: 0,
        step_budget_exhausted: false,
    };
    let (mut metrics, diagnostics) = score::score(&run, Vec::new(), Vec::new());
    metrics.history_tokens = history_tokens;
    metrics.compression_ratio = ratio(restore_tokens, history_tokens);
    (metrics, diagnostics)
}

fn ratio(restore: u64, history: u64) -> f64 {
    if history == 0 {
        0.0
    } else {
        // Rounded so records stay byte-identical across platforms' float formatting.
        (restore as f64 / history as f64 * 1e6).round() / 1e6
    }
}

/// The record of a cell whose handoff does not fit the destination's usable context: scored on
/// the interrupted world with no continuation (so task success is false unless nothing was left
/// to do), with `diagnostics.context_overflow` saying why.
fn overflow(
    s: &Arc<Scenario>,
    c: &CellSpec,
    at: &RestorePoint,
    handoff: &crate::handoff::Handoff,
    history_tokens: u64,
    window: u64,
    started: Instant,
) -> RunRecord {
    let (metrics, mut diagnostics) =
        uncontinued(s, at, handoff.tokens_at_restore, history_tokens, started);
    diagnostics.context_overflow = Some(crate::record::Overflow {
        restore_tokens: handoff.tokens_at_restore,
        context_window: window,
        reserve: crate::strategy::CONTEXT_RESERVE,
    });
    scored(s, c, metrics, diagnostics)
}

/// The ok record of a scenario cell.
fn scored(
    s: &Scenario,
    c: &CellSpec,
    metrics: score::Metrics,
    diagnostics: crate::record::Diagnostics,
) -> RunRecord {
    RunRecord {
        source: crate::record::Source::Scenario,
        transcript: None,
        governed: None,
        scenario: s.id.clone(),
        scale: c.scale.to_string(),
        interrupt: c.point.to_string(),
        strategy: c.strategy.to_string(),
        model: c.model.to_string(),
        rep: c.rep,
        seed: c.seed,
        status: Status::Ok,
        error: None,
        error_class: None,
        metrics,
        diagnostics,
    }
}
