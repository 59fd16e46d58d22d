//! Session lineage of one governed run: immutable session records, `FRESH` when the run is created,
//! `COLD_RESUME` after a governed restart approval in a new coordinator epoch, `REPLACED` in the
//! human-approved replacement of the agent.
//!
//! Owns: [`SessionRecord`], [`SessionKind`], [`Lineage`] (append-only; records are never changed or
//! removed, and repeating a resume in the same epoch, or the same replacement, adds no record) and the
//! deterministic session ids.
//!
//! Must not: read a clock or draw random numbers (ids are derived from the record's contents, and
//! `created_at` is whatever the caller passes); approve anything (recording a session is not an approval,
//! it only records one the caller was given); change the policy of a run (every record carries the
//! policy digest the run was created with).

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::digest;

/// When a session record is written.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SessionKind {
    /// The context-bound run was created.
    Fresh,
    /// Governed restart approval in a new coordinator epoch.
    ColdResume,
    /// The human-approved replacement of the agent.
    Replaced,
}

impl SessionKind {
    /// The seed's name (`FRESH`, `COLD_RESUME`, `REPLACED`).
    pub fn as_str(self) -> &'static str {
        match self {
            SessionKind::Fresh => "FRESH",
            SessionKind::ColdResume => "COLD_RESUME",
            SessionKind::Replaced => "REPLACED",
        }
    }
}

/// One immutable session record.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionRecord {
    /// Deterministic id: the first 16 hex digits of SHA-256 over the record's identity.
    pub session: String,
    pub kind: SessionKind,
    /// The run (work order) the session belongs to.
    pub run: String,
    pub agent: String,
    pub assignment: String,
    pub policy_digest: String,
    /// The coordinator epoch the session was recorded in.
    pub epoch: u64,
    /// The session this one follows (`None` only for `FRESH`).
    pub parent: Option<String>,
    /// As passed by the caller (the harness passes a simulated time).
    pub created_at: String,
}

/// Why a session could not be recorded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LineageError {
    #[error(
        "epoch {requested} is older than the lineage's current epoch {current}: sessions never go back"
    )]
    OlderEpoch { requested: u64, current: u64 },
    #[error(
        "a cold resume needs a new coordinator epoch: epoch {epoch} already has session {session} ({kind})"
    )]
    NotANewEpoch {
        epoch: u64,
        session: String,
        kind: &'static str,
    },
    #[error(
        "epoch {epoch} was already resumed by agent `{recorded}` (session {session}); a repeated resume \
         cannot name agent `{requested}`"
    )]
    ResumedByAnotherAgent {
        epoch: u64,
        session: String,
        recorded: String,
        requested: String,
    },
    #[error(
        "epoch {epoch} has no session (the latest is in epoch {latest}): a governed resume must come before a \
         replacement"
    )]
    NoSessionInEpoch { epoch: u64, latest: u64 },
    #[error(
        "agent `{agent}` already holds session {session}: a replacement needs a different agent"
    )]
    SameAgent { agent: String, session: String },
    #[error("the lineage is bound to policy {expected}; policy {found} cannot resume it")]
    PolicyChanged { expected: String, found: String },
    #[error("session record {index} does not continue the lineage: {message}")]
    Broken { index: usize, message: String },
}

/// The append-only session records of one governed run (see the module doc).
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
#[serde(transparent)]
pub struct Lineage {
    records: Vec<SessionRecord>,
}

impl Lineage {
    /// A new lineage with its `FRESH` record in epoch 0.
    pub fn fresh(
        run: &str,
        agent: &str,
        assignment: &str,
        policy_digest: &str,
        created_at: &str,
    ) -> Lineage {
        let record = make(
            SessionKind::Fresh,
            run,
            agent,
            assignment,
            policy_digest,
            0,
            None,
            created_at,
        );
        Lineage {
            records: vec![record],
        }
    }

    /// Governed restart approval in `epoch` (newer than the current epoch): a `COLD_RESUME` record whose
    /// parent is the latest session. Repeating it in the same epoch adds no record and returns the
    /// existing one.
    pub fn cold_resume(
        &mut self,
        epoch: u64,
        agent: &str,
        created_at: &str,
    ) -> Result<&SessionRecord, LineageError> {
        let current = self.epoch();
        if epoch < current {
            return Err(LineageError::OlderEpoch {
                requested: epoch,
                current,
            });
        }
        if epoch == current {
            let resumed = self
                .records
                .iter()
                .position(|r| r.epoch == epoch && r.kind == SessionKind::ColdResume);
            return match resumed {
                Some(i) if self.records[i].agent == agent => Ok(&self.records[i]),
                Some(i) => Err(LineageError::ResumedByAnotherAgent {
                    epoch,
                    session: self.records[i].session.clone(),
                    recorded: self.records[i].agent.clone(),
                    requested: agent.to_string(),
                }),
                None => {
                    let latest = self.latest();
                    Err(LineageError::NotANewEpoch {
                        epoch,
                        session: latest.session.clone(),
                        kind: latest.kind.as_str(),
                    })
                }
            };
        }
        Ok(self.append(SessionKind::ColdResume, epoch, agent, created_at))
    }

    /// The human-approved replacement of the agent in the current epoch: a `REPLACED` record whose parent
    /// is the latest session. Repeating it (same epoch, same agent) adds no record; replacing an agent by
    /// itself is an error, as is a replacement in an epoch that has no session yet.
    pub fn replace(
        &mut self,
        epoch: u64,
        agent: &str,
        created_at: &str,
    ) -> Result<&SessionRecord, LineageError> {
        let current = self.epoch();
        if epoch < current {
            return Err(LineageError::OlderEpoch {
                requested: epoch,
                current,
            });
        }
        if epoch > current {
            return Err(LineageError::NoSessionInEpoch {
                epoch,
                latest: current,
            });
        }
        let latest = self.latest();
        if latest.agent == agent {
            if latest.kind == SessionKind::Replaced {
                return Ok(self.latest());
            }
            return Err(LineageError::SameAgent {
                agent: agent.to_string(),
                session: latest.session.clone(),
            });
        }
        Ok(self.append(SessionKind::Replaced, epoch, agent, created_at))
    }

