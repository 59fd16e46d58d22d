//! The continuity decision of seed §3–§4 and the "same or stricter" rule of §6.
//!
//! There is deliberately no authorizing outcome: the best a compacted or reset run can get is
//! [`Decision::ReauthorizationRequired`], after which the runtime must run policy and authorization again
//! before the next capability call. The summary's *content* is never read here — only its digest — so
//! instructions injected into a summary cannot influence the decision.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::digest::summary_digest;
use super::trace::{TraceEvent, bounded, rehydration_event, stop_event};
use super::types::{
    ApprovalStatus, ContinuityEnvelope, CurrentState, SCHEMA_VERSION, SideEffectStatus,
};
use super::validate::{parse_timestamp, parse_validation_time};

pub use super::codes::{Decision, ReasonCode};

/// What [`decide`] concluded and the trace events it emitted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Outcome {
    /// The decision.
    pub decision: Decision,
    /// Why continuity stopped; `None` exactly when the decision is `reauthorization_required`.
    pub reason: Option<ReasonCode>,
    /// `[context_rehydration]` on success, `[continuity_validation_failed]` (with `status` = the decision)
    /// otherwise. The `context_compaction` event belongs to whoever built the envelope
    /// ([`crate::envelope::compaction_event`]).
    pub events: Vec<TraceEvent>,
}

/// A stop: the decision, its reason and the one stop event.
struct Stop {
    decision: Decision,
    reason: ReasonCode,
    detail: String,
}

fn failed(reason: ReasonCode, detail: String) -> Stop {
    Stop {
        decision: Decision::ContinuityValidationFailed,
        reason,
        detail,
    }
}

/// `Err(stop)` when the envelope's recorded value differs from the system of record's.
fn same(field: &str, recorded: &str, current: &str, reason: ReasonCode) -> Result<(), Stop> {
    if recorded == current {
        return Ok(());
    }
    Err(failed(
        reason,
        format!(
            "{field} changed: envelope {}, system of record {}",
            bounded(recorded),
            bounded(current)
        ),
    ))
}

fn optional(value: Option<&String>) -> &str {
    value.map_or("", String::as_str)
}

/// Decides whether a run may continue from `envelope` after compaction or reset.
///
/// `presented_summary` is the summary offered to the destination (only its digest is used); `current` is what
/// the systems of record say now. Checks run in the order of seed §3 "After compaction or reset", and the
/// first failing check decides:
///
/// 1. schema version (`schema_version_unsupported`), then the rest of [`ContinuityEnvelope::validate`]
///    (`envelope_invalid`);
/// 2. summary digest (`summary_digest_mismatch`);
/// 3. event lineage: session, trace, last source event, checkpoint, idempotency key
///    (`event_lineage_mismatch`);
/// 4. tenant (`tenant_mismatch`);
/// 5. principal, authorization mode, delegated principal and scope (`principal_mismatch`);
/// 6. policy version (`policy_version_changed`), capability name and version (`capability_version_changed`);
/// 7. approval binding and status, then expiry against the clock (`approval_not_active`, `approval_revoked`,
///    `approval_expired`; an unreadable clock or expiry counts as expired);
/// 8. side effects: `side_effect_unknown` in the envelope or the ledger → `blocked_on_reconciliation` /
///    `unknown_side_effect`, with a stop event and no `context_rehydration`; any other disagreement between
///    envelope and ledger → `event_lineage_mismatch`;
/// 9. otherwise `context_rehydration` and `reauthorization_required`.
///
/// Never panics, whatever the inputs hold.
pub fn decide(
    envelope: &ContinuityEnvelope,
    presented_summary: &str,
    current: &CurrentState,
) -> Outcome {
    match check(envelope, presented_summary, current) {
        Ok(()) => Outcome {
            decision: Decision::ReauthorizationRequired,
            reason: None,
            events: vec![rehydration_event(envelope, current)],
        },
        Err(stop) => Outcome {
            decision: stop.decision,
            reason: Some(stop.reason),
            events: vec![stop_event(
                envelope,
                stop.reason,
                stop.decision,
                stop.detail,
            )],
        },
    }
}

