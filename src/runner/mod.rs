//! The runner: the matrix of cells, seeds, shared work, concurrency, and the record stream.
//!
//! A cell is (scenario, interrupt point, strategy, destination model, repetition). Interrupted
//! states and handoffs are built once and shared by every cell that starts from them. Before
//! them, every live model gets one cheap probe, so a missing key or an unreachable server stops
//! the run before its first cell. Cells run on tokio workers. A finished cell is appended to
//! `journal.jsonl` at once, whatever its place, so an interrupted run loses no finished cell;
//! `results.jsonl` gets the records in cell order (as a prefix while the run goes, rewritten
//! whole at its end and on `--resume` from the journal), so the file is the same whatever the
//! concurrency. The runner emits typed [`RunEvent`]s to a [`Reporter`] and never prints.
//!
//! The parts, in the order a run uses them: [`config`] (what to run), [`plan`] (the named stages
//! that build a [`Plan`]: scenarios at their scales, clients and strategies, the [`Matrix`] and
//! each interrupt point's work), [`build`] (a point's restore point, handoffs and continuity
//! rows), [`prepare`] (one handoff, restored and checked), [`stream`] (points built while cells
//! run, a few ahead, and dropped after their last cell, so a run's memory does not grow with
//! its cells), [`execute`] (workers, the journal, cell order), [`cell`] (one cell), [`journal`]
//! (reading and writing record files), [`folder`] (the manifest and the other files of a run
//! folder), [`events`] and [`error`].

mod build;
mod cell;
mod clients;
mod config;
mod error;
mod events;
mod execute;
mod folder;
mod journal;
mod lock;
pub mod manifest;
mod matrix;
pub mod merge;
mod plan;
mod prepare;
mod resume;
mod signals;
mod stream;

pub use crate::record::{CellId, RecordError, RunRecord, Status};
pub use build::Builder;
pub use cell::run_cell;
pub use clients::{live_model, load_secrets, preflight};
pub use config::{RunConfig, Shard, ShardError};
pub use error::RunError;
pub use events::{Counts, Reporter, RunEvent, Silent};
pub use execute::{execute, forget_memos};
pub use folder::{manifest_value, write_manifest};
pub(crate) use journal::Journal;
pub use journal::{JOURNAL, check_complete, read_records, repair_tail};
pub use lock::{FolderLock, LOCK_FILE, in_progress, lock, refuse_in_progress};
pub use matrix::{
    CellSpec, HandoffKey, Matrix, PointKey, cell_seed, identity, record_identity, seed_scenario,
};
pub use plan::{
    Plan, ReceiptFault, check_inputs, plan, plan_streaming, plan_with, plugin_hidden,
    select_scenarios,
};
pub use prepare::{FAIL_FAST_AFTER, Prepared};
pub use signals::stop_on_signals;
