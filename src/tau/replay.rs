//! Replaying recorded τ-bench runs: each run's tool calls, in the order the agent made them, on
//! a fresh database, with the outputs the environment gives now and `r_actions` against the
//! run's own ground truth (`info.task.actions`) — and the JSON Lines file of the results.
//!
//! Owns: the runs-file format ([`Run`], [`load_runs`]), [`replay_run`], [`replay_all`] and
//! [`write_jsonl`]. Must not: compare with anything recorded (a test or a caller does), or
//! print to the terminal.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::env::Env;
use super::error::TauError;
use super::reward;
use super::task::Task;

/// One recorded run (an element of a τ-bench trajectory file).
#[derive(Debug, Clone)]
pub struct Run {
    pub task_id: i64,
    pub trial: i64,
    /// The reward recorded with the run.
    pub reward: Option<f64>,
    /// The task the run was made with.
    pub task: Task,
    /// The agent's tool calls, in order.
    pub calls: Vec<Call>,
    /// The agent's messages to the customer (assistant messages with text).
    pub messages: Vec<String>,
}

/// One tool call of a recorded run, its arguments parsed.
#[derive(Debug, Clone)]
pub struct Call {
    pub id: String,
    pub tool: String,
    pub args: Value,
}

#[derive(Deserialize)]
struct RawRun {
    task_id: i64,
    trial: i64,
    #[serde(default)]
    reward: Option<f64>,
    info: RawInfo,
    traj: Vec<RawMessage>,
}

#[derive(Deserialize)]
struct RawInfo {
    task: Task,
}

#[derive(Deserialize)]
struct RawMessage {
    role: String,
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    tool_calls: Option<Vec<RawCall>>,
}

#[derive(Deserialize)]
struct RawCall {
    id: String,
    function: RawFunction,
}

#[derive(Deserialize)]
struct RawFunction {
    name: String,
    arguments: String,
}

/// Reads a τ-bench trajectory file (a JSON array of runs with `task_id`, `trial`, `info.task`
/// and `traj`). Tool-call arguments that are not a JSON object are an error naming the run and
/// the call.
pub fn load_runs(path: &Path) -> Result<Vec<Run>, TauError> {
    let text = crate::text::read_file(path).map_err(TauError::read(path))?;
    let mut de = serde_json::Deserializer::from_str(&text);
    let raw: Vec<RawRun> =
        serde_path_to_error::deserialize(&mut de).map_err(|e| TauError::schema(path, "", e))?;
    let mut runs = Vec::with_capacity(raw.len());
    for (r, run) in raw.into_iter().enumerate() {
        let mut calls = Vec::new();
        let mut messages = Vec::new();
        for (m, message) in run.traj.into_iter().enumerate() {
            if message.role == "assistant"
                && let Some(Value::String(text)) = &message.content
            {
                messages.push(text.clone());
            }
            for (c, call) in message
                .tool_calls
                .unwrap_or_default()
                .into_iter()
                .enumerate()
            {
                let field = format!("[{r}].traj[{m}].tool_calls[{c}].function.arguments");
                let args: Value = serde_json::from_str(&call.function.arguments)
                    .map_err(|e| TauError::field(path, &field, format!("not valid JSON: {e}")))?;
                if !args.is_object() {
                    return Err(TauError::field(path, field, "not a JSON object"));
                }
                calls.push(Call {
                    id: call.id,
                    tool: call.function.name,
                    args,
                });
            }
        }
        runs.push(Run {
            task_id: run.task_id,
            trial: run.trial,
            reward: run.reward,
            task: run.info.task,
            calls,
            messages,
        });
    }
    Ok(runs)
}

/// A replayed call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayedCall {
    pub call_id: String,
    pub tool: String,
    pub output: String,
}

/// A replayed run: one line of the replay file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayedRun {
    pub task_id: i64,
    pub trial: i64,
    /// 1.0 when the final database equals the database after the run's ground-truth actions.
    pub replayed_r_actions: f64,
    pub calls: Vec<ReplayedCall>,
}

/// Replays `run` given its ground truth.
fn replay_with(env: &Env, run: &Run, gt: &reward::GroundTruth) -> ReplayedRun {
    let mut episode = env.episode(run.task.clone());
    let calls = run
        .calls
        .iter()
        .map(|c| ReplayedCall {
            call_id: c.id.clone(),
            tool: c.tool.clone(),
            output: episode.step(&c.tool, &c.args).output,
        })
        .collect();
    let r = episode.reward_against_truth(gt);
    ReplayedRun {
        task_id: run.task_id,
        trial: run.trial,
        replayed_r_actions: if r.r_actions { 1.0 } else { 0.0 },
        calls,
    }
}

/// Replays one run: every tool call in order on a fresh database (calls after the episode
/// ended included, as recorded), then `r_actions` against the run's own ground truth.
pub fn replay_run(env: &Env, run: &Run) -> ReplayedRun {
    replay_with(
        env,
        run,
        &reward::GroundTruth::of(env.fresh_db(), &run.task.actions),
    )
}

/// Replays every run; the ground truth of consecutive runs with the same actions is computed once.
pub fn replay_all(env: &Env, runs: &[Run]) -> Vec<ReplayedRun> {
    // One ground truth at a time (runs come task by task): each holds a whole database.
    let mut gt: Option<(String, reward::GroundTruth)> = None;
    runs.iter()
        .map(|run| {
            let key = serde_json::to_string(&run.task.actions).unwrap_or_default();
            if gt.as_ref().is_none_or(|(k, _)| *k != key) {
                gt = Some((
                    key,
                    reward::GroundTruth::of(env.fresh_db(), &run.task.actions),
                ));
            }
            let (_, truth) = gt.as_ref().expect("set just above");
            replay_with(env, run, truth)
        })
        .collect()
}

/// Writes one JSON line per replayed run to `out`, through a temporary file in the same folder
/// and a rename (a reader never sees a half-written file).
pub fn write_jsonl(out: &Path, runs: &[ReplayedRun]) -> Result<(), TauError> {
    let mut text = String::new();
    for run in runs {
        let line = serde_json::to_string(run).map_err(|e| {
            TauError::field(
                out,
                format!("task {} trial {}", run.task_id, run.trial),
                e.to_string(),
            )
        })?;
        text.push_str(&line);
        text.push('\n');
    }
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "replay.jsonl".into());
    let tmp = out.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text).map_err(TauError::write(&tmp))?;
    std::fs::rename(&tmp, out).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        TauError::write(out)(e)
    })
}
