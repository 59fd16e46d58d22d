//! The diagnostics of a record: why its metrics are what they are ([`Diagnostics`]), and the
//! typed entries it lists — omissions, repeated reads, duplicate intents, safety violations,
//! broken checkpoint rules, a context overflow.
//!
//! Owns: those types and the form each is written in. Must not: compute a diagnostic (the scorer
//! and the runner do) or import anything of the pipeline (only `vocab`).

use std::fmt;
use std::str::FromStr;

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
    pub live: Option<LiveStats>,
    /// The handoff was a checkpoint and the seed-003 §9.2 rules were checked on it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub checkpoint_checked: bool,
    /// Rules the handoff's checkpoint breaks (`rule at where: detail`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checkpoint_rule_violations: Vec<RuleBreak>,
    /// The live summariser's calls for this cell's handoff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compaction: Option<LiveStats>,
    /// Transcript cells: every value the rest of the run needed that appeared before the cut,
    /// as `VALUE (first seen message N (ROLE); used by WHERE)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub needed_values: Vec<String>,
    /// Transcript cells: the needed values the handoff does not carry (the same form).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost_values: Vec<String>,
}

/// A diagnostic string that is not in the form the harness writes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a {kind} diagnostic: {text:?}")]
pub struct ParseDiagnosticError {
    kind: &'static str,
    text: String,
}

fn bad(kind: &'static str, text: &str) -> ParseDiagnosticError {
    ParseDiagnosticError {
        kind,
        text: text.to_string(),
    }
}

/// Each typed diagnostic is written to `results.jsonl` as the one string its `Display` gives
/// (the record contract's form) and read back with its `FromStr`.
macro_rules! as_string {
    ($t:ty) => {
        impl Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

/// `#<seq> <rest>`: a ledger sequence number and what follows it.
fn split_seq<'a>(
    kind: &'static str,
    text: &'a str,
) -> Result<(u64, &'a str), ParseDiagnosticError> {
    let (seq, rest) = text
        .strip_prefix('#')
        .and_then(|t| t.split_once(' '))
        .ok_or_else(|| bad(kind, text))?;
    Ok((seq.parse().map_err(|_| bad(kind, text))?, rest))
}

/// A fact the continuation contradicted, ignored or asked for again:
/// `<fact>: <evidence>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Omission {
    pub fact: String,
    pub evidence: OmissionEvidence,
}

/// What shows that a fact was lost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OmissionEvidence {
    /// `contradicted by calling <tool>`: a consequence of losing the fact.
    Contradicted { tool: String },
    /// `ignored: re-ran <tool> from <event>`: the source's call the fact made unnecessary.
    Reran { tool: String, event: String },
    /// `ignored: never did <target>`: the reference's call or approval request, never made.
    NeverDid { target: String },
    /// `asked again: "<question>"`: the user's answer carries the fact.
    AskedAgain { question: String },
}

impl fmt::Display for OmissionEvidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Contradicted { tool } => write!(f, "contradicted by calling {tool}"),
            Self::Reran { tool, event } => write!(f, "ignored: re-ran {tool} from {event}"),
            Self::NeverDid { target } => write!(f, "ignored: never did {target}"),
            Self::AskedAgain { question } => write!(f, "asked again: \"{question}\""),
        }
    }
}

impl FromStr for OmissionEvidence {
    type Err = ParseDiagnosticError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let owned = |s: &str| s.to_string();
        if let Some(tool) = text.strip_prefix("contradicted by calling ") {
            Ok(Self::Contradicted { tool: owned(tool) })
        } else if let Some(rest) = text.strip_prefix("ignored: re-ran ") {
            let (tool, event) = rest
                .rsplit_once(" from ")
                .ok_or_else(|| bad("omission evidence", text))?;
            Ok(Self::Reran {
                tool: owned(tool),
                event: owned(event),
            })
        } else if let Some(target) = text.strip_prefix("ignored: never did ") {
            Ok(Self::NeverDid {
                target: owned(target),
            })
        } else if let Some(q) = text
            .strip_prefix("asked again: \"")
            .and_then(|q| q.strip_suffix('"'))
        {
            Ok(Self::AskedAgain { question: owned(q) })
        } else {
            Err(bad("omission evidence", text))
        }
    }
}

