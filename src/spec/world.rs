//! The simulated world as a scenario declares it: the clock, collections, versioned resources,
//! approvals, the tools with their effects and parameters, and the simulated user who answers
//! `ask_user`. The declaration only; simulating it is `crate::world`, above this module.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::facts::{Detector, Predicate};
use crate::vocab::{ApprovalStatus, Object};

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
    /// Whether the value is copied from somewhere (a dose, a count: it must be visible before a
    /// simulated agent may use it, whatever its size) or the agent's own choice (a page size: never
    /// checked). Default: the general rule (strings of 4+ characters, numbers from 10 up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copied: Option<bool>,
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
