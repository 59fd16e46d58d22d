//! The runner's typed progress events and the [`Reporter`] trait that consumes them.
//!
//! Owns: what a run tells the outside while it goes. Must not: print, or hold any state of the
//! run (reporters do the presenting: the CLI's progress bar, a test's collector).

use super::RunRecord;
use crate::destination::live::RetryNotice;

/// Where a run stands, carried by every event after `Planned`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Cells this call runs.
    pub total: usize,
    /// Cells finished (whatever their place in cell order).
    pub finished: usize,
    /// Cells started and not finished.
    pub in_flight: usize,
    /// Requests waiting out a retry backoff right now.
    pub retrying: u64,
    /// Retries so far.
    pub retries: u64,
    /// Finished cells that errored.
    pub errored: usize,
}

/// Progress of a run, for reporters (the progress bar, the journal's tests, a log).
#[derive(Debug)]
pub enum RunEvent<'a> {
    /// The cells this call runs, and those `--resume` found done.
    Planned { total: usize, skipped: usize },
    /// `--resume` found a torn last line in `results.jsonl` or the journal (an interrupted
    /// write) and removed it.
    TornTail { bytes: usize },
    /// A cell (by its index in the plan) started.
    CellStarted { index: usize, counts: Counts },
    /// A cell finished; its record is already in `journal.jsonl`.
    CellFinished {
        index: usize,
        record: &'a RunRecord,
        counts: Counts,
    },
    /// A live request failed and waits before its retry.
    Retrying {
        notice: &'a RetryNotice,
        counts: Counts,
    },
    /// Every cell finished; `results.jsonl` holds them in cell order.
    RunFinished { written: usize, counts: Counts },
}

/// Consumes run events (a progress bar, a log, a test's collector).
pub trait Reporter {
    fn event(&mut self, e: RunEvent<'_>);
}

/// A reporter that ignores everything.
pub struct Silent;
impl Reporter for Silent {
    fn event(&mut self, _: RunEvent<'_>) {}
}
