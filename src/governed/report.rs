//! The context report: `NOT_CONFIGURED`, `READY` or `BLOCKED` with its reasons (`missing`, `changed`,
//! `unreadable`, `over_budget`, `old_session_epoch`), one check per reference, the byte counts and the
//! lineage, and always `authorized: false`.
//!
//! Owns: [`ContextReport`] and [`context_report`], which reads every referenced artifact with its integrity
//! checked; the [`NotAuthorized`] marker (serializes as `false`, refuses to deserialize anything else).
//!
//! Must not: contain document contents (references, names, digests and byte counts only); grant or imply
//! authority (`READY` approves no run, clears no hold and accepts no deliverable); trim anything to fit
//! the budget (over budget is `BLOCKED`, with the byte counts).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::lineage::{Lineage, SessionRecord};
use super::policy::ContextPolicy;
use super::store::{ArtifactStore, ReadError};

/// The report's status, with the seed's names.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ContextStatus {
    /// The run has no policy; legacy behaviour applies.
    NotConfigured,
    /// The required exact bytes and a current-epoch session are available.
    Ready,
    /// Context is missing, changed, unreadable, over budget, or tied to an old session epoch.
    Blocked,
}

/// Why a report is `BLOCKED` (listed once each, in this order).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum BlockReason {
    Missing,
    Changed,
    Unreadable,
    OverBudget,
    OldSessionEpoch,
}

/// What a checked reference is.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Instruction,
    Evidence,
    Summary,
}

/// The outcome of reading one reference.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    Ok,
    Missing,
    Changed,
    Unreadable,
}

impl CheckStatus {
    fn reason(self) -> Option<BlockReason> {
        match self {
            CheckStatus::Ok => None,
            CheckStatus::Missing => Some(BlockReason::Missing),
            CheckStatus::Changed => Some(BlockReason::Changed),
            CheckStatus::Unreadable => Some(BlockReason::Unreadable),
        }
    }
}

impl From<&ReadError> for CheckStatus {
    fn from(e: &ReadError) -> CheckStatus {
        match e {
            ReadError::Missing { .. } => CheckStatus::Missing,
            ReadError::Changed { .. } => CheckStatus::Changed,
            // A value that is not a digest cannot name readable bytes (a validated policy has none).
            ReadError::Unreadable { .. } | ReadError::NotADigest { .. } => CheckStatus::Unreadable,
        }
    }
}

/// One reference as checked: its role, name (none for the summary), digest, and the size of its exact
/// bytes when they were found intact.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Check {
    pub role: Role,
    pub name: Option<String>,
    pub artifact_digest: String,
    pub bytes: Option<u64>,
    pub status: CheckStatus,
}

/// `authorized: false`, the only value a context report can carry. It serializes as `false`, and
/// deserializing `true` (or anything else) fails.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NotAuthorized;

impl Serialize for NotAuthorized {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(false)
    }
}

impl<'de> Deserialize<'de> for NotAuthorized {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<NotAuthorized, D::Error> {
        if bool::deserialize(d)? {
            Err(serde::de::Error::custom(
                "a context report is never authorized: `authorized` must be false",
            ))
        } else {
            Ok(NotAuthorized)
        }
    }
}

/// The context report (see the module doc). `total_bytes` counts the exact bytes of every reference
/// found intact (a document referenced twice counts twice: it is delivered twice).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContextReport {
    pub status: ContextStatus,
    pub reasons: Vec<BlockReason>,
    pub policy_digest: Option<String>,
    pub checks: Vec<Check>,
    pub total_bytes: u64,
    pub max_bytes: Option<u64>,
    /// The coordinator epoch the report was made for.
    pub epoch: u64,
    pub lineage: Vec<SessionRecord>,
    /// Always `false`.
    pub authorized: NotAuthorized,
}

/// The report for a run with `policy` (or none), reading from `store`, with the run's `lineage`, in the
/// coordinator's current `epoch`.
///
/// `None` policy → `NOT_CONFIGURED`. Otherwise every reference is read (the summary's exact bytes too,
/// when one is configured): missing, changed or unreadable bytes block with that reason; a total over
/// `maxBytes` blocks with `over_budget`; a latest session that is not in `epoch` (or no lineage)
/// blocks with `old_session_epoch`. Every reason found is listed once, in that order.
pub fn context_report(
    policy: Option<&ContextPolicy>,
    store: &ArtifactStore,
    lineage: Option<&Lineage>,
    epoch: u64,
) -> ContextReport {
    evaluate(policy, store, lineage, epoch).0
}

/// The report and, in reference order (instructions, evidence, summary), the exact bytes of every
/// reference found intact — so that delivery uses the very bytes the report checked.
pub(super) fn evaluate(
    policy: Option<&ContextPolicy>,
    store: &ArtifactStore,
    lineage: Option<&Lineage>,
    epoch: u64,
) -> (ContextReport, Vec<Option<Vec<u8>>>) {
    let records = lineage.map(|l| l.records().to_vec()).unwrap_or_default();
    let Some(policy) = policy else {
        let report = ContextReport {
            status: ContextStatus::NotConfigured,
            reasons: Vec::new(),
            policy_digest: None,
            checks: Vec::new(),
            total_bytes: 0,
            max_bytes: None,
            epoch,
            lineage: records,
            authorized: NotAuthorized,
        };
        return (report, Vec::new());
    };
    let mut refs: Vec<(Role, Option<&str>, &str)> = Vec::new();
    for r in &policy.instructions {
        refs.push((Role::Instruction, Some(&r.name), &r.artifact_digest));
    }
    for r in &policy.retained_evidence {
        refs.push((Role::Evidence, Some(&r.name), &r.artifact_digest));
    }
    if let Some(s) = &policy.summary {
        refs.push((Role::Summary, None, &s.artifact_digest));
    }
    let mut checks = Vec::new();
    let mut found = Vec::new();
    let mut reasons: Vec<BlockReason> = Vec::new();
    let mut total: u64 = 0;
    for (role, name, d) in refs {
        let (status, bytes) = match store.read(d) {
            Ok(b) => (CheckStatus::Ok, Some(b)),
            Err(e) => (CheckStatus::from(&e), None),
        };
        let size = bytes.as_ref().map(|b| b.len() as u64);
        total = total.saturating_add(size.unwrap_or(0));
        reasons.extend(status.reason());
        checks.push(Check {
            role,
            name: name.map(String::from),
            artifact_digest: d.to_string(),
            bytes: size,
            status,
        });
        found.push(bytes);
    }
    if total > policy.max_bytes {
        reasons.push(BlockReason::OverBudget);
    }
    if lineage.is_none_or(|l| l.epoch() != epoch) {
        reasons.push(BlockReason::OldSessionEpoch);
    }
    reasons.sort();
    reasons.dedup();
    let status = if reasons.is_empty() {
        ContextStatus::Ready
    } else {
        ContextStatus::Blocked
    };
    let report = ContextReport {
        status,
        reasons,
        policy_digest: Some(policy.digest()),
        checks,
        total_bytes: total,
        max_bytes: Some(policy.max_bytes),
        epoch,
        lineage: records,
        authorized: NotAuthorized,
    };
    (report, found)
}
