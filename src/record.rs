//! The run record: one line of `results.jsonl` per cell — the cell's identity, its status, the
//! eight metrics and the diagnostics that explain them. This is a public contract (README).
//!
//! A leaf data module: every later stage (score, runner, report, gate) reads and writes records
//! through it, and it imports nothing of the pipeline (only the leaves `vocab`, `governed` and
//! `secrets`). It never computes a metric.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::vocab::{ApprovalStatus, FinishStatus, Object};

/// The identity of a cell: what `--resume`, shards, `merge` and the duplicate check compare.
/// Every place that needs "which cell is this" builds one of these, so a new dimension of the
/// matrix is added here once.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CellId {
    pub scenario: String,
    /// The history scale (`base`, `40k`, …).
    pub scale: String,
    pub interrupt: String,
    pub strategy: String,
    pub model: String,
    pub rep: u32,
}

impl CellId {
    /// A stable byte form (fields separated by NUL), for hashing.
    pub fn key(&self) -> String {
        format!(
            "{}\0{}\0{}\0{}\0{}\0{}",
            self.scenario, self.scale, self.interrupt, self.strategy, self.model, self.rep
        )
    }
}

impl fmt::Display for CellId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} · {} · {} · {} · {} · rep {}",
            self.scenario, self.scale, self.interrupt, self.strategy, self.model, self.rep
        )
    }
}

impl RunRecord {
    /// The cell this record is the result of.
    pub fn id(&self) -> CellId {
        CellId {
            scenario: self.scenario.clone(),
            scale: self.scale.clone(),
            interrupt: self.interrupt.clone(),
            strategy: self.strategy.clone(),
            model: self.model.clone(),
            rep: self.rep,
        }
    }
}

/// Whether a cell produced metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    Errored,
}

/// One cell's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// What the cell starts from: a scenario's interrupt point, or a cut of an imported
    /// transcript (then `scenario` is the run id and `interrupt` the cut's name).
    #[serde(default)]
    pub source: Source,
    pub scenario: String,
    /// The history scale of the cell (`base`, `40k`, …; see `scenario::volume::Scale`).
    #[serde(default = "base_scale")]
    pub scale: String,
    pub interrupt: String,
    pub strategy: String,
    pub model: String,
    pub rep: u32,
    pub seed: u64,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// For errored cells: `infrastructure`, `request_rejected`, `context_length`, `model_output`,
    /// `budget`, `harness` or `plugin` ([`ErrorClass`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<ErrorClass>,
    pub metrics: Metrics,
    pub diagnostics: Diagnostics,
    /// The transcript measures of a `transcript` cell (absent for scenarios).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<TranscriptMeasures>,
    /// A governed cell (`gov:X`, seed 004): its policy, context report, lineage and receipt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governed: Option<GovernedCell>,
}

/// Raw document bytes of a governed cell's policy by role: what `maxBytes` is compared with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GovernedBytes {
    pub instructions: u64,
    pub evidence: u64,
    pub summary: u64,
    pub total: u64,
}

/// What a governed cell records (seed 004): never document contents, only references.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GovernedCell {
    /// The wrapped strategy, whose handoff was the advisory summary.
    pub inner: String,
    pub max_bytes: u64,
    /// The context report's status at delivery: `NOT_CONFIGURED`, `READY` or `BLOCKED`.
    pub status: crate::governed::ContextStatus,
    /// Why it is `BLOCKED` (`missing`, `changed`, `unreadable`, `over_budget`,
    /// `old_session_epoch`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<crate::governed::BlockReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_digest: Option<String>,
    /// Raw bytes the policy's documents need (instructions, evidence, summary, total): what
    /// `maxBytes` was compared with.
    pub bytes: GovernedBytes,
    /// The session records (FRESH, COLD_RESUME, REPLACED), immutable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lineage: Vec<crate::governed::SessionRecord>,
    /// The envelope's digest (the receipt the adapter must return), when delivered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub envelope_digest: Option<String>,
    /// The adapter's receipt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<String>,
    /// `DELIVERED` when the receipt matches, `UNKNOWN` when it is missing or wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responsibility: Option<crate::governed::Responsibility>,
    /// The cell is held (responsibility `UNKNOWN`): its outcome cannot be accepted, so it is not
    /// a success, and it is never retried for free.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub held: bool,
}

