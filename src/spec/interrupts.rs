//! The interrupt points: where the reference run is cut, what changes at restore, the reference
//! continuation's steps and the recovery behaviours a destination must show. Shape only: whether
//! the continuation succeeds is validation's replay to prove.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use serde_json::Value;

use super::facts::Predicate;
use crate::vocab::{ApprovalStatus, FinishStatus, Object};

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

/// A change applied at restore. Exactly one field is set (with its companions: `status`,
/// `version`, `text`/`find`/`replace`/`changes`, `record`/`changes` or `add`).
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
    /// A collection one of whose records gets new field values (with `record` and `changes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection: Option<String>,
    /// The id of that record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<String>,
    /// With `collection`: a record that appears in the collection at restore (a new consumer in
    /// an inventory, a late custodian). It needs a string `id` no record of the collection has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add: Option<Object>,
    /// Values the perturbation changes. For `resource`: `from` occurs in the older text, `to` in
    /// the new one (strings, numbers or booleans, by their text). For `collection` + `record`:
    /// each entry names a `field` and sets it to `to` at restore (`from` is its value before). A
    /// simulated destination that holds the older value and cannot see `to` uses `from` wherever
    /// the continuation uses `to` (as it does with `replace` → `find`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<ValueChange>,
    /// Minutes the clock moves forward (an approval may expire).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advance_minutes: Option<u64>,
    /// A committed call (event id) whose response was lost: the source transcript shows a timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lose_response: Option<String>,
}

/// A value a resource or record perturbation changes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValueChange {
    /// For a record: the field, a path into the record (`capacity`, `remit_to.postal_code`,
    /// `lines[0].qty`). Not used for a resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The value in the older revision (or the field's value before restore).
    pub from: Value,
    /// The value in the new revision (or the field's value after restore).
    pub to: Value,
}

impl ValueChange {
    /// The text a scalar value shows in a document (a string as is, a number or boolean as JSON
    /// writes it); `None` for null, an object or an array.
    pub fn scalar_text(v: &Value) -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(_) | Value::Bool(_) => Some(v.to_string()),
            _ => None,
        }
    }
}

/// One step of a path into a record: a key or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSeg {
    Key(String),
    Index(usize),
}

/// Splits a field path (`remit_to.postal_code`, `lines[0].qty`); `None` when it is malformed.
pub fn parse_field_path(p: &str) -> Option<Vec<PathSeg>> {
    let mut out = Vec::new();
    for part in p.split('.') {
        let (key, idx) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if key.is_empty() && (out.is_empty() || idx.is_empty()) {
            return None;
        }
        if !key.is_empty() {
            out.push(PathSeg::Key(key.to_string()));
        }
        let mut rest = idx;
        while let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            out.push(PathSeg::Index(r[..end].parse().ok()?));
            rest = &r[end + 1..];
        }
        if !rest.is_empty() {
            return None;
        }
    }
    Some(out)
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
    /// The user must be asked (`ask_user`), before the first call of any `before` tool: a point
    /// where the right move is to stop and ask.
    #[serde(default)]
    pub must_ask: bool,
}
