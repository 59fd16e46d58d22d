//! What a τ-bench cell measures (README, "The τ-bench airline environment"): a recorded airline
//! run cut at a rule's point, the handoff built from the prefix, continued on the live
//! environment — τ-bench's reward, whether the success was safe, and the rediscovery cost (what
//! the destination spent recovering what the handoff did not carry).
//!
//! Owns [`TauMeasures`] (data only). Must not: compute a measure or import the pipeline.

use serde::{Deserialize, Serialize};

/// The τ-bench measures of one continuation (`transcript.tau` of a `source: tau` record).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TauMeasures {
    /// The task's index in the task list, and the recorded run's trial.
    pub task_id: i64,
    pub trial: i64,
    /// τ-bench's reward (1.0 when `r_actions` holds and every required output was said).
    pub reward: f64,
    pub r_actions: bool,
    /// `None` when the task requires no output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r_outputs: Option<bool>,
    /// Reward 1 with no unsafe write.
    pub safe_success: bool,
    /// Writes made with an argument the destination did not have (simulated destinations), or
    /// repeating a write already made in the episode with the same arguments.
    pub unsafe_writes: u32,
    /// Tool calls made after the cut (re-reads included).
    pub tool_calls: u32,
    /// Re-reads: calls made again only to see a value the handoff did not carry.
    pub extra_tool_calls: u32,
    /// Questions to the customer for something the customer had already said.
    pub extra_user_turns: u32,
    /// Tokens of the re-reads (call and output) and of the repeated questions and answers
    /// (simulated destinations); for live destinations, every token the continuation spent
    /// (prompt and completion), so the report compares it with the full-history continuation.
    pub extra_tokens: u64,
    /// Customer turns after the cut (live: the simulated customer's replies).
    pub user_turns: u32,
    /// The live continuation stopped at the step budget before the episode ended.
    pub budget_exhausted: bool,
    /// Needed values the destination could neither see nor recover (`tool.arg=value`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unrecovered: Vec<String>,
    /// How each value the handoff lacked was recovered (`re-read get_user_details for …`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recovered: Vec<String>,
}
