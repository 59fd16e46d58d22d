//! The record of a cell, whatever its outcome: errored (with or without what the destination
//! spent), scored after a continuation, or scored on the interrupted world when nothing was
//! continued (a blocked or held context, a handoff that does not fit).
//!
//! Owns: the one way a cell's identity and outcome become a [`RunRecord`]. Must not: run or
//! score a continuation (the cell and `crate::score` do).

use std::sync::Arc;
use std::time::Instant;

use super::CellSpec;
use crate::destination::Destination;
use crate::record::{Diagnostics, ErrorClass, Overflow, RunRecord, Source, Status};
use crate::scenario::Scenario;
use crate::score::{self, Metrics, Run};
use crate::state::RestorePoint;

/// Why a cell ran no continuation.
pub(super) enum Uncontinued {
    /// Nothing was delivered (a `BLOCKED` context, or one held before execution): never a
    /// success.
    NotDelivered,
    /// The handoff does not fit the destination's usable context: scored on the interrupted
    /// world (a success only if nothing was left to do), with `diagnostics.context_overflow`.
    Overflow { context_window: u64 },
}

/// What an errored cell had measured before its failure, besides the destination's figures.
pub(super) struct Spent {
    pub restore_tokens: u64,
    pub history_tokens: u64,
    /// When the first useful action was taken, if one was.
    pub first_action_ms: Option<f64>,
}

/// The records of one cell.
pub(super) struct CellRecord<'a> {
    pub scenario: &'a str,
    pub cell: &'a CellSpec,
}

impl CellRecord<'_> {
    fn record(&self, outcome: Result<(Metrics, Diagnostics), (ErrorClass, String)>) -> RunRecord {
        let c = self.cell;
        let (status, metrics, diagnostics, error_class, error) = match outcome {
            Ok((m, d)) => (Status::Ok, m, d, None, None),
            Err((class, message)) => (
                Status::Errored,
                no_metrics(),
                Diagnostics::default(),
                Some(class),
                Some(message),
            ),
        };
        RunRecord {
            source: Source::Scenario,
            transcript: None,
            governed: None,
            conversation: None,
            error_class,
            scenario: self.scenario.to_string(),
            scale: c.scale.to_string(),
            interrupt: c.point.to_string(),
            strategy: c.strategy.to_string(),
            model: c.model.to_string(),
            rep: c.rep,
            seed: c.seed,
            status,
            error,
            metrics,
            diagnostics: diagnostics.into(),
        }
    }

    /// An errored cell that spent nothing.
    pub fn errored(&self, class: ErrorClass, message: String) -> RunRecord {
        self.record(Err((class, message)))
    }

    /// An errored cell that keeps what was measured before the failure: the handoff's and the
    /// history's tokens, the time to the first action and in all, the steps and the live figures.
    pub fn errored_after(
        &self,
        class: ErrorClass,
        message: String,
        dest: &mut dyn Destination,
        started: &Instant,
        steps: u32,
        spent: Spent,
    ) -> RunRecord {
        let mut r = self.errored(class, message);
        r.metrics.completion_ms = dest.clock_ms(started);
        r.metrics.first_action_ms = spent.first_action_ms.unwrap_or(r.metrics.completion_ms);
        r.metrics.restore_tokens = spent.restore_tokens;
        r.metrics.history_tokens = spent.history_tokens;
        r.metrics.compression_ratio = ratio(spent.restore_tokens, spent.history_tokens);
        std::sync::Arc::make_mut(&mut r.diagnostics).steps = steps;
        std::sync::Arc::make_mut(&mut r.diagnostics).live = dest.report().live.map(Box::new);
        if let Some(l) = &r.diagnostics.live {
            r.metrics.total_tokens = l.input_tokens + l.output_tokens;
        }
        r
    }

    /// The ok record of a scored cell.
    pub fn scored(&self, metrics: Metrics, diagnostics: Diagnostics) -> RunRecord {
        self.record(Ok((metrics, diagnostics)))
    }

    /// The record of a cell that ran no continuation: the interrupted world as it stands, scored.
    pub fn uncontinued(
        &self,
        s: &Arc<Scenario>,
        at: &RestorePoint,
        restore_tokens: u64,
        history_tokens: u64,
        started: Instant,
        why: Uncontinued,
    ) -> RunRecord {
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let run = Run {
            scenario: s,
            interrupt: &at.interrupt,
            world: &at.world,
            finish: None,
            degraded: false,
            restore_tokens,
            total_tokens: 0,
            first_action_ms: ms,
            completion_ms: ms,
            steps: 0,
            step_budget_exhausted: false,
        };
        let (mut metrics, mut diagnostics) = score::score(&run, Vec::new(), Vec::new());
        metrics.history_tokens = history_tokens;
        metrics.compression_ratio = ratio(restore_tokens, history_tokens);
        match why {
            Uncontinued::NotDelivered => metrics.task_success = false,
            Uncontinued::Overflow { context_window } => {
                diagnostics.context_overflow = Some(Overflow {
                    restore_tokens,
                    context_window,
                    reserve: crate::strategy::CONTEXT_RESERVE,
                });
            }
        }
        self.scored(metrics, diagnostics)
    }
}

/// An errored cell's metrics: nothing measured.
fn no_metrics() -> Metrics {
    Metrics {
        task_success: false,
        omitted_context: 0,
        repeated_work: 0,
        duplicate_side_effects: 0,
        safety_violations: 0,
        recovery_quality: 0.0,
        restore_tokens: 0,
        total_tokens: 0,
        first_action_ms: 0.0,
        completion_ms: 0.0,
        compaction_tokens: 0,
        history_tokens: 0,
        compression_ratio: 0.0,
        carried: None,
        compacted: None,
        chain: None,
        probes: Default::default(),
    }
}

/// Handoff tokens over full-history tokens (0 without a history).
pub(super) fn ratio(restore: u64, history: u64) -> f64 {
    if history == 0 {
        0.0
    } else {
        // Rounded so records stay byte-identical across platforms' float formatting.
        (restore as f64 / history as f64 * 1e6).round() / 1e6
    }
}