    /// A lineage read back from its records (a results file, a report), checked: a `FRESH` record in
    /// epoch 0 first, then records each naming the one before as parent, in non-decreasing epochs, of the
    /// same run, assignment and policy, each with the id its contents give.
    pub fn from_records(records: Vec<SessionRecord>) -> Result<Lineage, LineageError> {
        let broken = |index: usize, message: String| LineageError::Broken { index, message };
        let Some(first) = records.first() else {
            return Err(broken(
                0,
                "a lineage starts with its FRESH record; there is none".into(),
            ));
        };
        if first.kind != SessionKind::Fresh || first.epoch != 0 || first.parent.is_some() {
            return Err(broken(
                0,
                "the first record must be FRESH, in epoch 0, without a parent".into(),
            ));
        }
        for (i, r) in records.iter().enumerate() {
            let expected = make(
                r.kind,
                &r.run,
                &r.agent,
                &r.assignment,
                &r.policy_digest,
                r.epoch,
                r.parent.clone(),
                &r.created_at,
            );
            if expected.session != r.session {
                return Err(broken(
                    i,
                    format!(
                        "its id is {}, its contents give {}",
                        r.session, expected.session
                    ),
                ));
            }
            let Some(prev) = i.checked_sub(1).map(|p| &records[p]) else {
                continue;
            };
            let message = if r.kind == SessionKind::Fresh {
                Some("only the first record is FRESH".to_string())
            } else if r.parent.as_deref() != Some(prev.session.as_str()) {
                Some(format!(
                    "its parent is not the session before it ({})",
                    prev.session
                ))
            } else if r.epoch < prev.epoch {
                Some(format!(
                    "epoch {} comes after epoch {}",
                    r.epoch, prev.epoch
                ))
            } else if (&r.run, &r.assignment, &r.policy_digest)
                != (&prev.run, &prev.assignment, &prev.policy_digest)
            {
                Some("its run, assignment or policy differs from the session before it".to_string())
            } else {
                None
            };
            if let Some(message) = message {
                return Err(broken(i, message));
            }
        }
        Ok(Lineage { records })
    }

    /// Every record, oldest first.
    pub fn records(&self) -> &[SessionRecord] {
        &self.records
    }

    /// The latest record of `epoch`, if that epoch has one.
    pub fn current(&self, epoch: u64) -> Option<&SessionRecord> {
        self.records.iter().rev().find(|r| r.epoch == epoch)
    }

    /// The latest record's epoch.
    pub fn epoch(&self) -> u64 {
        self.latest().epoch
    }

    /// The policy digest the run was created with (every record carries it).
    pub fn policy_digest(&self) -> &str {
        &self.records[0].policy_digest
    }

    /// Refuses a policy other than the one the lineage is bound to (a policy is immutable once a run is
    /// created: resuming under a different one is an error, not a new lineage).
    pub fn verify_policy(&self, policy_digest: &str) -> Result<(), LineageError> {
        if self.policy_digest() == policy_digest {
            Ok(())
        } else {
            Err(LineageError::PolicyChanged {
                expected: self.policy_digest().to_string(),
                found: policy_digest.to_string(),
            })
        }
    }

    fn latest(&self) -> &SessionRecord {
        // Invariant: a lineage is created with its FRESH record and records are never removed.
        self.records
            .last()
            .expect("a lineage always has its FRESH record")
    }

    fn append(
        &mut self,
        kind: SessionKind,
        epoch: u64,
        agent: &str,
        created_at: &str,
    ) -> &SessionRecord {
        let latest = self.latest();
        let record = make(
            kind,
            &latest.run,
            agent,
            &latest.assignment,
            &latest.policy_digest,
            epoch,
            Some(latest.session.clone()),
            created_at,
        );
        self.records.push(record);
        self.latest()
    }
}

#[allow(clippy::too_many_arguments)]
fn make(
    kind: SessionKind,
    run: &str,
    agent: &str,
    assignment: &str,
    policy_digest: &str,
    epoch: u64,
    parent: Option<String>,
    created_at: &str,
) -> SessionRecord {
    SessionRecord {
        session: session_id(
            kind,
            run,
            agent,
            assignment,
            policy_digest,
            epoch,
            parent.as_deref(),
        ),
        kind,
        run: run.to_string(),
        agent: agent.to_string(),
        assignment: assignment.to_string(),
        policy_digest: policy_digest.to_string(),
        epoch,
        parent,
        created_at: created_at.to_string(),
    }
}

/// The first 16 hex digits of SHA-256 over the record's identity, written as a JSON array (so no field
/// can run into the next). The creation time is not part of it: the same session recorded again is the
/// same session.
fn session_id(
    kind: SessionKind,
    run: &str,
    agent: &str,
    assignment: &str,
    policy_digest: &str,
    epoch: u64,
    parent: Option<&str>,
) -> String {
    let identity = serde_json::json!([
        "session/1",
        run,
        kind.as_str(),
        epoch,
        agent,
        assignment,
        policy_digest,
        parent
    ]);
    // Invariant: a JSON value of strings and integers always serializes.
    let bytes = serde_json::to_vec(&identity).expect("a JSON array serializes");
    digest(&bytes)[..16].to_string()
}
