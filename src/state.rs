//! The interrupted state — what the source agent observed when its run stopped, and all a
//! compactor may look at — and the restore point the harness keeps beside it.
//!
//! [`InterruptedState`] holds the scenario's task (id, objective, governed fields, tool list), the
//! event-log prefix as typed source events (kind, origin, text, call and the result the agent saw,
//! observed resource), the approvals as the approval system showed them, and the source ledger.
//! It holds no fact, detector, success predicate or reference continuation, and not the world at
//! restore time: those are in [`RestorePoint`], which only the harness (runner, scorer, checks)
//! reads. Built once per (scenario, interrupt point) and shared by every cell that starts there.
//! This module never decides what a handoff contains.

use std::sync::Arc;

use serde::Serialize;

use crate::scenario::{
    self, ApprovalStatus, AssistantTag, EffectKind, EventKind, Governed, Interrupt, Object,
    Observed, Perturbation, Scenario, ToolSpec, event_text,
};
use crate::world::{LedgerEntry, Outcome, World, apply_perturbations, lost_responses};

/// Where a statement comes from (seed 003: user, agent, tool:NAME, external:SOURCE).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    User,
    Agent,
    Tool(String),
    External(String),
    Approver(String),
}

impl Origin {
    pub fn label(&self) -> String {
        match self {
            Origin::User => "user".into(),
            Origin::Agent => "agent".into(),
            Origin::Tool(t) => format!("tool:{t}"),
            Origin::External(s) => format!("external:{s}"),
            Origin::Approver(a) => format!("approver:{a}"),
        }
    }
}

/// A tool call of the source run, as the ledger recorded it.
#[derive(Debug, Clone, Serialize)]
pub struct SourceCall {
    pub tool: String,
    pub args: Object,
    pub effect: Option<EffectKind>,
    pub outcome: Outcome,
    pub idempotency_key: Option<String>,
    /// What the source agent saw: the result, or the error/timeout text.
    pub result_text: String,
    /// The read tool that reconciles this call, if the scenario names one.
    pub reconciled_by: Option<String>,
    /// The approval the call needed.
    pub requires_approval: Option<String>,
    /// The resource the call read or wrote.
    pub observed: Option<Observed>,
}

/// One event of the prefix, typed for compactors.
#[derive(Debug, Clone, Serialize)]
pub struct SourceEvent {
    pub id: String,
    /// `user`, `plan`, `decision`, `hypothesis`, `report`, `call`, `approval`.
    pub kind: &'static str,
    pub origin: Origin,
    /// The message text; for calls, the call and its result; for approvals, the decision.
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call: Option<SourceCall>,
}

/// The task as the source agent was given it.
#[derive(Debug, Clone)]
pub struct Task {
    pub id: String,
    pub title: String,
    pub domain: String,
    pub objective: String,
    pub governed: Governed,
    /// The tools the agent had.
    pub tools: Vec<ToolSpec>,
}

/// An approval as the approval system showed it when the source run stopped.
#[derive(Debug, Clone)]
pub struct ApprovalView {
    pub id: String,
    pub action: String,
    pub status: ApprovalStatus,
    pub expires_at: Option<jiff::Timestamp>,
}

/// The state a strategy compacts: what the source agent observed, nothing more.
#[derive(Debug, Clone)]
pub struct InterruptedState {
    pub task: Task,
    /// The interrupt point's name and the last event the source completed.
    pub point: String,
    pub after: String,
    /// Index of the last event the source completed.
    pub cut: usize,
    pub events: Vec<SourceEvent>,
    /// Approvals at the moment the source stopped, in id order.
    pub approvals: Vec<ApprovalView>,
    /// The source run's ledger entries.
    pub ledger: Vec<LedgerEntry>,
}

/// Where a destination starts: the harness's view of an interrupt point. Strategies never see it.
#[derive(Debug, Clone)]
pub struct RestorePoint {
    pub scenario: Arc<Scenario>,
    pub interrupt: Interrupt,
    /// The world the destination starts in (perturbations applied).
    pub world: World,
    /// The world as the source left it (before perturbations).
    pub source_world: World,
    /// What a compactor sees.
    pub state: Arc<InterruptedState>,
}

/// A problem building an interrupted state.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("scenario `{scenario}` has no interrupt point `{point}`; its points are: {known}")]
    UnknownInterrupt {
        scenario: String,
        point: String,
        known: String,
    },
    #[error("scenario `{scenario}`: {message}")]
    Replay { scenario: String, message: String },
}

