//! The run record: one line of `results.jsonl` per cell — the cell's identity, its status, the
//! eight metrics and the diagnostics that explain them. This is a public contract (README,
//! docs/record-contract.md).
//!
//! Owns: [`RunRecord`] and its core types ([`CellId`], [`Status`], [`Source`], [`Metrics`],
//! [`TranscriptMeasures`], [`GovernedCell`]); the diagnostics are in [`diagnostics`], the live
//! counters in [`live`], the error types in [`error`], reading `results.jsonl` (every record
//! version, [`RECORD_VERSION`]) in [`read`].
//!
//! A leaf data module: every later stage (score, runner, report, gate) reads and writes records
//! through it. Must not: import anything of the pipeline (only the leaves `vocab`, `governed` and
//! `secrets`), or compute a metric.

pub mod diagnostics;
pub mod error;
pub mod live;
pub mod read;
pub mod tau;

use std::fmt;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use diagnostics::{
    Diagnostics, Duplicate, Intent, Omission, OmissionEvidence, Overflow, RepeatedRead, RuleBreak,
    Violation,
};
pub use error::{CellError, ErrorClass, RecordError};
pub use live::LiveStats;
pub use read::{
    ParseDiagnosticError, parse_record, read_records, read_records_with, scan_records,
    scan_records_at,
};
pub use tau::TauMeasures;

/// The record format this build writes: every record's first field, `record_version`.
///
/// - 1 (no `record_version` field): each entry of `diagnostics.omitted`, `repeated`,
///   `duplicates`, `violations` and `checkpoint_rule_violations` is one string in a text grammar
///   (`#12 get_ticket (as event-0004)`); [`read`] still reads it (the legacy reader).
/// - 2: those entries are JSON objects ([`diagnostics`]); nothing else changed.
pub const RECORD_VERSION: u64 = 2;

/// The identity of a cell: what `--resume`, shards, `merge` and the duplicate check compare.
/// Every place that needs "which cell is this" builds one of these, so a new dimension of the
/// matrix is added here once.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CellId {
    pub scenario: String,
    /// The history scale (`base`, `40k`, …).
    pub scale: String,
    pub interrupt: String,
    pub strategy: String,
    pub model: String,
    pub rep: u32,
}

impl From<&CellId> for CellId {
    /// A copy: callers that hold a borrowed identity (`conversation::Cell::from(&r.id())`).
    fn from(c: &CellId) -> CellId {
        c.clone()
    }
}

/// A digest of a cell's identity from its parts, the same for a [`CellId`] and for the record
/// of that cell ([`RunRecord::digest`]): a pass over many records compares cells by it without
/// holding their ids.
fn id_digest(parts: IdParts<'_>) -> u64 {
    use std::hash::{Hash, Hasher};
    // SipHash with fixed keys: the same digest in every process.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    parts.hash(&mut h);
    h.finish()
}

/// A cell's identity borrowed in place: scenario, scale, interrupt point, strategy, model, and
/// the repetition.
type IdParts<'a> = ([&'a str; 5], u32);

