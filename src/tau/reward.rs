//! τ-bench's reward for one episode: `r_actions` — the final database equals the database the
//! task's ground-truth actions produce on a fresh one (compared by τ-bench's data hash, so key
//! order does not count and `1` is not `1.0`) — and, when the task lists outputs, `r_outputs`
//! — each output appears in some message of the agent to the customer (lower-cased, with the
//! message's commas removed). The reward is 1 when both hold.
//!
//! Owns: [`Reward`], [`ground_truth_hash`], [`GroundTruth`], [`output_said`], [`judge`]. Must not: run the
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

/// A task's ground truth: its database and that database's hash, computed once per task.
///
/// Why keep the database: an episode whose final database equals it has its hash too, so the
/// reward compares the two databases (key order aside, `1` is not `1.0`, as the hash's text
/// distinguishes) and hashes only a database that differs — on a run where most continuations
/// succeed, a reward costs one comparison instead of printing and hashing the whole database.
#[derive(Debug, Clone)]
pub struct GroundTruth {
    db: Db,
    hash: String,
}

impl GroundTruth {
    /// The ground truth of `actions` on `fresh`.
    pub fn of(fresh: &Db, actions: &[Action]) -> GroundTruth {
        let db = ground_truth_db(fresh, actions);
        let hash = db.hash();
        GroundTruth { db, hash }
    }

    /// Its database's hash.
    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// The hash of `db`: this one's when the two are equal, else computed.
    pub fn hash_of(&self, db: &Db) -> String {
        if *db == self.db {
            self.hash.clone()
        } else {
            db.hash()
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn db(amount: Value) -> Db {
        Db::from_tables(
            json!({}),
            json!({}),
            json!({"u1": {"payment_methods": {"gc": {"source": "gift_card", "amount": amount}},
                          "reservations": []}}),
        )
    }

    #[test]
    fn a_ground_truths_hash_of_a_database_is_that_databases_hash() {
        let gt = GroundTruth::of(&db(json!(100)), &[]);
        // Equal: the ground truth's own hash, without hashing.
        assert_eq!(gt.hash_of(&db(json!(100))), db(json!(100)).hash());
        // Different, and `1` is not `1.0`, as in τ-bench's hash text.
        for other in [json!(99), json!(100.0)] {
            assert_ne!(db(other.clone()), db(json!(100)));
            assert_eq!(gt.hash_of(&db(other.clone())), db(other).hash());
            assert_ne!(gt.hash_of(&db(json!(100.0))), gt.hash());
        }
    }
}
