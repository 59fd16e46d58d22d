//! One cell: a destination continues from a handoff in a fresh copy of the interrupted world.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;

use super::{Plan, RunConfig, RunRecord, Status};
use crate::agent::{Action, ActionResult, Destination, SimAgent, sim_kind};
use crate::scenario::{Object, Scenario};
use crate::score::{self, Run};
use crate::strategy::{Handoff, InterruptedState, tokens};
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
}

/// The harness's system prompt for destinations: the same for every strategy.
pub const SYSTEM_PROMPT: &str = "You are continuing a task that another agent session started and could not finish. \
The user message that follows is the handoff from that session. Use the tools to finish the task. \
Call ask_user to ask the user, request_approval to ask for an approval, and finish(status, report, degraded) \
when you are done or must stop.";

/// What all cells share, read-only.
pub struct Shared {
    scenarios: Vec<Arc<Scenario>>,
    handoffs: BTreeMap<(usize, String, String), Arc<Handoff>>,
    states: BTreeMap<(usize, String), Arc<InterruptedState>>,
    /// Fixed context tokens (system prompt + tool definitions) per (scenario, strategy).
    context: BTreeMap<(usize, String), u64>,
    step_budget: u32,
    attention: f64,
}

impl Shared {
    pub fn new(plan: &Plan, cfg: &RunConfig) -> Shared {
        let mut context = BTreeMap::new();
        for ((si, _, strategy), h) in &plan.handoffs {
            context.entry((*si, strategy.clone())).or_insert_with(|| {
                let tools = json!(plan.scenarios[*si]
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
        }
        Shared {
            scenarios: plan.scenarios.clone(),
            handoffs: plan.handoffs.clone(),
            states: plan.states.clone(),
            context,
            step_budget: cfg.step_budget,
            attention: cfg.attention,
        }
    }
}

fn to_result(r: &CallResult) -> ActionResult {
    ActionResult {
        text: r.text(),
        value: r.output.as_ref().ok().cloned(),
        ok: r.output.is_ok(),
    }
}

fn errored(scenario: &str, c: &CellSpec, message: String) -> RunRecord {
    RunRecord {
        scenario: scenario.to_string(),
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
        },
        diagnostics: Default::default(),
    }
}

/// Runs one cell to its record. Never panics on scenario content: anything that goes wrong is an
/// errored record.
pub fn run_cell(shared: &Shared, c: &CellSpec) -> RunRecord {
    let started = Instant::now();
    let s = &shared.scenarios[c.scenario];
    let (Some(state), Some(handoff)) = (
        shared.states.get(&(c.scenario, c.point.to_string())),
        shared
            .handoffs
            .get(&(c.scenario, c.point.to_string(), c.strategy.to_string())),
    ) else {
        return errored(&s.id, c, "harness: no prepared state for this cell".into());
    };
    let Some(kind) = sim_kind(&c.model) else {
        return errored(
            &s.id,
            c,
            format!("harness: unknown destination `{}`", c.model),
        );
    };
    let mut world = state.world.clone();
    let mut agent = SimAgent::new(
        kind,
        s.clone(),
        &state.interrupt,
        handoff,
        c.seed,
        shared.attention,
    );
    let offers_retrieve = handoff.extra_tools.iter().any(|t| t.name == "retrieve");

    // Token accounting of a chat loop: every turn re-reads the whole context.
    let mut context = shared
        .context
        .get(&(c.scenario, c.strategy.to_string()))
        .copied()
        .unwrap_or(0)
        + handoff.tokens_at_restore;
    let mut total_tokens = 0u64;
    let mut first_action_ms = None;
    let mut last: Option<ActionResult> = None;
    let mut finish = None;
    let mut degraded = false;
    let mut steps = 0u32;
    while steps < shared.step_budget {
        steps += 1;
        let action = agent.next_action(last.as_ref());
        let action_tokens =
            tokens::count_cached(&serde_json::to_string(&action).unwrap_or_default());
        total_tokens += context + action_tokens;
        let result = match &action {
            Action::Call { tool, args } => {
                first_action_ms.get_or_insert_with(|| started.elapsed().as_secs_f64() * 1e3);
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
                first_action_ms.get_or_insert_with(|| started.elapsed().as_secs_f64() * 1e3);
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
        };
        context += action_tokens + tokens::count_cached(&result.text);
        last = Some(result);
    }
    let completion_ms = started.elapsed().as_secs_f64() * 1e3;
    let run = Run {
        scenario: s,
        interrupt: &state.interrupt,
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
    let (metrics, diagnostics) = score::score(&run, agent.lost_facts.clone(), agent.obeyed.clone());
    RunRecord {
        scenario: s.id.clone(),
        interrupt: c.point.to_string(),
        strategy: c.strategy.to_string(),
        model: c.model.to_string(),
        rep: c.rep,
        seed: c.seed,
        status: Status::Ok,
        error: None,
        metrics,
        diagnostics,
    }
}
