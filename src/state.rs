//! The interrupted state — what the source agent observed when its run stopped, and all a
//! compactor may look at — and the restore point the harness keeps beside it.
//!
//! [`InterruptedState`] holds only what the agent could have seen: the task (id, objective,
//! governed fields), its tool definitions as a registry publishes them ([`ToolDef`]: name,
//! description, parameter schema, effect / read-only, idempotency-key parameter, required
//! approval), the event-log prefix as typed source events (kind, origin, text; for calls the
//! arguments, the idempotency key as sent, the result text and the [`ObservedOutcome`] —
//! `ok`, `error` or `timed_out`, never whether a timed-out call committed — and the resource the
//! answer presented), and the approvals the agent could know of as the approval system showed
//! them. It holds no ledger, no scenario annotation (`reconciled_by`, collections, checks), fact,
//! detector, success predicate or reference continuation, and not the world at restore time:
//! those are in [`RestorePoint`], which only the harness (runner, scorer, checks) reads. Built
//! once per (scenario, interrupt point) and shared by every cell that starts there. This module
//! never decides what a handoff contains.

use std::sync::Arc;

use serde::Serialize;

use crate::scenario::{
    self, ApprovalStatus, AssistantTag, EffectKind, EventKind, Governed, Interrupt, Object,
    Observed, Perturbation, Scenario, ToolSpec, event_text,
};
use crate::world::{Outcome, World, apply_perturbations, lost_responses};

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

/// How a call ended, as the agent saw it: a result, an error, or a timeout. A timeout is only
/// `TimedOut` — whether the effect committed is the ledger's secret, not the agent's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ObservedOutcome {
    Ok,
    Error,
    TimedOut,
}

impl ObservedOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            ObservedOutcome::Ok => "ok",
            ObservedOutcome::Error => "error",
            ObservedOutcome::TimedOut => "timed_out",
        }
    }

    /// What the caller saw of a world outcome.
    pub fn seen(o: Outcome) -> ObservedOutcome {
        match o {
            Outcome::Ok => ObservedOutcome::Ok,
            Outcome::Error => ObservedOutcome::Error,
            Outcome::TimeoutAfterCommit | Outcome::TimeoutBeforeCommit => ObservedOutcome::TimedOut,
        }
    }
}

/// A tool call of the source run, as the agent made it and saw it answered.
#[derive(Debug, Clone, Serialize)]
pub struct SourceCall {
    pub tool: String,
    pub args: Object,
    pub outcome: ObservedOutcome,
    /// The value of the tool's declared idempotency-key parameter, as the agent sent it.
    pub idempotency_key: Option<String>,
    /// What the source agent saw: the result, or the error/timeout text.
    pub result_text: String,
    /// The resource the call's answer presented (none for a call that failed or timed out).
    pub observed: Option<Observed>,
}

/// A tool as the agent's tool registry defined it: name, description, parameter schema and the
/// behaviour hints it publishes (MCP-style annotations). No world internals (collections,
/// resource prefixes, check predicates, reconciliation annotations).
#[derive(Debug, Clone, Serialize)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    /// JSON Schema of the parameters.
    pub parameters: serde_json::Value,
    /// The declared effect kind (`read`, `create`, … `check`).
    pub effect: EffectKind,
    /// The tool declares that it changes nothing.
    pub read_only: bool,
    /// The parameter that carries the idempotency key, if the tool declares one.
    pub idempotency_key_param: Option<String>,
    /// The approval the tool declares it requires.
    pub requires_approval: Option<String>,
}

