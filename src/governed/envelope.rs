//! Delivery: the `coding-context-envelope/1` value a context-capable destination receives (the session,
//! the handoff identity, the original instructions and retained evidence as base64 of their exact bytes,
//! and the separate summary marked `advisory: true`), its digest (the receipt a destination adapter
//! returns), and the responsibility a receipt leaves (`DELIVERED` or `UNKNOWN`).
//!
//! Owns: [`assemble`] (a `READY` report → the envelope; otherwise the `BLOCKED` report),
//! [`envelope_digest`], [`ContextEnvelope::decode`] for destination adapters, [`check_receipt`], and the
//! [`Advisory`] marker (serializes as `true`, refuses to deserialize anything else).
//!
//! Must not: trim, truncate, re-encode or reorder a document (the envelope holds the exact bytes the
//! report checked, in policy order); deliver a summary in place of an original; treat a missing or wrong
//! receipt as a delivery (it is `UNKNOWN`, and the caller holds the cell — never a free retry).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use thiserror::Error;

use super::lineage::{Lineage, SessionRecord};
use super::policy::{ArtifactRef, ContextPolicy};
use super::report::{ContextReport, ContextStatus, evaluate};
use super::store::ArtifactStore;
use super::{ENVELOPE_FORMAT, digest};

/// The stage handoff's identity, carried in the envelope (the destination verifies its inputs itself).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HandoffIdentity {
    pub task: String,
    pub plan_digest: String,
    /// The definition reference of the stage.
    pub definition: String,
    pub incoming_artifact_digest: String,
}

/// One original document: its name, digest and exact bytes as standard base64.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Document {
    pub name: String,
    pub artifact_digest: String,
    pub bytes: String,
}

/// `advisory: true`, the only value a delivered summary can carry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Advisory;

impl Serialize for Advisory {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(true)
    }
}

impl<'de> Deserialize<'de> for Advisory {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Advisory, D::Error> {
        if bool::deserialize(d)? {
            Ok(Advisory)
        } else {
            Err(serde::de::Error::custom(
                "a delivered summary is always advisory: `advisory` must be true",
            ))
        }
    }
}

/// The summary, delivered separately from the originals and always advisory.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AdvisorySummary {
    pub artifact_digest: String,
    pub based_on: Vec<String>,
    /// Exact bytes, standard base64.
    pub bytes: String,
    /// Always `true`.
    pub advisory: Advisory,
}

/// A `coding-context-envelope/1` value.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContextEnvelope {
    pub format: String,
    /// The current-epoch session the delivery belongs to.
    pub session: SessionRecord,
    pub handoff: HandoffIdentity,
    /// The original instructions, in policy order.
    pub originals: Vec<Document>,
    /// The retained evidence, in policy order.
    pub retained_evidence: Vec<Document>,
    pub summary: Option<AdvisorySummary>,
}

/// One decoded document, for a destination adapter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodedDocument {
    pub name: String,
    pub artifact_digest: String,
    pub text: String,
}

/// The decoded advisory summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodedSummary {
    pub artifact_digest: String,
    pub based_on: Vec<String>,
    pub text: String,
}

/// An envelope's documents as text (UTF-8), each checked against its digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    pub originals: Vec<DecodedDocument>,
    pub retained_evidence: Vec<DecodedDocument>,
    pub summary: Option<DecodedSummary>,
}

/// Why an envelope could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EnvelopeError {
    #[error("the envelope's format is `{found}`, not `{ENVELOPE_FORMAT}`")]
    Format { found: String },
    #[error("document `{name}` ({digest}) is not valid base64: {message}")]
    Base64 {
        name: String,
        digest: String,
        message: String,
    },
    #[error("document `{name}` carries bytes that hash to {actual}, not to its digest {digest}")]
    DigestMismatch {
        name: String,
        digest: String,
        actual: String,
    },
    #[error("document `{name}` ({digest}) is not UTF-8 text: {message}")]
    NotUtf8 {
        name: String,
        digest: String,
        message: String,
    },
}

/// A `READY` context → the envelope, with the exact bytes the report checked; otherwise the report
/// (`BLOCKED`). Never trims anything. The caller pairs `lineage` with `policy`
/// ([`Lineage::verify_policy`]).
// The blocked report is the normal answer of a blocked context, not a rare error: it stays unboxed.
#[allow(clippy::result_large_err)]
pub fn assemble(
    policy: &ContextPolicy,
    store: &ArtifactStore,
    lineage: &Lineage,
    epoch: u64,
    handoff: HandoffIdentity,
) -> Result<ContextEnvelope, ContextReport> {
    let (report, found) = evaluate(Some(policy), store, Some(lineage), epoch);
    let session = match lineage.current(epoch) {
        Some(s) if report.status == ContextStatus::Ready => s.clone(),
        _ => return Err(report),
    };
    // READY means every reference was read intact, so each one has its bytes, in policy order.
    let mut bytes = found.into_iter().map(|b| b.map(|b| BASE64.encode(b)));
    let mut docs = |refs: &[ArtifactRef]| -> Option<Vec<Document>> {
        refs.iter()
            .map(|r| {
                Some(Document {
                    name: r.name.clone(),
                    artifact_digest: r.artifact_digest.clone(),
                    bytes: bytes.next()??,
                })
            })
            .collect()
    };
    let (Some(originals), Some(retained_evidence)) =
        (docs(&policy.instructions), docs(&policy.retained_evidence))
    else {
        return Err(report);
    };
    let summary = match &policy.summary {
        None => None,
        Some(s) => match bytes.next().flatten() {
            Some(b64) => Some(AdvisorySummary {
                artifact_digest: s.artifact_digest.clone(),
                based_on: s.based_on.clone(),
                bytes: b64,
                advisory: Advisory,
            }),
            None => return Err(report),
        },
    };
    Ok(ContextEnvelope {
        format: ENVELOPE_FORMAT.to_string(),
        session,
        handoff,
        originals,
        retained_evidence,
        summary,
    })
}

