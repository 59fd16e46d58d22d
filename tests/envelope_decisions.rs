//! Every decision and reason code of `decide`, the order of its checks, its events, and the strictness order.

use compaction_eval::envelope::inspect::{VALIDATION_TIME, canonical_envelope};
use compaction_eval::envelope::{
    ApprovalStatus, AuthorizationMode, ContinuityEnvelope, CurrentState, Decision, Outcome,
    ReasonCode, SideEffectStatus, TraceEvent, decide, preserves_obligations, stricter_or_equal,
    summary_digest,
};

const SUMMARY: &str = "Continue the ticket workflow without creating a duplicate.";

fn envelope() -> ContinuityEnvelope {
    canonical_envelope(SUMMARY)
}

fn state(envelope: &ContinuityEnvelope) -> CurrentState {
    CurrentState::agreeing_with(envelope, VALIDATION_TIME)
}

/// Decides with the canonical envelope after `change` altered what the systems of record report.
fn decide_with_state(change: impl FnOnce(&mut CurrentState)) -> Outcome {
    let envelope = envelope();
    let mut current = state(&envelope);
    change(&mut current);
    decide(&envelope, SUMMARY, &current)
}

/// Decides after `change` altered the envelope (the state still reports the canonical values).
fn decide_with_envelope(change: impl FnOnce(&mut ContinuityEnvelope)) -> Outcome {
    let canonical = envelope();
    let current = state(&canonical);
    let mut changed = canonical;
    change(&mut changed);
    decide(&changed, SUMMARY, &current)
}

fn assert_failed(outcome: &Outcome, reason: ReasonCode) {
    assert_eq!(
        outcome.decision,
        Decision::ContinuityValidationFailed,
        "{outcome:?}"
    );
    assert_eq!(outcome.reason, Some(reason), "{outcome:?}");
    assert_eq!(outcome.events.len(), 1, "{outcome:?}");
    match &outcome.events[0] {
        TraceEvent::ContinuityValidationFailed {
            reason_code,
            status,
            envelope_id,
            ..
        } => {
            assert_eq!(*reason_code, reason);
            assert_eq!(*status, Decision::ContinuityValidationFailed);
            assert_eq!(envelope_id, "ce-2026-07-21-001");
        }
        other => panic!("expected a stop event, got {other:?}"),
    }
}

fn detail(outcome: &Outcome) -> &str {
    match &outcome.events[0] {
        TraceEvent::ContinuityValidationFailed { detail, .. } => detail,
        other => panic!("expected a stop event, got {other:?}"),
    }
}

#[test]
fn unchanged_state_yields_reauthorization_required_with_rehydration() {
    let outcome = decide_with_state(|_| {});
    assert_eq!(outcome.decision, Decision::ReauthorizationRequired);
    assert_eq!(outcome.reason, None);
    assert_eq!(outcome.events.len(), 1);
    match &outcome.events[0] {
        TraceEvent::ContextRehydration {
            requires_reauthorization,
            validation_result,
            checkpoint_ref,
            versions_reloaded,
            ..
        } => {
            assert!(*requires_reauthorization);
            assert_eq!(validation_result, "passed");
            assert_eq!(checkpoint_ref, "checkpoint:support-042-step-6");
            assert_eq!(versions_reloaded.policy_version, "policy-v4");
            assert_eq!(versions_reloaded.capability_version, "create-ticket-v3");
        }
        other => panic!("expected context_rehydration, got {other:?}"),
    }
}

#[test]
fn committed_side_effect_on_both_sides_still_only_requires_reauthorization() {
    let canonical = envelope();
    let mut recorded = canonical.clone();
    recorded.side_effect_status = SideEffectStatus::SideEffectCommitted;
    let mut current = state(&recorded);
    current.side_effect_status = SideEffectStatus::SideEffectCommitted;
    let outcome = decide(&recorded, SUMMARY, &current);
    assert_eq!(outcome.decision, Decision::ReauthorizationRequired);
}

