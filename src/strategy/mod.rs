//! Handoff strategies: the [`Strategy`] trait with one implementation per kind (transcript,
//! mask, summary, live summary, checkpoint, checkpoint + retrieval, combination, exec plug-in),
//! the [`Registry`] that builds them from the built-in defaults and `strategies/*.toml`, and the
//! restoration step the harness applies to every handoff at restore time.
//!
//! A strategy sees only an [`InterruptedState`] (what the source agent observed); it never sees
//! the scenario's facts, success predicates, reference continuation or the world at restore time,
//! and it never runs a destination. A live summariser reaches it only through the [`Summariser`]
//! trait, so this module does not depend on any model client.

pub mod chain;
mod checkpoint;
pub use checkpoint::{mark_stale, reconciling_tool};
mod exec;
pub use exec::chain_refusal;
mod fields;
mod llm_summary;
mod merge;
mod render;
mod settings;
mod summary;
mod transcript;
mod trigger;
pub use transcript::full_history_tokens;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::record::{CellError, LiveStats};
use crate::shipped::{Set, Source};
use crate::world::World;

use crate::handoff::{Handoff, Message, finish};
use crate::state::{InterruptedState, RestorePoint, StateError};
pub use render::Templates;

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
    /// summary (offline B): the probability that each statement (sentence or list item) of an
    /// outside document is restated among the next steps (default 0.5), drawn from the handoff's
    /// seed, the document and the statement's place among its statements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_keep: Option<f64>,
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
    /// exec: the input format the plug-in reads (`compaction-eval/state/3`, the default, or
    /// `compaction-eval/state/2`); an unknown one is refused when the file is read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads: Option<String>,
    /// Any strategy but A and none: below this many tokens of history the handoff is the
    /// transcript (A's, at the same window) and the record says `compacted: false`; at or above
    /// it the strategy compacts (`compacted: true`). Unset: it always compacts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_tokens: Option<u64>,
    /// Free-text note on why these values were chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
    /// The destination's usable context (its window less [`CONTEXT_RESERVE`]), set by the
    /// harness per destination, never from a file: A and mask carry as much of the history as
    /// fits in it, B+A as much of the transcript as fits beside the summary, and a plug-in
    /// receives it as its `token_budget` (the smaller of it and a configured budget).
    #[serde(skip)]
    pub window_budget: Option<u64>,
}

/// The context window of a simulated destination unless the run says otherwise
/// (`--context-window`): a common size for agent models served locally.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 32_768;

/// Tokens of a destination's window the harness keeps free for the system prompt, the tool
/// definitions and the answer; a handoff gets the rest.
pub const CONTEXT_RESERVE: u64 = 4_096;

/// The usable context of a window: what a handoff may fill.
pub fn usable_context(window: u64) -> u64 {
    window.saturating_sub(CONTEXT_RESERVE).max(1)
}

/// The smaller of two optional budgets.
pub fn min_budget(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
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

impl StrategyConfig {
    /// The built-in configuration of a strategy id, if it is one.
    pub fn builtin(id: &str) -> Option<StrategyConfig> {
        let (kind, budget) = match id {
            "A" => (StrategyKind::Transcript, None),
            "B" => (StrategyKind::Summary, Some(400)),
            "C" => (StrategyKind::Checkpoint, None),
            "D" => (StrategyKind::CheckpointRetrieval, None),
            "mask" => (StrategyKind::Mask, None),
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
            external_keep: None,
            summarizer: None,
            prompt_template: None,
            program: None,
            args: vec![],
            timeout_s: None,
            max_output_bytes: None,
            env: vec![],
            reads: None,
            trigger_tokens: None,
            rationale: None,
            window_budget: None,
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
    /// A live summariser failed (an errored cell, with its class).
    #[error(transparent)]
    Summariser(crate::record::CellError),
    /// A strategy cannot compact a context that begins with a previous handoff (`--cycles`).
    #[error("strategy `{id}` cannot continue a compaction chain: {message}")]
    Chain { id: String, message: String },
    #[error(
        "strategy `{id}` needs its summariser model `{summarizer}`: it is built by `run`, which calls the model"
    )]
    NeedsModel { id: String, summarizer: String },
}

/// A boxed handoff build: offline strategies are ready at once, a live summariser awaits a model.
pub type BuildFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Handoff, StrategyError>> + Send + 'a>>;

/// Turns an interrupted state into a handoff.
pub trait Strategy: Send + Sync {
    fn id(&self) -> &str;
    fn build<'a>(&'a self, state: &'a InterruptedState) -> BuildFuture<'a>;

    /// A compaction in a chain ([`chain`], `--cycles`): the context is `previous` (the handoff
    /// of the compaction before, as its destination received it) followed by `since`, the
    /// source events after that compaction's interrupt point (the only events `since` holds).
    /// A strategy that does not define it cannot be chained.
    fn build_after<'a>(
        &'a self,
        previous: &'a Handoff,
        since: &'a InterruptedState,
    ) -> BuildFuture<'a> {
        let _ = (previous, since);
        ready(Err(StrategyError::Chain {
            id: self.id().to_string(),
            message: "it does not say how it compacts a previous handoff".into(),
        }))
    }

    /// [`Strategy::build`] on the process's runtime, for callers outside it (commands, tests).
    fn build_blocking(&self, state: &InterruptedState) -> Result<Handoff, StrategyError> {
        crate::runtime::block_on(self.build(state)).map_err(|e| StrategyError::Template {
            name: self.id().to_string(),
            message: format!("cannot start the async runtime: {e}"),
        })?
    }
}

