//! The CI gate: rules over a run folder (and optionally a baseline run), an exit code, a JUnit XML
//! file with one test case per rule, and a Markdown summary for a pull-request comment.
//!
//! This module owns the verdict type, the gate's errors and exit codes, and the Markdown
//! summary; the policy file is [`policy`], the rules [`rules`], the JUnit file [`junit`]. The gate
//! reads saved records only; it never runs a cell and never rewrites a run folder.

mod junit;
mod policy;
mod rules;

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Serialize;

pub use junit::junit;
pub use policy::{Policy, load_policy};
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

/// One rule's verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleResult {
    pub name: String,
    pub held: bool,
    /// The figure behind the verdict.
    pub detail: String,
}

/// A Markdown summary for a pull-request comment.
pub fn markdown(results: &[RuleResult]) -> String {
    let failed = results.iter().filter(|r| !r.held).count();
    let mut m = if failed == 0 {
        format!(
            "### compaction-eval gate: all {} rules held\n\n",
            results.len()
        )
    } else {
        format!(
            "### compaction-eval gate: {failed} of {} rules failed\n\n",
            results.len()
        )
    };
    m.push_str("| rule | verdict | figure |\n| --- | --- | --- |\n");
    for r in results {
        let _ = writeln!(
            m,
            "| {} | {} | {} |",
            md_escape(&r.name),
            if r.held { "held" } else { "**failed**" },
            md_escape(&r.detail)
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