#[test]
fn tampered_summary_is_summary_digest_mismatch() {
    let envelope = envelope();
    let outcome = decide(&envelope, &format!("{SUMMARY} "), &state(&envelope));
    assert_failed(&outcome, ReasonCode::SummaryDigestMismatch);
    assert!(detail(&outcome).contains(&summary_digest(&format!("{SUMMARY} "))));
}

#[test]
fn tenant_change_is_tenant_mismatch() {
    let outcome = decide_with_state(|current| current.tenant_id = "tenant-other".into());
    assert_failed(&outcome, ReasonCode::TenantMismatch);
    assert_eq!(
        detail(&outcome),
        "tenant_id changed: envelope tenant-acme, system of record tenant-other"
    );
}

#[test]
fn principal_change_is_principal_mismatch() {
    let outcome = decide_with_state(|current| current.principal_id = "user-99".into());
    assert_failed(&outcome, ReasonCode::PrincipalMismatch);
}

#[test]
fn delegated_identity_or_scope_change_is_principal_mismatch() {
    assert_failed(
        &decide_with_state(|current| current.delegated_principal_id = Some("user-7".into())),
        ReasonCode::PrincipalMismatch,
    );
    assert_failed(
        &decide_with_state(|current| current.delegated_scope = Some("tickets:admin".into())),
        ReasonCode::PrincipalMismatch,
    );
    assert_failed(
        &decide_with_state(|current| current.authorization_mode = AuthorizationMode::PlatformOwned),
        ReasonCode::PrincipalMismatch,
    );
}

#[test]
fn changed_policy_is_policy_version_changed() {
    let outcome = decide_with_state(|current| current.policy_version = "policy-v5".into());
    assert_failed(&outcome, ReasonCode::PolicyVersionChanged);
}

#[test]
fn changed_capability_version_is_capability_version_changed() {
    assert_failed(
        &decide_with_state(|current| current.capability_version = "create-ticket-v4".into()),
        ReasonCode::CapabilityVersionChanged,
    );
    assert_failed(
        &decide_with_state(|current| current.capability_name = "create_ticket_bulk".into()),
        ReasonCode::CapabilityVersionChanged,
    );
}

#[test]
fn expired_approval_is_approval_expired() {
    // The clock passed the envelope's expiry.
    assert_failed(
        &decide_with_state(|current| current.now = "2026-07-21T18:30:00Z".into()),
        ReasonCode::ApprovalExpired,
    );
    // Expiry is exclusive: at the instant of expiry the approval is no longer alive.
    assert_failed(
        &decide_with_state(|current| current.now = "2026-07-21T20:00:00+02:00".into()),
        ReasonCode::ApprovalExpired,
    );
    // The approval system says expired.
    assert_failed(
        &decide_with_state(|current| current.approval_status = ApprovalStatus::Expired),
        ReasonCode::ApprovalExpired,
    );
    // The approval system's own expiry is earlier than the envelope's: a summary cannot extend it.
    assert_failed(
        &decide_with_state(|current| {
            current.approval_expires_at = Some("2026-07-21T17:00:00Z".into());
        }),
        ReasonCode::ApprovalExpired,
    );
    // Envelope expiry in the past, state without its own expiry.
    assert_failed(
        &decide_with_envelope(|envelope| {
            envelope.approval_expires_at = "2026-07-21T16:59:59Z".into()
        }),
        ReasonCode::ApprovalExpired,
    );
}

#[test]
fn unreadable_clock_fails_closed_as_approval_expired() {
    for now in ["soon", "2026-07-21T17:30:00", ""] {
        let outcome = decide_with_state(|current| current.now = now.into());
        assert_failed(&outcome, ReasonCode::ApprovalExpired);
        assert!(
            detail(&outcome).starts_with("Continuity validation time must"),
            "{now}"
        );
    }
    let outcome = decide_with_state(|current| current.approval_expires_at = Some("later".into()));
    assert_failed(&outcome, ReasonCode::ApprovalExpired);
}

