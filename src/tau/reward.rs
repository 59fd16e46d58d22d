//! τ-bench's reward for one episode: `r_actions` — the final database equals the database the
//! task's ground-truth actions produce on a fresh one (compared by τ-bench's data hash, so key
//! order does not count and `1` is not `1.0`) — and, when the task lists outputs, `r_outputs`
//! — each output appears in some message of the agent to the customer (lower-cased, with the
//! message's commas removed). The reward is 1 when both hold.
//!
//! Owns: [`Reward`], [`ground_truth_hash`], [`output_said`], [`judge`]. Must not: run the
//! agent's calls (the episode does) or read files.

use serde::Serialize;
use serde_json::Value;

use super::db::Db;
use super::task::{Action, Task};
use super::tools;

/// The reward of an episode and what it was made of.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reward {
    /// 1.0 when `r_actions` holds and every output was said, else 0.0.
    pub reward: f64,
    /// The final database equals the ground-truth database.
    pub r_actions: bool,
    /// Every required output was said; `None` when the task requires none.
    pub r_outputs: Option<bool>,
    /// Each required output and whether it was said, in the task's order.
    pub outputs: Vec<(String, bool)>,
    /// The final database's hash.
    pub data_hash: String,
    /// The ground-truth database's hash.
    pub gt_data_hash: String,
}

/// Applies `actions` to a copy of `fresh` as the reference does (every action but the ones that
/// end an episode, and but `respond`, which is a message rather than a tool) and returns the
/// database.
pub fn ground_truth_db(fresh: &Db, actions: &[Action]) -> Db {
    let mut db = fresh.clone();
    for action in actions {
        if tools::ends_episode(&action.name) || action.name == "respond" {
            continue;
        }
        tools::invoke(&mut db, &action.name, &Value::Object(action.kwargs.clone()));
    }
    db
}

/// The hash of [`ground_truth_db`].
pub fn ground_truth_hash(fresh: &Db, actions: &[Action]) -> String {
    ground_truth_db(fresh, actions).hash()
}

/// Whether `output` is in one of the agent's `messages`: `output.lower()` is a substring of
/// `message.lower()` with commas removed (the output's own commas are kept, as in the
/// reference).
pub fn output_said<S: AsRef<str>>(output: &str, messages: &[S]) -> bool {
    let wanted = output.to_lowercase();
    messages
        .iter()
        .any(|m| m.as_ref().to_lowercase().replace(',', "").contains(&wanted))
}

/// The reward of an episode whose final database hashes to `data_hash`, given the
/// ground-truth hash and the agent's messages to the customer.
pub fn judge<S: AsRef<str>>(
    data_hash: String,
    gt_data_hash: String,
    task: &Task,
    messages: &[S],
) -> Reward {
    let r_actions = data_hash == gt_data_hash;
    let outputs: Vec<(String, bool)> = task
        .outputs
        .iter()
        .map(|o| (o.clone(), output_said(o, messages)))
        .collect();
    let r_outputs = (!outputs.is_empty()).then(|| outputs.iter().all(|(_, said)| *said));
    let reward = if r_actions && r_outputs != Some(false) {
        1.0
    } else {
        0.0
    };
    Reward {
        reward,
        r_actions,
        r_outputs,
        outputs,
        data_hash,
        gt_data_hash,
    }
}
