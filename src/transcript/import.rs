//! Reading foreign agent logs into normalised transcripts: OpenAI chat messages (a JSON array of
//! messages, a JSONL file of them, one object or a JSON array / JSONL of runs each holding
//! `messages` or `traj`) and τ-bench trajectory files (runs with `task_id`, `trial`, `reward`,
//! `info.task.actions` and `traj`).
//!
//! Owns the shapes accepted, run ids, and the checks on every message: a known role, tool calls
//! whose arguments parse as a JSON object, every tool result answering an earlier call. A bad run
//! is a [`BadRun`] naming the run, the message index and the field. Must not: write files, choose
//! cuts or look at what the run means.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use super::TranscriptError;
use super::model::{
    FORMAT, GroundTruthAction, Origin, TMessage, TRole, ToolCall, Transcript, safe_id,
};
use crate::scenario::Object;

/// The accepted input formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// OpenAI chat messages (role, content, tool_calls, tool_call_id).
    Openai,
    /// τ-bench trajectory files (task_id, trial, reward, info.task.actions, traj).
    TauBench,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Openai => "openai",
            Format::TauBench => "tau-bench",
        }
    }
}

/// A run that cannot be imported: which run, which message (when one is at fault), which field,
/// and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRun {
    pub run: String,
    pub index: Option<usize>,
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for BadRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.index {
            Some(i) => write!(
                f,
                "run `{}`, message {i}, field `{}`: {}",
                self.run, self.field, self.message
            ),
            None => write!(
                f,
                "run `{}`, field `{}`: {}",
                self.run, self.field, self.message
            ),
        }
    }
}

/// What an import produced: the runs that passed every check, and the skipped ones (only with
/// `skip_bad`; otherwise the first bad run is the error).
#[derive(Debug, Clone)]
pub struct Imported {
    pub runs: Vec<Transcript>,
    pub skipped: Vec<BadRun>,
}

/// Reads `path` (`format`: as given, or detected from the runs' fields).
pub fn import(
    path: &Path,
    format: Option<Format>,
    skip_bad: bool,
) -> Result<Imported, TranscriptError> {
    let text = std::fs::read_to_string(path).map_err(|e| TranscriptError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let values = parse_values(path, &text)?;
    let shape = |message: &str| TranscriptError::Shape {
        path: path.to_path_buf(),
        message: message.to_string(),
    };
    let is_message = |v: &Value| v.get("role").is_some();
    let is_run = |v: &Value| v.get("messages").is_some() || v.get("traj").is_some();
    // One run of messages, or many runs.
    let runs: Vec<&Value> = if values.iter().all(is_message) && !values.is_empty() {
        vec![]
    } else if values.iter().all(is_run) && !values.is_empty() {
        values.iter().collect()
    } else {
        return Err(shape(
            "expected a JSON array (or JSONL) of chat messages, each with `role`, or of runs, each with `messages` or `traj`",
        ));
    };
    let format = format.unwrap_or_else(|| {
        if !runs.is_empty()
            && runs
                .iter()
                .all(|r| r.get("traj").is_some() && r.get("task_id").is_some())
        {
            Format::TauBench
        } else {
            Format::Openai
        }
    });
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "run".into());
    let file = path.display().to_string();
    let mut out = Imported {
        runs: vec![],
        skipped: vec![],
    };
    let mut results: Vec<Result<Transcript, BadRun>> = Vec::new();
    if runs.is_empty() {
        if format == Format::TauBench {
            return Err(shape(
                "a τ-bench file is a JSON array of runs with `task_id` and `traj`; this is a list of messages",
            ));
        }
        let origin = Origin {
            file: file.clone(),
            format: format.as_str().into(),
            position: 0,
        };
        results.push(run_of(&safe_id(&stem), &values, None, origin));
    } else {
        for (pos, r) in runs.iter().enumerate() {
            let origin = Origin {
                file: file.clone(),
                format: format.as_str().into(),
                position: pos,
            };
            results.push(parse_run(r, pos, runs.len(), &stem, format, origin));
        }
    }
    let mut seen = BTreeSet::new();
    for r in results {
        let r = r.and_then(|t| {
            if seen.insert(t.id.clone()) {
                Ok(t)
            } else {
                Err(BadRun {
                    run: t.id.clone(),
                    index: None,
                    field: "id".into(),
                    message: "another run of this file has the same id".into(),
                })
            }
        });
        match r {
            Ok(t) => out.runs.push(t),
            Err(bad) if skip_bad => out.skipped.push(bad),
            Err(bad) => {
                return Err(TranscriptError::BadRun {
                    path: path.to_path_buf(),
                    bad,
                });
            }
        }
    }
    Ok(out)
}