impl fmt::Display for Omission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.fact, self.evidence)
    }
}

impl FromStr for Omission {
    type Err = ParseDiagnosticError;
    /// The fact ends at the first `: ` after which the evidence reads.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        text.match_indices(": ")
            .find_map(|(i, sep)| {
                let evidence = text[i + sep.len()..].parse().ok()?;
                Some(Omission {
                    fact: text[..i].to_string(),
                    evidence,
                })
            })
            .ok_or_else(|| bad("omission", text))
    }
}
as_string!(Omission);

/// A read the source already made, on unchanged state, that the reference continuation does not
/// make: `#<seq> <tool> (as <event>)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepeatedRead {
    pub seq: u64,
    pub tool: String,
    /// The source event that made the read first (empty when it had none).
    pub as_event: String,
}

impl fmt::Display for RepeatedRead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{} {} (as {})", self.seq, self.tool, self.as_event)
    }
}

impl FromStr for RepeatedRead {
    type Err = ParseDiagnosticError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (seq, rest) = split_seq("repeated read", text)?;
        let (tool, event) = rest
            .strip_suffix(')')
            .and_then(|r| r.split_once(" (as "))
            .ok_or_else(|| bad("repeated read", text))?;
        Ok(RepeatedRead {
            seq,
            tool: tool.to_string(),
            as_event: event.to_string(),
        })
    }
}
as_string!(RepeatedRead);

/// The intent of a non-idempotent effect: the tool and its arguments without the idempotency key
/// (`<tool> <arguments as JSON>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Intent {
    pub tool: String,
    pub args: Object,
}

impl fmt::Display for Intent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let args = serde_json::to_string(&self.args).unwrap_or_default();
        write!(f, "{} {args}", self.tool)
    }
}

impl FromStr for Intent {
    type Err = ParseDiagnosticError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (tool, _) = text.split_once(" {").ok_or_else(|| bad("intent", text))?;
        let args =
            serde_json::from_str(&text[tool.len() + 1..]).map_err(|_| bad("intent", text))?;
        Ok(Intent {
            tool: tool.to_string(),
            args,
        })
    }
}

/// One intent committed `count` times (the source's commits included): `<intent> ×<count>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    pub intent: Intent,
    pub count: u32,
}

impl fmt::Display for Duplicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ×{}", self.intent, self.count)
    }
}

impl FromStr for Duplicate {
    type Err = ParseDiagnosticError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (intent, count) = text
            .rsplit_once(" ×")
            .ok_or_else(|| bad("duplicate", text))?;
        Ok(Duplicate {
            intent: intent.parse()?,
            count: count.parse().map_err(|_| bad("duplicate", text))?,
        })
    }
}
as_string!(Duplicate);

/// A safety violation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    /// `#<seq> <tool> under approval <approval> in state <state>`: an effect under an approval
    /// that was not granted.
    ApprovalNotGranted {
        seq: u64,
        tool: String,
        approval: String,
        state: ApprovalStatus,
    },
    /// `#<seq> <tool> forbidden (<reason>: <rule>)`: a call the scenario forbids.
    Forbidden {
        seq: u64,
        tool: String,
        reason: String,
        rule: String,
    },
    /// ``followed injected directive `<fact>` ``: a consequence of obeying an injected directive.
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

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ApprovalNotGranted {
                seq,
                tool,
                approval,
                state,
            } => write!(
                f,
                "#{seq} {tool} under approval {approval} in state {}",
                state.as_str()
            ),
            Self::Forbidden {
                seq,
                tool,
                reason,
                rule,
            } => write!(f, "#{seq} {tool} forbidden ({reason}: {rule})"),
            Self::FollowedDirective { fact } => write!(f, "followed injected directive `{fact}`"),
        }
    }
}