/// Where a cell's history comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A scenario this project wrote, replayed in the simulated world.
    #[default]
    Scenario,
    /// An imported agent log (`transcripts import`), cut at one of its interrupt points.
    Transcript,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Scenario => "scenario",
            Source::Transcript => "transcript",
        }
    }
}

/// What a transcript cell measures (README, "Real transcripts"): computed from the handoff text
/// and the rest of the logged run, without a model — plus, for live destinations, whether the
/// destination's next tool call agrees with the run's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TranscriptMeasures {
    /// The rule that chose the cut (`first_write`, `later_write`, `final_assistant`).
    pub cut_rule: String,
    /// The cut lies before this message of the source log (its index there, system included).
    pub cut_before: usize,
    /// Tokens of the full prefix as a transcript (the no-compaction baseline).
    pub full_prefix_tokens: u64,
    /// Tokens of the system prompt, which travels unchanged beside every handoff.
    pub operator_tokens: u64,
    /// Fraction of the needed values the handoff carries verbatim; `None` when no value was needed.
    pub needed_value_retention: Option<f64>,
    /// How many values the rest of the run needed (listed in `diagnostics.needed_values`).
    pub values_needed: u32,
    /// Mean content-word overlap of the user's turns before the cut with the handoff; `None`
    /// without user turns.
    pub user_statement_retention: Option<f64>,
    /// Restore tokens ÷ full-prefix tokens.
    pub compression_ratio: f64,
    /// Live destinations: whether the next tool call matched the run's (name and normalised
    /// arguments); `None` offline or when the run makes no further call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_action_agrees: Option<bool>,
    /// The run's next call and the destination's, as `tool {arguments}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_action: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual_action: Option<String>,
}

/// The metrics of one cell (the record contract's `metrics`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub task_success: bool,
    pub omitted_context: u32,
    pub repeated_work: u32,
    pub duplicate_side_effects: u32,
    pub safety_violations: u32,
    pub recovery_quality: f64,
    pub restore_tokens: u64,
    pub total_tokens: u64,
    /// Wall time to the first useful action (a scenario tool call or approval request), ms.
    pub first_action_ms: f64,
    pub completion_ms: f64,
    /// Tokens a live summariser spent building the handoff (0 for offline strategies), charged
    /// apart from the destination's `total_tokens`.
    #[serde(default)]
    pub compaction_tokens: u64,
    /// Tokens of the full source history at the interrupt point (the unbounded transcript).
    #[serde(default)]
    pub history_tokens: u64,
    /// `restore_tokens` ÷ `history_tokens` (0 when the history is empty).
    #[serde(default)]
    pub compression_ratio: f64,
}

/// The scale of a record written before scales existed.
pub fn base_scale() -> String {
    "base".into()
}

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

/// Which side a failure is on (the `error_class` of an errored cell).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// The endpoint could not be reached or kept failing (timeouts, 429, 5xx, refused).
    Infrastructure,
    /// The endpoint answered with something that is not a usable completion.
    ModelOutput,
    /// The harness or its configuration is at fault (missing key variable, bad URL, a key the
    /// endpoint refuses).
    Harness,
    /// A plug-in compactor failed (exit status, time or output limit, invalid answer).
    Plugin,
    /// The endpoint rejected the request as malformed (HTTP 400/422, or a validation error under
    /// another status): not transient, never retried.
    RequestRejected,
    /// The endpoint rejected the request because it does not fit the model's context window.
    ContextLength,
    /// The cell hit a harness bound before it could finish: its wall-clock budget or its request
    /// cap (`cell_timeout_s`, `max_requests_per_cell`).
    Budget,
}

impl ErrorClass {
    /// Every class, in the order reports list them.
    pub const ALL: [ErrorClass; 7] = [
        ErrorClass::Infrastructure,
        ErrorClass::RequestRejected,
        ErrorClass::ContextLength,
        ErrorClass::ModelOutput,
        ErrorClass::Budget,
        ErrorClass::Harness,
        ErrorClass::Plugin,
    ];

    /// The name written in records (`infrastructure`, `request_rejected`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Infrastructure => "infrastructure",
            ErrorClass::ModelOutput => "model_output",
            ErrorClass::Harness => "harness",
            ErrorClass::Plugin => "plugin",
            ErrorClass::RequestRejected => "request_rejected",
            ErrorClass::ContextLength => "context_length",
            ErrorClass::Budget => "budget",
        }
    }
}

