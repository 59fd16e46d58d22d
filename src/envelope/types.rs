//! The `continuity-envelope/v1` document, the state the systems of record report now, and their enums.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The only schema version this crate accepts.
pub const SCHEMA_VERSION: &str = "continuity-envelope/v1";

/// The span of the durable session event log that the compacted summary was derived from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SourceEventRange {
    /// Id of the first event the summary covers.
    pub first: String,
    /// Id of the last event the summary covers.
    pub last: String,
}

/// Who the run acts for. Delegation requires `delegated_principal_id` and `delegated_scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuthorizationMode {
    /// The platform's own identity acts.
    PlatformOwned,
    /// The run acts on behalf of a user within a delegated scope.
    UserDelegated,
    /// Each action is approved by a human.
    HumanApproved,
}

impl AuthorizationMode {
    /// Every mode, in declaration order.
    pub const ALL: [Self; 3] = [
        Self::PlatformOwned,
        Self::UserDelegated,
        Self::HumanApproved,
    ];

    /// The wire name (`user_delegated`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PlatformOwned => "platform_owned",
            Self::UserDelegated => "user_delegated",
            Self::HumanApproved => "human_approved",
        }
    }

    /// The mode with this exact wire name.
    pub fn from_wire(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|mode| mode.as_str() == value)
    }
}

/// What the durable side-effect ledger knows about the pending write.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum SideEffectStatus {
    /// The write was never attempted.
    NotStarted,
    /// The write is known to have happened.
    SideEffectCommitted,
    /// The write may or may not have happened (e.g. it timed out); it must be reconciled, never retried blindly.
    SideEffectUnknown,
}

impl SideEffectStatus {
    /// Every status, in declaration order.
    pub const ALL: [Self; 3] = [
        Self::NotStarted,
        Self::SideEffectCommitted,
        Self::SideEffectUnknown,
    ];

    /// The wire name (`side_effect_unknown`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NotStarted => "not_started",
            Self::SideEffectCommitted => "side_effect_committed",
            Self::SideEffectUnknown => "side_effect_unknown",
        }
    }

    /// The status with this exact wire name.
    pub fn from_wire(value: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|status| status.as_str() == value)
    }
}

/// What the approval system of record says about the approval the envelope is bound to.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum ApprovalStatus {
    /// The approval is in force (the reference implementation calls this `approved`, accepted as an alias).
    #[serde(alias = "approved")]
    #[value(alias = "approved")]
    Granted,
    /// Requested, not yet decided.
    Pending,
    /// Decided against.
    Rejected,
    /// Its lifetime ended.
    Expired,
    /// Withdrawn after it was granted.
    Revoked,
}

impl ApprovalStatus {
    /// Every status, in declaration order.
    pub const ALL: [Self; 5] = [
        Self::Granted,
        Self::Pending,
        Self::Rejected,
        Self::Expired,
        Self::Revoked,
    ];

    /// The wire name (`granted`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Granted => "granted",
            Self::Pending => "pending",
            Self::Rejected => "rejected",
            Self::Expired => "expired",
            Self::Revoked => "revoked",
        }
    }

    /// The status with this wire name; `approved` is read as `granted`.
    pub fn from_wire(value: &str) -> Option<Self> {
        if value == "approved" {
            return Some(Self::Granted);
        }
        Self::ALL
            .into_iter()
            .find(|status| status.as_str() == value)
    }
}

fn always_true() -> bool {
    true
}