/// The receipt: lowercase hex SHA-256 over the envelope's canonical JSON (`serde_json::to_vec` of the
/// struct, fields in declaration order).
pub fn envelope_digest(e: &ContextEnvelope) -> String {
    // Invariant: strings, integers, booleans, lists and options only; serializing cannot fail.
    digest(&serde_json::to_vec(e).expect("an envelope always serializes"))
}

impl ContextEnvelope {
    /// The documents' exact bytes, each checked against its digest: (name, digest, bytes) for originals
    /// and evidence, and the summary's bytes.
    pub fn decode_bytes(&self) -> Result<DecodedBytes, EnvelopeError> {
        if self.format != ENVELOPE_FORMAT {
            return Err(EnvelopeError::Format {
                found: self.format.clone(),
            });
        }
        let docs = |list: &[Document]| -> Result<Vec<(String, String, Vec<u8>)>, EnvelopeError> {
            list.iter()
                .map(|d| {
                    let b = decode_one(&d.name, &d.artifact_digest, &d.bytes)?;
                    Ok((d.name.clone(), d.artifact_digest.clone(), b))
                })
                .collect()
        };
        let summary = match &self.summary {
            None => None,
            Some(s) => Some(decode_one("summary", &s.artifact_digest, &s.bytes)?),
        };
        Ok(DecodedBytes {
            originals: docs(&self.originals)?,
            retained_evidence: docs(&self.retained_evidence)?,
            summary,
        })
    }

    /// The documents as UTF-8 text for a destination adapter, each checked against its digest.
    pub fn decode(&self) -> Result<Decoded, EnvelopeError> {
        let raw = self.decode_bytes()?;
        let text = |name: &str, digest: &str, b: Vec<u8>| {
            String::from_utf8(b).map_err(|e| EnvelopeError::NotUtf8 {
                name: name.to_string(),
                digest: digest.to_string(),
                message: e.utf8_error().to_string(),
            })
        };
        let docs =
            |list: Vec<(String, String, Vec<u8>)>| -> Result<Vec<DecodedDocument>, EnvelopeError> {
                list.into_iter()
                    .map(|(name, artifact_digest, b)| {
                        let text = text(&name, &artifact_digest, b)?;
                        Ok(DecodedDocument {
                            name,
                            artifact_digest,
                            text,
                        })
                    })
                    .collect()
            };
        let summary = match (&self.summary, raw.summary) {
            (Some(s), Some(b)) => Some(DecodedSummary {
                artifact_digest: s.artifact_digest.clone(),
                based_on: s.based_on.clone(),
                text: text("summary", &s.artifact_digest, b)?,
            }),
            _ => None,
        };
        Ok(Decoded {
            originals: docs(raw.originals)?,
            retained_evidence: docs(raw.retained_evidence)?,
            summary,
        })
    }
}

/// An envelope's documents as exact bytes: (name, digest, bytes) per document, and the summary's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodedBytes {
    pub originals: Vec<(String, String, Vec<u8>)>,
    pub retained_evidence: Vec<(String, String, Vec<u8>)>,
    pub summary: Option<Vec<u8>>,
}

fn decode_one(name: &str, artifact_digest: &str, b64: &str) -> Result<Vec<u8>, EnvelopeError> {
    let bytes = BASE64.decode(b64).map_err(|e| EnvelopeError::Base64 {
        name: name.to_string(),
        digest: artifact_digest.to_string(),
        message: e.to_string(),
    })?;
    let actual = digest(&bytes);
    if actual != artifact_digest {
        return Err(EnvelopeError::DigestMismatch {
            name: name.to_string(),
            digest: artifact_digest.to_string(),
            actual,
        });
    }
    Ok(bytes)
}

/// Who is responsible for a delivery once it has been committed.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Responsibility {
    /// The adapter's receipt matches the envelope that was sent.
    Delivered,
    /// No receipt, or a different one: the run is held (never a free attempt or a retry).
    Unknown,
}

/// After delivery: the adapter's receipt against the expected envelope digest. A missing or different
/// receipt (a receipt is compared exactly, case included) → `UNKNOWN`.
pub fn check_receipt(expected: &str, receipt: Option<&str>) -> Responsibility {
    match receipt {
        Some(r) if r == expected => Responsibility::Delivered,
        _ => Responsibility::Unknown,
    }
}