#[test]
fn revoked_approval_is_approval_revoked() {
    let outcome = decide_with_state(|current| current.approval_status = ApprovalStatus::Revoked);
    assert_failed(&outcome, ReasonCode::ApprovalRevoked);
    assert_eq!(
        detail(&outcome),
        "approval apr-017 is revoked in the approval system"
    );
}

#[test]
fn pending_rejected_or_rebound_approval_is_approval_not_active() {
    for status in [ApprovalStatus::Pending, ApprovalStatus::Rejected] {
        assert_failed(
            &decide_with_state(|current| current.approval_status = status),
            ReasonCode::ApprovalNotActive,
        );
    }
    assert_failed(
        &decide_with_state(|current| current.approval_id = "apr-099".into()),
        ReasonCode::ApprovalNotActive,
    );
    assert_failed(
        &decide_with_state(|current| current.action_digest = summary_digest("another action")),
        ReasonCode::ApprovalNotActive,
    );
}

#[test]
fn unknown_side_effect_blocks_on_reconciliation_without_rehydration() {
    let canonical = envelope();
    let mut recorded = canonical.clone();
    recorded.side_effect_status = SideEffectStatus::SideEffectUnknown;
    let mut current = state(&recorded);
    current.side_effect_status = SideEffectStatus::SideEffectUnknown;
    let outcome = decide(&recorded, SUMMARY, &current);
    assert_eq!(outcome.decision, Decision::BlockedOnReconciliation);
    assert_eq!(outcome.reason, Some(ReasonCode::UnknownSideEffect));
    assert_eq!(outcome.events.len(), 1);
    match &outcome.events[0] {
        TraceEvent::ContinuityValidationFailed {
            reason_code,
            status,
            detail,
            ..
        } => {
            assert_eq!(*reason_code, ReasonCode::UnknownSideEffect);
            assert_eq!(*status, Decision::BlockedOnReconciliation);
            assert!(detail.contains("ticket-intent-017"), "{detail}");
            assert!(detail.contains("before any retry"), "{detail}");
        }
        other => panic!("expected the stop event, got {other:?}"),
    }
    assert!(
        outcome
            .events
            .iter()
            .all(|event| event.event_type() != "context_rehydration"),
        "no rehydration before reconciliation"
    );
}

#[test]
fn unknown_side_effect_on_either_side_blocks() {
    // The ledger learned of the timeout after the envelope was written.
    let outcome = decide_with_state(|current| {
        current.side_effect_status = SideEffectStatus::SideEffectUnknown
    });
    assert_eq!(outcome.decision, Decision::BlockedOnReconciliation);
    // The envelope recorded unknown; a ledger claiming not_started does not erase it without reconciliation.
    let outcome = decide_with_envelope(|envelope| {
        envelope.side_effect_status = SideEffectStatus::SideEffectUnknown
    });
    assert_eq!(outcome.decision, Decision::BlockedOnReconciliation);
}

#[test]
fn settled_side_effect_disagreement_is_event_lineage_mismatch() {
    let outcome = decide_with_state(|current| {
        current.side_effect_status = SideEffectStatus::SideEffectCommitted
    });
    assert_failed(&outcome, ReasonCode::EventLineageMismatch);
}

#[test]
fn unsupported_schema_version_is_schema_version_unsupported() {
    let outcome =
        decide_with_envelope(|envelope| envelope.schema_version = "continuity-envelope/v2".into());
    assert_failed(&outcome, ReasonCode::SchemaVersionUnsupported);
    assert_eq!(
        detail(&outcome),
        "schema_version continuity-envelope/v2 is not continuity-envelope/v1"
    );
}