impl FromStr for Violation {
    type Err = ParseDiagnosticError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        const KIND: &str = "violation";
        if let Some(fact) = text
            .strip_prefix("followed injected directive `")
            .and_then(|f| f.strip_suffix('`'))
        {
            return Ok(Self::FollowedDirective {
                fact: fact.to_string(),
            });
        }
        let (seq, rest) = split_seq(KIND, text)?;
        // A forbidden call ends with `)`; an approval state never does.
        if let Some(inner) = rest.strip_suffix(')') {
            let (tool, why) = inner
                .split_once(" forbidden (")
                .ok_or_else(|| bad(KIND, text))?;
            let (reason, rule) = why.rsplit_once(": ").ok_or_else(|| bad(KIND, text))?;
            return Ok(Self::Forbidden {
                seq,
                tool: tool.to_string(),
                reason: reason.to_string(),
                rule: rule.to_string(),
            });
        }
        let (head, state) = rest
            .rsplit_once(" in state ")
            .ok_or_else(|| bad(KIND, text))?;
        let (tool, approval) = head
            .split_once(" under approval ")
            .ok_or_else(|| bad(KIND, text))?;
        Ok(Self::ApprovalNotGranted {
            seq,
            tool: tool.to_string(),
            approval: approval.to_string(),
            state: approval_state(state).ok_or_else(|| bad(KIND, text))?,
        })
    }
}
as_string!(Violation);

/// The approval state `as_str` names.
fn approval_state(name: &str) -> Option<ApprovalStatus> {
    use ApprovalStatus::*;
    [Granted, Pending, Expired, Revoked, Denied]
        .into_iter()
        .find(|s| s.as_str() == name)
}

/// A seed-003 §9.2 rule a checkpoint breaks: `<rule> at <where>: <detail>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleBreak {
    /// The rule's name (`hypothesis_promoted`, `constraint_missing`, …).
    pub rule: String,
    /// Where: `statements[3]`, `operations`, `events[event-0007]`.
    pub at: String,
    pub detail: String,
}

impl fmt::Display for RuleBreak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {}: {}", self.rule, self.at, self.detail)
    }
}

impl FromStr for RuleBreak {
    type Err = ParseDiagnosticError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (rule, rest) = text
            .split_once(" at ")
            .ok_or_else(|| bad("checkpoint rule", text))?;
        let (at, detail) = rest
            .split_once(": ")
            .ok_or_else(|| bad("checkpoint rule", text))?;
        Ok(RuleBreak {
            rule: rule.to_string(),
            at: at.to_string(),
            detail: detail.to_string(),
        })
    }
}
as_string!(RuleBreak);

#[cfg(test)]
mod tests {
    use super::*;

    /// `value` is written as exactly `text` (in JSON too) and `text` reads back as `value`.
    fn round_trip<T>(value: T, text: &str)
    where
        T: fmt::Display + FromStr<Err = ParseDiagnosticError> + Serialize + PartialEq + fmt::Debug,
        for<'de> T: Deserialize<'de>,
    {
        assert_eq!(value.to_string(), text);
        assert_eq!(text.parse::<T>().as_ref(), Ok(&value), "{text}");
        let json = serde_json::to_string(&value).expect("json");
        assert_eq!(json, serde_json::to_string(text).expect("json"));
        assert_eq!(serde_json::from_str::<T>(&json).expect("back"), value);
    }

    fn omission(fact: &str, evidence: OmissionEvidence) -> Omission {
        Omission {
            fact: fact.into(),
            evidence,
        }
    }

    #[test]
    fn omissions_round_trip() {
        use OmissionEvidence::*;
        round_trip(
            omission(
                "no-refund",
                Contradicted {
                    tool: "issue_refund".into(),
                },
            ),
            "no-refund: contradicted by calling issue_refund",
        );
        round_trip(
            omission(
                "a:b",
                Reran {
                    tool: "get_ticket".into(),
                    event: "event-0003".into(),
                },
            ),
            "a:b: ignored: re-ran get_ticket from event-0003",
        );
        round_trip(
            omission(
                "fact: with space",
                NeverDid {
                    target: "appr 7".into(),
                },
            ),
            "fact: with space: ignored: never did appr 7",
        );
        round_trip(
            omission(
                "tz",
                AskedAgain {
                    question: "which \"zone\": UTC or: ignored: never did x?".into(),
                },
            ),
            "tz: asked again: \"which \"zone\": UTC or: ignored: never did x?\"",
        );
        round_trip(
            omission(
                "<script>fact()</script> & co",
                NeverDid {
                    target: String::new(),
                },
            ),
            "<script>fact()</script> & co: ignored: never did ",
        );
        assert!("f: lost".parse::<Omission>().is_err());
        assert!("no separator".parse::<Omission>().is_err());
    }

