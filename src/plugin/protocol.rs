//! The documents of the plug-in protocol: the interrupted state a compactor reads on stdin
//! (`compaction-eval/state/4`: only what the source agent observed — no ledger, no scenario
//! annotations, nothing naming the scenario or the experimental condition, a timeout is
//! `timed_out` — and, in a compaction chain, the plug-in's previous handoff with only the events
//! since) and the text answer it may write (`compaction-eval/text/1`); a checkpoint answer is
//! `crate::checkpoint::Checkpoint` (`compaction-eval/handoff/1`). Formats 3 and 2 are still
//! served to the plug-ins that declare them.
//!
//! These types are a published contract with JSON Schemas generated from them
//! (`strategies/schemas/`); change them only with a new format version.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::scenario::Object;
use crate::state::{InterruptedState, ObservedOutcome};

/// Format 3: the default of a plug-in that declares no `reads` (every plug-in written before
/// format 4 was, and it runs unchanged).
pub const STATE_FORMAT: &str = "compaction-eval/state/3";
/// Format 4: format 3 with `previous_handoff` in a compaction chain (`--cycles`).
pub const STATE_FORMAT_4: &str = "compaction-eval/state/4";
/// The previous input format, still served to a plug-in that declares `reads` it.
pub const STATE_FORMAT_2: &str = "compaction-eval/state/2";
pub const TEXT_FORMAT: &str = "compaction-eval/text/1";

/// The input formats a plug-in may declare it reads (`reads = "…"` in its TOML), newest first.
pub const STATE_FORMATS: [&str; 3] = [STATE_FORMAT_4, STATE_FORMAT, STATE_FORMAT_2];

/// An input format the harness still serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InputFormat {
    /// `compaction-eval/state/4`: format 3 plus the previous handoff in a chain; the only one a
    /// chained plug-in (`--cycles` above 1) can be given.
    State4,
    /// `compaction-eval/state/3` (the default).
    #[default]
    State3,
    /// `compaction-eval/state/2`: the same content under format 2's keys (`scenario` with the
    /// objective and governed fields, `interrupt` with `after`), without the fields format 3
    /// removed for validity (the scenario's id, title and domain, the interrupt point's name).
    State2,
}

impl InputFormat {
    /// The format a `reads` value names, if the harness serves it.
    pub fn parse(name: &str) -> Option<InputFormat> {
        match name {
            STATE_FORMAT_4 => Some(InputFormat::State4),
            STATE_FORMAT => Some(InputFormat::State3),
            STATE_FORMAT_2 => Some(InputFormat::State2),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            InputFormat::State4 => STATE_FORMAT_4,
            InputFormat::State3 => STATE_FORMAT,
            InputFormat::State2 => STATE_FORMAT_2,
        }
    }
}

/// The interrupted state, as a plug-in compactor receives it on stdin.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StateDocument {
    /// `compaction-eval/state/4` (or `compaction-eval/state/3`, the same without
    /// `previous_handoff`, for a plug-in that reads format 3).
    pub format: String,
    /// What the source agent was asked to do, and under which governance.
    pub task: TaskInfo,
    /// The id of the last event the source completed (the last of `events`).
    pub after: String,
    /// The source run up to the interrupt point, in order.
    pub events: Vec<StateEvent>,
    /// Every resource a call's answer presented to the source agent, at the last revision it saw.
    pub resources: Vec<StateResource>,
    /// The source agent's tool definitions (what a destination will be able to call).
    pub tools: Vec<StateTool>,
    /// The approvals the source agent could know of (named in an event it saw, in the objective,
    /// or required by one of its tools), as the approval system showed them when it stopped.
    pub approvals: Vec<StateApproval>,
    /// The strategy's token budget, if its configuration sets one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<u64>,
    /// Format 4, in a compaction chain after its first compaction: the handoff this plug-in
    /// returned one compaction earlier, as its destination received it. `events` (and
    /// `resources`) then hold only what happened since: the context to compact is this handoff
    /// followed by those events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_handoff: Option<PreviousHandoff>,
}