/// The whole file as JSON (an array is its elements), or else one JSON value per line.
fn parse_values(path: &Path, text: &str) -> Result<Vec<Value>, TranscriptError> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(a)) => Ok(a),
        Ok(v @ Value::Object(_)) => Ok(vec![v]),
        Ok(_) => Err(TranscriptError::Shape {
            path: path.to_path_buf(),
            message: "the file holds a JSON scalar, not messages or runs".into(),
        }),
        Err(whole) => {
            let mut out = Vec::new();
            for (i, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<Value>(line) {
                    Ok(v) => out.push(v),
                    // A first line that is not JSON: the file is neither JSON nor JSONL; the
                    // whole-file error says where it breaks.
                    Err(_) if out.is_empty() => {
                        return Err(TranscriptError::Parse {
                            path: path.to_path_buf(),
                            message: whole.to_string(),
                        });
                    }
                    Err(e) => {
                        return Err(TranscriptError::Parse {
                            path: path.to_path_buf(),
                            message: format!("JSONL line {}: {e}", i + 1),
                        });
                    }
                }
            }
            Ok(out)
        }
    }
}

fn bad(
    run: &str,
    index: Option<usize>,
    field: impl Into<String>,
    message: impl Into<String>,
) -> BadRun {
    BadRun {
        run: run.to_string(),
        index,
        field: field.into(),
        message: message.into(),
    }
}

/// One run object (`messages` or `traj`, with τ-bench's fields where the format asks for them).
fn parse_run(
    r: &Value,
    pos: usize,
    count: usize,
    stem: &str,
    format: Format,
    origin: Origin,
) -> Result<Transcript, BadRun> {
    let fallback = if count > 1 {
        format!("{stem}-{pos:04}")
    } else {
        stem.to_string()
    };
    let id = match format {
        Format::TauBench => {
            let task = match r.get("task_id") {
                Some(Value::Number(n)) => match n.as_u64() {
                    Some(n) => format!("{n:03}"),
                    None => n.to_string(),
                },
                Some(Value::String(s)) => s.clone(),
                _ => {
                    return Err(bad(
                        &fallback,
                        None,
                        "task_id",
                        "missing or not a number or string",
                    ));
                }
            };
            let trial = r
                .get("trial")
                .and_then(Value::as_u64)
                .map(|t| t.to_string())
                .unwrap_or_else(|| format!("p{pos}"));
            safe_id(&format!("task-{task}-trial-{trial}"))
        }
        Format::Openai => r
            .get("id")
            .and_then(Value::as_str)
            .map(safe_id)
            .unwrap_or_else(|| safe_id(&fallback)),
    };
    let (key, msgs) = match (r.get("messages"), r.get("traj")) {
        (Some(m), _) => ("messages", m),
        (None, Some(t)) => ("traj", t),
        (None, None) => {
            return Err(bad(
                &id,
                None,
                "messages",
                "the run has no `messages` or `traj`",
            ));
        }
    };
    let Some(msgs) = msgs.as_array() else {
        return Err(bad(&id, None, key, "not a JSON array of messages"));
    };
    let reward = match r.get("reward") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_f64()
                .ok_or_else(|| bad(&id, None, "reward", "not a number"))?,
        ),
    };
    let gt = match format {
        Format::TauBench => ground_truth(&id, r)?,
        Format::Openai => vec![],
    };
    let mut t = run_of(&id, msgs, reward, origin)?;
    t.ground_truth = gt;
    Ok(t)
}

