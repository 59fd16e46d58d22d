//! Reading envelopes and current states from untyped YAML/JSON, field by field.
//!
//! Serde's derived errors ("invalid type: integer, expected a string at line 3") are not the seed's
//! operator-facing errors, so documents are first read into a [`serde_json::Value`] and every field is checked
//! here, reporting `Continuity field is required: X`, `Continuity field must be a string: X`, and so on.
//! Unknown keys are ignored; `null` is treated like an absent key.

use serde_json::{Map, Value};

use super::error::ContinuityError;
use super::types::{
    ApprovalStatus, AuthorizationMode, ContinuityEnvelope, CurrentState, SideEffectStatus,
    SourceEventRange,
};
use super::validate::{parse_timestamp, parse_validation_time};

/// Key under which the seed's example nests the envelope; accepted on input, never written.
const ENVELOPE_WRAPPER: &str = "continuity_envelope";
/// Same convention for current-state documents.
const STATE_WRAPPER: &str = "continuity_state";

fn read_yaml(text: &str) -> Result<Value, ContinuityError> {
    // YAML 1.1 booleans (`no`, `on`) would silently turn a string field into a boolean.
    serde_saphyr::from_str_with_options::<Value>(
        text,
        serde_saphyr::options! { strict_booleans: true },
    )
    .map_err(|error| ContinuityError::Unreadable(error.to_string()))
}

fn read_json(text: &str) -> Result<Value, ContinuityError> {
    serde_json::from_str::<Value>(text)
        .map_err(|error| ContinuityError::Unreadable(error.to_string()))
}

/// The mapping of a document, unwrapped from `wrapper:` if that is its only key.
fn document_map<'a>(
    value: &'a Value,
    wrapper: &str,
    not_mapping: ContinuityError,
) -> Result<&'a Map<String, Value>, ContinuityError> {
    let Value::Object(map) = value else {
        return Err(not_mapping);
    };
    match map.get(wrapper) {
        Some(inner) if map.len() == 1 => match inner {
            Value::Object(inner) => Ok(inner),
            _ => Err(not_mapping),
        },
        _ => Ok(map),
    }
}

fn present<'a>(map: &'a Map<String, Value>, field: &str) -> Option<&'a Value> {
    map.get(field).filter(|value| !value.is_null())
}

fn required_string(map: &Map<String, Value>, field: &str) -> Result<String, ContinuityError> {
    required_string_at(map, field, field)
}

/// `key` of `map`, reported as `field` (which names the full path for nested mappings).
fn required_string_at(
    map: &Map<String, Value>,
    key: &str,
    field: &str,
) -> Result<String, ContinuityError> {
    match present(map, key) {
        None => Err(ContinuityError::FieldRequired(field.to_owned())),
        Some(Value::String(text)) => {
            let text = text.trim();
            if text.is_empty() {
                Err(ContinuityError::FieldRequired(field.to_owned()))
            } else {
                Ok(text.to_owned())
            }
        }
        Some(_) => Err(ContinuityError::FieldNotString(field.to_owned())),
    }
}

fn optional_string(
    map: &Map<String, Value>,
    field: &str,
) -> Result<Option<String>, ContinuityError> {
    match present(map, field) {
        None => Ok(None),
        Some(Value::String(text)) => {
            let text = text.trim();
            Ok((!text.is_empty()).then(|| text.to_owned()))
        }
        Some(_) => Err(ContinuityError::FieldNotString(field.to_owned())),
    }
}

fn string_list(map: &Map<String, Value>, field: &str) -> Result<Vec<String>, ContinuityError> {
    let Some(value) = present(map, field) else {
        return Err(ContinuityError::FieldRequired(field.to_owned()));
    };
    let Value::Array(items) = value else {
        return Err(ContinuityError::FieldNotList(field.to_owned()));
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let name = format!("{field}[{index}]");
            match item {
                Value::String(text) if !text.trim().is_empty() => Ok(text.trim().to_owned()),
                Value::String(_) | Value::Null => Err(ContinuityError::FieldRequired(name)),
                _ => Err(ContinuityError::FieldNotString(name)),
            }
        })
        .collect()
}

