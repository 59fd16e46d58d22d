//! The CI gate: rules over a run folder (and optionally a baseline run), an exit code, a JUnit XML
//! file with one test case per rule, and a Markdown summary for a pull-request comment.
//!
//! This module owns the verdict types ([`Verdict`]: held, failed or inconclusive), the gate's
//! errors and its exit code ([`exit_code`]), and the Markdown summary; the policy file is [`policy`], the rules [`rules`], the JUnit file [`junit`]. The gate
//! reads saved records only; it never runs a cell and never rewrites a run folder.

mod junit;
mod policy;
mod rules;

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Serialize;

pub use junit::junit;
pub use policy::{OnInconclusive, Policy, load_policy};
pub use rules::evaluate;

/// Exit codes of `gate` (defined with every other exit code in [`crate::exit`]).
pub use crate::exit::gate as exit;

/// Why the gate could not judge.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    #[error("{0}: not a run folder (no results.jsonl)")]
    NotARun(PathBuf),
    #[error("{0}: holds no record (an empty run is never a pass)")]
    Empty(PathBuf),
    #[error(transparent)]
    Record(#[from] crate::record::RecordError),
    #[error(transparent)]
    Results(#[from] crate::results::ResultsError),
    #[error("{file}: {message}")]
    Policy { file: PathBuf, message: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A rule's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Held,
    /// The rule is broken: a threshold exceeded, or an interval that shows a loss beyond the
    /// margin.
    Failed,
    /// A comparison whose interval is too wide to tell a loss beyond the margin from none.
    Inconclusive,
}

impl Verdict {
    /// The verdict as the gate prints it (six characters, aligned).
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Held => "held  ",
            Verdict::Failed => "FAILED",
            Verdict::Inconclusive => "INCONCLUSIVE",
        }
    }
}

/// One rule's verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleResult {
    pub name: String,
    pub verdict: Verdict,
    /// The figure behind the verdict.
    pub detail: String,
    /// A caution about the figure (e.g. a margin below the smallest detectable drop).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

impl RuleResult {
    pub fn held(&self) -> bool {
        self.verdict == Verdict::Held
    }
}

/// The gate's exit code: [`exit::FAILED`] when a rule failed (or an inconclusive comparison
/// under `on_inconclusive = "fail"`), [`exit::INCONCLUSIVE`] when one was inconclusive under
/// `"exit-3"`, else [`exit::HELD`].
pub fn exit_code(results: &[RuleResult], policy: &Policy) -> i32 {
    let any = |v: Verdict| results.iter().any(|r| r.verdict == v);
    if any(Verdict::Failed) {
        return exit::FAILED;
    }
    if any(Verdict::Inconclusive) {
        return match policy.on_inconclusive {
            OnInconclusive::Exit3 => exit::INCONCLUSIVE,
            OnInconclusive::Fail => exit::FAILED,
            OnInconclusive::Pass => exit::HELD,
        };
    }
    exit::HELD
}

/// A Markdown summary for a pull-request comment.
pub fn markdown(results: &[RuleResult]) -> String {
    let count = |v: Verdict| results.iter().filter(|r| r.verdict == v).count();
    let (failed, unsure) = (count(Verdict::Failed), count(Verdict::Inconclusive));
    let mut m = if failed + unsure == 0 {
        format!(
            "### compaction-eval gate: all {} rules held\n\n",
            results.len()
        )
    } else {
        format!(
            "### compaction-eval gate: {failed} of {} rules failed, {unsure} inconclusive\n\n",
            results.len()
        )
    };
    m.push_str("| rule | verdict | figure |\n| --- | --- | --- |\n");
    for r in results {
        let verdict = match r.verdict {
            Verdict::Held => "held",
            Verdict::Failed => "**failed**",
            Verdict::Inconclusive => "*inconclusive*",
        };
        let warning = r
            .warning
            .as_ref()
            .map(|w| format!(" — warning: {w}"))
            .unwrap_or_default();
        let _ = writeln!(
            m,
            "| {} | {verdict} | {}{} |",
            md_escape(&r.name),
            md_escape(&r.detail),
            md_escape(&warning)
        );
    }
    crate::secrets::redact(&m).into_owned()
}

/// The summary of a gate that could not judge (exit 2): the error, quoted.
pub fn markdown_error(message: &str) -> String {
    crate::secrets::redact(&format!(
        "### compaction-eval gate: unusable input\n\n{}\n",
        md_escape(message)
    ))
    .into_owned()
}

/// Text quoted in a Markdown table cell: HTML and Markdown markup shown as text, one line.
pub fn md_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' | '\r' => out.push(' '),
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}