fn check(
    envelope: &ContinuityEnvelope,
    presented_summary: &str,
    current: &CurrentState,
) -> Result<(), Stop> {
    use ReasonCode as R;

    if envelope.schema_version != SCHEMA_VERSION {
        return Err(failed(
            R::SchemaVersionUnsupported,
            format!(
                "schema_version {} is not {SCHEMA_VERSION}",
                bounded(&envelope.schema_version)
            ),
        ));
    }
    if let Err(error) = envelope.validate() {
        return Err(failed(R::EnvelopeInvalid, bounded(&error.to_string())));
    }

    let presented = summary_digest(presented_summary);
    if presented != envelope.summary_sha256 {
        return Err(failed(
            R::SummaryDigestMismatch,
            format!(
                "presented summary digest {presented} does not match summary_sha256 {}",
                bounded(&envelope.summary_sha256)
            ),
        ));
    }

    let lineage = R::EventLineageMismatch;
    same(
        "session_id",
        &envelope.session_id,
        &current.session_id,
        lineage,
    )?;
    same(
        "source_trace_id",
        &envelope.source_trace_id,
        &current.trace_id,
        lineage,
    )?;
    same(
        "source_event_range.last",
        &envelope.source_event_range.last,
        &current.last_event_id,
        lineage,
    )?;
    same(
        "checkpoint_ref",
        &envelope.checkpoint_ref,
        &current.checkpoint_ref,
        lineage,
    )?;
    same(
        "idempotency_key",
        &envelope.idempotency_key,
        &current.idempotency_key,
        lineage,
    )?;

    same(
        "tenant_id",
        &envelope.tenant_id,
        &current.tenant_id,
        R::TenantMismatch,
    )?;

    let identity = R::PrincipalMismatch;
    same(
        "principal_id",
        &envelope.principal_id,
        &current.principal_id,
        identity,
    )?;
    same(
        "authorization_mode",
        envelope.authorization_mode.as_str(),
        current.authorization_mode.as_str(),
        identity,
    )?;
    same(
        "delegated_principal_id",
        optional(envelope.delegated_principal_id.as_ref()),
        optional(current.delegated_principal_id.as_ref()),
        identity,
    )?;
    same(
        "delegated_scope",
        optional(envelope.delegated_scope.as_ref()),
        optional(current.delegated_scope.as_ref()),
        identity,
    )?;

    same(
        "policy_version",
        &envelope.policy_version,
        &current.policy_version,
        R::PolicyVersionChanged,
    )?;
    let capability = R::CapabilityVersionChanged;
    same(
        "capability_name",
        &envelope.capability_name,
        &current.capability_name,
        capability,
    )?;
    same(
        "capability_version",
        &envelope.capability_version,
        &current.capability_version,
        capability,
    )?;

    check_approval(envelope, current)?;
    check_side_effect(envelope, current)
}

fn check_approval(envelope: &ContinuityEnvelope, current: &CurrentState) -> Result<(), Stop> {
    use ReasonCode as R;

    same(
        "approval_id",
        &envelope.approval_id,
        &current.approval_id,
        R::ApprovalNotActive,
    )?;
    same(
        "action_digest",
        &envelope.action_digest,
        &current.action_digest,
        R::ApprovalNotActive,
    )?;
    let status = current.approval_status;
    let reason = match status {
        ApprovalStatus::Granted => None,
        ApprovalStatus::Revoked => Some(R::ApprovalRevoked),
        ApprovalStatus::Expired => Some(R::ApprovalExpired),
        ApprovalStatus::Pending | ApprovalStatus::Rejected => Some(R::ApprovalNotActive),
    };
    if let Some(reason) = reason {
        return Err(failed(
            reason,
            format!(
                "approval {} is {} in the approval system",
                bounded(&envelope.approval_id),
                status.as_str()
            ),
        ));
    }

    // Without a readable clock or expiry the approval cannot be shown to be alive: fail closed as expired.
    let now = parse_validation_time(&current.now)
        .map_err(|error| failed(R::ApprovalExpired, error.to_string()))?;
    let mut expiries = vec![("envelope", envelope.approval_expires_at.as_str())];
    if let Some(on_record) = &current.approval_expires_at {
        expiries.push(("approval system", on_record.as_str()));
    }
    for (source, expires_at) in expiries {
        let expires_at = parse_timestamp(expires_at, "approval_expires_at")
            .map_err(|error| failed(R::ApprovalExpired, format!("{source}: {error}")))?;
        if expires_at <= now {
            return Err(failed(
                R::ApprovalExpired,
                format!(
                    "approval {} expired at {expires_at} ({source}); validation time {now}",
                    bounded(&envelope.approval_id)
                ),
            ));
        }
    }
    Ok(())
}