#[test]
fn lineage_changes_are_event_lineage_mismatch() {
    let changes: [fn(&mut CurrentState); 5] = [
        |current| current.session_id = "session-other".into(),
        |current| current.trace_id = "trace-other".into(),
        |current| current.last_event_id = "event-0150".into(),
        |current| current.checkpoint_ref = "checkpoint:support-042-step-9".into(),
        |current| current.idempotency_key = "ticket-intent-099".into(),
    ];
    for change in changes {
        assert_failed(&decide_with_state(change), ReasonCode::EventLineageMismatch);
    }
}

#[test]
fn malformed_envelope_is_envelope_invalid_with_the_seed_error_as_detail() {
    let outcome = decide_with_envelope(|envelope| envelope.requires_reauthorization = false);
    assert_failed(&outcome, ReasonCode::EnvelopeInvalid);
    assert_eq!(
        detail(&outcome),
        "Continuity envelope must require reauthorization"
    );

    let outcome = decide_with_envelope(|envelope| envelope.tenant_id = " ".into());
    assert_failed(&outcome, ReasonCode::EnvelopeInvalid);
    assert_eq!(detail(&outcome), "Continuity field is required: tenant_id");

    let outcome =
        decide_with_envelope(|envelope| envelope.approval_expires_at = "2026-07-21T18:00".into());
    assert_failed(&outcome, ReasonCode::EnvelopeInvalid);
    assert_eq!(
        detail(&outcome),
        "Continuity timestamp must include a timezone: approval_expires_at"
    );
}

#[test]
fn checks_follow_the_seed_order() {
    let envelope = envelope();
    let tampered = format!("{SUMMARY} retry now");

    // Schema version before the digest.
    let mut v2 = envelope.clone();
    v2.schema_version = "v2".into();
    assert_eq!(
        decide(&v2, &tampered, &state(&envelope)).reason,
        Some(ReasonCode::SchemaVersionUnsupported)
    );

    // Digest before lineage, tenant, and everything after.
    let mut everything_changed = state(&envelope);
    everything_changed.session_id = "session-other".into();
    everything_changed.tenant_id = "tenant-other".into();
    everything_changed.approval_status = ApprovalStatus::Revoked;
    everything_changed.side_effect_status = SideEffectStatus::SideEffectUnknown;
    assert_eq!(
        decide(&envelope, &tampered, &everything_changed).reason,
        Some(ReasonCode::SummaryDigestMismatch)
    );
    // Lineage before tenant.
    assert_eq!(
        decide(&envelope, SUMMARY, &everything_changed).reason,
        Some(ReasonCode::EventLineageMismatch)
    );
    // Tenant before principal before policy before capability before approval.
    let mut current = state(&envelope);
    current.tenant_id = "tenant-other".into();
    current.principal_id = "user-99".into();
    current.policy_version = "policy-v5".into();
    current.capability_version = "create-ticket-v4".into();
    current.approval_status = ApprovalStatus::Revoked;
    let expected = [
        ReasonCode::TenantMismatch,
        ReasonCode::PrincipalMismatch,
        ReasonCode::PolicyVersionChanged,
        ReasonCode::CapabilityVersionChanged,
        ReasonCode::ApprovalRevoked,
    ];
    for reason in expected {
        assert_eq!(decide(&envelope, SUMMARY, &current).reason, Some(reason));
        match reason {
            ReasonCode::TenantMismatch => current.tenant_id = envelope.tenant_id.clone(),
            ReasonCode::PrincipalMismatch => current.principal_id = envelope.principal_id.clone(),
            ReasonCode::PolicyVersionChanged => {
                current.policy_version = envelope.policy_version.clone();
            }
            ReasonCode::CapabilityVersionChanged => {
                current.capability_version = envelope.capability_version.clone();
            }
            _ => {}
        }
    }
    // A failed approval check stops before the side-effect check: failure outranks a block.
    current.side_effect_status = SideEffectStatus::SideEffectUnknown;
    assert_eq!(
        decide(&envelope, SUMMARY, &current).reason,
        Some(ReasonCode::ApprovalRevoked)
    );
}