impl CellId {
    fn parts(&self) -> IdParts<'_> {
        (
            [
                &self.scenario,
                &self.scale,
                &self.interrupt,
                &self.strategy,
                &self.model,
            ],
            self.rep,
        )
    }

    /// See [`id_digest`].
    pub fn digest(&self) -> u64 {
        id_digest(self.parts())
    }

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

    /// [`RunRecord::id`]'s parts, borrowed in place (no id is built).
    fn id_parts(&self) -> IdParts<'_> {
        (
            [
                &self.scenario,
                &self.scale,
                &self.interrupt,
                &self.strategy,
                &self.model,
            ],
            self.rep,
        )
    }

    /// The digest of [`RunRecord::id`], read in place.
    pub fn digest(&self) -> u64 {
        id_digest(self.id_parts())
    }

    /// Whether this record is of the cell `id` (without building its id).
    pub fn same_id(&self, id: &CellId) -> bool {
        self.id_parts() == id.parts()
    }

    /// Whether two records are of one cell (what comparing their [`RunRecord::id`]s says).
    pub fn same_cell(&self, other: &RunRecord) -> bool {
        self.id_parts() == other.id_parts()
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
///
/// Its serde form is one line of `results.jsonl`: `Serialize` writes `record_version`
/// ([`RECORD_VERSION`]) first, then the fields below; `Deserialize` reads every version
/// ([`read`]). The derive below (`remote = "Self"`) only generates the version-less body as the
/// inherent functions `RunRecord::serialize` / `RunRecord::deserialize`, which those two impls
/// call; go through the traits (`serde_json::to_string`, `from_str`), never the inherent ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
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
    /// Shared, not owned: a reader that holds many records (the report) gives equal diagnostics
    /// one copy (a `--reps 10` run of 61,920 cells has 3,565 distinct ones as the report holds
    /// them). Written as the object it points to; a writer changes it with `Arc::make_mut`.
    pub diagnostics: std::sync::Arc<Diagnostics>,
    /// The transcript measures of a `transcript` cell (absent for scenarios).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<Box<TranscriptMeasures>>,
    /// A governed cell (`gov:X`, seed 004): its policy, context report, lineage and receipt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governed: Option<Box<GovernedCell>>,
    /// The file of the run folder that holds this cell's conversation
    /// (`conversations.jsonl.gz`; the entry is the last one of this cell there). Absent in records
    /// written before conversations were saved, and for transcript cells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<String>,
}

impl Serialize for RunRecord {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// The record's fields after its version, in one JSON object.
        #[derive(Serialize)]
        struct Line<'a> {
            record_version: u64,
            #[serde(flatten)]
            body: Body<'a>,
        }
        struct Body<'a>(&'a RunRecord);
        impl Serialize for Body<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                RunRecord::serialize(self.0, s)
            }
        }
        Line {
            record_version: RECORD_VERSION,
            body: Body(self),
        }
        .serialize(s)
    }
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
    /// A recorded τ-bench airline run, cut and continued on the native environment.
    Tau,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Scenario => "scenario",
            Source::Transcript => "transcript",
            Source::Tau => "tau",
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
    /// τ-bench cells (`source: tau`): the continuation's reward and rediscovery cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tau: Option<TauMeasures>,
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
    /// What the handoff carries of what the continuation needs and of the run's inert volume
    /// (`crate::carried`): retention and forgetting precision. Scenario cells with a handoff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried: Option<Carried>,
    /// Whether a strategy with a trigger (`trigger_tokens`) compacted: `false` when the history
    /// was below it and the handoff is the transcript. Absent for strategies without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compacted: Option<bool>,
    /// Probe questions about the run (`crate::destination::probe`), per dimension (`recall`,
    /// `artifact_trail`, `constraints`, `provenance`, `next_step`): asked and answered correctly.
    /// Scenario cells whose destination answered them.
    #[serde(default, skip_serializing_if = "Probes::is_empty")]
    pub probes: Probes,
    /// A chained cell (`--cycles`): the compactions asked for and made, and each handoff of the
    /// chain. Absent for a single compaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain: Option<Chain>,
}

/// What a chained cell records of its chain (`crate::strategy::chain`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chain {
    /// Compactions asked for (`--cycles`).
    pub cycles: u32,
    /// Compactions that happened: fewer at a scenario's early interrupt points, or while a
    /// strategy's trigger was not reached.
    pub compactions: u32,
    /// Each handoff of the chain, in order (the last is the one the destination continued).
    pub steps: Vec<ChainStep>,
}

