//! `viewer.html`: one self-contained page per run folder, built from its saved files only
//! (`results.jsonl`, `conversations.jsonl.gz`): every cell in a list with filters (strategy,
//! destination, scale, outcome, error class), and for the cell chosen its handoff, its
//! conversation (live exchanges with requests, answers, tool calls and their verdicts, timings,
//! usage and `finish_reason`; the actions and the world's answers) and the explanation of its
//! score; above them the live destinations' health ([`crate::health`]).
//!
//! Escaping: every string the page shows (model-written text above all) goes into the page as
//! JSON inside a `<script type="application/json">` element with `<`, `>`, `&` and the two JavaScript
//! line separators written as `\uXXXX` escapes, so no string can end the element; the script
//! shows strings with `textContent` only, never as markup. The page loads nothing: no network,
//! no other file.
//!
//! Cells are numbered as the lines of `results.jsonl` (1 for the first), the numbers `show` and
//! the report's links use (`viewer.html#cell=N`).
//!
//! Owns: the page, and the score explanation in words ([`explain`]) that `show` prints too.
//! Must not: import `report` (the report links to the page by its file name), or change a
//! saved file.

use std::path::Path;

use serde_json::{Value, json};

use std::collections::BTreeMap;

use crate::conversation::{self, Entry, Handoff};
use crate::record::{RunRecord, Status};

/// The page's file name in a run folder.
pub const FILE: &str = "viewer.html";

/// Why the page could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ViewerError {
    #[error(transparent)]
    Conversation(#[from] conversation::LogError),
    #[error("cannot write {}: {source}", path.display())]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

/// The link to cell `n` (1-based, as in `results.jsonl`) in the page.
pub fn link(n: usize) -> String {
    format!("{FILE}#cell={n}")
}

/// A cell's score, in words: how it ended, what failed and the evidence (one line each).
pub fn explain(r: &RunRecord) -> Vec<String> {
    let d = &r.diagnostics;
    let mut out = Vec::new();
    if r.status == Status::Errored {
        out.push(format!(
            "errored ({}): {}",
            r.error_class.map(|c| c.as_str()).unwrap_or("unknown"),
            r.error.as_deref().unwrap_or("")
        ));
        out.push("excluded from the metric aggregates".into());
    } else {
        out.push(format!(
            "task success: {}",
            if r.metrics.task_success { "yes" } else { "no" }
        ));
    }
    if let Some(o) = &d.context_overflow {
        out.push(format!(
            "the handoff ({} tokens) did not fit the context window ({} tokens, {} reserved): not continued",
            o.restore_tokens, o.context_window, o.reserve
        ));
    }
    let finish = match d.finish {
        Some(f) => format!("{f:?}").to_lowercase(),
        None if d.step_budget_exhausted => "none: the step budget ran out".into(),
        None => "none".into(),
    };
    out.push(format!(
        "finish: {finish}{}; {} steps",
        if d.degraded { " (degraded)" } else { "" },
        d.steps
    ));
    if !d.failed_predicates.is_empty() {
        out.push(format!(
            "success predicates that do not hold (by index): {:?}",
            d.failed_predicates
        ));
    }
    let list = |name: &str, items: Vec<String>, out: &mut Vec<String>| {
        for i in items {
            out.push(format!("{name}: {i}"));
        }
    };
    let dv = serde_json::to_value(d).unwrap_or(Value::Null);
    for (key, name) in [
        ("omitted", "omitted context"),
        ("repeated", "repeated work"),
        ("duplicates", "duplicate side effect"),
        ("violations", "safety violation"),
        ("checkpoint_rule_violations", "checkpoint rule broken"),
    ] {
        for x in dv[key].as_array().into_iter().flatten() {
            out.push(format!("{name}: {x}"));
        }
    }
    list(
        "recovery behaviour missed",
        d.recovery_missed.clone(),
        &mut out,
    );
    list(
        "injected directive followed",
        d.injections_followed.clone(),
        &mut out,
    );
    list(
        "fact lost in the handoff",
        d.facts_lost_in_handoff.clone(),
        &mut out,
    );
    list(
        "fact forgotten (distraction model)",
        d.facts_forgotten.clone(),
        &mut out,
    );
    list("fact overridden", d.facts_overridden.clone(), &mut out);
    list(
        "provenance upgrade",
        d.provenance_upgrades.clone(),
        &mut out,
    );
    out
}

/// The outcome a filter sees: `success`, `failure` (scored, task not done) or `errored`.
pub fn outcome(r: &RunRecord) -> &'static str {
    match (r.status, r.metrics.task_success) {
        (Status::Errored, _) => "errored",
        (Status::Ok, true) => "success",
        (Status::Ok, false) => "failure",
    }
}

/// At most this many bytes of conversations and handoffs go into the page; the cells past it
/// (successes first, then scored failures: errored and live cells are embedded first) say how
/// to print them (`show`).
pub const EMBED_LIMIT: usize = 24 << 20;

