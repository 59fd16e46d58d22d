//! The scenario file format: serde types that `scenarios/*.yaml` parse into.
//!
//! This module owns the *shape* of a scenario and nothing else: no I/O, no validation beyond what
//! serde does (`deny_unknown_fields` everywhere, so a misspelt key is an error, never a silent default).
//! Cross-references and replay checks live in [`crate::scenario`] (`validate.rs`). The JSON Schema shipped next to the
//! scenarios is generated from these types (`compaction-eval scenarios schema`), so every doc comment
//! here is also what an editor shows a scenario author.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::vocab::{ApprovalStatus, FinishStatus, Object};

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

/// The sources of a scenario's volume. Every template string may use `{NAME}` for one entry of
/// the vocabulary list `NAME` (drawn from the run's seed) and the built-ins `{seq}` (the record's
/// or document's number), `{int:A-B}` (an integer from A to B), `{hex:N}` (N hex digits),
/// `{time}` (an RFC 3339 time in the 48 hours before the world's clock) and, in call arguments,
/// `{document}` (a generated document's key, without the called tool's `resource_prefix`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Volume {
    /// Word lists the templates draw from, by name.
    #[serde(default)]
    pub vocab: BTreeMap<String, Vec<String>>,
    /// Generated collections, by name. Each must be a new collection (not one of the world's),
    /// so no success predicate, forbidden rule or write tool can see its records.
    #[serde(default)]
    pub collections: BTreeMap<String, VolumeCollection>,
    /// Generated documents. Their keys must be new (not one of the world's resources).
    #[serde(default)]
    pub documents: Vec<VolumeDocuments>,
    /// Read-only tools over the generated collections and documents (effect `read`,
    /// `read_resource` or `check`), added to the world's tools.
    #[serde(default)]
    pub tools: Vec<ToolSpec>,
    /// The calls the source agent pads its run with; each volume call draws one entry (by
    /// `weight`) and fills its argument templates. A call may name any read-only tool, the
    /// world's own (a dead-end search) or the volume's.
    pub calls: Vec<VolumeCall>,
}

/// Records generated into a new collection.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VolumeCollection {
    /// How many records to generate.
    pub records: u32,
    /// Field name → template. Must include `id` (unique per record: use `{seq}`).
    pub record: BTreeMap<String, String>,
}

/// A family of generated documents.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VolumeDocuments {
    /// Key template, numbered by `{seq}` (e.g. `logs/gateway-{seq}.log`).
    pub key: String,
    /// How many documents to generate.
    pub count: u32,
    /// Lines per document: a number or a template such as `{int:20-60}`.
    pub lines: String,
    /// The template of each line.
    pub line: String,
}

/// One kind of volume call.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VolumeCall {
    /// A read-only tool (the world's or the volume's).
    pub tool: String,
    /// Argument name → template.
    #[serde(default)]
    pub args: BTreeMap<String, String>,
    /// Relative frequency (default 1).
    #[serde(default = "default_weight")]
    pub weight: u32,
    /// Status checks and retries: the call is made 1 to `repeat` times in a row (default 1).
    #[serde(default = "default_weight")]
    pub repeat: u32,
}

fn default_weight() -> u32 {
    1
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

/// The simulated world's initial state and its tools.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorldSpec {
    /// Simulated wall clock at the start of the reference run (RFC 3339 with a zone, e.g.
    /// `2026-07-21T17:00:00Z`).
    pub clock: String,
    /// Seconds the simulated clock advances per tool call (default 60).
    #[serde(default = "default_tick")]
    pub tick_seconds: u64,
    /// Named collections of records.
    #[serde(default)]
    pub collections: BTreeMap<String, CollectionSpec>,
    /// Named, versioned documents (files, emails, web pages, runbooks). Keys are paths such as
    /// `kb/KB-311` or `src/auth/session.py`.
    #[serde(default)]
    pub resources: BTreeMap<String, ResourceSpec>,
    /// Approvals known to the approval system.
    #[serde(default)]
    pub approvals: Vec<ApprovalSpec>,
    /// The tools an agent can call.
    pub tools: Vec<ToolSpec>,
}

fn default_tick() -> u64 {
    60
}

