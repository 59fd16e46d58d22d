//! One test per operator-facing error of seed 000's "Runtime validation errors" list, asserting the exact
//! text, plus the crate's own extensions for fields the reference does not type.

use compaction_eval::envelope::inspect::{VALIDATION_TIME, canonical_envelope};
use compaction_eval::envelope::{
    ContinuityEnvelope, ContinuityError, CurrentState, parse_current_state, parse_envelope,
};
use serde_json::{Value, json};

const SUMMARY: &str = "Continue the ticket workflow without creating a duplicate.";

fn envelope_value() -> Value {
    serde_json::to_value(canonical_envelope(SUMMARY)).expect("envelope serializes")
}

fn state_value() -> Value {
    let envelope = canonical_envelope(SUMMARY);
    serde_json::to_value(CurrentState::agreeing_with(&envelope, VALIDATION_TIME))
        .expect("state serializes")
}

/// The error a mutated canonical envelope document gets.
fn envelope_error(mutate: impl FnOnce(&mut serde_json::Map<String, Value>)) -> String {
    let mut value = envelope_value();
    mutate(value.as_object_mut().expect("envelope is a mapping"));
    parse_envelope(&value)
        .expect_err("mutated envelope must be rejected")
        .to_string()
}

/// The error a mutated canonical current-state document gets.
fn state_error(mutate: impl FnOnce(&mut serde_json::Map<String, Value>)) -> String {
    let mut value = state_value();
    mutate(value.as_object_mut().expect("state is a mapping"));
    parse_current_state(&value)
        .expect_err("mutated state must be rejected")
        .to_string()
}

#[test]
fn canonical_documents_are_valid() {
    assert!(parse_envelope(&envelope_value()).is_ok());
    assert!(parse_current_state(&state_value()).is_ok());
}

#[test]
fn approval_status_is_not_supported() {
    let error = state_error(|state| {
        state.insert("approval_status".into(), json!("maybe-later"));
    });
    assert_eq!(
        error,
        "Continuity approval status is not supported: maybe-later"
    );
}

#[test]
fn authorization_mode_is_not_supported() {
    let error = envelope_error(|envelope| {
        envelope.insert("authorization_mode".into(), json!("root"));
    });
    assert_eq!(
        error,
        "Continuity authorization mode is not supported: root"
    );
}

#[test]
fn envelope_must_be_continuity_envelope() {
    for document in [json!(["a", "list"]), json!("text"), json!(42), Value::Null] {
        assert_eq!(
            parse_envelope(&document)
                .expect_err("not a mapping")
                .to_string(),
            "Continuity envelope must be ContinuityEnvelope"
        );
    }
    let error = ContinuityEnvelope::from_yaml_str("- just\n- a list\n").expect_err("a list");
    assert_eq!(
        error.to_string(),
        "Continuity envelope must be ContinuityEnvelope"
    );
    let error =
        ContinuityEnvelope::from_yaml_str("continuity_envelope: 3\n").expect_err("wrapped scalar");
    assert_eq!(
        error.to_string(),
        "Continuity envelope must be ContinuityEnvelope"
    );
}

#[test]
fn envelope_must_require_reauthorization() {
    let error = envelope_error(|envelope| {
        envelope.insert("requires_reauthorization".into(), json!(false));
    });
    assert_eq!(error, "Continuity envelope must require reauthorization");
    let mut typed = canonical_envelope(SUMMARY);
    typed.requires_reauthorization = false;
    assert_eq!(
        typed.validate(),
        Err(ContinuityError::ReauthorizationNotRequired)
    );
}

#[test]
fn field_is_required_delegated_principal_id() {
    let error = envelope_error(|envelope| {
        envelope.remove("delegated_principal_id");
    });
    assert_eq!(
        error,
        "Continuity field is required: delegated_principal_id"
    );
    let blank = envelope_error(|envelope| {
        envelope.insert("delegated_principal_id".into(), json!("  "));
    });
    assert_eq!(
        blank,
        "Continuity field is required: delegated_principal_id"
    );
}

#[test]
fn field_is_required_delegated_scope() {
    let error = envelope_error(|envelope| {
        envelope.remove("delegated_scope");
    });
    assert_eq!(error, "Continuity field is required: delegated_scope");
    let mut typed = canonical_envelope(SUMMARY);
    typed.delegated_scope = None;
    assert_eq!(
        typed
            .validate()
            .expect_err("delegation without scope")
            .to_string(),
        "Continuity field is required: delegated_scope"
    );
}

#[test]
fn delegation_fields_are_optional_outside_user_delegated() {
    let mut value = envelope_value();
    let envelope = value.as_object_mut().expect("mapping");
    envelope.insert("authorization_mode".into(), json!("platform_owned"));
    envelope.remove("delegated_principal_id");
    envelope.remove("delegated_scope");
    assert!(parse_envelope(&value).is_ok());
}

