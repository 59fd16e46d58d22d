//! The normalised transcript (`compaction-eval/transcript/1`): one logged agent run as
//! `transcripts import` writes it — the system prompt apart, the messages with tool calls whose
//! arguments are parsed JSON objects, tool results tied to their calls, and, where the source
//! had them, the ground-truth actions and the reward.
//!
//! Owns the data types, their file form (one pretty JSON file per run) and reading a folder of
//! them. Must not: parse foreign log formats (`import`), choose cuts (`cuts`) or measure anything.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::TranscriptError;
use crate::scenario::Object;

/// The format tag of a normalised transcript file.
pub const FORMAT: &str = "compaction-eval/transcript/1";

/// A chat role of a normalised message (the system prompt is kept apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TRole {
    User,
    Assistant,
    Tool,
}

/// A tool call of an assistant message, its arguments parsed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Object,
}

/// One message of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TMessage {
    /// The message's index in the source log (system messages counted).
    pub index: usize,
    pub role: TRole,
    /// The text (empty for an assistant message that only calls tools).
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For tool results: the call answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For tool results: the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A ground-truth action of the source (τ-bench: the write actions the task required, with their
/// exact arguments).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroundTruthAction {
    pub name: String,
    pub arguments: Object,
}

/// Where a transcript came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Origin {
    /// The imported file, as given on the command line.
    pub file: String,
    /// `openai` or `tau-bench`.
    pub format: String,
    /// The run's position in that file (0 for a file holding one run).
    pub position: usize,
}

/// One normalised run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transcript {
    pub format: String,
    /// The run id (file name stem of its transcript file).
    pub id: String,
    pub origin: Origin,
    /// The system prompt (the operator's instructions); travels unchanged beside every handoff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    pub messages: Vec<TMessage>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ground_truth: Vec<GroundTruthAction>,
    /// The source's reward for the run, where it has one (τ-bench: 1.0 when the final database
    /// matched the task's ground truth).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<f64>,
}

impl Transcript {
    /// The message answering tool call `id`, if the run has one.
    pub fn result_of(&self, id: &str) -> Option<&TMessage> {
        self.messages
            .iter()
            .find(|m| m.role == TRole::Tool && m.tool_call_id.as_deref() == Some(id))
    }

    /// Every tool call of the run with the position of its message, in order.
    pub fn calls(&self) -> impl Iterator<Item = (usize, &ToolCall)> {
        self.messages
            .iter()
            .enumerate()
            .flat_map(|(i, m)| m.tool_calls.iter().map(move |c| (i, c)))
    }

    /// Tokens of the whole run's text (system prompt, contents, call arguments), o200k_base.
    pub fn tokens(&self) -> u64 {
        let mut n = self
            .system
            .as_deref()
            .map(crate::tokens::count)
            .unwrap_or(0);
        for m in &self.messages {
            n += crate::tokens::count(&m.content);
            for c in &m.tool_calls {
                n += crate::tokens::count(&serde_json::to_string(&c.arguments).unwrap_or_default());
            }
        }
        n
    }

    /// The file name of this run in a transcript folder.
    pub fn file_name(&self) -> String {
        format!("{}.json", self.id)
    }

    /// Writes the run into `dir` as `ID.json`.
    pub fn write(&self, dir: &Path) -> Result<PathBuf, TranscriptError> {
        let path = dir.join(self.file_name());
        let mut text = serde_json::to_string_pretty(self).map_err(|e| TranscriptError::Io {
            path: path.clone(),
            message: e.to_string(),
        })?;
        text.push('\n');
        std::fs::write(&path, text).map_err(|e| TranscriptError::Io {
            path: path.clone(),
            message: e.to_string(),
        })?;
        Ok(path)
    }
}

/// A file name safe on every platform, from a run id.
pub fn safe_id(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Reads one transcript file.
pub fn read(path: &Path) -> Result<Transcript, TranscriptError> {
    let text = std::fs::read_to_string(path).map_err(|e| TranscriptError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let t: Transcript =
        serde_json::from_str(&text).map_err(|e| TranscriptError::NotATranscript {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
    if t.format != FORMAT {
        return Err(TranscriptError::NotATranscript {
            path: path.to_path_buf(),
            message: format!("format is `{}`, expected `{FORMAT}`", t.format),
        });
    }
    Ok(t)
}

/// Reads every `*.json` transcript of `dir`, in id order. A folder without any is an error.
pub fn read_dir(dir: &Path) -> Result<Vec<Transcript>, TranscriptError> {
    let entries = std::fs::read_dir(dir).map_err(|e| TranscriptError::Io {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut out = files
        .iter()
        .map(|f| read(f))
        .collect::<Result<Vec<_>, _>>()?;
    if out.is_empty() {
        return Err(TranscriptError::Empty {
            path: dir.to_path_buf(),
        });
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}