impl ToolDef {
    fn from_spec(t: &ToolSpec) -> ToolDef {
        ToolDef {
            name: t.name.clone(),
            description: t.description.clone(),
            parameters: t.json_schema(),
            effect: t.effect,
            read_only: !t.effect.is_write(),
            idempotency_key_param: t.idempotency_key_param.clone(),
            requires_approval: t.requires_approval.clone(),
        }
    }
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
    /// The tools the agent had, as defined to it.
    pub tools: Vec<ToolDef>,
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
    /// Approvals the agent could know of (named in an event it saw, in the objective, or
    /// required by one of its tools), as the approval system showed them when the source
    /// stopped, in id order.
    pub approvals: Vec<ApprovalView>,
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

impl StateError {
    /// `point` is none of `scenario`'s interrupt points: the error lists them.
    pub fn unknown_interrupt(scenario: &Scenario, point: &str) -> StateError {
        StateError::UnknownInterrupt {
            scenario: scenario.id.clone(),
            point: point.to_string(),
            known: scenario
                .interrupts
                .iter()
                .map(|i| i.point.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

impl RestorePoint {
    /// The user's constraints and stop conditions a grader holds a handoff to, with the event
    /// each comes from: taken from the scenario's annotations (its constraint and stop-condition
    /// facts whose source is a user message of the prefix; of that message, the sentences a
    /// detector of the fact matches, else the whole message), so that no grader judges a
    /// compactor by the cue words a compactor could be built from. Only a scenario that annotates
    /// no such fact (an imported transcript) falls back to [`InterruptedState::user_constraints`].
    pub fn graded_constraints(&self) -> Vec<(String, String)> {
        use crate::scenario::{FactKind, normalize};
        let annotated: Vec<_> = self
            .scenario
            .facts_at(&self.interrupt)
            .filter(|f| matches!(f.kind, FactKind::Constraint | FactKind::StopCondition))
            .collect();
        if annotated.is_empty() {
            return self.state.user_constraints();
        }
        let mut out: Vec<(String, String)> = Vec::new();
        for f in annotated {
            let Some(e) = self
                .state
                .events
                .iter()
                .find(|e| e.id == f.source && e.kind == "user")
            else {
                continue;
            };
            let matched: Vec<String> = crate::text::sentences(&e.text)
                .into_iter()
                .filter(|s| f.detectors.iter().any(|d| d.matches(&normalize(s))))
                .collect();
            let sentences = if matched.is_empty() {
                vec![e.text.trim().to_string()]
            } else {
                matched
            };
            for s in sentences {
                if !out.iter().any(|(id, x)| *id == e.id && *x == s) {
                    out.push((e.id.clone(), s));
                }
            }
        }
        // In the order the user said them.
        let order = |id: &str| self.state.events.iter().position(|e| e.id == id);
        out.sort_by_key(|(id, _)| order(id));
        out
    }

    /// Replays the scenario to the interrupt point and applies the point's perturbations.
    pub fn build(scenario: Arc<Scenario>, point: &str) -> Result<RestorePoint, StateError> {
        let Some(interrupt) = scenario.interrupt(point).cloned() else {
            return Err(StateError::unknown_interrupt(&scenario, point));
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
                    let tool = ev.call.clone().unwrap_or_default();
                    let spec = tools.get(tool.as_str());
                    let args = ev.args.clone().unwrap_or_default();
                    let outcome = result
                        .map(|r| ObservedOutcome::seen(r.outcome))
                        .unwrap_or(ObservedOutcome::Error);
                    // A resource is observed only through an answer: a timeout or an error shows
                    // none, whatever the call did.
                    let observed = replay
                        .observed
                        .get(i)
                        .cloned()
                        .flatten()
                        .filter(|_| outcome == ObservedOutcome::Ok);
                    let origin = match &observed {
                        Some(o) if o.external => {
                            Origin::External(o.source.clone().unwrap_or_else(|| o.key.clone()))
                        }
                        _ => Origin::Tool(tool.clone()),
                    };
                    let idempotency_key = spec
                        .and_then(|s| s.idempotency_key_param.as_ref())
                        .and_then(|p| args.get(p))
                        .and_then(|v| v.as_str())
                        .map(str::to_string);
                    let call = SourceCall {
                        tool: tool.clone(),
                        args,
                        outcome,
                        idempotency_key,
                        result_text: result.map(|r| r.text()).unwrap_or_default(),
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
        // Only approvals the agent could know of: named in what it saw or in the objective, or
        // declared as required by one of its tools.
        let known = |id: &str| {
            events.iter().any(|e| e.text.contains(id))
                || scenario.objective.contains(id)
                || scenario
                    .world
                    .tools
                    .iter()
                    .any(|t| t.requires_approval.as_deref() == Some(id))
        };
        let approvals = source_world
            .approvals()
            .filter(|a| known(&a.id))
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
                tools: scenario
                    .world
                    .tools
                    .iter()
                    .map(ToolDef::from_spec)
                    .collect(),
            },
            point: interrupt.point.clone(),
            after: interrupt.after.clone(),
            cut,
            events,
            approvals,
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
    /// The state a chained compaction reads (issue 40): the same task, interrupt point and
    /// approvals, with only the events after index `after_cut` — the work done since the
    /// previous compaction, which saw the rest. A compactor given it cannot read the events
    /// before: what it knows of them is the previous handoff.
    pub fn since(&self, after_cut: usize) -> InterruptedState {
        InterruptedState {
            task: self.task.clone(),
            point: self.point.clone(),
            after: self.after.clone(),
            cut: self.cut,
            events: self.events.iter().skip(after_cut + 1).cloned().collect(),
            approvals: self.approvals.clone(),
        }
    }

    /// The agent's definition of a tool.
    pub fn tool(&self, name: &str) -> Option<&ToolDef> {
        self.task.tools.iter().find(|t| t.name == name)
    }

    /// Whether a call's tool is declared to change the world.
    pub fn is_write(&self, call: &SourceCall) -> bool {
        self.tool(&call.tool).is_some_and(|t| !t.read_only)
    }

    /// The later event, if any, in which the source run itself verified that the timed-out write
    /// of event `id` committed: a successful read-only call given the write's idempotency key whose
    /// result shows that key (the record the write made).
    pub fn verified_commit(&self, id: &str) -> Option<&SourceEvent> {
        let at = self.events.iter().position(|e| e.id == id)?;
        let call = self.events[at].call.as_ref()?;
        if call.outcome != ObservedOutcome::TimedOut {
            return None;
        }
        let key = call.idempotency_key.as_ref()?;
        self.lookup_of_key(key, at + 1)
    }

    /// The first event from index `from` on in which the source run looked a write up by its
    /// idempotency key `key` and saw it: a successful read-only call given the key whose result
    /// shows it (the record the write made).
    pub fn lookup_of_key(&self, key: &str, from: usize) -> Option<&SourceEvent> {
        self.events.get(from..)?.iter().find(|e| {
            e.call.as_ref().is_some_and(|c| {
                c.outcome == ObservedOutcome::Ok
                    && !self.is_write(c)
                    && c.args.values().any(|v| v.as_str() == Some(key))
                    && c.result_text.contains(key)
            })
        })
    }

    /// What the user and the agent themselves wrote (the objective and every message, no tool
    /// output), one per line.
    pub fn own_words(&self) -> String {
        // The objective is the task as the user states it: a phrase it shares with an outside
        // document (the applicant's own name for the closure) is the user's too.
        std::iter::once(self.task.objective.as_str())
            .chain(
                self.events
                    .iter()
                    .filter(|e| e.call.is_none())
                    .map(|e| e.text.as_str()),
            )
            .collect::<Vec<_>>()
            .join("\n")
    }

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