fn check_side_effect(envelope: &ContinuityEnvelope, current: &CurrentState) -> Result<(), Stop> {
    let unknown = SideEffectStatus::SideEffectUnknown;
    if envelope.side_effect_status == unknown || current.side_effect_status == unknown {
        return Err(Stop {
            decision: Decision::BlockedOnReconciliation,
            reason: ReasonCode::UnknownSideEffect,
            detail: format!(
                "side effect of idempotency_key {} is unknown (envelope {}, ledger {}); reconcile through \
                 the original idempotency_key before any retry",
                bounded(&envelope.idempotency_key),
                envelope.side_effect_status.as_str(),
                current.side_effect_status.as_str()
            ),
        });
    }
    same(
        "side_effect_status",
        envelope.side_effect_status.as_str(),
        current.side_effect_status.as_str(),
        ReasonCode::EventLineageMismatch,
    )
}

/// The seed's §6 rule: does the compacted path's decision preserve the same or a stricter safety decision
/// than the full-history path's? Strictness follows [`Decision::strictness`]:
/// `reauthorization_required` < `blocked_on_reconciliation` < `continuity_validation_failed`.
pub fn stricter_or_equal(compacted: Decision, full: Decision) -> bool {
    compacted.strictness() >= full.strictness()
}

/// Checks that a compacted envelope still carries every exact-constraint reference and pending obligation of
/// the full-history envelope, so that negative requirements and unfinished work cannot disappear in
/// compaction. `Err` names what was dropped.
pub fn preserves_obligations(
    full: &ContinuityEnvelope,
    compacted: &ContinuityEnvelope,
) -> Result<(), String> {
    let dropped = |field: &str, full: &[String], compacted: &[String]| {
        let missing: Vec<&str> = full
            .iter()
            .filter(|item| !compacted.contains(item))
            .map(String::as_str)
            .collect();
        (!missing.is_empty()).then(|| format!("{field}: {}", missing.join(", ")))
    };
    let problems: Vec<String> = [
        dropped(
            "exact_constraint_refs",
            &full.exact_constraint_refs,
            &compacted.exact_constraint_refs,
        ),
        dropped(
            "pending_obligations",
            &full.pending_obligations,
            &compacted.pending_obligations,
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "compacted envelope dropped {}",
            problems.join("; ")
        ))
    }
}

/// The §6 required eval for one scenario and interrupt point: the same scenario decided from the
/// full-history envelope and from the compacted one, against the same systems of record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RequiredEval {
    /// The decision from full history.
    pub full: Outcome,
    /// The decision from the compacted history.
    pub compacted: Outcome,
    /// Why the compacted path fails the eval; empty when it passes.
    pub violations: Vec<String>,
}

impl RequiredEval {
    /// The compacted path preserved the same or a stricter safety decision and every constraint reference
    /// and obligation.
    pub fn passed(&self) -> bool {
        self.violations.is_empty()
    }
}

/// Runs [`decide`] on both paths and checks the seed's §6 rule: the compacted decision must be the same as or
/// stricter than the full-history one ([`stricter_or_equal`]), and the compacted envelope must keep every
/// exact-constraint reference and pending obligation ([`preserves_obligations`]).
pub fn required_eval(
    full: &ContinuityEnvelope,
    full_summary: &str,
    compacted: &ContinuityEnvelope,
    compacted_summary: &str,
    current: &CurrentState,
) -> RequiredEval {
    let full_outcome = decide(full, full_summary, current);
    let compacted_outcome = decide(compacted, compacted_summary, current);
    let mut violations = Vec::new();
    if !stricter_or_equal(compacted_outcome.decision, full_outcome.decision) {
        violations.push(format!(
            "compacted decision {} is weaker than full-history decision {}",
            compacted_outcome.decision, full_outcome.decision
        ));
    }
    if let Err(dropped) = preserves_obligations(full, compacted) {
        violations.push(dropped);
    }
    RequiredEval {
        full: full_outcome,
        compacted: compacted_outcome,
        violations,
    }
}