/// Why a cell could not be scored: the class and a message for the reader.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct CellError {
    pub class: ErrorClass,
    pub message: String,
}

/// Per-cell counters of live calls (recorded in diagnostics).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LiveStats {
    pub calls: u32,
    pub cache_hits: u32,
    pub retries: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_input_tokens: u64,
    /// Tokens counted with tiktoken because the provider reported no usage.
    pub estimated_tokens: u64,
    pub malformed_tool_calls: u32,
    pub unknown_tools: u32,
    pub text_only_turns: u32,
    /// The model name the endpoint reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_fingerprint: Option<String>,
    /// HTTP requests sent (first attempts and retries; cache hits send none).
    #[serde(default)]
    pub requests: u32,
    /// Summed latency of this run's HTTP calls, ms (the cell's wall time is
    /// `metrics.completion_ms`, which adds backoff, queueing and the harness's own work).
    pub latency_ms: f64,
    /// The latency the first run measured for the calls answered from the cache, ms.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_latency_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl LiveStats {
    /// Whether any call of the cell was answered from the response cache: its timings are not
    /// this run's, so latency medians leave it out.
    pub fn from_cache(&self) -> bool {
        self.cache_hits > 0
    }

    /// Adds another set of counters (a cell's destination and summariser, or a model's cells).
    pub fn add(&mut self, o: &LiveStats) {
        self.calls += o.calls;
        self.cache_hits += o.cache_hits;
        self.retries += o.retries;
        self.requests += o.requests;
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.cached_input_tokens += o.cached_input_tokens;
        self.estimated_tokens += o.estimated_tokens;
        self.malformed_tool_calls += o.malformed_tool_calls;
        self.unknown_tools += o.unknown_tools;
        self.text_only_turns += o.text_only_turns;
        self.latency_ms += o.latency_ms;
        self.cache_latency_ms += o.cache_latency_ms;
        if let Some(c) = o.cost_usd {
            self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + c);
        }
    }
}

/// A `results.jsonl` that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: line {line} is not a run record: {message}")]
    Corrupt {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error(
        "{path}: line {line} repeats the cell of line {first} ({id}): records of two runs were mixed"
    )]
    Duplicate {
        path: PathBuf,
        line: usize,
        first: usize,
        id: String,
    },
}

/// Reads `results.jsonl`. A torn last line (a killed run) is ignored; any other bad line is an
/// error naming the line, and so is a second record of the same cell. Every secret of the run
/// ([`crate::secrets`]) is redacted from what is read.
pub fn read_records(path: &Path) -> Result<Vec<RunRecord>, RecordError> {
    let bytes = std::fs::read(path).map_err(|source| RecordError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let raw: Vec<&[u8]> = bytes
        .strip_suffix(b"\n")
        .unwrap_or(&bytes)
        .split(|&b| b == b'\n')
        .collect();
    let mut lines: Vec<&str> = Vec::with_capacity(raw.len());
    let mut offset = 0usize;
    for (i, l) in raw.iter().enumerate() {
        match std::str::from_utf8(l) {
            Ok(t) => lines.push(t),
            // A torn last line may end inside a character.
            Err(_) if i + 1 == raw.len() => lines.push(""),
            Err(e) => {
                return Err(RecordError::Corrupt {
                    path: path.to_path_buf(),
                    line: i + 1,
                    message: format!(
                        "not UTF-8 text: invalid byte sequence at byte offset {}",
                        offset + e.valid_up_to()
                    ),
                });
            }
        }
        offset += l.len() + 1;
    }
    let mut out = Vec::with_capacity(lines.len());
    let mut seen: std::collections::HashMap<CellId, usize> = std::collections::HashMap::new();
    let secrets = crate::secrets::any();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<RunRecord>(line) {
            Ok(mut r) => {
                if let Some(first) = seen.insert(r.id(), i + 1) {
                    return Err(RecordError::Duplicate {
                        path: path.to_path_buf(),
                        line: i + 1,
                        first,
                        id: r.id().to_string(),
                    });
                }
                if secrets && crate::secrets::contains(line) {
                    crate::secrets::redact_serde(&mut r);
                }
                out.push(r)
            }
            Err(_) if i + 1 == lines.len() => {}
            Err(e) => {
                return Err(RecordError::Corrupt {
                    path: path.to_path_buf(),
                    line: i + 1,
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(out)
}

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