/// The previous compaction's handoff, in a chain (format 4).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreviousHandoff {
    /// The last source event the previous compaction covered (the events now sent follow it).
    pub after: String,
    /// The handoff as its destination read it (messages with role headers).
    pub text: String,
    /// The checkpoint document, when the previous answer was one (resources changed since
    /// marked `stale`, as the destination received it): the plug-in's own answer, a
    /// `compaction-eval/handoff/1` document (`handoff.schema.json`), which this schema does not
    /// repeat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub checkpoint: Option<crate::checkpoint::Checkpoint>,
}

/// The task as the source agent received it. The scenario's id, title and domain and the
/// interrupt point's name are not here (format 3): they name the benchmark case and its
/// experimental condition, which the agent never saw.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskInfo {
    pub objective: String,
    /// The continuity envelope's governed fields (tenant, principal, scope, policy, capabilities).
    pub governed: serde_json::Value,
}

/// One event of the source run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StateEvent {
    pub id: String,
    /// `user`, `plan`, `decision`, `hypothesis`, `report`, `call`, `approval`.
    pub kind: String,
    /// `user`, `agent`, `tool:NAME`, `external:SOURCE`, `approver:WHO`.
    pub origin: String,
    /// The message; for calls the call and the result the source saw.
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<StateCall>,
}

/// How a call ended, as the source agent saw it. A timeout is `timed_out`: whether the effect
/// committed is unknown to the agent and to the compactor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CallOutcome {
    Ok,
    Error,
    TimedOut,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StateCall {
    pub tool: String,
    pub args: Object,
    pub outcome: CallOutcome,
    /// The value of the tool's declared idempotency-key parameter, as the agent sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// The result, error or timeout text the agent saw.
    pub result_text: String,
    /// The resource the call's answer presented (key and revision).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StateResource {
    pub key: String,
    pub revision: u64,
    pub digest: String,
    pub external: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub observed_at: String,
    pub text: String,
}

/// A tool definition with the behaviour hints a tool registry publishes.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StateTool {
    pub name: String,
    pub description: String,
    /// `read`, `create`, `update`, `delete`, `send`, `read_resource`, `write_resource`, `check`.
    pub effect: String,
    /// The tool declares that it changes nothing.
    pub read_only: bool,
    /// JSON Schema of the parameters.
    pub parameters: serde_json::Value,
    /// The parameter that carries the idempotency key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key_param: Option<String>,
    /// The approval a call of the tool requires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_approval: Option<String>,
}

/// An approval as the approval system showed it when the source stopped.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StateApproval {
    pub id: String,
    /// The tool it gates.
    pub action: String,
    /// `pending`, `granted`, `denied`, `expired`, …
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// The interrupted state in format 2's layout (`compaction-eval/state/2`), for plug-ins written
/// before format 3. Its events, resources, tools and approvals are format 3's.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StateDocument2 {
    /// Always `compaction-eval/state/2`.
    pub format: String,
    /// The task (format 2 named it `scenario`; its id, title and domain are no longer sent).
    pub scenario: TaskInfo,
    pub interrupt: InterruptInfo2,
    pub events: Vec<StateEvent>,
    pub resources: Vec<StateResource>,
    pub tools: Vec<StateTool>,
    pub approvals: Vec<StateApproval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<u64>,
}

/// Where the source stopped (format 2; the interrupt point's name is no longer sent).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InterruptInfo2 {
    /// The last event the source completed.
    pub after: String,
}

impl From<StateDocument> for StateDocument2 {
    fn from(d: StateDocument) -> StateDocument2 {
        StateDocument2 {
            format: STATE_FORMAT_2.into(),
            scenario: d.task,
            interrupt: InterruptInfo2 { after: d.after },
            events: d.events,
            resources: d.resources,
            tools: d.tools,
            approvals: d.approvals,
            token_budget: d.token_budget,
        }
    }
}

/// A text answer: the handoff as text, optionally with chat messages before it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextDocument {
    /// Always `compaction-eval/text/1`.
    pub format: String,
    /// The handoff text, delivered as one user message.
    pub text: String,
    /// Messages delivered before the text (`role` is `user` or `assistant`).
    #[serde(default)]
    pub messages: Vec<TextMessage>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextMessage {
    pub role: String,
    pub content: String,
}