/// Which cells' conversations the page embeds first: errored, then live, then failed, then the
/// rest; in record order within each.
fn priority(r: &RunRecord) -> u8 {
    match (outcome(r), r.diagnostics.live.is_some()) {
        ("errored", _) => 0,
        (_, true) => 1,
        ("failure", _) => 2,
        _ => 3,
    }
}

/// The page's data: one object per cell, the handoffs the embedded cells name, and the health of
/// the live destinations.
fn data(records: &[RunRecord], entries: Vec<Entry>, handoffs: &BTreeMap<String, Handoff>) -> Value {
    let mut by_cell: BTreeMap<conversation::Cell, Entry> = BTreeMap::new();
    for e in entries {
        // The last entry of a cell wins (a rerun's).
        by_cell.insert(e.cell.clone(), e);
    }
    let mut order: Vec<usize> = (0..records.len()).collect();
    order.sort_by_key(|&i| (priority(&records[i]), i));
    let mut budget = EMBED_LIMIT;
    let mut embedded: BTreeMap<usize, &Entry> = BTreeMap::new();
    let mut shown: BTreeMap<&str, &Handoff> = BTreeMap::new();
    for i in order {
        let r = &records[i];
        let Some(e) = r.conversation.as_ref().and_then(|_| by_cell.get(&r.id())) else {
            continue;
        };
        let handoff = e.handoff.as_deref().and_then(|d| handoffs.get(d));
        let new_handoff = handoff.filter(|h| !shown.contains_key(h.digest.as_str()));
        let size = serde_json::to_string(e).map(|t| t.len()).unwrap_or(0)
            + new_handoff
                .and_then(|h| serde_json::to_string(&h.messages).ok())
                .map(|t| t.len())
                .unwrap_or(0);
        if size > budget {
            continue;
        }
        budget -= size;
        if let Some(h) = new_handoff {
            shown.insert(&h.digest, h);
        }
        embedded.insert(i, e);
    }
    let cells: Vec<Value> = records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let entry = embedded.get(&i).copied();
            let requests: Vec<Value> = entry
                .map(|e| {
                    (0..e.exchanges.len())
                        .filter_map(|k| e.request(k))
                        .collect()
                })
                .unwrap_or_default();
            json!({
                "n": i + 1,
                "scenario": r.scenario, "scale": r.scale, "interrupt": r.interrupt,
                "strategy": r.strategy, "model": r.model, "rep": r.rep,
                "status": match r.status { Status::Ok => "ok", Status::Errored => "errored" },
                "outcome": outcome(r),
                "error_class": r.error_class.map(|c| c.as_str()).unwrap_or(""),
                "error": r.error,
                "metrics": r.metrics,
                "live": r.diagnostics.live,
                "explanation": explain(r),
                "entry": entry,
                "saved": r.conversation.is_some(),
                // The last request whole: what the model saw at its last turn.
                "last_request": requests.last(),
            })
        })
        .collect();
    let health: Vec<Value> = crate::health::assess(records)
        .iter()
        .map(|h| {
            json!({"model": h.model, "figures": h.figures(), "meaningful": h.meaningful(),
                "warning": h.warning()})
        })
        .collect();
    let handoffs: BTreeMap<&str, &Vec<Value>> =
        shown.iter().map(|(d, h)| (*d, &h.messages)).collect();
    json!({"cells": cells, "handoffs": handoffs, "health": health})
}

/// JSON that cannot end a `<script>` element nor be read as markup: `<`, `>`, `&`, U+2028 and
/// U+2029 as `\uXXXX` escapes (the same string for `JSON.parse`).
pub fn script_json(v: &Value) -> String {
    let text = serde_json::to_string(v).unwrap_or_else(|_| "null".into());
    let mut out = String::with_capacity(text.len() + 64);
    for ch in text.chars() {
        match ch {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// The page for these records and conversation entries.
pub fn page(
    records: &[RunRecord],
    entries: Vec<Entry>,
    handoffs: &BTreeMap<String, Handoff>,
) -> String {
    let data = crate::secrets::json_line(&data(records, entries, handoffs));
    let data: Value = serde_json::from_str(&data).unwrap_or(Value::Null);
    TEMPLATE.replace("/*DATA*/", &script_json(&data))
}

/// Writes `DIR/viewer.html` from the folder's records and conversations.
pub fn write(dir: &Path, records: &[RunRecord]) -> Result<(), ViewerError> {
    let entries = conversation::read(dir)?;
    let handoffs = conversation::handoffs(dir)?;
    let html = page(records, entries, &handoffs);
    let path = dir.join(FILE);
    crate::durable::write(&path, html.as_bytes()).map_err(|source| ViewerError::Io { path, source })
}

/// The page: style, the data's place (`/*DATA*/`) and the script that renders it.
const TEMPLATE: &str = include_str!("viewer.html");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_json_cannot_close_its_element_and_reads_back_the_same() {
        let v = json!({"text": "</script><img src=x onerror=alert(1)> & \u{2028}"});
        let s = script_json(&v);
        assert!(
            !s.contains('<') && !s.contains('>') && !s.contains('&'),
            "{s}"
        );
        assert_eq!(serde_json::from_str::<Value>(&s).expect("json"), v);
    }
}
