//! Validation of typed envelopes and current states, and the timestamp rules shared with the parser.

use jiff::fmt::temporal::Pieces;
use jiff::{Timestamp, ZonedDateTime};

use super::error::ContinuityError;
use super::types::{AuthorizationMode, ContinuityEnvelope, CurrentState, SCHEMA_VERSION};

/// Why a timestamp string could not be read; callers map it to the error of their field.
pub(crate) enum TimestampProblem {
    Invalid,
    NoTimezone,
}

/// Reads an RFC 3339 / RFC 9557 timestamp that pins an instant.
///
/// A civil date-time without offset or zone is told apart from garbage so that operators get the seed's
/// "must include a timezone" error: such a value is ambiguous rather than unreadable.
pub(crate) fn read_instant(value: &str) -> Result<Timestamp, TimestampProblem> {
    let value = value.trim();
    let pieces = Pieces::parse(value).map_err(|_| TimestampProblem::Invalid)?;
    if pieces.offset().is_none() && pieces.time_zone_annotation().is_none() {
        return Err(TimestampProblem::NoTimezone);
    }
    if let Ok(timestamp) = value.parse::<Timestamp>() {
        return Ok(timestamp);
    }
    // Only a zone annotation (no offset), e.g. `2026-07-21T18:00:00[Europe/Paris]`.
    value
        .parse::<ZonedDateTime>()
        .map(|zoned| zoned.timestamp())
        .map_err(|_| TimestampProblem::Invalid)
}

/// Reads a timestamp field of an envelope or state, with the seed's field errors.
pub(crate) fn parse_timestamp(value: &str, field: &str) -> Result<Timestamp, ContinuityError> {
    if value.trim().is_empty() {
        return Err(ContinuityError::FieldRequired(field.to_owned()));
    }
    read_instant(value).map_err(|problem| match problem {
        TimestampProblem::Invalid => ContinuityError::TimestampInvalid(field.to_owned()),
        TimestampProblem::NoTimezone => ContinuityError::TimestampWithoutTimezone(field.to_owned()),
    })
}

/// Reads the validation clock, with the seed's validation-time errors.
pub(crate) fn parse_validation_time(value: &str) -> Result<Timestamp, ContinuityError> {
    read_instant(value).map_err(|problem| match problem {
        TimestampProblem::Invalid => ContinuityError::ValidationTimeNotDatetime,
        TimestampProblem::NoTimezone => ContinuityError::ValidationTimeWithoutTimezone,
    })
}

fn require(value: &str, field: &str) -> Result<(), ContinuityError> {
    if value.trim().is_empty() {
        return Err(ContinuityError::FieldRequired(field.to_owned()));
    }
    Ok(())
}

fn require_items(items: &[String], field: &str) -> Result<(), ContinuityError> {
    for (index, item) in items.iter().enumerate() {
        require(item, &format!("{field}[{index}]"))?;
    }
    Ok(())
}

fn require_delegation(
    mode: AuthorizationMode,
    delegated_principal_id: Option<&String>,
    delegated_scope: Option<&String>,
) -> Result<(), ContinuityError> {
    if mode != AuthorizationMode::UserDelegated {
        return Ok(());
    }
    let blank = |value: Option<&String>| value.is_none_or(|value| value.trim().is_empty());
    if blank(delegated_principal_id) {
        return Err(ContinuityError::FieldRequired(
            "delegated_principal_id".to_owned(),
        ));
    }
    if blank(delegated_scope) {
        return Err(ContinuityError::FieldRequired("delegated_scope".to_owned()));
    }
    Ok(())
}

impl ContinuityEnvelope {
    /// Checks the envelope against the seed's rules and returns the first violation.
    ///
    /// Order: the schema version first (other fields mean nothing under another version), then required
    /// fields in the seed's §1 order, the delegation fields under `user_delegated`, the approval timestamp,
    /// the digest algorithm, and last the reauthorization flag.
    pub fn validate(&self) -> Result<(), ContinuityError> {
        require(&self.schema_version, "schema_version")?;
        if self.schema_version != SCHEMA_VERSION {
            return Err(ContinuityError::SchemaVersionUnsupported(
                self.schema_version.clone(),
            ));
        }
        for (value, field) in [
            (&self.envelope_id, "envelope_id"),
            (&self.session_id, "session_id"),
            (&self.source_trace_id, "source_trace_id"),
            (&self.reset_reason, "reset_reason"),
            (&self.objective, "objective"),
        ] {
            require(value, field)?;
        }
        require_items(&self.exact_constraint_refs, "exact_constraint_refs")?;
        require_items(&self.pending_obligations, "pending_obligations")?;
        for (value, field) in [
            (&self.tenant_id, "tenant_id"),
            (&self.principal_id, "principal_id"),
            (&self.policy_version, "policy_version"),
            (&self.capability_name, "capability_name"),
            (&self.capability_version, "capability_version"),
            (&self.approval_id, "approval_id"),
            (&self.action_digest, "action_digest"),
            (&self.approval_expires_at, "approval_expires_at"),
            (&self.idempotency_key, "idempotency_key"),
            (&self.checkpoint_ref, "checkpoint_ref"),
            (&self.sandbox_snapshot_ref, "sandbox_snapshot_ref"),
            (&self.source_event_range.first, "source_event_range.first"),
            (&self.source_event_range.last, "source_event_range.last"),
            (&self.summary_sha256, "summary_sha256"),
        ] {
            require(value, field)?;
        }
        require_items(&self.evidence_refs, "evidence_refs")?;
        require_delegation(
            self.authorization_mode,
            self.delegated_principal_id.as_ref(),
            self.delegated_scope.as_ref(),
        )?;
        parse_timestamp(&self.approval_expires_at, "approval_expires_at")?;
        if !self.summary_sha256.starts_with("sha256:") {
            return Err(ContinuityError::SummaryDigestNotSha256);
        }
        if !self.requires_reauthorization {
            return Err(ContinuityError::ReauthorizationNotRequired);
        }
        Ok(())
    }
}

impl CurrentState {
    /// Checks that the state is usable for a decision: required fields present, timestamps readable.
    pub fn validate(&self) -> Result<(), ContinuityError> {
        for (value, field) in [
            (&self.tenant_id, "tenant_id"),
            (&self.principal_id, "principal_id"),
            (&self.policy_version, "policy_version"),
            (&self.capability_name, "capability_name"),
            (&self.capability_version, "capability_version"),
            (&self.approval_id, "approval_id"),
            (&self.action_digest, "action_digest"),
            (&self.idempotency_key, "idempotency_key"),
            (&self.checkpoint_ref, "checkpoint_ref"),
            (&self.session_id, "session_id"),
            (&self.trace_id, "trace_id"),
            (&self.last_event_id, "last_event_id"),
        ] {
            require(value, field)?;
        }
        if let Some(expires_at) = &self.approval_expires_at {
            parse_timestamp(expires_at, "approval_expires_at")?;
        }
        parse_validation_time(&self.now)?;
        Ok(())
    }
}
