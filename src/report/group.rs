//! The aggregates of one group of cells ([`Group`]: one strategy × model, or one strategy ×
//! model × interrupt point) and what its live cells spent ([`LiveTotals`]).
//!
//! Owns: those types and how a group is aggregated from its records. Must not: choose the groups
//! (the summary does), rank them, or format a number for a reader.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::record::{RunRecord, Status};
use crate::results::outcome::{UnsafeCause, safe_success, unsafe_cause};
use crate::stats::{Rate, Spread};

/// Aggregates of one group of cells.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    pub strategy: String,
    pub model: String,
    /// `None` for the strategy × model aggregate over all interrupt points.
    pub interrupt: Option<String>,
    pub n: usize,
    pub errored: usize,
    /// Task success with no duplicate side effect and no safety violation.
    pub safe_success: Rate,
    pub task_success: Rate,
    /// Unsafe cells by cause ([`crate::results::outcome::unsafe_cause`]).
    pub handoff_unsafe_cells: usize,
    pub distraction_cells: usize,
    pub omitted_context: Option<Spread>,
    pub repeated_work: Option<Spread>,
    pub duplicate_side_effects: Option<Spread>,
    /// Cells with any duplicate side effect.
    pub cells_with_duplicates: usize,
    pub safety_violations: Option<Spread>,
    pub cells_with_violations: usize,
    pub recovery_quality: Option<Spread>,
    pub restore_tokens: Option<Spread>,
    pub total_tokens: Option<Spread>,
    /// Wall time of the ok cells that made all their calls this run (cells answered from the
    /// response cache are left out: their time is not a measurement).
    pub completion_ms: Option<Spread>,
    /// What the handoffs carry (`metrics.carried`, `crate::carried`): the share of the needed
    /// items they carry, the share of what they carry that is needed, and the inert identifiers
    /// they carry; over the ok cells that have them.
    pub retention: Option<Spread>,
    pub forgetting_precision: Option<Spread>,
    pub inert_carried: Option<Spread>,
    /// Ok cells whose handoff restored more tokens than the whole history it replaces.
    pub longer_than_transcript: usize,
    /// Ok cells whose strategy's trigger (`trigger_tokens`) left the history uncompacted.
    pub not_compacted: usize,
    /// Probe questions (`metrics.probes`) per dimension over the ok cells: (asked, correct).
    pub probes: BTreeMap<String, (u64, u64)>,
    /// Live destinations: the group's calls, retries, tokens and cost, errored cells included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveTotals>,
}

/// What the live cells of a group (or a model) spent, errored cells included.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LiveTotals {
    /// Cells with live diagnostics.
    pub cells: usize,
    pub errored: usize,
    /// Errored cells by class (`infrastructure`, `request_rejected`, …), classes with none left out.
    pub errored_by_class: BTreeMap<String, usize>,
    /// Cells with a call answered from the response cache.
    pub cached_cells: usize,
    pub stats: crate::record::LiveStats,
}

impl LiveTotals {
    /// The live totals of `records` (`None` when none is a live cell).
    pub fn of<'a>(records: impl IntoIterator<Item = &'a RunRecord>) -> Option<LiveTotals> {
        let mut t = LiveTotals::default();
        for r in records {
            let Some(l) = &r.diagnostics.live else {
                continue;
            };
            t.cells += 1;
            if r.status == Status::Errored {
                t.errored += 1;
                if let Some(c) = r.error_class {
                    *t.errored_by_class
                        .entry(c.as_str().to_string())
                        .or_default() += 1;
                }
            }
            if l.from_cache() {
                t.cached_cells += 1;
            }
            t.stats.add(l);
        }
        (t.cells > 0).then_some(t)
    }

    /// `class: n; class: n`, or empty.
    pub fn classes(&self) -> String {
        self.errored_by_class
            .iter()
            .map(|(c, n)| format!("{c}: {n}"))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// The aggregates of `records`, one group of cells.
pub(super) fn group(
    records: &[&RunRecord],
    strategy: &str,
    model: &str,
    interrupt: Option<&str>,
) -> Group {
    let ok: Vec<&&RunRecord> = records.iter().filter(|r| r.status == Status::Ok).collect();
    let col =
        |f: &dyn Fn(&RunRecord) -> f64| Spread::of(&ok.iter().map(|r| f(r)).collect::<Vec<_>>());
    Group {
        strategy: strategy.to_string(),
        model: model.to_string(),
        interrupt: interrupt.map(str::to_string),
        n: ok.len(),
        errored: records.len() - ok.len(),
        safe_success: Rate::of(ok.iter().filter(|r| safe_success(r)).count(), ok.len()),
        task_success: Rate::of(
            ok.iter().filter(|r| r.metrics.task_success).count(),
            ok.len(),
        ),
        handoff_unsafe_cells: ok
            .iter()
            .filter(|r| unsafe_cause(r) == Some(UnsafeCause::Handoff))
            .count(),
        distraction_cells: ok
            .iter()
            .filter(|r| unsafe_cause(r) == Some(UnsafeCause::Distraction))
            .count(),
        omitted_context: col(&|r| r.metrics.omitted_context as f64),
        repeated_work: col(&|r| r.metrics.repeated_work as f64),
        duplicate_side_effects: col(&|r| r.metrics.duplicate_side_effects as f64),
        cells_with_duplicates: ok
            .iter()
            .filter(|r| r.metrics.duplicate_side_effects > 0)
            .count(),
        safety_violations: col(&|r| r.metrics.safety_violations as f64),
        cells_with_violations: ok
            .iter()
            .filter(|r| r.metrics.safety_violations > 0)
            .count(),
        recovery_quality: col(&|r| r.metrics.recovery_quality),
        restore_tokens: col(&|r| r.metrics.restore_tokens as f64),
        total_tokens: col(&|r| r.metrics.total_tokens as f64),
        completion_ms: Spread::of(
            &ok.iter()
                .filter(|r| !r.diagnostics.live.as_ref().is_some_and(|l| l.from_cache()))
                .map(|r| r.metrics.completion_ms)
                .collect::<Vec<_>>(),
        ),
        retention: carried(&ok, |c| c.retention),
        forgetting_precision: carried(&ok, |c| c.forgetting_precision),
        inert_carried: carried(&ok, |c| Some(f64::from(c.inert_carried))),
        longer_than_transcript: ok
            .iter()
            .filter(|r| {
                r.metrics.history_tokens > 0 && r.metrics.restore_tokens > r.metrics.history_tokens
            })
            .count(),
        not_compacted: ok
            .iter()
            .filter(|r| r.metrics.compacted == Some(false))
            .count(),
        probes: {
            let mut m: BTreeMap<String, (u64, u64)> = BTreeMap::new();
            for r in &ok {
                for (d, p) in r.metrics.probes.iter() {
                    let e = m.entry(d.to_string()).or_default();
                    e.0 += u64::from(p.asked);
                    e.1 += u64::from(p.correct);
                }
            }
            m
        },
        live: LiveTotals::of(records.iter().copied()),
    }
}

/// The spread of one figure of `metrics.carried` over the cells that have it.
fn carried(
    ok: &[&&RunRecord],
    f: impl Fn(&crate::record::Carried) -> Option<f64>,
) -> Option<Spread> {
    Spread::of(
        &ok.iter()
            .filter_map(|r| r.metrics.carried.as_ref().and_then(&f))
            .collect::<Vec<_>>(),
    )
}