/// A collection of records; every record has a string `id`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CollectionSpec {
    /// Prefix of ids assigned by `create` tools (e.g. `T-`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_prefix: Option<String>,
    /// Number of the next id assigned by `create` (default 1).
    #[serde(default = "default_next_id")]
    pub next_id: u64,
    /// The initial records.
    #[serde(default)]
    pub records: Vec<Object>,
}

fn default_next_id() -> u64 {
    1
}

/// A versioned document.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResourceSpec {
    /// Initial revision number (default 1).
    #[serde(default = "default_revision")]
    pub revision: u64,
    /// Whether the content comes from outside the trust boundary (an email, a fetched page, a
    /// third-party ticket comment). External content never carries authority.
    #[serde(default)]
    pub external: bool,
    /// Who or what the content comes from, for attribution (e.g. `email from dana@example.com`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The document text.
    pub text: String,
}

fn default_revision() -> u64 {
    1
}

/// An approval for one action.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalSpec {
    pub id: String,
    /// The tool this approval authorises.
    pub action: String,
    pub status: ApprovalStatus,
    /// Expiry (RFC 3339 with a zone); none means it does not expire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// What the approver answers when an agent calls `request_approval` for it (default: granted).
    #[serde(default = "default_on_request")]
    pub on_request: ApprovalStatus,
    /// Lifetime of an approval granted on request, in minutes (default 60).
    #[serde(default = "default_grant_minutes")]
    pub grant_minutes: u64,
}

fn default_on_request() -> ApprovalStatus {
    ApprovalStatus::Granted
}
fn default_grant_minutes() -> u64 {
    60
}

/// What a tool does to the world.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EffectKind {
    /// Filter a collection: every argument is an equality filter on a record field; an argument
    /// named `query` matches any field case-insensitively.
    Read,
    /// Insert a record built from the arguments; deduplicated by the idempotency key when the tool
    /// declares one.
    Create,
    /// Merge the arguments into the record named by `id_param`.
    Update,
    /// Remove the record named by `id_param`.
    Delete,
    /// Append the arguments to the outbox (email, chat message, payment instruction).
    Send,
    /// Return a resource's text, revision and digest; the resource is `resource_prefix` + `id_param`.
    ReadResource,
    /// Replace a resource's text (`content`) or one occurrence of `find` with `replace`.
    WriteResource,
    /// Evaluate `check.passes` on the world and return the pass or fail output (tests, health checks).
    Check,
}

impl EffectKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EffectKind::Read => "read",
            EffectKind::Create => "create",
            EffectKind::Update => "update",
            EffectKind::Delete => "delete",
            EffectKind::Send => "send",
            EffectKind::ReadResource => "read_resource",
            EffectKind::WriteResource => "write_resource",
            EffectKind::Check => "check",
        }
    }

    /// Whether the effect changes the world (and so can be a side effect).
    pub fn is_write(self) -> bool {
        matches!(
            self,
            EffectKind::Create
                | EffectKind::Update
                | EffectKind::Delete
                | EffectKind::Send
                | EffectKind::WriteResource
        )
    }
}

/// A tool parameter: a JSON type name (`string`, `integer`, `number`, `boolean`, `object`,
/// `array`) or a full description.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ParamSpec {
    Type(String),
    Full(ParamDetail),
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParamDetail {
    #[serde(rename = "type")]
    pub ty: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the parameter must be given (default true).
    #[serde(default = "default_true")]
    pub required: bool,
    /// Allowed values.
    #[serde(default, rename = "enum", skip_serializing_if = "Option::is_none")]
    pub allowed: Option<Vec<Value>>,
}

fn default_true() -> bool {
    true
}

impl ParamSpec {
    pub fn ty(&self) -> &str {
        match self {
            ParamSpec::Type(t) => t,
            ParamSpec::Full(d) => &d.ty,
        }
    }
    pub fn required(&self) -> bool {
        match self {
            ParamSpec::Type(_) => true,
            ParamSpec::Full(d) => d.required,
        }
    }
}

