//! Rendering handoffs for a model: the templates (`strategies/templates/*.j2`, with embedded
//! defaults) and the one-text view of a message list that simulated destinations read.

use std::path::Path;

use minijinja::Environment;
use serde_json::json;

use super::StrategyError;
use crate::checkpoint::{Checkpoint, neutralize_delimiters};
use crate::state::InterruptedState;

const CHECKPOINT: &str = include_str!("../../strategies/templates/checkpoint.md.j2");
const SUMMARY: &str = include_str!("../../strategies/templates/summary.md.j2");
const NONE: &str = include_str!("../../strategies/templates/none.md.j2");
const SUMMARIZE: &str = include_str!("../../strategies/templates/summarize.md.j2");

/// The rendering templates: the embedded defaults, or a folder's files of the same names.
#[derive(Debug, Clone)]
pub struct Templates {
    checkpoint: String,
    summary: String,
    none: String,
}

impl Templates {
    pub fn embedded() -> Templates {
        Templates {
            checkpoint: CHECKPOINT.to_string(),
            summary: SUMMARY.to_string(),
            none: NONE.to_string(),
        }
    }

    /// Loads `checkpoint.md.j2`, `summary.md.j2`, `none.md.j2` from `dir` where they exist.
    pub fn load(dir: &Path) -> Result<Templates, StrategyError> {
        let mut t = Templates::embedded();
        for (name, slot) in [
            ("checkpoint.md.j2", &mut t.checkpoint),
            ("summary.md.j2", &mut t.summary),
            ("none.md.j2", &mut t.none),
        ] {
            let p = dir.join(name);
            if p.is_file() {
                *slot = crate::text::read_file(&p).map_err(|e| StrategyError::Template {
                    name: p.display().to_string(),
                    message: e.to_string(),
                })?;
            }
        }
        Ok(t)
    }

    fn render(
        &self,
        name: &str,
        source: &str,
        ctx: serde_json::Value,
    ) -> Result<String, StrategyError> {
        let mut env = Environment::new();
        if let Ok(syntax) = minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()
        {
            env.set_syntax(syntax);
        }
        // Content is text for a model, not HTML; quotation blocks are neutralised explicitly.
        env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
        env.add_filter("quote", |s: String| neutralize_delimiters(&s));
        let err = |e: minijinja::Error| StrategyError::Template {
            name: name.to_string(),
            message: e.to_string(),
        };
        env.add_template(name, source).map_err(err)?;
        let tmpl = env.get_template(name).map_err(err)?;
        tmpl.render(minijinja::value::Serde(ctx))
            .map(|s| s.trim_end().to_string() + "\n")
            .map_err(err)
    }

    pub fn render_checkpoint(
        &self,
        cp: &Checkpoint,
        retrieval: bool,
    ) -> Result<String, StrategyError> {
        let ctx = json!({ "cp": cp, "retrieval": retrieval });
        self.render("checkpoint.md.j2", &self.checkpoint, ctx)
    }

    pub fn render_summary(&self, summary: &str) -> Result<String, StrategyError> {
        self.render(
            "summary.md.j2",
            &self.summary,
            json!({ "summary": summary }),
        )
    }

    /// The summary a rendered summary message carries: `rendered` without what the summary
    /// template wraps around it (a chain reads its previous summary back).
    pub fn unwrap_summary(&self, rendered: &str) -> Result<String, StrategyError> {
        const MARK: &str = "\u{1}summary\u{1}";
        let wrapped = self.render_summary(MARK)?;
        let (head, tail) = wrapped.split_once(MARK).unwrap_or((wrapped.as_str(), ""));
        let body = rendered.strip_prefix(head).unwrap_or(rendered);
        Ok(body.strip_suffix(tail).unwrap_or(body).trim().to_string())
    }

    /// The prompt of a live summariser: `template` (a file's text) or the embedded default.
    pub fn render_summarize_prompt(
        &self,
        state: &InterruptedState,
        template: Option<&str>,
    ) -> Result<String, StrategyError> {
        self.render_summarize_prompt_after(None, state, template)
    }

    /// The prompt of a live summariser in a chain: `previous` (the previous handoff's text) is
    /// the template's `previous`, and `state` holds only the events since.
    pub fn render_summarize_prompt_after(
        &self,
        previous: Option<&str>,
        state: &InterruptedState,
        template: Option<&str>,
    ) -> Result<String, StrategyError> {
        let events: Vec<serde_json::Value> = state
            .events
            .iter()
            .map(
                |e| json!({"id": e.id, "kind": e.kind, "origin": e.origin.label(), "text": e.text}),
            )
            .collect();
        self.render(
            "summarize.md.j2",
            template.unwrap_or(SUMMARIZE),
            json!({ "objective": state.task.objective, "events": events, "previous": previous }),
        )
    }

    pub fn render_none(&self, state: &InterruptedState) -> Result<String, StrategyError> {
        self.render(
            "none.md.j2",
            &self.none,
            json!({ "objective": state.task.objective }),
        )
    }
}