fn unsigned(map: &Map<String, Value>, field: &str) -> Result<u64, ContinuityError> {
    match present(map, field) {
        None => Err(ContinuityError::FieldRequired(field.to_owned())),
        Some(value) => value
            .as_u64()
            .ok_or_else(|| ContinuityError::FieldNotInteger(field.to_owned())),
    }
}

fn event_range(map: &Map<String, Value>, field: &str) -> Result<SourceEventRange, ContinuityError> {
    match present(map, field) {
        None => Err(ContinuityError::FieldRequired(field.to_owned())),
        Some(Value::Object(range)) => Ok(SourceEventRange {
            first: required_string_at(range, "first", &format!("{field}.first"))?,
            last: required_string_at(range, "last", &format!("{field}.last"))?,
        }),
        Some(_) => Err(ContinuityError::FieldNotMapping(field.to_owned())),
    }
}

fn authorization_mode(map: &Map<String, Value>) -> Result<AuthorizationMode, ContinuityError> {
    let mode = required_string(map, "authorization_mode")?;
    AuthorizationMode::from_wire(&mode).ok_or(ContinuityError::AuthorizationModeUnsupported(mode))
}

fn side_effect_status(map: &Map<String, Value>) -> Result<SideEffectStatus, ContinuityError> {
    let status = required_string(map, "side_effect_status")?;
    SideEffectStatus::from_wire(&status).ok_or(ContinuityError::SideEffectStatusUnsupported(status))
}

/// Reads and validates an envelope from an untyped document.
///
/// Accepts the bare envelope mapping or the seed's `continuity_envelope:` wrapper. A non-mapping document gets
/// `Continuity envelope must be ContinuityEnvelope`; otherwise fields are checked in the seed's §1 order
/// (schema version first) and the first problem is returned, then [`ContinuityEnvelope::validate`] runs.
/// String values are trimmed.
pub fn parse_envelope(value: &Value) -> Result<ContinuityEnvelope, ContinuityError> {
    let map = document_map(value, ENVELOPE_WRAPPER, ContinuityError::EnvelopeNotMapping)?;
    let schema_version = required_string(map, "schema_version")?;
    if schema_version != super::types::SCHEMA_VERSION {
        return Err(ContinuityError::SchemaVersionUnsupported(schema_version));
    }
    let envelope = ContinuityEnvelope {
        schema_version,
        envelope_id: required_string(map, "envelope_id")?,
        session_id: required_string(map, "session_id")?,
        source_trace_id: required_string(map, "source_trace_id")?,
        reset_reason: required_string(map, "reset_reason")?,
        objective: required_string(map, "objective")?,
        exact_constraint_refs: string_list(map, "exact_constraint_refs")?,
        pending_obligations: string_list(map, "pending_obligations")?,
        tenant_id: required_string(map, "tenant_id")?,
        principal_id: required_string(map, "principal_id")?,
        authorization_mode: authorization_mode(map)?,
        delegated_principal_id: optional_string(map, "delegated_principal_id")?,
        delegated_scope: optional_string(map, "delegated_scope")?,
        policy_version: required_string(map, "policy_version")?,
        capability_name: required_string(map, "capability_name")?,
        capability_version: required_string(map, "capability_version")?,
        approval_id: required_string(map, "approval_id")?,
        action_digest: required_string(map, "action_digest")?,
        approval_expires_at: required_string(map, "approval_expires_at")?,
        idempotency_key: required_string(map, "idempotency_key")?,
        side_effect_status: side_effect_status(map)?,
        checkpoint_ref: required_string(map, "checkpoint_ref")?,
        sandbox_snapshot_ref: required_string(map, "sandbox_snapshot_ref")?,
        budget_remaining: unsigned(map, "budget_remaining")?,
        source_event_range: event_range(map, "source_event_range")?,
        summary_sha256: required_string(map, "summary_sha256")?,
        evidence_refs: string_list(map, "evidence_refs")?,
        // Absent means true, as in the reference: true is the only value a valid envelope may hold anyway.
        requires_reauthorization: match present(map, "requires_reauthorization") {
            None => true,
            Some(Value::Bool(flag)) => *flag,
            Some(_) => return Err(ContinuityError::ReauthorizationFlagNotBoolean),
        },
    };
    envelope.validate()?;
    Ok(envelope)
}