#[test]
fn field_is_required_named_field() {
    assert_eq!(
        envelope_error(|envelope| {
            envelope.remove("tenant_id");
        }),
        "Continuity field is required: tenant_id"
    );
    assert_eq!(
        envelope_error(|envelope| {
            envelope.insert("principal_id".into(), json!(""));
        }),
        "Continuity field is required: principal_id"
    );
    assert_eq!(
        envelope_error(|envelope| {
            envelope.insert("checkpoint_ref".into(), Value::Null);
        }),
        "Continuity field is required: checkpoint_ref"
    );
    assert_eq!(
        state_error(|state| {
            state.remove("idempotency_key");
        }),
        "Continuity field is required: idempotency_key"
    );
    let mut typed = canonical_envelope(SUMMARY);
    typed.capability_version = String::new();
    assert_eq!(
        typed.validate().expect_err("blank").to_string(),
        "Continuity field is required: capability_version"
    );
}

#[test]
fn field_must_be_a_string() {
    assert_eq!(
        envelope_error(|envelope| {
            envelope.insert("policy_version".into(), json!(4));
        }),
        "Continuity field must be a string: policy_version"
    );
    assert_eq!(
        envelope_error(|envelope| {
            envelope.insert("tenant_id".into(), json!({"id": "tenant-acme"}));
        }),
        "Continuity field must be a string: tenant_id"
    );
    assert_eq!(
        state_error(|state| {
            state.insert("principal_id".into(), json!(["user-42"]));
        }),
        "Continuity field must be a string: principal_id"
    );
    assert_eq!(
        envelope_error(|envelope| {
            envelope.insert("exact_constraint_refs".into(), json!(["event:a", 7]));
        }),
        "Continuity field must be a string: exact_constraint_refs[1]"
    );
}

#[test]
fn reauthorization_flag_must_be_a_boolean() {
    assert_eq!(
        envelope_error(|envelope| {
            envelope.insert("requires_reauthorization".into(), json!("true"));
        }),
        "Continuity reauthorization flag must be a boolean"
    );
    // YAML 1.1 `yes` stays a string under strict booleans, so it is not a boolean either.
    let yaml = canonical_envelope(SUMMARY)
        .to_yaml_string()
        .expect("yaml")
        .replace(
            "requires_reauthorization: true",
            "requires_reauthorization: yes",
        );
    assert!(yaml.contains("requires_reauthorization: yes"));
    assert_eq!(
        ContinuityEnvelope::from_yaml_str(&yaml)
            .expect_err("yes")
            .to_string(),
        "Continuity reauthorization flag must be a boolean"
    );
}

#[test]
fn schema_version_is_not_supported() {
    assert_eq!(
        envelope_error(|envelope| {
            envelope.insert("schema_version".into(), json!("continuity-envelope/v2"));
        }),
        "Continuity schema version is not supported: continuity-envelope/v2"
    );
    let mut typed = canonical_envelope(SUMMARY);
    typed.schema_version = "continuity-envelope/v0".into();
    assert_eq!(
        typed.validate().expect_err("old version").to_string(),
        "Continuity schema version is not supported: continuity-envelope/v0"
    );
}

#[test]
fn side_effect_status_is_not_supported() {
    assert_eq!(
        envelope_error(|envelope| {
            envelope.insert("side_effect_status".into(), json!("probably_fine"));
        }),
        "Continuity side-effect status is not supported: probably_fine"
    );
    assert_eq!(
        state_error(|state| {
            state.insert("side_effect_status".into(), json!("retrying"));
        }),
        "Continuity side-effect status is not supported: retrying"
    );
}

#[test]
fn state_must_be_continuity_state() {
    for document in [json!([1, 2]), json!("state"), json!(true), Value::Null] {
        assert_eq!(
            parse_current_state(&document)
                .expect_err("not a mapping")
                .to_string(),
            "Continuity state must be ContinuityState"
        );
    }
    assert_eq!(
        CurrentState::from_json_str("[]")
            .expect_err("list")
            .to_string(),
        "Continuity state must be ContinuityState"
    );
}

#[test]
fn summary_digest_must_use_sha256() {
    assert_eq!(
        envelope_error(|envelope| {
            envelope.insert(
                "summary_sha256".into(),
                json!("md5:0cc175b9c0f1b6a831c399e269772661"),
            );
        }),
        "Continuity summary digest must use sha256"
    );
    let mut typed = canonical_envelope(SUMMARY);
    typed.summary_sha256 = "compacted-view".into();
    assert_eq!(
        typed.validate(),
        Err(ContinuityError::SummaryDigestNotSha256)
    );
}

