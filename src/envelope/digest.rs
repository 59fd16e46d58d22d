//! The sha256 digests that bind a derived summary (and a frozen action) to an envelope.

use sha2::{Digest, Sha256};

/// `sha256:<64 lowercase hex>` of the summary's UTF-8 bytes, exactly as presented.
///
/// No normalization (not even trimming): the digest proves which bytes were validated, so any change to the
/// presented text, whitespace included, is a mismatch.
pub fn summary_digest(summary: &str) -> String {
    sha256_ref(summary.as_bytes())
}

/// `sha256:<64 lowercase hex>` of arbitrary bytes, e.g. a canonical serialization of an approved action.
pub fn sha256_ref(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}
