//! A τ-bench task — the customer's user id and instruction, the ground-truth actions (tool
//! calls with exact arguments) and the outputs the agent must say — and the task list and
//! policy files of a data folder (`env/tasks.json`, `env/policy.md`).
//!
//! Owns: [`Task`], [`Action`], [`load_tasks`], [`load_policy`]. Must not: run actions or judge
//! an episode (`reward.rs` does).

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::error::TauError;

/// One ground-truth action: a tool name and its keyword arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Action {
    pub name: String,
    #[serde(default)]
    pub kwargs: Map<String, Value>,
}

/// A task as τ-bench defines it (the runs file carries one in each run's `info.task`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub user_id: String,
    pub instruction: String,
    pub actions: Vec<Action>,
    /// Texts the agent must say (case-insensitive; commas in the agent's words are ignored).
    #[serde(default)]
    pub outputs: Vec<String>,
    /// Who wrote the task (in `tasks.json`; absent from recorded runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotator: Option<Value>,
}

/// The test tasks of a data folder: `DIR/env/tasks.json`.
pub fn load_tasks(dir: &Path) -> Result<Vec<Task>, TauError> {
    let path = dir.join("env").join("tasks.json");
    let text = crate::text::read_file(&path).map_err(TauError::read(&path))?;
    let mut de = serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| TauError::schema(&path, "", e))
}

/// The airline policy the agent receives as its system prompt: `DIR/env/policy.md`.
pub fn load_policy(dir: &Path) -> Result<String, TauError> {
    let path = dir.join("env").join("policy.md");
    crate::text::read_file(&path).map_err(TauError::read(&path))
}
