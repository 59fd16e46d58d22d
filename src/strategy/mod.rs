//! Handoff strategies: the `Strategy` trait, the registry of built-in strategies and their
//! configuration from `strategies/*.toml`, and the `Handoff` every strategy produces.
//!
//! A strategy sees only an [`InterruptedState`]; it never sees the scenario's facts, success
//! predicates or reference continuation (those are the scorer's), and it never runs a destination.

mod checkpoint;
pub use checkpoint::mark_stale;
mod render;
mod state;
mod summary;
pub mod tokens;
mod transcript;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use render::{Templates, render_text};
pub use state::{InterruptedState, Origin, SourceCall, SourceEvent, StateError};
pub use summary::sentences as sentences_of;

use crate::checkpoint::Checkpoint;

/// A chat role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// A tool call inside an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallMsg {
    pub id: String,
    pub name: String,
    /// JSON arguments, as a string (as chat APIs carry them).
    pub arguments: String,
}

/// One message a destination receives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call: Option<ToolCallMsg>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    pub fn user(content: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: content.into(),
            tool_call: None,
            tool_call_id: None,
        }
    }
}

/// An extra tool a handoff gives the destination (strategy D's `retrieve`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtraTool {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

/// What a strategy hands to a destination.
#[derive(Debug, Clone, Serialize)]
pub struct Handoff {
    pub strategy: String,
    /// The messages a destination model receives after the harness's system prompt.
    pub messages: Vec<Message>,
    /// The handoff as one text, exactly as a model sees it (messages with role headers).
    pub text: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extra_tools: Vec<ExtraTool>,
    /// The checkpoint document, for strategies that produce one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<Checkpoint>,
    /// Source events the handoff left out (for diagnostics; never shown to the destination).
    pub dropped_events: Vec<String>,
    /// Tokens of `messages` at restore (o200k_base unless configured otherwise).
    pub tokens_at_restore: u64,
}

/// How a strategy behaves; the built-ins work with defaults, `strategies/*.toml` overrides them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StrategyConfig {
    /// The id used on the command line (`A`, `B`, `C`, `D`, `mask`, `none`, `B+A`, or your own).
    pub id: String,
    pub kind: StrategyKind,
    /// Token budget of the handoff (transcript and mask drop oldest turns past it; summary
    /// truncates; checkpoints shorten excerpts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<u64>,
    /// mask: tool outputs of the last N tool calls stay; older ones become a placeholder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_last_tool_outputs: Option<usize>,
    /// summary: how many of the most recent events are restated individually.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recent_events: Option<usize>,
    /// checkpoint: characters of each resource excerpt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excerpt_chars: Option<usize>,
    /// llm_summary: the live model (a name from the run configuration, or `openai:MODEL`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summarizer: Option<String>,
    /// llm_summary: prompt template, relative to the strategy folder (default: the embedded
    /// `templates/summarize.md.j2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_template: Option<PathBuf>,
    /// exec: the program (a name on PATH, or a path relative to the strategy folder). No shell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// exec: its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// exec: time limit in seconds (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<f64>,
    /// exec: output limit in bytes (default 4 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_bytes: Option<usize>,
    /// exec: environment variables passed through (nothing else of the harness's environment is).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// Free-text note on why these values were chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
}

/// The built-in behaviours.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum StrategyKind {
    /// A: the source messages as chat messages; oldest dropped silently past the budget.
    Transcript,
    /// B: a deterministic narrative summary without provenance.
    Summary,
    /// C: a structured checkpoint with excerpts.
    Checkpoint,
    /// D: a checkpoint with resource references and a `retrieve` tool.
    CheckpointRetrieval,
    /// mask: the transcript with old tool outputs replaced by placeholders.
    Mask,
    /// none: only the task statement.
    None,
    /// B+A: the summary followed by the full transcript.
    SummaryTranscript,
    /// B live: a summariser model writes the summary from a prompt template (`summarizer`).
    LlmSummary,
    /// A plug-in compactor: a program that reads the state on stdin and writes a handoff.
    Exec,
}