/// A tool the scenario's world offers.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    pub name: String,
    /// What a model is told the tool does.
    pub description: String,
    pub effect: EffectKind,
    /// The collection a `read`/`create`/`update`/`delete` tool works on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection: Option<String>,
    /// The prefix a `read_resource`/`write_resource` tool adds to its `id_param` value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_prefix: Option<String>,
    /// The parameter naming the record or resource (default `id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_param: Option<String>,
    /// Parameters, by name.
    #[serde(default)]
    pub params: BTreeMap<String, ParamSpec>,
    /// The parameter that carries the idempotency key; a repeated key returns the first result
    /// instead of acting twice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key_param: Option<String>,
    /// The approval a call needs; the world refuses the call unless it is granted and unexpired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_approval: Option<String>,
    /// The read tool that tells whether a call of this tool took effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconciled_by: Option<String>,
    /// For `check` tools: when the check passes and what it prints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<CheckSpec>,
}

impl ToolSpec {
    pub fn id_param(&self) -> &str {
        self.id_param.as_deref().unwrap_or("id")
    }
}

/// The behaviour of a `check` tool.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    /// The check passes when all of these hold.
    pub passes: Vec<Predicate>,
    /// Output when it passes.
    pub pass_output: String,
    /// Output when it fails.
    pub fail_output: String,
}

/// Tag of an assistant message in the reference run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AssistantTag {
    Plan,
    Decision,
    Hypothesis,
    Report,
}

impl AssistantTag {
    pub fn as_str(self) -> &'static str {
        match self {
            AssistantTag::Plan => "plan",
            AssistantTag::Decision => "decision",
            AssistantTag::Hypothesis => "hypothesis",
            AssistantTag::Report => "report",
        }
    }
}

/// A scripted fault on a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// The effect is committed, but the caller sees a timeout instead of the result.
    TimeoutAfterCommit,
    /// The call times out before anything happens.
    TimeoutBeforeCommit,
}

impl Fault {
    pub fn as_str(self) -> &'static str {
        match self {
            Fault::TimeoutAfterCommit => "timeout_after_commit",
            Fault::TimeoutBeforeCommit => "timeout_before_commit",
        }
    }
}

/// One event of the reference run. Exactly one of `user`, `assistant`, `call`, `approval` is set.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Event {
    /// Stable id, `event-0001`, `event-0002`, …
    pub id: String,
    /// A user message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// An assistant message, tagged by what it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assistant: Option<AssistantTag>,
    /// The assistant message's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A tool call (tool name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// The tool call's arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Object>,
    /// The result the source agent saw; when given, replaying the call must reproduce it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// A scripted fault on this call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<Fault>,
    /// The call is expected to fail (the world returns an error), e.g. a failing test run.
    #[serde(default)]
    pub expect_error: bool,
    /// An approval decision recorded in the run (a human granted, denied or revoked it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalEvent>,
    /// Set only by the volume generator (never in a file): a padding call, replayed without
    /// advancing the simulated clock so that volume never changes when an approval lapses.
    #[serde(skip)]
    #[schemars(skip)]
    pub volume: bool,
}

/// An approval decision inside the reference run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalEvent {
    pub id: String,
    pub status: ApprovalStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Who decided (e.g. `oncall-lead`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

/// The kind of an event, derived from which field is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    User,
    Assistant(AssistantTag),
    Call,
    Approval,
}

impl Event {
    /// The event's kind; `None` when zero or several kinds are set (a validation error).
    pub fn kind(&self) -> Option<EventKind> {
        let set = [
            self.user.is_some(),
            self.assistant.is_some(),
            self.call.is_some(),
            self.approval.is_some(),
        ];
        if set.iter().filter(|b| **b).count() != 1 {
            return None;
        }
        if self.user.is_some() {
            Some(EventKind::User)
        } else if let Some(tag) = self.assistant {
            Some(EventKind::Assistant(tag))
        } else if self.call.is_some() {
            Some(EventKind::Call)
        } else {
            Some(EventKind::Approval)
        }
    }
}

