//! Governed context (seed 004): the `coding-context-policy/1` policy and its validation, the
//! content-addressed artifact store, session lineage (`FRESH`, `COLD_RESUME`, `REPLACED`), the context
//! report (`NOT_CONFIGURED`, `READY`, `BLOCKED`, always `authorized: false`) and the
//! `coding-context-envelope/1` delivery with its receipt.
//!
//! # What this module owns
//!
//! - [`ArtifactStore`] (`store`): publish bytes → lowercase SHA-256 digest; read by digest with the
//!   integrity checked on every read; a folder store names files by digest only.
//! - [`ContextPolicy`] (`policy`): the policy document, [`validate`] with every error in document order,
//!   [`inspect_file`] for `inspect-context POLICY.json`.
//! - [`Lineage`] (`lineage`): the append-only session records of one governed run.
//! - [`context_report`] (`report`): references, byte counts and lineage, never document contents.
//! - [`assemble`], [`envelope_digest`], [`check_receipt`] (`envelope`): the exact bytes delivered, the
//!   adapter's receipt and the responsibility it leaves (`DELIVERED` / `UNKNOWN`).
//!
//! # What it must not do
//!
//! - Grant authority. A report is always `authorized: false`; `READY` approves nothing, and a summary is
//!   only ever delivered as `advisory: true`, beside the originals, never instead of them.
//! - Trim, truncate or regenerate anything to fit the byte budget: over budget is `BLOCKED`.
//! - Put document contents into a report.
//! - Depend on scenarios, the runner, strategies or destinations: it is a leaf (std, serde, serde_json,
//!   sha2, hex, base64 and thiserror only). The `gov:X` wrapper builds on it, never the other way round.
//! - Read a clock or draw random numbers: session ids are derived from their contents and `created_at` is
//!   whatever the caller passes.

mod envelope;
mod lineage;
mod policy;
mod report;
mod store;

pub use envelope::{
    Advisory, AdvisorySummary, ContextEnvelope, Decoded, DecodedBytes, DecodedDocument,
    DecodedSummary, Document, EnvelopeError, HandoffIdentity, Responsibility, assemble,
    check_receipt, envelope_digest,
};
pub use lineage::{Lineage, LineageError, SessionKind, SessionRecord};
pub use policy::{
    ArtifactRef, ContextPolicy, InspectError, MAX_BYTES_LIMIT, MAX_NAME_CHARS, MAX_REFERENCES,
    PolicyError, SummaryRef, inspect_file, validate,
};
pub use report::{
    BlockReason, Check, CheckStatus, ContextReport, ContextStatus, NotAuthorized, Role,
    context_report,
};
pub use store::{ArtifactStore, ReadError, StoreError};

use sha2::{Digest as _, Sha256};

/// The policy document's format string, exactly as seed 004 names it.
pub const POLICY_FORMAT: &str = "coding-context-policy/1";
/// The delivery envelope's format string, exactly as seed 004 names it.
pub const ENVELOPE_FORMAT: &str = "coding-context-envelope/1";

/// The lowercase hex SHA-256 of `bytes`: 64 characters, no `sha256:` prefix.
pub fn digest(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Whether `s` is a digest as this module writes them: exactly 64 characters of `[0-9a-f]`.
pub fn is_digest(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}