/// τ-bench's `info.task.actions` (absent: none).
fn ground_truth(id: &str, r: &Value) -> Result<Vec<GroundTruthAction>, BadRun> {
    let Some(actions) = r.pointer("/info/task/actions") else {
        return Ok(vec![]);
    };
    let Some(actions) = actions.as_array() else {
        return Err(bad(id, None, "info.task.actions", "not a JSON array"));
    };
    actions
        .iter()
        .enumerate()
        .map(|(k, a)| {
            let name = a.get("name").and_then(Value::as_str).ok_or_else(|| {
                bad(
                    id,
                    None,
                    format!("info.task.actions[{k}].name"),
                    "missing or not a string",
                )
            })?;
            let arguments = match a.get("kwargs").or_else(|| a.get("arguments")) {
                None | Some(Value::Null) => Object::new(),
                Some(Value::Object(o)) => o.clone(),
                Some(_) => {
                    return Err(bad(
                        id,
                        None,
                        format!("info.task.actions[{k}].kwargs"),
                        "not a JSON object",
                    ));
                }
            };
            Ok(GroundTruthAction {
                name: name.to_string(),
                arguments,
            })
        })
        .collect()
}

/// The text of a message's `content`: a string, null, or an array of `{type: text, text}` parts.
fn content_of(run: &str, i: usize, m: &Value) -> Result<String, BadRun> {
    match m.get("content") {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => {
            let mut out = Vec::new();
            for (k, p) in parts.iter().enumerate() {
                match p.get("text").and_then(Value::as_str) {
                    Some(t) => out.push(t.to_string()),
                    None => {
                        return Err(bad(
                            run,
                            Some(i),
                            format!("content[{k}]"),
                            "a content part without a `text` string (only text parts are read)",
                        ));
                    }
                }
            }
            Ok(out.join("\n"))
        }
        Some(_) => Err(bad(
            run,
            Some(i),
            "content",
            "not a string, null or an array of text parts",
        )),
    }
}