/// The `continuity-envelope/v1` document: the structured state a run needs to continue after compaction,
/// a context reset, process recovery or a role handoff, recorded without summarization.
///
/// Timestamps are kept as strings so that validation can report the seed's exact timestamp errors instead of
/// a deserializer's. A value of this type is not necessarily valid: call [`ContinuityEnvelope::validate`]
/// (or build it with [`ContinuityEnvelope::from_yaml_str`] / [`ContinuityEnvelope::from_json_str`] /
/// [`crate::envelope::parse_envelope`], which validate).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ContinuityEnvelope {
    /// Always [`SCHEMA_VERSION`].
    pub schema_version: String,
    /// Unique id of this envelope; links compaction and rehydration events.
    pub envelope_id: String,
    /// The session whose durable event log this envelope derives from.
    pub session_id: String,
    /// The trace the source events belong to.
    pub source_trace_id: String,
    /// Why the boundary happened (`context_compaction`, `context_reset`, `process_recovery`, `role_handoff`).
    pub reset_reason: String,

    /// The task's objective, as stated by the user (not the summary's paraphrase of it).
    pub objective: String,
    /// References to exact user constraints kept in governed storage (never the constraint text itself).
    pub exact_constraint_refs: Vec<String>,
    /// Unfinished work that must stay visible after the boundary.
    pub pending_obligations: Vec<String>,

    /// Tenant the run acts in.
    pub tenant_id: String,
    /// Principal the run acts for.
    pub principal_id: String,
    /// How authority was obtained.
    pub authorization_mode: AuthorizationMode,
    /// Required under [`AuthorizationMode::UserDelegated`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegated_principal_id: Option<String>,
    /// Required under [`AuthorizationMode::UserDelegated`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegated_scope: Option<String>,

    /// Policy version in force when the envelope was recorded.
    pub policy_version: String,
    /// The capability the pending action uses.
    pub capability_name: String,
    /// Its version when the envelope was recorded.
    pub capability_version: String,

    /// The approval bound to the pending action.
    pub approval_id: String,
    /// Digest of the frozen action the approval covers.
    pub action_digest: String,
    /// End of the approval's lifetime (RFC 3339, with offset or zone).
    pub approval_expires_at: String,

    /// Key through which the pending write is reconciled and, only then, retried.
    pub idempotency_key: String,
    /// Side-effect state recorded from the ledger.
    pub side_effect_status: SideEffectStatus,
    /// Named execution boundary to resume from.
    pub checkpoint_ref: String,
    /// Sandbox snapshot taken at that boundary.
    pub sandbox_snapshot_ref: String,
    /// Remaining step budget.
    pub budget_remaining: u64,

    /// Events of the durable log the summary was derived from.
    pub source_event_range: SourceEventRange,
    /// `sha256:<hex>` of the derived summary. Proves which summary was validated, not that it is true.
    pub summary_sha256: String,
    /// References to the evidence the envelope was built from.
    pub evidence_refs: Vec<String>,

    /// Must be true: continuing never skips a fresh authorization decision.
    #[serde(default = "always_true")]
    pub requires_reauthorization: bool,
}

/// What the systems of record (identity, policy, capability catalog, approvals, side-effect ledger, durable
/// session log, clock) say at rehydration time. [`crate::envelope::decide`] compares the envelope against it;
/// nothing in it may come from the summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CurrentState {
    /// Tenant of the session now.
    pub tenant_id: String,
    /// Principal of the session now.
    pub principal_id: String,
    /// Authorization mode on record now.
    pub authorization_mode: AuthorizationMode,
    /// Delegated principal on record now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegated_principal_id: Option<String>,
    /// Delegated scope on record now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegated_scope: Option<String>,

    /// Policy version in force now (the seed's `current_policy_version`).
    pub policy_version: String,
    /// Capability the catalog resolves for the pending action now.
    pub capability_name: String,
    /// Its version now.
    pub capability_version: String,

    /// The approval the approval system holds for this action.
    pub approval_id: String,
    /// The action digest that approval covers.
    pub action_digest: String,
    /// Its status now.
    pub approval_status: ApprovalStatus,
    /// Its expiry on record, if the approval system reports one; checked in addition to the envelope's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_expires_at: Option<String>,

    /// The ledger's idempotency key for the pending write.
    pub idempotency_key: String,
    /// The ledger's side-effect status now.
    pub side_effect_status: SideEffectStatus,
    /// The checkpoint the checkpoint store holds for this session.
    pub checkpoint_ref: String,

    /// Session of the durable event log.
    pub session_id: String,
    /// Trace of the durable event log.
    pub trace_id: String,
    /// Id of the last event of the durable log before the compaction boundary: the last event a summary
    /// taken at that boundary can cover.
    pub last_event_id: String,

    /// The validation clock (RFC 3339, with offset or zone).
    pub now: String,
}

impl CurrentState {
    /// The state the systems of record report when nothing changed since `envelope` was recorded: same
    /// identity, versions, bindings and lineage, approval granted with the envelope's expiry, clock `now`.
    pub fn agreeing_with(envelope: &ContinuityEnvelope, now: &str) -> Self {
        Self {
            tenant_id: envelope.tenant_id.clone(),
            principal_id: envelope.principal_id.clone(),
            authorization_mode: envelope.authorization_mode,
            delegated_principal_id: envelope.delegated_principal_id.clone(),
            delegated_scope: envelope.delegated_scope.clone(),
            policy_version: envelope.policy_version.clone(),
            capability_name: envelope.capability_name.clone(),
            capability_version: envelope.capability_version.clone(),
            approval_id: envelope.approval_id.clone(),
            action_digest: envelope.action_digest.clone(),
            approval_status: ApprovalStatus::Granted,
            approval_expires_at: Some(envelope.approval_expires_at.clone()),
            idempotency_key: envelope.idempotency_key.clone(),
            side_effect_status: envelope.side_effect_status,
            checkpoint_ref: envelope.checkpoint_ref.clone(),
            session_id: envelope.session_id.clone(),
            trace_id: envelope.source_trace_id.clone(),
            last_event_id: envelope.source_event_range.last.clone(),
            now: now.to_owned(),
        }
    }
}
