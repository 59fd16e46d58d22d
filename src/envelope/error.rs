//! The operator-facing validation errors of the continuity envelope.
//!
//! The Display strings of the first group are the seed's "Runtime validation errors", verbatim: operators and
//! tests match on them, so they must not be reworded. The second group covers fields this crate types more
//! precisely than the reference (lists, the event range, the budget, the document syntax); those strings follow
//! the same "Continuity …" pattern but are this crate's own.

use thiserror::Error;

/// A malformed continuity artifact (envelope, current state or validation clock).
///
/// These errors report malformed control artifacts; they are not instructions to repair state from summary
/// prose. The runtime must reload or recreate a governed artifact instead.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ContinuityError {
    /// `approval_status` of the current state is not one of the known statuses.
    #[error("Continuity approval status is not supported: {0}")]
    ApprovalStatusUnsupported(String),
    /// `authorization_mode` is not `platform_owned`, `user_delegated` or `human_approved`.
    #[error("Continuity authorization mode is not supported: {0}")]
    AuthorizationModeUnsupported(String),
    /// The envelope document is not a mapping.
    #[error("Continuity envelope must be ContinuityEnvelope")]
    EnvelopeNotMapping,
    /// `requires_reauthorization` is false.
    #[error("Continuity envelope must require reauthorization")]
    ReauthorizationNotRequired,
    /// A required field is absent, null or blank. Also covers `delegated_principal_id` and `delegated_scope`
    /// under `authorization_mode: user_delegated`.
    #[error("Continuity field is required: {0}")]
    FieldRequired(String),
    /// A field that must be a string holds another type.
    #[error("Continuity field must be a string: {0}")]
    FieldNotString(String),
    /// `requires_reauthorization` is present but not a boolean.
    #[error("Continuity reauthorization flag must be a boolean")]
    ReauthorizationFlagNotBoolean,
    /// `schema_version` is not `continuity-envelope/v1`.
    #[error("Continuity schema version is not supported: {0}")]
    SchemaVersionUnsupported(String),
    /// `side_effect_status` is not `not_started`, `side_effect_committed` or `side_effect_unknown`.
    #[error("Continuity side-effect status is not supported: {0}")]
    SideEffectStatusUnsupported(String),
    /// The current-state document is not a mapping.
    #[error("Continuity state must be ContinuityState")]
    StateNotMapping,
    /// `summary_sha256` does not start with `sha256:`.
    #[error("Continuity summary digest must use sha256")]
    SummaryDigestNotSha256,
    /// A timestamp field cannot be read as a date-time.
    #[error("Continuity timestamp is invalid: {0}")]
    TimestampInvalid(String),
    /// A timestamp field is a date-time without offset or time zone.
    #[error("Continuity timestamp must include a timezone: {0}")]
    TimestampWithoutTimezone(String),
    /// The validation clock (`now` of the current state) is absent or not a date-time.
    #[error("Continuity validation time must be a datetime")]
    ValidationTimeNotDatetime,
    /// The validation clock is a date-time without offset or time zone.
    #[error("Continuity validation time must include a timezone")]
    ValidationTimeWithoutTimezone,

    // Not in the seed's list: fields the reference implementation does not have.
    /// A list field (`exact_constraint_refs`, `pending_obligations`, `evidence_refs`) is not a list.
    #[error("Continuity field must be a list of strings: {0}")]
    FieldNotList(String),
    /// `budget_remaining` is not a non-negative integer.
    #[error("Continuity field must be a non-negative integer: {0}")]
    FieldNotInteger(String),
    /// `source_event_range` is not a mapping.
    #[error("Continuity field must be a mapping: {0}")]
    FieldNotMapping(String),
    /// The document is not valid YAML or JSON at all.
    #[error("Continuity document could not be parsed: {0}")]
    Unreadable(String),
}