impl StateDocument {
    pub fn from_state(state: &InterruptedState, token_budget: Option<u64>) -> StateDocument {
        let s = &state.task;
        let events = state
            .events
            .iter()
            .map(|e| StateEvent {
                id: e.id.clone(),
                kind: e.kind.to_string(),
                origin: e.origin.label(),
                text: e.text.clone(),
                call: e.call.as_ref().map(|c| StateCall {
                    tool: c.tool.clone(),
                    args: c.args.clone(),
                    outcome: match c.outcome {
                        ObservedOutcome::Ok => CallOutcome::Ok,
                        ObservedOutcome::Error => CallOutcome::Error,
                        ObservedOutcome::TimedOut => CallOutcome::TimedOut,
                    },
                    idempotency_key: c.idempotency_key.clone(),
                    result_text: c.result_text.clone(),
                    resource: c
                        .observed
                        .as_ref()
                        .map(|o| format!("{}@{}", o.key, o.revision)),
                }),
            })
            .collect();
        let resources = state
            .latest_observations()
            .into_iter()
            .map(|o| StateResource {
                key: o.key.clone(),
                revision: o.revision,
                digest: o.digest.clone(),
                external: o.external,
                source: o.source.clone(),
                observed_at: o.observed_at.clone(),
                text: o.text.to_string(),
            })
            .collect();
        let tools = s
            .tools
            .iter()
            .map(|t| StateTool {
                name: t.name.clone(),
                description: t.description.clone(),
                effect: t.effect.as_str().to_string(),
                read_only: t.read_only,
                parameters: t.parameters.clone(),
                idempotency_key_param: t.idempotency_key_param.clone(),
                requires_approval: t.requires_approval.clone(),
            })
            .collect();
        StateDocument {
            format: STATE_FORMAT.into(),
            task: TaskInfo {
                objective: s.objective.clone(),
                governed: serde_json::to_value(&s.governed).unwrap_or_default(),
            },
            after: state.after.clone(),
            events,
            resources,
            tools,
            approvals: state
                .approvals
                .iter()
                .map(|a| StateApproval {
                    id: a.id.clone(),
                    action: a.action.clone(),
                    status: a.status.as_str().to_string(),
                    expires_at: a.expires_at.map(|t| t.to_string()),
                })
                .collect(),
            token_budget,
            previous_handoff: None,
        }
    }
}

/// The bytes a plug-in receives on stdin: the state document in the format it reads, as compact
/// JSON, nothing after it.
pub fn state_input(
    state: &InterruptedState,
    token_budget: Option<u64>,
    format: InputFormat,
) -> Result<Vec<u8>, serde_json::Error> {
    state_input_after(None, state, token_budget, format)
}

/// [`state_input`] in a chain: `previous` goes out as `previous_handoff` (format 4 only; the
/// caller refuses to chain a plug-in that reads an older format).
pub fn state_input_after(
    previous: Option<PreviousHandoff>,
    state: &InterruptedState,
    token_budget: Option<u64>,
    format: InputFormat,
) -> Result<Vec<u8>, serde_json::Error> {
    let mut doc = StateDocument::from_state(state, token_budget);
    match format {
        InputFormat::State4 => {
            doc.format = STATE_FORMAT_4.into();
            doc.previous_handoff = previous;
            serde_json::to_vec(&doc)
        }
        InputFormat::State3 => serde_json::to_vec(&doc),
        InputFormat::State2 => serde_json::to_vec(&StateDocument2::from(doc)),
    }
}

/// The JSON Schemas of the plug-in documents: (file name, pretty JSON).
pub fn schemas() -> Vec<(&'static str, String)> {
    let pretty = |v: schemars::Schema| {
        let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
        s.push('\n');
        s
    };
    vec![
        (
            "state.schema.json",
            pretty(schemars::schema_for!(StateDocument)),
        ),
        (
            "state-2.schema.json",
            pretty(schemars::schema_for!(StateDocument2)),
        ),
        (
            "handoff.schema.json",
            pretty(schemars::schema_for!(crate::checkpoint::Checkpoint)),
        ),
        (
            "text.schema.json",
            pretty(schemars::schema_for!(TextDocument)),
        ),
    ]
}