/// A summariser's answer: the summary text and the model's usage.
pub type SummaryFuture<'a> =
    Pin<Box<dyn Future<Output = Result<(String, LiveStats), CellError>> + Send + 'a>>;

/// A summariser model for `llm_summary` strategies: one prompt in, one summary and its usage out.
/// Implemented by the live client; the strategy module knows nothing else of it.
pub trait Summariser: Send + Sync {
    fn summarise<'a>(&'a self, prompt: &'a str, seed: u64) -> SummaryFuture<'a>;
}

fn ready<'a>(r: Result<Handoff, StrategyError>) -> BuildFuture<'a> {
    Box::pin(std::future::ready(r))
}

/// `none`: only the task statement (the control arm).
struct NoHandoff {
    id: String,
    templates: Templates,
}

impl Strategy for NoHandoff {
    fn id(&self) -> &str {
        &self.id
    }
    fn build<'a>(&'a self, state: &'a InterruptedState) -> BuildFuture<'a> {
        ready(self.templates.render_none(state).map(|text| {
            finish(
                &self.id,
                vec![Message::user(text)],
                None,
                state.events.iter().map(|e| e.id.clone()).collect(),
                vec![],
            )
        }))
    }
    /// The task statement again: `none` carries nothing forward.
    fn build_after<'a>(&'a self, _: &'a Handoff, since: &'a InterruptedState) -> BuildFuture<'a> {
        self.build(since)
    }
}