/// Default A budget. The shipped scenarios' full transcripts at their last interrupt point run
/// from about 4,000 to 9,000 tokens; 2,500 tokens models a context that is full, so A must drop.
pub const DEFAULT_TRANSCRIPT_BUDGET: u64 = 2_500;

impl StrategyConfig {
    /// The built-in configuration of a strategy id, if it is one.
    pub fn builtin(id: &str) -> Option<StrategyConfig> {
        let (kind, budget) = match id {
            "A" => (StrategyKind::Transcript, Some(DEFAULT_TRANSCRIPT_BUDGET)),
            "B" => (StrategyKind::Summary, Some(400)),
            "C" => (StrategyKind::Checkpoint, None),
            "D" => (StrategyKind::CheckpointRetrieval, None),
            "mask" => (StrategyKind::Mask, Some(DEFAULT_TRANSCRIPT_BUDGET)),
            "none" => (StrategyKind::None, None),
            "B+A" => (StrategyKind::SummaryTranscript, None),
            _ => return None,
        };
        Some(StrategyConfig {
            id: id.to_string(),
            kind,
            token_budget: budget,
            keep_last_tool_outputs: (kind == StrategyKind::Mask).then_some(3),
            recent_events: (matches!(
                kind,
                StrategyKind::Summary | StrategyKind::SummaryTranscript
            ))
            .then_some(3),
            excerpt_chars: (kind == StrategyKind::Checkpoint).then_some(400),
            summarizer: None,
            prompt_template: None,
            program: None,
            args: vec![],
            timeout_s: None,
            max_output_bytes: None,
            env: vec![],
            rationale: None,
        })
    }
}

/// The ids of the built-in strategies, in the order reports list them.
pub const BUILTIN_IDS: [&str; 7] = ["none", "A", "B", "C", "D", "mask", "B+A"];

/// A problem with a strategy id or configuration file.
#[derive(Debug, thiserror::Error)]
pub enum StrategyError {
    #[error("unknown strategy `{id}`; known strategies: {known}")]
    Unknown { id: String, known: String },
    #[error("{file}: {message}")]
    Config { file: PathBuf, message: String },
    #[error(transparent)]
    State(#[from] StateError),
    #[error("template `{name}`: {message}")]
    Template { name: String, message: String },
    #[error(transparent)]
    Plugin(crate::plugin::PluginError),
    #[error(
        "strategy `{id}` needs its summariser model `{summarizer}`: it is built by `run`, which calls the model"
    )]
    NeedsModel { id: String, summarizer: String },
}

/// Turns an interrupted state into a handoff.
pub trait Strategy: Send + Sync {
    fn id(&self) -> &str;
    fn build(&self, state: &InterruptedState) -> Result<Handoff, StrategyError>;
}

/// A built-in strategy with its configuration.
pub struct Builtin {
    pub config: StrategyConfig,
    pub templates: Templates,
    /// The strategy folder (exec plug-ins run there).
    pub dir: PathBuf,
}

impl Strategy for Builtin {
    fn id(&self) -> &str {
        &self.config.id
    }