#[test]
fn timestamp_is_invalid() {
    for bad in [
        "tomorrow evening",
        "2026-13-40T25:61:00Z",
        "2026-07-21T18:00:00Z trailing",
    ] {
        assert_eq!(
            envelope_error(|envelope| {
                envelope.insert("approval_expires_at".into(), json!(bad));
            }),
            "Continuity timestamp is invalid: approval_expires_at",
            "{bad}"
        );
    }
    assert_eq!(
        state_error(|state| {
            state.insert("approval_expires_at".into(), json!("not a time"));
        }),
        "Continuity timestamp is invalid: approval_expires_at"
    );
}

#[test]
fn timestamp_must_include_a_timezone() {
    for naive in ["2026-07-21T18:00:00", "2026-07-21 18:00", "2026-07-21"] {
        assert_eq!(
            envelope_error(|envelope| {
                envelope.insert("approval_expires_at".into(), json!(naive));
            }),
            "Continuity timestamp must include a timezone: approval_expires_at",
            "{naive}"
        );
    }
}

#[test]
fn timestamps_with_offset_or_zone_are_accepted() {
    for aware in [
        "2026-07-21T18:00:00Z",
        "2026-07-21T20:00:00+02:00",
        "2026-07-21T14:00:00-04:00[America/New_York]",
        "2026-07-21T20:00:00[Europe/Paris]",
    ] {
        let mut value = envelope_value();
        value["approval_expires_at"] = json!(aware);
        assert!(parse_envelope(&value).is_ok(), "{aware}");
    }
}

#[test]
fn validation_time_must_be_a_datetime() {
    assert_eq!(
        state_error(|state| {
            state.insert("now".into(), json!("soon"));
        }),
        "Continuity validation time must be a datetime"
    );
    assert_eq!(
        state_error(|state| {
            state.insert("now".into(), json!(1_784_655_000));
        }),
        "Continuity validation time must be a datetime"
    );
    assert_eq!(
        state_error(|state| {
            state.remove("now");
        }),
        "Continuity validation time must be a datetime"
    );
}

#[test]
fn validation_time_must_include_a_timezone() {
    assert_eq!(
        state_error(|state| {
            state.insert("now".into(), json!("2026-07-21T17:30:00"));
        }),
        "Continuity validation time must include a timezone"
    );
    let envelope = canonical_envelope(SUMMARY);
    let state = CurrentState::agreeing_with(&envelope, "2026-07-21T17:30:00");
    assert_eq!(
        state.validate(),
        Err(ContinuityError::ValidationTimeWithoutTimezone)
    );
}

// Extensions: fields the reference implementation does not have.

#[test]
fn list_fields_must_be_lists() {
    assert_eq!(
        envelope_error(|envelope| {
            envelope.insert(
                "pending_obligations".into(),
                json!("reconcile_ticket_write"),
            );
        }),
        "Continuity field must be a list of strings: pending_obligations"
    );
    assert_eq!(
        envelope_error(|envelope| {
            envelope.remove("exact_constraint_refs");
        }),
        "Continuity field is required: exact_constraint_refs"
    );
    assert_eq!(
        envelope_error(|envelope| {
            envelope.insert("evidence_refs".into(), json!(["trace:x", ""]));
        }),
        "Continuity field is required: evidence_refs[1]"
    );
}

#[test]
fn budget_must_be_a_non_negative_integer() {
    for bad in [json!(-1), json!(2.5), json!("7")] {
        assert_eq!(
            envelope_error(|envelope| {
                envelope.insert("budget_remaining".into(), bad.clone());
            }),
            "Continuity field must be a non-negative integer: budget_remaining",
            "{bad}"
        );
    }
}

#[test]
fn source_event_range_must_be_a_mapping_with_both_ends() {
    assert_eq!(
        envelope_error(|envelope| {
            envelope.insert("source_event_range".into(), json!("event-0001..event-0142"));
        }),
        "Continuity field must be a mapping: source_event_range"
    );
    assert_eq!(
        envelope_error(|envelope| {
            envelope.insert("source_event_range".into(), json!({"first": "event-0001"}));
        }),
        "Continuity field is required: source_event_range.last"
    );
}

#[test]
fn unreadable_documents_get_a_parse_error_not_a_panic() {
    let error = ContinuityEnvelope::from_yaml_str("a: [unclosed").expect_err("bad yaml");
    assert!(matches!(error, ContinuityError::Unreadable(_)), "{error}");
    assert!(
        error
            .to_string()
            .starts_with("Continuity document could not be parsed: ")
    );
    let error = ContinuityEnvelope::from_json_str("{\"schema_version\": ").expect_err("bad json");
    assert!(matches!(error, ContinuityError::Unreadable(_)), "{error}");
}

#[test]
fn schema_version_is_checked_before_other_fields() {
    let error =
        parse_envelope(&json!({"schema_version": "continuity-envelope/v2"})).expect_err("v2");
    assert_eq!(
        error.to_string(),
        "Continuity schema version is not supported: continuity-envelope/v2"
    );
    let error = parse_envelope(&json!({})).expect_err("empty");
    assert_eq!(
        error.to_string(),
        "Continuity field is required: schema_version"
    );
}
