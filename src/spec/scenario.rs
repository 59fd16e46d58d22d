//! The top of a scenario file: the `Scenario` document itself, the continuity envelope's governed
//! fields, the governed-context declaration and the injection a scenario carries. Shape only: the
//! accessors over it are the façade's, and cross-references are checked by validation.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::events::Event;
use super::facts::{Fact, Forbidden, Predicate};
use super::interrupts::Interrupt;
use super::volume::Volume;
use super::world::{SimUser, WorldSpec};

/// One benchmark scenario: a task with a known correct outcome, its reference run, the points where
/// the run is interrupted, and what a continuation must carry over.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Stable identifier, lowercase with dashes (e.g. `support-ticket-timeout`).
    pub id: String,
    /// One line that says what the task is.
    pub title: String,
    /// Domain used to stratify results (e.g. `support`, `coding`, `operations`, `payments`).
    pub domain: String,
    /// Free-text notes for readers of the scenario; never shown to an agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// Structured fields of the continuity envelope (seed 000 §2): identity, scope, contract versions.
    pub governed: Governed,
    /// The task as the user states it; the `none` strategy hands over only this.
    pub objective: String,
    /// The simulated world: records, resources, approvals, clock and tools.
    pub world: WorldSpec,
    /// The reference run: the source agent's events in order, ending in the known correct outcome
    /// when continued from any interrupt point.
    pub events: Vec<Event>,
    /// Named points where the reference run is interrupted.
    pub interrupts: Vec<Interrupt>,
    /// Critical facts a handoff must carry over.
    pub facts: Vec<Fact>,
    /// Actions that are safety violations whenever a continuation performs them.
    #[serde(default)]
    pub forbidden: Vec<Forbidden>,
    /// Predicates on the final world state; all must hold for task success.
    pub success: Vec<Predicate>,
    /// The simulated user who answers `ask_user`.
    #[serde(default)]
    pub user: SimUser,
    /// The injected directive, when the scenario carries one: removing `payload` everywhere gives the
    /// benign variant `<id>@benign`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub injection: Option<Injection>,
    /// Where the source run's *volume* comes from: the dead-end searches, listings, log and file
    /// reads and status checks a real agent makes between the critical events. A run at a scale
    /// other than `base` lengthens the source run with calls drawn from these sources (see
    /// `crate::scenario::volume`); validation proves they are inert.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<Volume>,
    /// Governed context (seed 004): which source events are the original instructions and which
    /// resources are retained evidence. `gov:X` builds its `coding-context-policy/1` from them;
    /// without it a `gov:X` cell is `NOT_CONFIGURED` and gets X's handoff unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextDecl>,
}

/// A scenario's governed-context declaration (seed 004). At an interrupt point the policy holds
/// the declared instructions the source run had reached (each a user event's text, verbatim) and
/// the declared resources it had read (each the text of its latest read, as the agent saw it):
/// originals are what the agent was told and what it saw, never the world's current state.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ContextDecl {
    /// Ids of `user` events that are original instructions (1–16; the first must come before
    /// the earliest interrupt point).
    pub instructions: Vec<String>,
    /// Keys of `world.resources` retained as evidence (0–16), delivered as last read.
    #[serde(default)]
    pub evidence: Vec<String>,
}

/// The continuity envelope's governed fields (seed 000 §1–§2).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Governed {
    pub tenant_id: String,
    pub principal_id: String,
    /// `user_delegated`, `service` or `user`.
    pub authorization_mode: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegated_principal_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegated_scope: Option<String>,
    pub policy_version: String,
    /// Capability (tool) name → contract version.
    #[serde(default)]
    pub capabilities: BTreeMap<String, String>,
}

/// The injected directive a scenario carries.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Injection {
    /// The `injected_directive` fact.
    pub fact: String,
    /// The exact injected text; the benign variant removes it from every resource and event.
    pub payload: String,
}