/// One handoff of a chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChainStep {
    /// The interrupt point it was built at.
    pub interrupt: String,
    /// Its tokens, as its destination would receive it.
    pub restore_tokens: u64,
    /// `false` when a strategy below its trigger handed the transcript over.
    pub compacted: bool,
    /// The continuity eval (seed 000: same-or-stricter decision, constraints and obligations
    /// kept) on this handoff at its own point; absent where the source has none (a τ-bench cut).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continuity_passed: Option<bool>,
}

/// A cell's probe counts by dimension (`metrics.probes`). In the record, a map from each
/// dimension asked to its [`ProbeScore`], keys in alphabetical order; in memory, one count per
/// dimension of [`PROBE_DIMENSIONS`] (40 bytes, where a map of names took about 500 on the heap
/// of every record a report holds: 30 MiB over 61,920 records).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Probes([ProbeScore; 5]);

/// The probe dimensions a record holds, in its (alphabetical) order; `crate::destination::probe`
/// asks them.
pub const PROBE_DIMENSIONS: [&str; 5] = [
    "artifact_trail",
    "constraints",
    "next_step",
    "provenance",
    "recall",
];

impl Probes {
    /// No dimension was asked.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|p| p.asked == 0)
    }

    /// The dimensions asked, with their counts, in [`PROBE_DIMENSIONS`] order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, ProbeScore)> + '_ {
        PROBE_DIMENSIONS
            .iter()
            .zip(self.0.iter())
            .filter(|(_, p)| p.asked > 0)
            .map(|(d, p)| (*d, *p))
    }

    /// The count of `dimension` if it was asked.
    pub fn get(&self, dimension: &str) -> Option<ProbeScore> {
        self.iter().find(|(d, _)| *d == dimension).map(|(_, p)| p)
    }

    /// The count of `dimension` (`None` for a name not in [`PROBE_DIMENSIONS`]).
    pub fn get_mut(&mut self, dimension: &str) -> Option<&mut ProbeScore> {
        let i = PROBE_DIMENSIONS.iter().position(|d| *d == dimension)?;
        Some(&mut self.0[i])
    }
}

impl Serialize for Probes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.iter().count()))?;
        for (d, p) in self.iter() {
            m.serialize_entry(d, &p)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Probes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = BTreeMap::<String, ProbeScore>::deserialize(d)?;
        let mut out = Probes::default();
        for (k, v) in map {
            let Some(slot) = out.get_mut(&k) else {
                return Err(serde::de::Error::custom(format!(
                    "metrics.probes: unknown dimension {k:?} (one of {})",
                    PROBE_DIMENSIONS.join(", ")
                )));
            };
            *slot = v;
        }
        Ok(out)
    }
}

/// One probe dimension's count in a cell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeScore {
    pub asked: u32,
    pub correct: u32,
}

/// What a handoff carries, counted in items: the needed ones (the interrupt point's critical
/// facts, injected directives aside, and the values its reference continuation's calls copy) and
/// the inert ones (identifiers only the distraction volume showed).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Carried {
    pub needed: u32,
    pub needed_carried: u32,
    pub inert: u32,
    pub inert_carried: u32,
    /// `needed_carried ÷ needed` (`None`: nothing is needed).
    pub retention: Option<f64>,
    /// `needed_carried ÷ (needed_carried + inert_carried)`: the share of what it carries that
    /// the continuation needs (`None`: it carries none of either).
    pub forgetting_precision: Option<f64>,
}

impl Carried {
    /// The counts, with their two ratios.
    pub fn of(needed: u32, needed_carried: u32, inert: u32, inert_carried: u32) -> Carried {
        let ratio = |a: u32, b: u32| (b > 0).then(|| f64::from(a) / f64::from(b));
        Carried {
            needed,
            needed_carried,
            inert,
            inert_carried,
            retention: ratio(needed_carried, needed),
            forgetting_precision: ratio(needed_carried, needed_carried + inert_carried),
        }
    }
}

/// The scale of a record written before scales existed.
pub fn base_scale() -> String {
    "base".into()
}
