//! The decision values and stable reason codes of seed 000 (§4): data shared by the decision
//! function and the trace events. It decides nothing and imports nothing of the envelope.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The three continuity outcomes of seed §4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Continuity validation passed; the runtime still has to authorize the next action.
    ReauthorizationRequired,
    /// An external effect may already have happened and must be reconciled (through the original
    /// `idempotency_key`) before anything else, including any retry.
    BlockedOnReconciliation,
    /// Identity, policy, capability, approval, digest, event lineage or schema validation failed; the run must
    /// reload or recreate a governed envelope.
    ContinuityValidationFailed,
}

impl Decision {
    /// Every decision, from least to most strict.
    pub const ALL: [Self; 3] = [
        Self::ReauthorizationRequired,
        Self::BlockedOnReconciliation,
        Self::ContinuityValidationFailed,
    ];

    /// The wire name (`reauthorization_required`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReauthorizationRequired => "reauthorization_required",
            Self::BlockedOnReconciliation => "blocked_on_reconciliation",
            Self::ContinuityValidationFailed => "continuity_validation_failed",
        }
    }

    /// Rank in the strictness order used by [`stricter_or_equal`]: higher is stricter.
    ///
    /// `reauthorization_required` (0) < `blocked_on_reconciliation` (1) < `continuity_validation_failed` (2).
    /// Both stop outcomes are stricter than continuing. Between them, a validation failure ranks higher:
    /// it rejects the envelope outright and forces a reload from governed storage, whose fresh validation
    /// will still stop on an unknown side effect; a reconciliation block, by contrast, accepts the
    /// envelope's identity, contract and approval bindings and lets the run resume once the effect is
    /// reconciled. So a compacted path that fails validation where full history only blocked is safe, and
    /// a compacted path that merely blocks where full history failed (say, on a tenant change) is not.
    pub fn strictness(self) -> u8 {
        match self {
            Self::ReauthorizationRequired => 0,
            Self::BlockedOnReconciliation => 1,
            Self::ContinuityValidationFailed => 2,
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Stable reason codes for the two stop outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReasonCode {
    /// The presented summary's digest differs from the envelope's `summary_sha256`.
    SummaryDigestMismatch,
    /// The tenant on record differs from the envelope's.
    TenantMismatch,
    /// The principal, authorization mode, delegated principal or delegated scope differs.
    PrincipalMismatch,
    /// The policy version in force differs from the envelope's.
    PolicyVersionChanged,
    /// The capability name or version in the catalog differs from the envelope's.
    CapabilityVersionChanged,
    /// The approval's lifetime ended, its status is `expired`, or its expiry cannot be established.
    ApprovalExpired,
    /// The approval was revoked.
    ApprovalRevoked,
    /// The approval on record is pending or rejected, or is not the approval (or action digest) the
    /// envelope is bound to. Not in the list of ten: neither `approval_expired` nor
    /// `approval_revoked` describes these cases truthfully.
    ApprovalNotActive,
    /// The side effect may have happened; reconciliation is required (decision `blocked_on_reconciliation`).
    UnknownSideEffect,
    /// The envelope's `schema_version` is not `continuity-envelope/v1`.
    SchemaVersionUnsupported,
    /// The envelope does not descend from the durable record: session, trace, last source event,
    /// checkpoint, idempotency key or a settled side-effect status differs.
    EventLineageMismatch,
    /// The envelope (with a supported schema version) fails [`ContinuityEnvelope::validate`]; the event's
    /// detail carries the seed's error text. Not in the list of ten: the seed's §4 names schema
    /// validation as a failure cause distinct from the version.
    EnvelopeInvalid,
}

impl ReasonCode {
    /// Every code.
    pub const ALL: [Self; 12] = [
        Self::SummaryDigestMismatch,
        Self::TenantMismatch,
        Self::PrincipalMismatch,
        Self::PolicyVersionChanged,
        Self::CapabilityVersionChanged,
        Self::ApprovalExpired,
        Self::ApprovalRevoked,
        Self::ApprovalNotActive,
        Self::UnknownSideEffect,
        Self::SchemaVersionUnsupported,
        Self::EventLineageMismatch,
        Self::EnvelopeInvalid,
    ];

    /// The wire name (`summary_digest_mismatch`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SummaryDigestMismatch => "summary_digest_mismatch",
            Self::TenantMismatch => "tenant_mismatch",
            Self::PrincipalMismatch => "principal_mismatch",
            Self::PolicyVersionChanged => "policy_version_changed",
            Self::CapabilityVersionChanged => "capability_version_changed",
            Self::ApprovalExpired => "approval_expired",
            Self::ApprovalRevoked => "approval_revoked",
            Self::ApprovalNotActive => "approval_not_active",
            Self::UnknownSideEffect => "unknown_side_effect",
            Self::SchemaVersionUnsupported => "schema_version_unsupported",
            Self::EventLineageMismatch => "event_lineage_mismatch",
            Self::EnvelopeInvalid => "envelope_invalid",
        }
    }
}

impl fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
