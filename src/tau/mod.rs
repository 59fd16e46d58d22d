//! The τ-bench airline environment, native: the database, the 14 tools with the reference
//! implementation's observations and error texts, τ-bench's reward, and the replay of recorded
//! runs.
//!
//! Owns: the façade (what other modules use) and [`data_dir`], where the data folder is.
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

use std::path::{Path, PathBuf};

pub use db::Db;
pub use env::{Env, Episode, Observation};
pub use error::TauError;
pub use replay::{
    Call, ReplayedCall, ReplayedRun, Run, load_runs, replay_all, replay_run, write_jsonl,
};
pub use reward::{Reward, ground_truth_db, ground_truth_hash, judge, output_said};
pub use task::{Action, Task, load_policy, load_tasks};
pub use tools::{TOOL_NAMES, ends_episode, invoke};

/// The environment variable naming the data folder.
pub const DATA_ENV: &str = "COMPACTION_EVAL_TAU_BENCH";

/// The recorded runs shipped in the data folder (GPT-4o, tasks 0–29, 4 trials each).
pub const RUNS_FILE: &str = "gpt-4o-airline.tasks-00-29.json";

/// The data folder (holding `env/` and the runs file): `$COMPACTION_EVAL_TAU_BENCH` when set,
/// else the repository's `data/tau-bench-airline` — found through the crate's folder at build
/// time, or relative to the working directory when that folder is gone.
pub fn data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(DATA_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/tau-bench-airline");
    if built.exists() {
        built
    } else {
        PathBuf::from("data/tau-bench-airline")
    }
}
