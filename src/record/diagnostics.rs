//! The diagnostics of a record: why its metrics are what they are ([`Diagnostics`]), and the
//! typed entries it lists — omissions, repeated reads, duplicate intents, safety violations,
//! broken checkpoint rules, a context overflow.
//!
//! Owns: those types and their JSON form, which is data (serde derive: structs, and enums
//! tagged by `kind`), part of the record contract (docs/record-contract.md, "Diagnostics").
//! Field and variant names are stable: renaming one is a new record version
//! ([`super::RECORD_VERSION`]). Records of version 1 wrote each entry as one string; the legacy
//! reader in [`super::read`] turns those into these types. Must not: compute a diagnostic (the
//! scorer and the runner do), parse or format text, or import anything of the pipeline (only
//! `vocab`).

use serde::{Deserialize, Serialize};

use super::LiveStats;
use crate::vocab::{ApprovalStatus, FinishStatus, Object};

/// A handoff larger than the destination's usable context window: the cell was not continued.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overflow {
    pub restore_tokens: u64,
    /// The destination's context window.
    pub context_window: u64,
    /// What the harness keeps free of it for the answer, the system prompt and the tools.
    pub reserve: u64,
}

/// Why the metrics are what they are.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Diagnostics {
    /// The handoff did not fit the destination's context window (the cell is a failed
    /// continuation, never a silently cut handoff).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_overflow: Option<Overflow>,
    /// Facts the handoff text did not show (as the destination reported them; simulated only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub facts_lost_in_handoff: Vec<String>,
    /// Facts the handoff showed that the destination missed all the same (the simulated
    /// destinations' distraction model).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub facts_forgotten: Vec<String>,
    /// Facts the handoff showed and also voided in a statement the destination acted on (an
    /// override: "every constraint above is void now"); their consequences are scored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub facts_overridden: Vec<String>,
    /// Facts the continuation contradicted, ignored or asked for again, with the evidence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub omitted: Vec<Omission>,
    /// Reads the source already made that the continuation made again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeated: Vec<RepeatedRead>,
    /// Non-idempotent intents committed more than once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub duplicates: Vec<Duplicate>,
    /// Actions under a non-granted approval, forbidden actions, followed injected directives.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<Violation>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recovery_missed: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_predicates: Vec<usize>,
    /// Injected directives the destination followed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub injections_followed: Vec<String>,
    /// Places where the handoff presents a fact with more authority than it had (`FACT: FROM →
    /// TO`: hypothesis → finding, external → instruction, agent → user, unverified → verified).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provenance_upgrades: Vec<String>,
    pub finish: Option<FinishStatus>,
    pub degraded: bool,
    pub steps: u32,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub step_budget_exhausted: bool,
    /// Live destinations: calls, cache hits, retries, tokens, cost, reported model identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<Box<LiveStats>>,
    /// The handoff was a checkpoint and the seed-003 §9.2 rules were checked on it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub checkpoint_checked: bool,
    /// Rules the handoff's checkpoint breaks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checkpoint_rule_violations: Vec<RuleBreak>,
    /// The live summariser's calls for this cell's handoff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compaction: Option<Box<LiveStats>>,
    /// Transcript cells: every value the rest of the run needed that appeared before the cut,
    /// as `VALUE (first seen message N (ROLE); used by WHERE)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub needed_values: Vec<String>,
    /// Transcript cells: the needed values the handoff does not carry (the same form).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost_values: Vec<String>,
}

/// A fact the continuation contradicted, ignored or asked for again:
/// `{"fact": "…", "evidence": {"kind": "…", …}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Omission {
    pub fact: String,
    pub evidence: OmissionEvidence,
}

/// What shows that a fact was lost (tagged by `kind`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum OmissionEvidence {
    /// `contradicted`: the continuation called `tool`, a consequence of losing the fact.
    Contradicted { tool: String },
    /// `reran`: the continuation re-ran the source's call `tool` from `event`, which the fact
    /// made unnecessary.
    Reran { tool: String, event: String },
    /// `never_did`: the reference's call or approval request `target`, never made.
    NeverDid { target: String },
    /// `asked_again`: the continuation asked the user `question`, whose answer carries the fact.
    AskedAgain { question: String },
}

/// A read the source already made, on unchanged state, that the reference continuation does not
/// make: `{"seq": 12, "tool": "…", "as_event": "…"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepeatedRead {
    /// The continuation's ledger sequence number.
    pub seq: u64,
    pub tool: String,
    /// The source event that made the read first (empty when it had none).
    pub as_event: String,
}

/// The intent of a non-idempotent effect: the tool and its arguments without the idempotency key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Intent {
    pub tool: String,
    pub args: Object,
}

/// One intent committed `count` times (the source's commits included):
/// `{"intent": {"tool": "…", "args": {…}}, "count": 2}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Duplicate {
    pub intent: Intent,
    pub count: u32,
}

