//! Property tests: malformed envelopes and states fed to the parser, the validator and `decide` produce
//! errors or stop decisions, never panics, and never the continuing decision for something invalid.

use compaction_eval::envelope::inspect::{VALIDATION_TIME, canonical_envelope};
use compaction_eval::envelope::{
    ApprovalStatus, ContinuityEnvelope, CurrentState, Decision, SideEffectStatus, TraceEvent,
    decide, parse_current_state, parse_envelope, summary_digest,
};
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Number, Value};

const SUMMARY: &str = "Continue the ticket workflow without creating a duplicate.";

const FIELDS: &[&str] = &[
    "continuity_envelope",
    "continuity_state",
    "schema_version",
    "envelope_id",
    "session_id",
    "source_trace_id",
    "reset_reason",
    "objective",
    "exact_constraint_refs",
    "pending_obligations",
    "tenant_id",
    "principal_id",
    "authorization_mode",
    "delegated_principal_id",
    "delegated_scope",
    "policy_version",
    "current_policy_version",
    "capability_name",
    "capability_version",
    "approval_id",
    "action_digest",
    "approval_expires_at",
    "approval_status",
    "idempotency_key",
    "side_effect_status",
    "checkpoint_ref",
    "sandbox_snapshot_ref",
    "budget_remaining",
    "source_event_range",
    "first",
    "last",
    "summary_sha256",
    "evidence_refs",
    "requires_reauthorization",
    "trace_id",
    "last_event_id",
    "now",
];

/// Strings that sit near the valid ones, so mutations reach deep checks rather than stopping at the first.
fn near_string() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("continuity-envelope/v1".to_owned()),
        Just("user_delegated".to_owned()),
        Just("side_effect_unknown".to_owned()),
        Just("revoked".to_owned()),
        Just("2026-07-21T18:00:00Z".to_owned()),
        Just("2026-07-21T18:00:00".to_owned()),
        Just("2026-07-21T18:00:00[Nowhere/City]".to_owned()),
        Just("sha256:".to_owned()),
        Just("\u{0}\u{202e}\n".to_owned()),
        "[ -~]{0,24}",
        any::<String>(),
    ]
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(|x| Number::from_f64(x).map_or(Value::Null, Value::Number)),
        near_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        let key = prop_oneof![select(FIELDS).prop_map(str::to_owned), "[a-z_]{0,10}"];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key, inner), 0..8)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// The canonical envelope or state document with some fields removed or replaced by arbitrary values.
fn mutated(base: Value) -> impl Strategy<Value = Value> {
    let edit = (select(FIELDS), prop::option::of(arb_json()));
    prop::collection::vec(edit, 1..5).prop_map(move |edits| {
        let mut value = base.clone();
        if let Value::Object(map) = &mut value {
            for (field, replacement) in edits {
                match replacement {
                    Some(replacement) => map.insert(field.to_owned(), replacement),
                    None => map.remove(field),
                };
            }
        }
        value
    })
}

fn canonical_state() -> CurrentState {
    CurrentState::agreeing_with(&canonical_envelope(SUMMARY), VALIDATION_TIME)
}

/// `decide` on whatever parsed, with the invariant that continuing requires a valid, matching envelope.
/// (Assertions panic; proptest reports a panic as a failing case with its shrunk input.)
fn decide_checked(envelope: &ContinuityEnvelope, summary: &str, current: &CurrentState) {
    let outcome = decide(envelope, summary, current);
    assert_eq!(outcome.events.len(), 1);
    if outcome.decision == Decision::ReauthorizationRequired {
        assert!(envelope.validate().is_ok());
        assert_eq!(summary_digest(summary), envelope.summary_sha256);
        assert_ne!(
            current.side_effect_status,
            SideEffectStatus::SideEffectUnknown
        );
        assert_ne!(
            envelope.side_effect_status,
            SideEffectStatus::SideEffectUnknown
        );
        assert_eq!(current.approval_status, ApprovalStatus::Granted);
        assert!(matches!(
            &outcome.events[0],
            TraceEvent::ContextRehydration {
                requires_reauthorization: true,
                ..
            }
        ));
    } else {
        assert!(outcome.reason.is_some());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_json_never_panics_the_parsers(value in arb_json()) {
        let envelope = parse_envelope(&value);
        let state = parse_current_state(&value);
        if let (Ok(envelope), Ok(state)) = (&envelope, &state) {
            decide_checked(envelope, SUMMARY, state);
        }
    }

    #[test]
    fn mutated_envelopes_error_or_decide_without_panicking(
        value in mutated(serde_json::to_value(canonical_envelope(SUMMARY)).unwrap_or_default()),
        summary in prop_oneof![Just(SUMMARY.to_owned()), any::<String>()],
    ) {
        match parse_envelope(&value) {
            Ok(envelope) => {
                prop_assert!(envelope.validate().is_ok());
                decide_checked(&envelope, &summary, &canonical_state());
            }
            Err(error) => prop_assert!(error.to_string().starts_with("Continuity ")),
        }
    }

    #[test]
    fn mutated_states_error_or_decide_without_panicking(
        value in mutated(serde_json::to_value(canonical_state()).unwrap_or_default()),
    ) {
        match parse_current_state(&value) {
            Ok(state) => {
                prop_assert!(state.validate().is_ok());
                decide_checked(&canonical_envelope(SUMMARY), SUMMARY, &state);
            }
            Err(error) => prop_assert!(error.to_string().starts_with("Continuity ")),
        }
    }

    #[test]
    fn arbitrary_text_never_panics_the_readers(text in any::<String>()) {
        let _ = ContinuityEnvelope::from_yaml_str(&text);
        let _ = ContinuityEnvelope::from_json_str(&text);
        let _ = CurrentState::from_yaml_str(&text);
        let _ = CurrentState::from_json_str(&text);
    }

    #[test]
    fn typed_envelopes_with_arbitrary_strings_never_panic_decide(
        fields in prop::collection::vec(near_string(), 8),
        now in near_string(),
        flag in any::<bool>(),
    ) {
        let mut envelope = canonical_envelope(SUMMARY);
        envelope.schema_version.clone_from(&fields[0]);
        envelope.tenant_id.clone_from(&fields[1]);
        envelope.approval_expires_at.clone_from(&fields[2]);
        envelope.summary_sha256.clone_from(&fields[3]);
        envelope.delegated_scope = Some(fields[4].clone());
        envelope.requires_reauthorization = flag;
        let mut state = CurrentState::agreeing_with(&envelope, &now);
        state.policy_version.clone_from(&fields[5]);
        state.approval_expires_at = Some(fields[6].clone());
        state.last_event_id.clone_from(&fields[7]);
        let _ = envelope.validate();
        let _ = state.validate();
        decide_checked(&envelope, SUMMARY, &state);
        for event in decide(&envelope, SUMMARY, &state).events {
            prop_assert!(!event.to_line().contains('\n'));
        }
    }
}