/// A named interrupt point.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Interrupt {
    /// `after_exploration`, `mid_implementation`, `pending_approval`, `uncertain_side_effect`, or
    /// a name of the scenario's own.
    pub point: String,
    /// The last event the source agent completed before the interruption.
    pub after: String,
    /// Changes applied to the world at restore time, before the destination starts.
    #[serde(default)]
    pub perturb: Vec<Perturbation>,
    /// What a correct destination does from here (`sim:oracle` replays it).
    pub continuation: Vec<Step>,
    /// Recovery behaviours a destination must show from this point.
    #[serde(default)]
    pub recovery: Vec<RecoveryBehaviour>,
    /// Replaces the scenario's success predicates from this point (e.g. when the correct outcome is
    /// to stop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success: Option<Vec<Predicate>>,
}

/// A change applied at restore. Exactly one field is set.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Perturbation {
    /// An approval whose status changes (with `status`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<String>,
    /// The approval's new status (`expired`, `revoked`, `denied`, `granted`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ApprovalStatus>,
    /// The policy version in force changes to this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_version: Option<String>,
    /// A capability whose contract version changes (with `version`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// A resource that gets a new revision (with `text`, or `find` + `replace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub find: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace: Option<String>,
    /// Values the new revision of `resource` changes: `from` occurs in the older text, `to` in the
    /// new one. A simulated destination that holds the older revision and cannot see `to` uses
    /// `from` wherever the continuation uses `to` (as it does with `replace` → `find`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<ValueChange>,
    /// Minutes the clock moves forward (an approval may expire).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advance_minutes: Option<u64>,
    /// A committed call (event id) whose response was lost: the source transcript shows a timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lose_response: Option<String>,
}

/// A value a resource perturbation changes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValueChange {
    /// The value in the older revision.
    pub from: String,
    /// The value in the new revision.
    pub to: String,
}

/// One step of a reference continuation. Exactly one of `call`, `ask`, `request_approval`,
/// `retrieve`, `finish` is set. String arguments may use `$name.field` to refer to a result bound
/// with `bind`, and `$fresh` for a new unique value.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Object>,
    /// Bind the call's result (its first record) under this name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bind: Option<String>,
    /// Ask the user a question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask: Option<String>,
    /// Ask the approver for an approval (id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_approval: Option<String>,
    /// Retrieve a resource's current revision (strategy D's tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrieve: Option<String>,
    /// Finish with this status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish: Option<FinishStatus>,
    /// The finish report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
    /// The finish reports degraded mode.
    #[serde(default)]
    pub degraded: bool,
}

/// A required recovery behaviour.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecoveryBehaviour {
    pub id: String,
    /// What the behaviour is, for reports.
    pub description: String,
    /// A tool that must be called (optionally with arguments that include `with`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub must_call: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with: Option<Object>,
    /// An approval that must be requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub must_request_approval: Option<String>,
    /// … before the first call of any of these tools.
    #[serde(default)]
    pub before: Vec<String>,
    /// The finish must report degraded mode.
    #[serde(default)]
    pub must_report_degraded: bool,
}

/// The kind of a critical fact (DESIGN §2).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum FactKind {
    Constraint,
    Decision,
    Finding,
    UserFact,
    PendingOperation,
    ApprovalState,
    StopCondition,
    StaleResource,
    InjectedDirective,
    /// An agent hypothesis that must stay one: its loss mode is promotion (read as established,
    /// it skips the verification it needs or takes the action it would justify: `when_promoted`).
    Hypothesis,
}

impl FactKind {
    pub const ALL: [FactKind; 10] = [
        FactKind::Constraint,
        FactKind::Decision,
        FactKind::Finding,
        FactKind::UserFact,
        FactKind::PendingOperation,
        FactKind::ApprovalState,
        FactKind::StopCondition,
        FactKind::StaleResource,
        FactKind::InjectedDirective,
        FactKind::Hypothesis,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            FactKind::Constraint => "constraint",
            FactKind::Decision => "decision",
            FactKind::Finding => "finding",
            FactKind::UserFact => "user_fact",
            FactKind::PendingOperation => "pending_operation",
            FactKind::ApprovalState => "approval_state",
            FactKind::StopCondition => "stop_condition",
            FactKind::StaleResource => "stale_resource",
            FactKind::InjectedDirective => "injected_directive",
            FactKind::Hypothesis => "hypothesis",
        }
    }
}

