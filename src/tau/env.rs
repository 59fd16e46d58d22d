//! The environment an agent acts in: [`Env`] holds the fresh database of a data folder; an
//! [`Episode`] is one task on its own copy — the agent's tool calls ([`Episode::step`]), its
//! messages to the customer ([`Episode::respond`]), whether it has ended, and its reward.
//!
//! Owns: the episode's state (database, messages, done). Must not: simulate the customer, call
//! a model, or decide what the agent does; a caller drives the episode.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::db::Db;
use super::error::TauError;
use super::reward::{self, Reward};
use super::task::Task;
use super::tools;

/// The airline environment: the database every episode starts from.
#[derive(Debug, Clone)]
pub struct Env {
    fresh: Arc<Db>,
}

/// What a tool call answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    /// The tool's output, exactly as the reference environment answers it.
    pub output: String,
    /// The call ended the episode (`transfer_to_human_agents`).
    pub done: bool,
}

impl Env {
    /// The environment of a data folder (`DIR/env/*.json`).
    pub fn load(dir: &Path) -> Result<Env, TauError> {
        Ok(Env::from_db(Db::load(dir)?))
    }

    /// The environment over a given database.
    pub fn from_db(db: Db) -> Env {
        Env {
            fresh: Arc::new(db),
        }
    }

    /// The database every episode starts from.
    pub fn fresh_db(&self) -> &Db {
        &self.fresh
    }

    /// A new episode of `task` on a fresh copy of the database.
    pub fn episode(&self, task: Task) -> Episode {
        Episode {
            fresh: Arc::clone(&self.fresh),
            db: (*self.fresh).clone(),
            task,
            messages: Vec::new(),
            done: false,
        }
    }
}

/// One task being acted on.
#[derive(Debug, Clone)]
pub struct Episode {
    fresh: Arc<Db>,
    db: Db,
    task: Task,
    messages: Vec<String>,
    done: bool,
}

impl Episode {
    /// Calls a tool with the agent's arguments (normally a JSON object). A call after the
    /// episode ended still runs (the reference stops its loop instead); `done` stays true.
    pub fn step(&mut self, tool: &str, args: &Value) -> Observation {
        let output = tools::invoke(&mut self.db, tool, args);
        if tools::ends_episode(tool) {
            self.done = true;
        }
        Observation {
            output,
            done: self.done,
        }
    }

    /// Records a message of the agent to the customer (τ-bench's `respond` action); the
    /// required outputs are looked for in these.
    pub fn respond(&mut self, content: &str) {
        self.messages.push(content.to_string());
    }

    /// Whether the episode has ended.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The episode's database as it is now.
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// The task.
    pub fn task(&self) -> &Task {
        &self.task
    }

    /// The agent's messages to the customer so far.
    pub fn messages(&self) -> &[String] {
        &self.messages
    }

    /// τ-bench's reward of the episode as it is now (replays the ground truth on a fresh
    /// database).
    pub fn reward(&self) -> Reward {
        self.reward_against(reward::ground_truth_hash(&self.fresh, &self.task.actions))
    }

    /// The reward given the ground-truth hash already computed (one per task, reused across
    /// episodes of the same task).
    pub fn reward_against(&self, gt_data_hash: String) -> Reward {
        reward::judge(self.db.hash(), gt_data_hash, &self.task, &self.messages)
    }

    /// The reward against a task's ground truth: the same as [`Self::reward_against`] its hash,
    /// without hashing a final database that equals the ground truth's.
    pub fn reward_against_truth(&self, gt: &reward::GroundTruth) -> Reward {
        reward::judge(
            gt.hash_of(&self.db),
            gt.hash().to_string(),
            &self.task,
            &self.messages,
        )
    }
}