/// Strategies by id: the built-ins, overridden or extended by `strategies/*.toml`.
pub struct Registry {
    configs: BTreeMap<String, StrategyConfig>,
    templates: Templates,
    /// Where the configurations came from: a folder, or the embedded strategy files.
    source: Source,
    /// The embedded strategy folder's private copy on disk ([`crate::shipped::materialise`]),
    /// made when a strategy first needs a folder (a plug-in runs in it): never for the others.
    copy: OnceLock<Result<PathBuf, String>>,
    /// The run's base seed (sent with live summarisers' requests).
    seed: u64,
    /// Folders plug-ins must not see (`with_hidden`); the strategy folder always is.
    hidden: Vec<PathBuf>,
    /// The file each configuration read from a folder came from.
    files: BTreeMap<String, PathBuf>,
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
            source: Source::Folder(PathBuf::from("strategies")),
            copy: OnceLock::new(),
            seed: crate::DEFAULT_SEED,
            hidden: Vec::new(),
            files: BTreeMap::new(),
        }
    }

    /// The same registry with the run's base seed.
    pub fn with_seed(mut self, seed: u64) -> Registry {
        self.seed = seed;
        self
    }

    /// The same registry, with plug-ins kept out of these folders too (the scenario folder, the
    /// run folder and its parent, the response cache: whatever a run reads or writes); the
    /// strategy folder is always hidden.
    pub fn with_hidden(mut self, folders: impl IntoIterator<Item = PathBuf>) -> Registry {
        self.hidden.extend(folders);
        self
    }

    /// The same registry with one more strategy configuration (replacing one of the same id).
    pub fn with_config(mut self, config: StrategyConfig) -> Registry {
        self.configs.insert(config.id.clone(), config);
        self
    }

    /// The built-ins plus every `*.toml` in `dir` (a missing folder means defaults only), and the
    /// templates in `dir/templates/` where present.
    pub fn load(dir: &Path) -> Result<Registry, StrategyError> {
        let mut reg = Registry::builtin();
        reg.templates = Templates::load(&dir.join("templates"))?;
        reg.source = Source::Folder(dir.to_path_buf());
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Ok(reg);
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for f in files {
            let text = crate::text::read_file(&f).map_err(|e| StrategyError::Config {
                file: f.clone(),
                message: e.to_string(),
            })?;
            // The setting's name and range in every error ([`settings`]).
            let cfg = settings::parse(&text).map_err(|message| StrategyError::Config {
                file: f.clone(),
                message,
            })?;
            reg.files.insert(cfg.id.clone(), f);
            reg.configs.insert(cfg.id.clone(), cfg);
        }
        Ok(reg)
    }

    /// The registry of a source: a folder as [`Registry::load`] reads it (it must be a folder),
    /// or the built-ins with the embedded strategy files (`strategies/` as shipped).
    pub fn from_source(source: &Source) -> Result<Registry, StrategyError> {
        match source {
            Source::Folder(dir) if !dir.is_dir() => Err(StrategyError::Config {
                file: dir.clone(),
                message:
                    "no such folder of strategies (`strategies export DIR` writes the shipped ones)"
                        .into(),
            }),
            Source::Folder(dir) => Registry::load(dir),
            Source::Embedded => {
                let mut reg = Registry::builtin();
                reg.source = Source::Embedded;
                for f in Set::Strategies.files() {
                    if f.path.contains('/') || !f.path.ends_with(".toml") {
                        continue;
                    }
                    let file = PathBuf::from(format!(
                        "{}/{}/{}",
                        crate::shipped::embedded_label(),
                        Set::Strategies.name(),
                        f.path
                    ));
                    let text = std::str::from_utf8(f.bytes).map_err(|e| StrategyError::Config {
                        file: file.clone(),
                        message: format!("not UTF-8 text: {e}"),
                    })?;
                    let cfg = settings::parse(text)
                        .map_err(|message| StrategyError::Config { file, message })?;
                    reg.configs.insert(cfg.id.clone(), cfg);
                }
                Ok(reg)
            }
        }
    }

    /// The file strategy `id`'s configuration is read from (for messages): `strategies/ID.toml`
    /// in its folder, or among the embedded files.
    pub fn file_of(&self, id: &str) -> PathBuf {
        if let Some(f) = self.files.get(id) {
            return f.clone();
        }
        let dir = match &self.source {
            Source::Folder(dir) => dir.clone(),
            Source::Embedded => {
                PathBuf::from(crate::shipped::embedded_label()).join(Set::Strategies.name())
            }
        };
        dir.join(format!("{id}.toml"))
    }

    /// Where the strategies came from.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The strategy folder a plug-in runs in (and a live summariser's template is relative to):
    /// the source folder, or the embedded files' private copy, written on first use.
    fn folder(&self) -> Result<PathBuf, StrategyError> {
        match &self.source {
            Source::Folder(dir) => Ok(dir.clone()),
            Source::Embedded => self
                .copy
                .get_or_init(|| {
                    crate::shipped::materialise(Set::Strategies).map_err(|e| e.to_string())
                })
                .clone()
                .map_err(|e| StrategyError::Config {
                    file: PathBuf::from(crate::shipped::embedded_label()).join("strategies"),
                    message: format!(
                        "the shipped strategy files could not be copied to disk for a plug-in: {e}"
                    ),
                }),
        }
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

    /// The strategy with this id (an `llm_summary` strategy without a summariser fails to build
    /// with [`StrategyError::NeedsModel`]).
    pub fn get(&self, id: &str) -> Result<Box<dyn Strategy>, StrategyError> {
        self.get_with(id, None)
    }

    /// The strategy with this id; `summariser` serves an `llm_summary` strategy. Built for the
    /// default simulated destination's window ([`DEFAULT_CONTEXT_WINDOW`]).
    pub fn get_with(
        &self,
        id: &str,
        summariser: Option<Arc<dyn Summariser>>,
    ) -> Result<Box<dyn Strategy>, StrategyError> {
        self.get_for(id, summariser, usable_context(DEFAULT_CONTEXT_WINDOW))
    }

    /// Whether the strategy's handoff depends on the destination's window (A, mask, B+A and
    /// plug-ins do; the others are sized by the state).
    pub fn depends_on_window(&self, id: &str) -> bool {
        self.configs.get(id).is_some_and(|c| {
            c.trigger_tokens.is_some()
                || matches!(
                    c.kind,
                    StrategyKind::Transcript
                        | StrategyKind::Mask
                        | StrategyKind::SummaryTranscript
                        | StrategyKind::Exec
                )
        })
    }

    /// The strategy with this id, for a destination whose usable context is `window_budget`
    /// tokens ([`usable_context`]).
    pub fn get_for(
        &self,
        id: &str,
        summariser: Option<Arc<dyn Summariser>>,
        window_budget: u64,
    ) -> Result<Box<dyn Strategy>, StrategyError> {
        let Some(c) = self.configs.get(id) else {
            return Err(StrategyError::Unknown {
                id: id.to_string(),
                known: self.ids().join(", "),
            });
        };
        let (mut c, t) = (c.clone(), self.templates.clone());
        c.window_budget = Some(window_budget);
        let trigger = c.trigger_tokens.map(|n| (n, c.clone()));
        let built: Box<dyn Strategy> = match c.kind {
            StrategyKind::None => Box::new(NoHandoff {
                id: c.id,
                templates: t,
            }),
            StrategyKind::Transcript => Box::new(transcript::Transcript::new(c, None)),
            StrategyKind::Mask => {
                let keep = c.keep_last_tool_outputs.unwrap_or(3);
                Box::new(transcript::Transcript::new(c, Some(keep)))
            }
            StrategyKind::Summary => Box::new(summary::Summary::new(c, t, false, self.seed)),
            StrategyKind::SummaryTranscript => {
                Box::new(summary::Summary::new(c, t, true, self.seed))
            }
            StrategyKind::Checkpoint => Box::new(checkpoint::CheckpointStrategy::new(c, t, false)),
            StrategyKind::CheckpointRetrieval => {
                Box::new(checkpoint::CheckpointStrategy::new(c, t, true))
            }
            StrategyKind::LlmSummary => {
                // Only a template of its own is read from the folder.
                let dir = match c.prompt_template {
                    Some(_) => self.folder()?,
                    None => self
                        .source
                        .folder()
                        .map(Path::to_path_buf)
                        .unwrap_or_default(),
                };
                Box::new(llm_summary::LlmSummary::new(c, t, dir, summariser).with_seed(self.seed))
            }
            StrategyKind::Exec => {
                let dir = self.folder()?;
                let mut hidden = self.hidden.clone();
                hidden.push(dir.clone());
                Box::new(exec::Exec::new(c, t, dir, hidden))
            }
        };
        Ok(match trigger {
            Some((n, c)) => Box::new(trigger::Triggered::new(built, &c, n)),
            None => built,
        })
    }

    /// Restoration (seed 003 §10.7), applied by the harness to every handoff when the destination
    /// starts: resources a checkpoint carries with their text are resolved against the world at
    /// restore and marked stale where they changed, and the checkpoint is rendered again. A
    /// handoff that offers `retrieve` leaves resolution to it; text handoffs are left as they are.
    pub fn restore(&self, mut h: Handoff, world: &World) -> Result<Handoff, StrategyError> {
        let retrieval = h.extra_tools.iter().any(|t| t.name == "retrieve");
        let Some(cp) = h.checkpoint.as_mut().filter(|_| !retrieval) else {
            return Ok(h);
        };
        let before = cp.clone();
        mark_stale(cp, world);
        if *cp == before {
            return Ok(h);
        }
        let text = self.templates.render_checkpoint(cp, false)?;
        let mut restored = finish(
            &h.strategy,
            vec![Message::user(text)],
            h.checkpoint.take(),
            std::mem::take(&mut h.dropped_events),
            std::mem::take(&mut h.extra_tools),
        );
        restored.compaction = h.compaction.take();
        Ok(restored)
    }

    /// The handoff strategy `id` gives at a restore point, as a destination receives it (built
    /// and restored). For commands and tests; the runner builds and restores on its own runtime.
    pub fn handoff(&self, id: &str, at: &RestorePoint) -> Result<Handoff, StrategyError> {
        let h = self.get(id)?.build_blocking(&at.state)?;
        self.restore(h, &at.world)
    }
}