/// Checks and normalises one run's messages.
fn run_of(
    run: &str,
    msgs: &[Value],
    reward: Option<f64>,
    origin: Origin,
) -> Result<Transcript, BadRun> {
    let mut system: Vec<String> = Vec::new();
    let mut messages: Vec<TMessage> = Vec::new();
    // Calls awaiting their result: logged id → (normalised id, tool). Real logs reuse an id once
    // its call is answered (τ-bench does); the reuse gets the normalised id `ID#2`, `ID#3`, ….
    let mut open: std::collections::BTreeMap<String, (String, String)> = Default::default();
    let mut uses: std::collections::BTreeMap<String, usize> = Default::default();
    for (i, m) in msgs.iter().enumerate() {
        if !m.is_object() {
            return Err(bad(run, Some(i), "message", "not a JSON object"));
        }
        let role = m
            .get("role")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(run, Some(i), "role", "missing or not a string"))?;
        let content = content_of(run, i, m)?;
        match role {
            "system" | "developer" => {
                if !messages.is_empty() {
                    return Err(bad(
                        run,
                        Some(i),
                        "role",
                        "a system message after the conversation started (only the leading system messages are read, as the operator's instructions)",
                    ));
                }
                system.push(content);
            }
            "user" => messages.push(TMessage {
                index: i,
                role: TRole::User,
                content,
                tool_calls: vec![],
                tool_call_id: None,
                name: None,
            }),
            "assistant" => {
                let mut tool_calls = Vec::new();
                match m.get("tool_calls") {
                    None | Some(Value::Null) => {}
                    Some(Value::Array(tcs)) => {
                        for (j, tc) in tcs.iter().enumerate() {
                            let mut call = tool_call(run, i, j, tc)?;
                            if open.contains_key(&call.id) {
                                return Err(bad(
                                    run,
                                    Some(i),
                                    format!("tool_calls[{j}].id"),
                                    format!(
                                        "call id `{}` is used again before the earlier call with it was answered",
                                        call.id
                                    ),
                                ));
                            }
                            let n = uses.entry(call.id.clone()).or_default();
                            *n += 1;
                            let normalised = if *n == 1 {
                                call.id.clone()
                            } else {
                                format!("{}#{n}", call.id)
                            };
                            open.insert(call.id.clone(), (normalised.clone(), call.name.clone()));
                            call.id = normalised;
                            tool_calls.push(call);
                        }
                    }
                    Some(_) => return Err(bad(run, Some(i), "tool_calls", "not a JSON array")),
                }
                messages.push(TMessage {
                    index: i,
                    role: TRole::Assistant,
                    content,
                    tool_calls,
                    tool_call_id: None,
                    name: None,
                });
            }
            "tool" => {
                let id = m
                    .get("tool_call_id")
                    .and_then(Value::as_str)
                    .ok_or_else(|| bad(run, Some(i), "tool_call_id", "missing or not a string"))?;
                let Some((normalised, tool)) = open.remove(id) else {
                    let why = if uses.contains_key(id) {
                        format!("a second tool result for `{id}`")
                    } else {
                        format!(
                            "a tool result for `{id}`, which no earlier assistant message called"
                        )
                    };
                    return Err(bad(run, Some(i), "tool_call_id", why));
                };
                if let Some(name) = m.get("name").and_then(Value::as_str)
                    && name != tool.as_str()
                {
                    return Err(bad(
                        run,
                        Some(i),
                        "name",
                        format!("names tool `{name}`, but call `{id}` was to `{tool}`"),
                    ));
                }
                messages.push(TMessage {
                    index: i,
                    role: TRole::Tool,
                    content,
                    tool_calls: vec![],
                    tool_call_id: Some(normalised),
                    name: Some(tool),
                });
            }
            other => {
                return Err(bad(
                    run,
                    Some(i),
                    "role",
                    format!("unknown role `{other}` (expected system, user, assistant or tool)"),
                ));
            }
        }
    }
    if messages.is_empty() {
        return Err(bad(
            run,
            None,
            "messages",
            "the run has no user, assistant or tool message",
        ));
    }
    Ok(Transcript {
        format: FORMAT.to_string(),
        id: run.to_string(),
        origin,
        system: (!system.is_empty()).then(|| system.join("\n\n")),
        messages,
        ground_truth: vec![],
        reward,
    })
}

/// One entry of `tool_calls`: `{id, type: function, function: {name, arguments}}`; arguments a
/// JSON string holding an object (empty: no arguments) or an object.
fn tool_call(run: &str, i: usize, j: usize, tc: &Value) -> Result<ToolCall, BadRun> {
    let field = |f: &str| format!("tool_calls[{j}].{f}");
    let id = tc
        .get("id")
        .and_then(Value::as_str)
        .ok_or_else(|| bad(run, Some(i), field("id"), "missing or not a string"))?;
    let func = tc
        .get("function")
        .ok_or_else(|| bad(run, Some(i), field("function"), "missing"))?;
    let name = func
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| {
            bad(
                run,
                Some(i),
                field("function.name"),
                "missing, empty or not a string",
            )
        })?;
    let arguments = match func.get("arguments") {
        None | Some(Value::Null) => Object::new(),
        Some(Value::Object(o)) => o.clone(),
        Some(Value::String(s)) if s.trim().is_empty() => Object::new(),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(o)) => o,
            Ok(_) => {
                return Err(bad(
                    run,
                    Some(i),
                    field("function.arguments"),
                    "parses as JSON but not as an object",
                ));
            }
            Err(e) => {
                return Err(bad(
                    run,
                    Some(i),
                    field("function.arguments"),
                    format!("not valid JSON ({e})"),
                ));
            }
        },
        Some(_) => {
            return Err(bad(
                run,
                Some(i),
                field("function.arguments"),
                "neither a JSON string nor an object",
            ));
        }
    };
    Ok(ToolCall {
        id: id.to_string(),
        name: name.to_string(),
        arguments,
    })
}
