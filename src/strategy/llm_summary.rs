//! B live: a summariser model writes the summary from a prompt template over the interrupted
//! state; the summary is rendered like B's and the model's usage travels with the handoff as its
//! compaction cost.
//!
//! The model is reached only through [`Summariser`]; this file never builds a request.

use std::path::PathBuf;
use std::sync::Arc;

use super::{BuildFuture, Strategy, StrategyConfig, StrategyError, Summariser, Templates};
use crate::handoff::{Handoff, Message, finish};
use crate::record::{CellError, ErrorClass};
use crate::state::InterruptedState;

pub struct LlmSummary {
    config: StrategyConfig,
    templates: Templates,
    dir: PathBuf,
    summariser: Option<Arc<dyn Summariser>>,
    /// The seed sent with the summariser's request.
    seed: u64,
}

impl LlmSummary {
    pub fn new(
        config: StrategyConfig,
        templates: Templates,
        dir: PathBuf,
        summariser: Option<Arc<dyn Summariser>>,
    ) -> LlmSummary {
        LlmSummary {
            config,
            templates,
            dir,
            summariser,
            seed: crate::DEFAULT_SEED,
        }
    }

    /// The run's base seed, sent with the summariser's request.
    pub fn with_seed(mut self, seed: u64) -> LlmSummary {
        self.seed = seed;
        self
    }
}

fn harness(message: String) -> StrategyError {
    StrategyError::Summariser(CellError {
        class: ErrorClass::Harness,
        message,
    })
}

impl Strategy for LlmSummary {
    fn id(&self) -> &str {
        &self.config.id
    }

    fn build<'a>(&'a self, state: &'a InterruptedState) -> BuildFuture<'a> {
        self.summarise(None, state)
    }

    /// The summariser's prompt gets the previous handoff as its `previous` and the events since.
    fn build_after<'a>(
        &'a self,
        previous: &'a Handoff,
        since: &'a InterruptedState,
    ) -> BuildFuture<'a> {
        self.summarise(Some(&previous.text), since)
    }
}

impl LlmSummary {
    fn summarise<'a>(
        &'a self,
        previous: Option<&'a str>,
        state: &'a InterruptedState,
    ) -> BuildFuture<'a> {
        Box::pin(async move {
            let c = &self.config;
            let Some(summariser) = &self.summariser else {
                return Err(StrategyError::NeedsModel {
                    id: c.id.clone(),
                    summarizer: c.summarizer.clone().unwrap_or_default(),
                });
            };
            let template = match &c.prompt_template {
                Some(p) => Some(
                    std::fs::read_to_string(self.dir.join(p))
                        .map_err(|e| harness(format!("{}: {e}", self.dir.join(p).display())))?,
                ),
                None => None,
            };
            let prompt = self
                .templates
                .render_summarize_prompt_after(previous, state, template.as_deref())
                .map_err(|e| harness(e.to_string()))?;
            let (text, stats) = summariser
                .summarise(&prompt, self.seed)
                .await
                .map_err(StrategyError::Summariser)?;
            let rendered = self
                .templates
                .render_summary(&text)
                .map_err(|e| harness(e.to_string()))?;
            let dropped = state.events.iter().map(|e| e.id.clone()).collect();
            let mut h = finish(&c.id, vec![Message::user(rendered)], None, dropped, vec![]);
            h.compaction = Some(stats);
            Ok(h)
        })
    }
}