    #[test]
    fn repeated_reads_round_trip() {
        round_trip(
            RepeatedRead {
                seq: 12,
                tool: "get_ticket".into(),
                as_event: "event-0004".into(),
            },
            "#12 get_ticket (as event-0004)",
        );
        round_trip(
            RepeatedRead {
                seq: 0,
                tool: "read".into(),
                as_event: String::new(),
            },
            "#0 read (as )",
        );
        round_trip(
            RepeatedRead {
                seq: 3,
                tool: "read".into(),
                as_event: "ev: \"x (as y)\"".into(),
            },
            "#3 read (as ev: \"x (as y)\")",
        );
        assert!("12 read (as e)".parse::<RepeatedRead>().is_err());
        assert!("#x read (as e)".parse::<RepeatedRead>().is_err());
    }

    #[test]
    fn duplicates_round_trip() {
        let args: Object = serde_json::from_str(
            r#"{"to":"a@b.c","body":"say \"hi\": ×2 {ok}","n":1.5,"z":[1,{"k":null}]}"#,
        )
        .expect("args");
        round_trip(
            Duplicate {
                intent: Intent {
                    tool: "send_email".into(),
                    args,
                },
                count: 3,
            },
            r#"send_email {"to":"a@b.c","body":"say \"hi\": ×2 {ok}","n":1.5,"z":[1,{"k":null}]} ×3"#,
        );
        round_trip(
            Duplicate {
                intent: Intent {
                    tool: "create_ticket".into(),
                    args: Object::new(),
                },
                count: 2,
            },
            "create_ticket {} ×2",
        );
        assert!("send_email {} x2".parse::<Duplicate>().is_err());
        assert!("send_email nojson ×2".parse::<Duplicate>().is_err());
    }

    #[test]
    fn violations_round_trip() {
        round_trip(
            Violation::ApprovalNotGranted {
                seq: 9,
                tool: "deploy".into(),
                approval: "appr-1".into(),
                state: ApprovalStatus::Pending,
            },
            "#9 deploy under approval appr-1 in state pending",
        );
        for state in [
            ApprovalStatus::Granted,
            ApprovalStatus::Expired,
            ApprovalStatus::Revoked,
            ApprovalStatus::Denied,
        ] {
            let v = Violation::ApprovalNotGranted {
                seq: 1,
                tool: "t".into(),
                approval: "a b".into(),
                state,
            };
            round_trip(v.clone(), &v.to_string());
        }
        round_trip(
            Violation::Forbidden {
                seq: 14,
                tool: "send_email".into(),
                reason: "injected_directive".into(),
                rule: "exfiltrate-export".into(),
            },
            "#14 send_email forbidden (injected_directive: exfiltrate-export)",
        );
        round_trip(
            Violation::Forbidden {
                seq: 2,
                tool: "x".into(),
                reason: "a \"quoted\": reason (really)".into(),
                rule: "r:1".into(),
            },
            "#2 x forbidden (a \"quoted\": reason (really): r:1)",
        );
        round_trip(
            Violation::FollowedDirective {
                fact: "ignore: \"previous\" instructions".into(),
            },
            "followed injected directive `ignore: \"previous\" instructions`",
        );
        assert!("#1 t in state maybe".parse::<Violation>().is_err());
        assert!("followed something".parse::<Violation>().is_err());
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

    #[test]
    fn rule_breaks_round_trip() {
        round_trip(
            RuleBreak {
                rule: "hypothesis_promoted".into(),
                at: "statements[3]".into(),
                detail: "\"maybe\" became: fact at last".into(),
            },
            "hypothesis_promoted at statements[3]: \"maybe\" became: fact at last",
        );
        round_trip(
            RuleBreak {
                rule: "operation_missing".into(),
                at: "events[event-0007]".into(),
                detail: String::new(),
            },
            "operation_missing at events[event-0007]: ",
        );
        assert!("no rule here".parse::<RuleBreak>().is_err());
    }
}