impl RestorePoint {
    /// Replays the scenario to the interrupt point and applies the point's perturbations.
    pub fn build(scenario: Arc<Scenario>, point: &str) -> Result<RestorePoint, StateError> {
        let Some(interrupt) = scenario.interrupt(point).cloned() else {
            return Err(StateError::UnknownInterrupt {
                scenario: scenario.id.clone(),
                point: point.to_string(),
                known: scenario
                    .interrupts
                    .iter()
                    .map(|i| i.point.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        let replay_err = |message: String| StateError::Replay {
            scenario: scenario.id.clone(),
            message,
        };
        let cut = scenario
            .event_index(&interrupt.after)
            .ok_or_else(|| replay_err(format!("no event `{}`", interrupt.after)))?;
        let replay = scenario::replay_prefix(&scenario, cut, &lost_responses(&interrupt))
            .map_err(|e| replay_err(e.to_string()))?;
        let source_world = replay.world.clone();
        let mut world = replay.world;
        apply_perturbations(&mut world, &interrupt).map_err(replay_err)?;

        let mut events = Vec::with_capacity(cut + 1);
        let tools: std::collections::BTreeMap<&str, _> = scenario
            .world
            .tools
            .iter()
            .map(|t| (t.name.as_str(), t))
            .collect();
        // Ledger entries of the source are in event order; walk them alongside the events.
        let mut ledger = source_world.ledger().iter().filter(|e| e.event.is_some());
        for (i, ev) in scenario.events.iter().enumerate().take(cut + 1) {
            let result = replay.results.get(i).and_then(|r| r.as_ref());
            let text = event_text(ev, result);
            let (kind, origin, call) = match ev.kind() {
                Some(EventKind::User) => ("user", Origin::User, None),
                Some(EventKind::Assistant(tag)) => (tag_kind(tag), Origin::Agent, None),
                Some(EventKind::Approval) => {
                    let by = ev
                        .approval
                        .as_ref()
                        .and_then(|a| a.by.clone())
                        .unwrap_or_else(|| "approver".into());
                    ("approval", Origin::Approver(by), None)
                }
                Some(EventKind::Call) | None => {
                    let entry = ledger.next();
                    let tool = ev.call.clone().unwrap_or_default();
                    let spec = tools.get(tool.as_str());
                    let observed = replay.observed.get(i).cloned().flatten();
                    let origin = match &observed {
                        Some(o) if o.external => {
                            Origin::External(o.source.clone().unwrap_or_else(|| o.key.clone()))
                        }
                        _ => Origin::Tool(tool.clone()),
                    };
                    let call = SourceCall {
                        tool: tool.clone(),
                        args: ev.args.clone().unwrap_or_default(),
                        effect: entry.and_then(|e| e.effect),
                        outcome: entry.map(|e| e.outcome).unwrap_or(Outcome::Error),
                        idempotency_key: entry.and_then(|e| e.idempotency_key.clone()),
                        result_text: result.map(|r| r.text()).unwrap_or_default(),
                        reconciled_by: spec.and_then(|s| s.reconciled_by.clone()),
                        requires_approval: spec.and_then(|s| s.requires_approval.clone()),
                        observed,
                    };
                    ("call", origin, Some(call))
                }
            };
            events.push(SourceEvent {
                id: ev.id.clone(),
                kind,
                origin,
                text,
                call,
            });
        }
        let approvals = source_world
            .approvals()
            .map(|a| ApprovalView {
                id: a.id.clone(),
                action: a.action.clone(),
                status: source_world.approval_state(&a.id).unwrap_or(a.status),
                expires_at: a.expires_at,
            })
            .collect();
        let state = InterruptedState {
            task: Task {
                id: scenario.id.clone(),
                title: scenario.title.clone(),
                domain: scenario.domain.clone(),
                objective: scenario.objective.clone(),
                governed: scenario.governed.clone(),
                tools: scenario.world.tools.clone(),
            },
            point: interrupt.point.clone(),
            after: interrupt.after.clone(),
            cut,
            events,
            approvals,
            ledger: source_world.ledger().to_vec(),
        };
        Ok(RestorePoint {
            scenario,
            interrupt,
            world,
            source_world,
            state: Arc::new(state),
        })
    }

    pub fn perturbations(&self) -> &[Perturbation] {
        &self.interrupt.perturb
    }
}

impl InterruptedState {
    /// The user's sentences that constrain the run ([`crate::text::is_constraint`]), with the
    /// event each comes from, in order.
    pub fn user_constraints(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for e in self.events.iter().filter(|e| e.kind == "user") {
            for s in crate::text::sentences(&e.text) {
                if crate::text::is_constraint(&s) {
                    out.push((e.id.clone(), s));
                }
            }
        }
        out
    }

    /// The latest observation of each resource in the prefix, in first-seen order.
    pub fn latest_observations(&self) -> Vec<&Observed> {
        let mut order: Vec<&str> = Vec::new();
        let mut latest: std::collections::BTreeMap<&str, &Observed> = Default::default();
        for e in &self.events {
            if let Some(o) = e.call.as_ref().and_then(|c| c.observed.as_ref()) {
                if !latest.contains_key(o.key.as_str()) {
                    order.push(o.key.as_str());
                }
                latest.insert(o.key.as_str(), o);
            }
        }
        order
            .iter()
            .filter_map(|k| latest.get(k).copied())
            .collect()
    }
}

fn tag_kind(tag: AssistantTag) -> &'static str {
    tag.as_str()
}