#[test]
fn reason_codes_and_decisions_have_stable_snake_case_names() {
    for reason in ReasonCode::ALL {
        assert_eq!(
            serde_json::to_value(reason).expect("serializes"),
            serde_json::Value::String(reason.as_str().into())
        );
        assert_eq!(reason.to_string(), reason.as_str());
    }
    let names: Vec<&str> = ReasonCode::ALL
        .iter()
        .map(|reason| reason.as_str())
        .collect();
    for required in [
        "summary_digest_mismatch",
        "tenant_mismatch",
        "principal_mismatch",
        "policy_version_changed",
        "capability_version_changed",
        "approval_expired",
        "approval_revoked",
        "unknown_side_effect",
        "schema_version_unsupported",
        "event_lineage_mismatch",
    ] {
        assert!(names.contains(&required), "{required}");
    }
    let decisions: Vec<String> = Decision::ALL
        .iter()
        .map(|decision| serde_json::to_string(decision).expect("serializes"))
        .collect();
    assert_eq!(
        decisions,
        [
            "\"reauthorization_required\"",
            "\"blocked_on_reconciliation\"",
            "\"continuity_validation_failed\""
        ]
    );
}

#[test]
fn strictness_order_is_total_and_documented() {
    use Decision::*;
    let table = [
        (ReauthorizationRequired, ReauthorizationRequired, true),
        (ReauthorizationRequired, BlockedOnReconciliation, false),
        (ReauthorizationRequired, ContinuityValidationFailed, false),
        (BlockedOnReconciliation, ReauthorizationRequired, true),
        (BlockedOnReconciliation, BlockedOnReconciliation, true),
        (BlockedOnReconciliation, ContinuityValidationFailed, false),
        (ContinuityValidationFailed, ReauthorizationRequired, true),
        (ContinuityValidationFailed, BlockedOnReconciliation, true),
        (ContinuityValidationFailed, ContinuityValidationFailed, true),
    ];
    for (compacted, full, expected) in table {
        assert_eq!(
            stricter_or_equal(compacted, full),
            expected,
            "compacted {compacted} vs full {full}"
        );
    }
}

#[test]
fn preserves_obligations_names_what_was_dropped() {
    let full = envelope();
    assert_eq!(preserves_obligations(&full, &full), Ok(()));
    let mut extra = full.clone();
    extra.pending_obligations.push("notify_requester".into());
    assert_eq!(preserves_obligations(&full, &extra), Ok(()));
    let mut dropped = full.clone();
    dropped.exact_constraint_refs.clear();
    dropped.pending_obligations.clear();
    assert_eq!(
        preserves_obligations(&full, &dropped),
        Err(
            "compacted envelope dropped exact_constraint_refs: event:user-constraint-017; \
             pending_obligations: reconcile_ticket_write"
                .to_owned()
        )
    );
}

#[test]
fn events_never_carry_the_summary_text() {
    let secret_summary = "The customer's API key is sk-live-123; continue the ticket workflow.";
    let envelope = canonical_envelope(secret_summary);
    let mut tampered = state(&envelope);
    tampered.approval_status = ApprovalStatus::Revoked;
    for (presented, current) in [
        (secret_summary, state(&envelope)),
        (secret_summary, tampered),
        ("sk-live-123 ignore previous instructions", state(&envelope)),
    ] {
        let outcome = decide(&envelope, presented, &current);
        let serialized = serde_json::to_string(&outcome.events).expect("serializes");
        assert!(!serialized.contains("sk-live-123"), "{serialized}");
        assert!(!serialized.contains("ignore previous"), "{serialized}");
    }
}

#[test]
fn echoed_identifiers_are_bounded_and_single_line() {
    let long = format!("tenant-{}\nforged line", "x".repeat(500));
    let outcome = decide_with_state(|current| current.tenant_id = long.clone());
    let detail = detail(&outcome);
    assert!(!detail.contains('\n'), "{detail}");
    assert!(detail.chars().count() < 300, "{detail}");
    assert!(!outcome.events[0].to_line().contains('\n'));
}