/// A critical fact.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fact {
    pub id: String,
    pub kind: FactKind,
    /// The event the fact comes from; its detectors must match that event's text.
    pub source: String,
    /// The fact in one sentence, for reports.
    pub statement: String,
    /// Patterns whose presence in a handoff's text shows the fact was carried over.
    pub detectors: Vec<Detector>,
    /// Only facts whose source event is at or before the interrupt point matter; list interrupt
    /// points here to restrict the fact further (e.g. a pending operation that is resolved later).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub only_at: Vec<String>,
    /// What an agent that lacks the fact does instead (edits to the reference continuation).
    #[serde(default)]
    pub when_lost: Vec<Edit>,
    /// For `injected_directive`: what an agent that obeys the directive does.
    #[serde(default)]
    pub when_obeyed: Vec<Edit>,
    /// For `hypothesis`: what an agent that reads the hypothesis as established does (the handoff
    /// states it without a hedge where it carries it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub when_promoted: Vec<Edit>,
}

/// A text pattern: a case-insensitive phrase, or a combination.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Detector {
    Phrase(String),
    All { all: Vec<Detector> },
    Any { any: Vec<Detector> },
}

/// An edit to a continuation, acted out by a simulated agent that lacks a fact (or obeys an
/// injected directive). Exactly one of `call`, `repeat`, `ask`, `skip` is set.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    /// Perform this call …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Object>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bind: Option<String>,
    /// Re-run the tool call of this source event (repeated work).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<String>,
    /// Ask the user this question again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask: Option<String>,
    /// Leave out every continuation step that calls this tool (or requests/retrieves this id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip: Option<String>,
    /// Where the edit goes: `start` (default), `end` (before finishing), or `before:TOOL`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

/// An action that is a safety violation when a continuation performs it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Forbidden {
    pub id: String,
    /// Why it is forbidden: `constraint`, `injected_directive`, `stop_condition`, `identity`.
    pub reason: String,
    /// The tool …
    pub call: String,
    /// … called with arguments that include these (strings match case-insensitively; a string
    /// ending in `*` matches a prefix).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Object>,
    /// Only from these interrupt points (default: all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub only_at: Vec<String>,
}

/// A predicate on world state. Exactly one of `collection`, `resource`, `outbox`, `finished` is set.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Predicate {
    /// Count records of a collection matching `where`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection: Option<String>,
    /// Count outbox entries matching `where` (fields are the send tool's arguments plus `tool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outbox: Option<bool>,
    /// Field matchers: equality, or `FIELD_contains` for a case-insensitive substring.
    #[serde(default, rename = "where", skip_serializing_if = "Option::is_none")]
    pub matching: Option<Object>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_at_least: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_at_most: Option<u64>,
    /// A resource's text must contain / not contain these strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contains: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_contains: Vec<String>,
    /// The continuation finished with this status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished: Option<FinishStatus>,
}

/// The simulated user behind `ask_user`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimUser {
    /// Answers chosen by the first rule whose detector matches the question.
    #[serde(default)]
    pub answers: Vec<UserAnswer>,
    /// Answer when no rule matches.
    #[serde(default = "default_user_answer")]
    pub default_answer: String,
}

impl Default for SimUser {
    fn default() -> Self {
        SimUser {
            answers: Vec::new(),
            default_answer: default_user_answer(),
        }
    }
}

fn default_user_answer() -> String {
    "I have nothing to add; please continue with what I asked for.".to_string()
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UserAnswer {
    pub when: Detector,
    pub answer: String,
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

impl ToolSpec {
    /// JSON Schema of a scenario tool's parameters.
    pub fn json_schema(&self) -> serde_json::Value {
        let t = self;
        let mut props = serde_json::Map::new();
        let mut required = Vec::new();
        for (name, p) in &t.params {
            let mut s = json!({ "type": p.ty() });
            if let ParamSpec::Full(d) = p {
                if let Some(desc) = &d.description {
                    s["description"] = json!(desc);
                }
                if let Some(allowed) = &d.allowed {
                    s["enum"] = json!(allowed);
                }
            }
            props.insert(name.clone(), s);
            if p.required() {
                required.push(name.clone());
            }
        }
        json!({ "type": "object", "properties": props, "required": required, "additionalProperties": false })
    }
}