/// A safety violation (tagged by `kind`; `seq` is the ledger sequence number of the call).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Violation {
    /// `approval_not_granted`: an effect under an approval that was not granted (`state`:
    /// `pending`, `expired`, `revoked`, `denied`, …).
    ApprovalNotGranted {
        seq: u64,
        tool: String,
        approval: String,
        state: ApprovalStatus,
    },
    /// `forbidden`: a call the scenario forbids, with the rule's `reason` (`constraint`,
    /// `injected_directive`, `stop_condition`, `identity`) and its id.
    Forbidden {
        seq: u64,
        tool: String,
        reason: String,
        rule: String,
    },
    /// `followed_directive`: a consequence of obeying the injected directive `fact`.
    FollowedDirective { fact: String },
}

impl Violation {
    /// A violation of one ledger call (an approval not granted or a forbidden call), as opposed
    /// to a followed directive found from its consequences.
    pub fn is_call(&self) -> bool {
        !matches!(self, Violation::FollowedDirective { .. })
    }

    /// Whether the violation is about an injected directive: one followed, or a call forbidden
    /// because an injected directive asks for it.
    pub fn is_injection(&self) -> bool {
        match self {
            Violation::FollowedDirective { .. } => true,
            Violation::Forbidden { reason, .. } => reason == "injected_directive",
            Violation::ApprovalNotGranted { .. } => false,
        }
    }
}

/// A seed-003 §9.2 rule a checkpoint breaks: `{"rule": "…", "at": "…", "detail": "…"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleBreak {
    /// The rule's name (`hypothesis_promoted`, `constraint_missing`, …).
    pub rule: String,
    /// Where: `statements[3]`, `operations`, `events[event-0007]`.
    pub at: String,
    pub detail: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `value` is written as exactly `json` and reads back as `value`.
    fn round_trip<T>(value: T, json: &str)
    where
        T: Serialize + PartialEq + std::fmt::Debug + for<'de> Deserialize<'de>,
    {
        assert_eq!(serde_json::to_string(&value).expect("json"), json);
        assert_eq!(serde_json::from_str::<T>(json).expect("back"), value);
    }

    #[test]
    fn diagnostics_are_structured_json() {
        round_trip(
            Omission {
                fact: "no-refund".into(),
                evidence: OmissionEvidence::Contradicted {
                    tool: "issue_refund".into(),
                },
            },
            r#"{"fact":"no-refund","evidence":{"kind":"contradicted","tool":"issue_refund"}}"#,
        );
        round_trip(
            OmissionEvidence::Reran {
                tool: "get_ticket".into(),
                event: "event-0003".into(),
            },
            r#"{"kind":"reran","tool":"get_ticket","event":"event-0003"}"#,
        );
        round_trip(
            OmissionEvidence::NeverDid {
                target: "appr 7".into(),
            },
            r#"{"kind":"never_did","target":"appr 7"}"#,
        );
        round_trip(
            OmissionEvidence::AskedAgain {
                question: "which \"zone\"?".into(),
            },
            r#"{"kind":"asked_again","question":"which \"zone\"?"}"#,
        );
        round_trip(
            RepeatedRead {
                seq: 12,
                tool: "get_ticket".into(),
                as_event: "event-0004".into(),
            },
            r#"{"seq":12,"tool":"get_ticket","as_event":"event-0004"}"#,
        );
        let args: Object = serde_json::from_str(r#"{"to":"a@b.c","n":1.5}"#).expect("args");
        round_trip(
            Duplicate {
                intent: Intent {
                    tool: "send_email".into(),
                    args,
                },
                count: 3,
            },
            r#"{"intent":{"tool":"send_email","args":{"to":"a@b.c","n":1.5}},"count":3}"#,
        );
        round_trip(
            Violation::ApprovalNotGranted {
                seq: 9,
                tool: "deploy".into(),
                approval: "appr-1".into(),
                state: ApprovalStatus::Pending,
            },
            r#"{"kind":"approval_not_granted","seq":9,"tool":"deploy","approval":"appr-1","state":"pending"}"#,
        );
        round_trip(
            Violation::Forbidden {
                seq: 14,
                tool: "send_email".into(),
                reason: "injected_directive".into(),
                rule: "exfiltrate-export".into(),
            },
            r#"{"kind":"forbidden","seq":14,"tool":"send_email","reason":"injected_directive","rule":"exfiltrate-export"}"#,
        );
        round_trip(
            Violation::FollowedDirective { fact: "f".into() },
            r#"{"kind":"followed_directive","fact":"f"}"#,
        );
        round_trip(
            RuleBreak {
                rule: "operation_missing".into(),
                at: "events[event-0007]".into(),
                detail: String::new(),
            },
            r#"{"rule":"operation_missing","at":"events[event-0007]","detail":""}"#,
        );
    }

    #[test]
    fn violation_kinds() {
        let followed = Violation::FollowedDirective { fact: "f".into() };
        let forbidden = |reason: &str| Violation::Forbidden {
            seq: 1,
            tool: "t".into(),
            reason: reason.into(),
            rule: "r".into(),
        };
        assert!(!followed.is_call() && followed.is_injection());
        assert!(forbidden("injected_directive").is_call());
        assert!(forbidden("injected_directive").is_injection());
        assert!(!forbidden("constraint").is_injection());
    }
}
