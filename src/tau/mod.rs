//! The τ-bench airline environment, native: the database, the 14 tools with the reference
//! implementation's observations and error texts, τ-bench's reward, and the replay of recorded
//! runs.
//!
//! Owns: the façade (what other modules use) and [`data_source`] / [`data_dir`], where the data
//! folder is (a folder, or the copy shipped inside the binary).
//! Must not: call a model or simulate the customer — a runner drives an [`Episode`]. Files:
//! `db.rs` the database, `task.rs` tasks and policy, `tools.rs` and `booking.rs` the tools,
//! `calc.rs` the `calculate` tool's arithmetic, `py.rs` and `pyfmt.rs` Python's semantics and
//! printing, `reward.rs` the reward, `env.rs` episodes, `replay.rs` recorded runs,
//! `error.rs` [`TauError`].

mod booking;
mod calc;
mod db;
mod env;
mod error;
mod py;
pub mod pyfmt;
mod replay;
mod reward;
mod task;
mod tools;

use std::path::PathBuf;

use crate::shipped::{Set, Source};

pub use db::Db;
pub use env::{Env, Episode, Observation};
pub use error::TauError;
pub use replay::{
    Call, ReplayedCall, ReplayedRun, Run, load_runs, replay_all, replay_run, write_jsonl,
};
pub use reward::{GroundTruth, Reward, ground_truth_db, ground_truth_hash, judge, output_said};
pub use task::{Action, Task, load_policy, load_tasks};
pub use tools::{TOOL_NAMES, ends_episode, invoke};

/// The environment variable naming the data folder.
pub const DATA_ENV: &str = "COMPACTION_EVAL_TAU_BENCH";

/// The recorded runs shipped in the data folder (GPT-4o, tasks 0–29, 4 trials each).
pub const RUNS_FILE: &str = "gpt-4o-airline.tasks-00-29.json";

/// Where the data comes from: the folder in `$COMPACTION_EVAL_TAU_BENCH` when set, else
/// `data/tau-bench-airline` in the working directory when it is there (the repository's root),
/// else the copy shipped inside the binary.
pub fn data_source() -> Source {
    let env = std::env::var_os(DATA_ENV)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from);
    Source::resolve(env, LOCAL_DIR)
}

/// The data folder in the repository (and in the working directory that wins over the shipped
/// copy).
pub const LOCAL_DIR: &str = "data/tau-bench-airline";

/// The data folder (holding `env/` and the runs file) of a source: the folder, or the shipped
/// data's private copy on disk (written once per binary: [`crate::shipped::materialise`]).
pub fn data_dir_of(source: &Source) -> Result<PathBuf, TauError> {
    match source {
        Source::Folder(p) => Ok(p.clone()),
        Source::Embedded => Ok(crate::shipped::materialise(Set::TauAirline)?),
    }
}

/// The data folder of [`data_source`].
pub fn data_dir() -> Result<PathBuf, TauError> {
    data_dir_of(&data_source())
}
