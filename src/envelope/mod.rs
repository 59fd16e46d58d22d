//! The continuity envelope (seed 000): the `continuity-envelope/v1` document, its validation with the seed's
//! exact operator-facing errors, the continuity decision, its trace events, and the `inspect-continuity`
//! exercise.
//!
//! # What this module owns
//!
//! - [`ContinuityEnvelope`] and [`CurrentState`]: serde types readable from and writable to YAML and JSON,
//!   with field-by-field parsing of untyped documents ([`parse_envelope`], [`parse_current_state`]) so that
//!   malformed input gets the seed's errors ([`ContinuityError`]), never a panic.
//! - [`decide`]: the decision of seed §3–§4 over an envelope, the presented summary and what the systems of
//!   record say now. Its outcomes are [`Decision::ReauthorizationRequired`],
//!   [`Decision::BlockedOnReconciliation`] and [`Decision::ContinuityValidationFailed`] with a [`ReasonCode`].
//! - [`TraceEvent`]: `context_compaction` ([`compaction_event`], emitted by whoever builds the envelope),
//!   `context_rehydration` and `continuity_validation_failed` (emitted by [`decide`]).
//! - The §6 required-eval helpers: [`stricter_or_equal`], [`preserves_obligations`] and [`required_eval`].
//! - [`inspect`]: the `compaction-eval inspect-continuity` subcommand ([`InspectContinuityArgs`],
//!   [`run_inspect`]).
//!
//! # What it must not do
//!
//! - Grant authority. There is no authorizing outcome; the best result is `reauthorization_required`.
//! - Read the summary's content. A compacted summary is a derived, untrusted view: only its digest is
//!   compared, so instructions injected into it cannot change a decision.
//! - Repair state from summary prose, retry a write whose side effect is unknown, or put secrets, raw
//!   prompts, summary text or constraint text into trace events.
//! - Own the benchmark run: wiring the decision into runs and their event logs is the runner's job; this
//!   module only exposes the functions it calls.

mod codes;
mod decision;
mod digest;
mod error;
pub mod inspect;
mod parse;
mod trace;
mod types;
mod validate;

pub use decision::{
    Decision, Outcome, ReasonCode, RequiredEval, decide, preserves_obligations, required_eval,
    stricter_or_equal,
};
pub use digest::{sha256_ref, summary_digest};
pub use error::ContinuityError;
pub use inspect::{InspectContinuityArgs, run_inspect};
pub use parse::{parse_current_state, parse_envelope};
pub use trace::{
    PRESERVED_FIELD_CLASSES, TraceEvent, VALIDATION_PASSED, VersionsReloaded, compaction_event,
};
pub use types::{
    ApprovalStatus, AuthorizationMode, ContinuityEnvelope, CurrentState, SCHEMA_VERSION,
    SideEffectStatus, SourceEventRange,
};
