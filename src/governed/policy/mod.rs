//! The `coding-context-policy/1` document and its validation, exactly as seed 004 states it.
//!
//! Owns: [`ContextPolicy`] and its references, [`validate`] (a JSON value → the typed policy, or every
//! error in document order, each naming the field's path and what is wrong), [`ContextPolicy::check`] (the
//! same rules on a typed value), the policy digest, and [`inspect_file`] (`inspect-context POLICY.json`).
//!
//! The rules: closed records at every level (an unknown field is refused, and a field whose name claims
//! permissions or authority is refused as such); all five top-level fields required; `format` exactly
//! `coding-context-policy/1`; `instructions` 1–16 references and `retainedEvidence` 0–16; names nonblank,
//! at most 128 characters and unique across both lists; every digest a bare lowercase SHA-256; `summary`
//! `null` or an exact digest plus `basedOn` naming every unique original digest (and nothing else, once
//! each); `maxBytes` an integer from 1 to 32768.
//!
//! Must not: read artifacts (whether the bytes exist is the report's question, not the policy's), accept
//! a field it does not know, or repair a policy (no defaults, no trimming, no case folding of digests).
//!
//! The parts: `rules` (the validation, every error in document order) and `file` (reading a policy
//! file with duplicate keys refused). This façade holds the document's types and its digest.

mod file;
mod rules;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

pub use file::{InspectError, inspect_file};
pub use rules::validate;

use super::digest;

/// The most references `instructions` and `retainedEvidence` may each hold.
pub const MAX_REFERENCES: usize = 16;
/// The longest reference name, in characters.
pub const MAX_NAME_CHARS: usize = 128;
/// The largest `maxBytes` a policy may declare.
pub const MAX_BYTES_LIMIT: u64 = 32_768;

/// A governing-context policy (`coding-context-policy/1`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContextPolicy {
    pub format: String,
    /// The original instructions every execution must receive.
    pub instructions: Vec<ArtifactRef>,
    /// Retained evidence (historical; not current acceptance proof).
    pub retained_evidence: Vec<ArtifactRef>,
    /// An optional advisory summary.
    pub summary: Option<SummaryRef>,
    /// The total raw document byte budget, a configured summary included.
    pub max_bytes: u64,
}

/// A named reference to an artifact's exact bytes.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArtifactRef {
    pub name: String,
    pub artifact_digest: String,
}

/// The advisory summary: its exact digest and the original digests it is based on.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SummaryRef {
    pub artifact_digest: String,
    pub based_on: Vec<String>,
}

/// One validation error: the field's path (`instructions[0].artifactDigest`; `policy` for the document
/// itself) and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("`{path}`: {message}")]
pub struct PolicyError {
    pub path: String,
    pub message: String,
}

impl ContextPolicy {
    /// The validation rules on a typed value (builders call this before using a policy).
    pub fn check(&self) -> Result<(), Vec<PolicyError>> {
        validate(&self.to_value()).map(|_| ())
    }

    /// SHA-256 of the policy's canonical JSON (`serde_json::to_vec`, fields in declaration order).
    pub fn digest(&self) -> String {
        // Invariant: strings, integers, lists and options only; serializing cannot fail.
        digest(&serde_json::to_vec(self).expect("a policy always serializes"))
    }

    /// The unique instruction and evidence digests, in first-seen order (what `basedOn` must name).
    pub fn originals(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in self.instructions.iter().chain(&self.retained_evidence) {
            if !out.contains(&r.artifact_digest) {
                out.push(r.artifact_digest.clone());
            }
        }
        out
    }

    fn to_value(&self) -> Value {
        // Invariant as in `digest`.
        serde_json::to_value(self).expect("a policy always serializes")
    }
}
