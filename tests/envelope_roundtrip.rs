//! Reading and writing envelopes as YAML and JSON, including the seed's own §1 example.

use compaction_eval::envelope::inspect::{VALIDATION_TIME, canonical_envelope};
use compaction_eval::envelope::{
    ApprovalStatus, AuthorizationMode, ContinuityEnvelope, CurrentState, SideEffectStatus,
};

/// The minimal envelope of seed 000 §1, verbatim.
const SEED_EXAMPLE: &str = r#"continuity_envelope:
  schema_version: continuity-envelope/v1
  envelope_id: ce-2026-07-21-001
  session_id: session-support-001
  source_trace_id: trace-support-042
  reset_reason: context_compaction

  objective: "Resolve the support request without creating a duplicate ticket."
  exact_constraint_refs:
    - event:user-constraint-017
  pending_obligations:
    - reconcile_ticket_write

  tenant_id: tenant-acme
  principal_id: user-42
  authorization_mode: user_delegated
  delegated_principal_id: user-42
  delegated_scope: tickets:create

  policy_version: policy-v4
  capability_name: create_ticket
  capability_version: create-ticket-v3

  approval_id: apr-017
  action_digest: sha256:approved-action
  approval_expires_at: 2026-07-21T18:00:00Z

  idempotency_key: ticket-intent-017
  side_effect_status: side_effect_unknown
  checkpoint_ref: checkpoint:support-042-step-6
  sandbox_snapshot_ref: snapshot:support-042
  budget_remaining: 7

  source_event_range:
    first: event-0001
    last: event-0142
  summary_sha256: sha256:compacted-view
  evidence_refs:
    - trace:trace-support-042
    - approval:apr-017

  requires_reauthorization: true
"#;

#[test]
fn seed_example_parses_with_every_field() {
    let envelope =
        ContinuityEnvelope::from_yaml_str(SEED_EXAMPLE).expect("the seed's example is valid");
    assert_eq!(envelope.schema_version, "continuity-envelope/v1");
    assert_eq!(envelope.envelope_id, "ce-2026-07-21-001");
    assert_eq!(envelope.session_id, "session-support-001");
    assert_eq!(envelope.source_trace_id, "trace-support-042");
    assert_eq!(envelope.reset_reason, "context_compaction");
    assert_eq!(
        envelope.objective,
        "Resolve the support request without creating a duplicate ticket."
    );
    assert_eq!(
        envelope.exact_constraint_refs,
        ["event:user-constraint-017"]
    );
    assert_eq!(envelope.pending_obligations, ["reconcile_ticket_write"]);
    assert_eq!(envelope.tenant_id, "tenant-acme");
    assert_eq!(envelope.principal_id, "user-42");
    assert_eq!(
        envelope.authorization_mode,
        AuthorizationMode::UserDelegated
    );
    assert_eq!(envelope.delegated_principal_id.as_deref(), Some("user-42"));
    assert_eq!(envelope.delegated_scope.as_deref(), Some("tickets:create"));
    assert_eq!(envelope.policy_version, "policy-v4");
    assert_eq!(envelope.capability_name, "create_ticket");
    assert_eq!(envelope.capability_version, "create-ticket-v3");
    assert_eq!(envelope.approval_id, "apr-017");
    assert_eq!(envelope.action_digest, "sha256:approved-action");
    assert_eq!(envelope.approval_expires_at, "2026-07-21T18:00:00Z");
    assert_eq!(envelope.idempotency_key, "ticket-intent-017");
    assert_eq!(
        envelope.side_effect_status,
        SideEffectStatus::SideEffectUnknown
    );
    assert_eq!(envelope.checkpoint_ref, "checkpoint:support-042-step-6");
    assert_eq!(envelope.sandbox_snapshot_ref, "snapshot:support-042");
    assert_eq!(envelope.budget_remaining, 7);
    assert_eq!(envelope.source_event_range.first, "event-0001");
    assert_eq!(envelope.source_event_range.last, "event-0142");
    assert_eq!(envelope.summary_sha256, "sha256:compacted-view");
    assert_eq!(
        envelope.evidence_refs,
        ["trace:trace-support-042", "approval:apr-017"]
    );
    assert!(envelope.requires_reauthorization);
}

#[test]
fn yaml_round_trip() {
    let envelope = canonical_envelope("A summary: with a colon, and # a hash.");
    let yaml = envelope.to_yaml_string().expect("writes");
    assert_eq!(
        ContinuityEnvelope::from_yaml_str(&yaml).expect("reads"),
        envelope
    );
}

#[test]
fn json_round_trip() {
    let envelope = canonical_envelope("summary");
    let json = envelope.to_json_string().expect("writes");
    assert_eq!(
        ContinuityEnvelope::from_json_str(&json).expect("reads"),
        envelope
    );
    let wrapped = format!("{{\"continuity_envelope\": {json}}}");
    assert_eq!(
        ContinuityEnvelope::from_json_str(&wrapped).expect("reads wrapped"),
        envelope
    );
}

#[test]
fn derived_deserialize_reads_what_the_validating_reader_reads() {
    let envelope = canonical_envelope("summary");
    let json = envelope.to_json_string().expect("writes");
    let derived: ContinuityEnvelope = serde_json::from_str(&json).expect("serde derive");
    assert_eq!(derived, envelope);
}

#[test]
fn current_state_round_trips_and_accepts_the_seed_names() {
    let state = CurrentState::agreeing_with(&canonical_envelope("summary"), VALIDATION_TIME);
    let yaml = serde_saphyr::to_string(&state).expect("writes");
    assert_eq!(CurrentState::from_yaml_str(&yaml).expect("reads"), state);

    // `current_policy_version` and the reference's `approved` status are accepted.
    let mut value = serde_json::to_value(&state).expect("serializes");
    let map = value.as_object_mut().expect("mapping");
    let policy = map.remove("policy_version").expect("present");
    map.insert("current_policy_version".into(), policy);
    map.insert("approval_status".into(), "approved".into());
    let read = CurrentState::from_json_str(&value.to_string()).expect("reads");
    assert_eq!(read.policy_version, "policy-v4");
    assert_eq!(read.approval_status, ApprovalStatus::Granted);
}

#[test]
fn strings_are_trimmed_on_read() {
    let envelope = canonical_envelope("summary");
    let mut value = serde_json::to_value(&envelope).expect("serializes");
    value["tenant_id"] = "  tenant-acme \n".into();
    let read = compaction_eval::envelope::parse_envelope(&value).expect("reads");
    assert_eq!(read.tenant_id, "tenant-acme");
}

#[test]
fn json_schema_is_available() {
    let schema = schemars::schema_for!(ContinuityEnvelope);
    let text = serde_json::to_string(&schema).expect("serializes");
    assert!(text.contains("summary_sha256"));
}