    fn build(&self, state: &InterruptedState) -> Result<Handoff, StrategyError> {
        let c = &self.config;
        let (messages, checkpoint, dropped, extra_tools) = match c.kind {
            StrategyKind::Transcript => {
                let (m, d) = transcript::transcript(state, c.token_budget, None);
                (m, None, d, vec![])
            }
            StrategyKind::Mask => {
                let (m, d) = transcript::transcript(
                    state,
                    c.token_budget,
                    Some(c.keep_last_tool_outputs.unwrap_or(3)),
                );
                (m, None, d, vec![])
            }
            StrategyKind::None => (
                vec![Message::user(self.templates.render_none(state)?)],
                None,
                state.events.iter().map(|e| e.id.clone()).collect(),
                vec![],
            ),
            StrategyKind::Summary => {
                let (text, dropped) = summary::summarize(state, c);
                (
                    vec![Message::user(self.templates.render_summary(&text)?)],
                    None,
                    dropped,
                    vec![],
                )
            }
            StrategyKind::SummaryTranscript => {
                let (text, _) = summary::summarize(state, c);
                let mut m = vec![Message::user(self.templates.render_summary(&text)?)];
                let (t, d) = transcript::transcript(state, None, None);
                m.extend(t);
                (m, None, d, vec![])
            }
            StrategyKind::Exec => {
                return crate::plugin::build(c, &self.dir, &self.templates, state)
                    .map_err(StrategyError::Plugin);
            }
            StrategyKind::LlmSummary => {
                return Err(StrategyError::NeedsModel {
                    id: c.id.clone(),
                    summarizer: c.summarizer.clone().unwrap_or_default(),
                });
            }
            StrategyKind::Checkpoint | StrategyKind::CheckpointRetrieval => {
                let retrieval = c.kind == StrategyKind::CheckpointRetrieval;
                let cp = checkpoint::build(state, c.excerpt_chars.unwrap_or(400), retrieval);
                let text = self.templates.render_checkpoint(&cp, retrieval)?;
                let tools = if retrieval {
                    vec![checkpoint::retrieve_tool()]
                } else {
                    vec![]
                };
                (vec![Message::user(text)], Some(cp), vec![], tools)
            }
        };
        Ok(finish(&c.id, messages, checkpoint, dropped, extra_tools))
    }
}

/// Assembles a handoff and counts its tokens.
pub fn finish(
    strategy: &str,
    messages: Vec<Message>,
    checkpoint: Option<Checkpoint>,
    dropped_events: Vec<String>,
    extra_tools: Vec<ExtraTool>,
) -> Handoff {
    let tokens_at_restore = tokens::count_messages(&messages);
    Handoff {
        strategy: strategy.to_string(),
        text: render_text(&messages),
        messages,
        extra_tools,
        checkpoint,
        dropped_events,
        tokens_at_restore,
    }
}

/// Strategies by id: the built-ins, overridden or extended by `strategies/*.toml`.
pub struct Registry {
    configs: BTreeMap<String, StrategyConfig>,
    templates: Templates,
    dir: PathBuf,
}

impl Registry {
    /// The built-ins with their defaults and the embedded templates.
    pub fn builtin() -> Registry {
        let configs = BUILTIN_IDS
            .iter()
            .filter_map(|id| StrategyConfig::builtin(id).map(|c| (id.to_string(), c)))
            .collect();
        Registry {
            configs,
            templates: Templates::embedded(),
            dir: PathBuf::from("strategies"),
        }
    }

    /// The built-ins plus every `*.toml` in `dir` (a missing folder means defaults only), and the
    /// templates in `dir/templates/` where present.
    pub fn load(dir: &Path) -> Result<Registry, StrategyError> {
        let mut reg = Registry::builtin();
        reg.templates = Templates::load(&dir.join("templates"))?;
        reg.dir = dir.to_path_buf();
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Ok(reg);
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f).map_err(|e| StrategyError::Config {
                file: f.clone(),
                message: e.to_string(),
            })?;
            let cfg: StrategyConfig = toml::from_str(&text).map_err(|e| StrategyError::Config {
                file: f.clone(),
                message: e.to_string(),
            })?;
            reg.configs.insert(cfg.id.clone(), cfg);
        }
        Ok(reg)
    }

    pub fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = BUILTIN_IDS.iter().map(|s| s.to_string()).collect();
        ids.extend(
            self.configs
                .keys()
                .filter(|k| !BUILTIN_IDS.contains(&k.as_str()))
                .cloned(),
        );
        ids
    }

    pub fn config(&self, id: &str) -> Option<&StrategyConfig> {
        self.configs.get(id)
    }

    pub fn templates(&self) -> &Templates {
        &self.templates
    }

    /// The strategy with this id.
    pub fn get(&self, id: &str) -> Result<Box<dyn Strategy>, StrategyError> {
        match self.configs.get(id) {
            Some(c) => Ok(Box::new(Builtin {
                config: c.clone(),
                templates: self.templates.clone(),
                dir: self.dir.clone(),
            })),
            None => Err(StrategyError::Unknown {
                id: id.to_string(),
                known: self.ids().join(", "),
            }),
        }
    }
}