/// Reads and validates a current state from an untyped document.
///
/// A non-mapping document gets `Continuity state must be ContinuityState`; an absent or unreadable `now` gets
/// `Continuity validation time must be a datetime`. `current_policy_version` is accepted for
/// `policy_version` (the seed's name for the value loaded from the policy system of record).
pub fn parse_current_state(value: &Value) -> Result<CurrentState, ContinuityError> {
    let map = document_map(value, STATE_WRAPPER, ContinuityError::StateNotMapping)?;
    let policy_field = if present(map, "policy_version").is_none()
        && present(map, "current_policy_version").is_some()
    {
        "current_policy_version"
    } else {
        "policy_version"
    };
    let state = CurrentState {
        tenant_id: required_string(map, "tenant_id")?,
        principal_id: required_string(map, "principal_id")?,
        authorization_mode: authorization_mode(map)?,
        delegated_principal_id: optional_string(map, "delegated_principal_id")?,
        delegated_scope: optional_string(map, "delegated_scope")?,
        policy_version: required_string(map, policy_field)?,
        capability_name: required_string(map, "capability_name")?,
        capability_version: required_string(map, "capability_version")?,
        approval_id: required_string(map, "approval_id")?,
        action_digest: required_string(map, "action_digest")?,
        approval_status: {
            let status = required_string(map, "approval_status")?;
            ApprovalStatus::from_wire(&status)
                .ok_or(ContinuityError::ApprovalStatusUnsupported(status))?
        },
        approval_expires_at: match optional_string(map, "approval_expires_at")? {
            Some(expires_at) => {
                parse_timestamp(&expires_at, "approval_expires_at")?;
                Some(expires_at)
            }
            None => None,
        },
        idempotency_key: required_string(map, "idempotency_key")?,
        side_effect_status: side_effect_status(map)?,
        checkpoint_ref: required_string(map, "checkpoint_ref")?,
        session_id: required_string(map, "session_id")?,
        trace_id: required_string(map, "trace_id")?,
        last_event_id: required_string(map, "last_event_id")?,
        now: match present(map, "now") {
            Some(Value::String(now)) => {
                parse_validation_time(now)?;
                now.trim().to_owned()
            }
            _ => return Err(ContinuityError::ValidationTimeNotDatetime),
        },
    };
    state.validate()?;
    Ok(state)
}

impl ContinuityEnvelope {
    /// Reads and validates an envelope from YAML (bare or under `continuity_envelope:`).
    pub fn from_yaml_str(text: &str) -> Result<Self, ContinuityError> {
        parse_envelope(&read_yaml(text)?)
    }

    /// Reads and validates an envelope from JSON (bare or under `continuity_envelope`).
    pub fn from_json_str(text: &str) -> Result<Self, ContinuityError> {
        parse_envelope(&read_json(text)?)
    }

    /// Writes the bare envelope as YAML.
    pub fn to_yaml_string(&self) -> Result<String, serde_saphyr::SerializeError> {
        serde_saphyr::to_string(self)
    }

    /// Writes the bare envelope as pretty-printed JSON.
    pub fn to_json_string(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self)
    }
}

impl CurrentState {
    /// Reads and validates a current state from YAML (bare or under `continuity_state:`).
    pub fn from_yaml_str(text: &str) -> Result<Self, ContinuityError> {
        parse_current_state(&read_yaml(text)?)
    }

    /// Reads and validates a current state from JSON (bare or under `continuity_state`).
    pub fn from_json_str(text: &str) -> Result<Self, ContinuityError> {
        parse_current_state(&read_json(text)?)
    }
}
