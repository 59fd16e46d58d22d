//! Destinations: what continues a task from a handoff.
//!
//! A destination sees what a model would see — the handoff's messages and text, the tool list, and
//! the result of each action — and answers with one action at a time. The runner owns the loop and
//! the world; a destination never touches the world directly.
//!
//! Simulated destinations (`sim:oracle`, `sim:careful`, `sim:literal`) are deterministic models of
//! an agent. They know how to do the task (the scenario's reference continuation) and a fact only
//! when the handoff's *text* shows it: a fact is known iff one of its detectors matches. What they
//! do not know they act out through the fact's `when_lost` edits. They never look at the strategy's
//! name: two identical handoff texts give identical behaviour.

pub mod attention;
pub mod continuation;
pub mod layout;
pub mod live;
pub mod probe;
pub mod profile;
mod sim;

use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use serde::{Deserialize, Serialize};

pub use continuation::Continuation;
pub use sim::{Reading, SimAgent, SimKind, follows_directive};

use crate::record::{CellError, LiveStats};
use crate::scenario::{FinishStatus, Object};

/// One action of a destination.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// A scenario tool call.
    Call { tool: String, args: Object },
    /// Ask the (simulated) user.
    AskUser { question: String },
    /// Ask the approver for an approval.
    RequestApproval { approval_id: String },
    /// Strategy D's retrieval tool.
    Retrieve { resource: String },
    /// End the continuation.
    Finish {
        status: FinishStatus,
        report: String,
        degraded: bool,
    },
    /// No action: the step budget is spent (a live model's malformed or unknown tool calls and
    /// text-only turns count against it too). The continuation ends as a step-budget exhaustion.
    OutOfSteps,
}

/// What the runner tells a destination after an action.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionResult {
    /// The result as the destination sees it (tool output or error text).
    pub text: String,
    /// The structured result, when the call succeeded.
    pub value: Option<serde_json::Value>,
    pub ok: bool,
}

/// A destination's answers to the probe questions, by key.
pub type ProbeFuture<'a> =
    Pin<Box<dyn Future<Output = Option<std::collections::BTreeMap<String, String>>> + Send + 'a>>;

/// A destination's next action, or why it could not give one (an errored cell).
pub type ActionFuture<'a> = Pin<Box<dyn Future<Output = Result<Action, CellError>> + Send + 'a>>;

/// A destination: answers each turn with an action. Simulated and live destinations implement
/// it; the runner drives every cell through it alone.
pub trait Destination: Send {
    /// The next action, given the result of the previous one (`None` on the first turn).
    fn next_action<'a>(&'a mut self, last: Option<&'a ActionResult>) -> ActionFuture<'a>;

    /// Time so far, ms: the cell's wall time since `started` (for live destinations this
    /// includes retries, backoff and queueing; their summed call latency is in
    /// `diagnostics.live.latency_ms`).
    fn clock_ms(&self, started: &Instant) -> f64;

    /// Steps spent on turns that gave no action (a live model's malformed or unknown tool calls
    /// and text-only answers): they count against the step budget like actions.
    fn steps_without_action(&self) -> u32 {
        0
    }

    /// Its answers to the probe questions (`probe`), by key, once the continuation has ended;
    /// `None` when it answered none (a live request that failed, or went past the cell's cap).
    fn answer_probes<'a>(
        &'a mut self,
        _at: &'a crate::state::RestorePoint,
        _probes: &'a [probe::Probe],
    ) -> ProbeFuture<'a> {
        Box::pin(std::future::ready(None))
    }

    /// What the destination reports once the cell ends.
    fn report(&mut self) -> DestinationReport;

    /// A live destination's exchanges with its endpoint (the function definitions it sent and
    /// every request and answer), taken once the cell ends; `None` for simulated destinations.
    fn conversation(
        &mut self,
    ) -> Option<(Vec<serde_json::Value>, Vec<crate::conversation::Exchange>)> {
        None
    }
}

/// What a destination says about its own run, for the record's diagnostics.
#[derive(Debug, Clone, Default)]
pub struct DestinationReport {
    /// Facts the handoff did not give it (simulated destinations only).
    pub lost_facts: Vec<String>,
    /// Of those, the facts the handoff did show but the distraction model made it miss.
    pub forgotten: Vec<String>,
    /// Injected directives it followed (simulated destinations only).
    pub obeyed: Vec<String>,
    /// Facts the handoff showed that it set aside because the handoff also carries an override
    /// of them it acts on (simulated destinations only; [`crate::provenance::overrides`]).
    pub overridden: Vec<String>,
    /// Live calls, tokens and cost (live destinations only).
    pub live: Option<LiveStats>,
    /// The situations of its behavioural rates it met, when asked to keep them (simulated
    /// destinations of a calibration run; [`profile`]).
    pub situations: Vec<crate::conversation::Situation>,
}

/// Drops what the simulated destinations keep on this thread between cells.
pub fn forget() {
    sim::forget();
}

/// Parses a destination id of the hand-set offline set.
pub fn sim_kind(model: &str) -> Option<SimKind> {
    match model {
        "sim:oracle" => Some(SimKind::Oracle),
        "sim:careful" => Some(SimKind::Careful),
        "sim:literal" => Some(SimKind::Literal),
        _ => None,
    }
}

/// Whether a destination id is a simulated one: a hand-set kind or a profile
/// (`sim:fitted:PATH`).
pub fn is_simulated(model: &str) -> bool {
    sim_kind(model).is_some() || profile::fitted_path(model).is_some()
}

/// The simulated destinations.
pub const SIM_MODELS: [&str; 3] = ["sim:oracle", "sim:careful", "sim:literal"];
