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

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

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

/// What the page embeds, chosen from the sizes of the folder's entries before any is kept:
/// the record index → the entry's place in the conversations file, and the handoffs shown.
struct Choice {
    entries: BTreeMap<usize, usize>,
    handoffs: BTreeSet<String>,
}

/// An entry as the choice reads it: its place in the file, its serialised size and its
/// handoff's digest.
struct Sized {
    place: usize,
    size: usize,
    handoff: Option<String>,
}

/// What choosing reads of a record: its [`priority`], whether it names a saved conversation,
/// and the digest of its cell's id (16 bytes a cell, where the records are kIB each).
struct Candidate {
    priority: u8,
    saved: bool,
    digest: u64,
}

impl Candidate {
    fn of(r: &RunRecord) -> Candidate {
        Candidate {
            priority: priority(r),
            saved: r.conversation.is_some(),
            digest: r.digest(),
        }
    }
}

/// Which cells' conversations (and which handoffs) fit [`EMBED_LIMIT`], in [`priority`] order;
/// the last entry of a cell wins (a rerun's).
fn choose(
    records: &[Candidate],
    by_cell: &std::collections::HashMap<u64, Sized>,
    handoff_sizes: &BTreeMap<String, usize>,
) -> Choice {
    let mut order: Vec<usize> = (0..records.len()).collect();
    order.sort_by_key(|&i| (records[i].priority, i));
    let mut budget = EMBED_LIMIT;
    let mut entries = BTreeMap::new();
    let mut handoffs: BTreeSet<String> = BTreeSet::new();
    for i in order {
        let r = &records[i];
        let Some(e) = Some(r)
            .filter(|r| r.saved)
            .and_then(|r| by_cell.get(&r.digest))
        else {
            continue;
        };
        let new_handoff = e
            .handoff
            .as_deref()
            .filter(|d| !handoffs.contains(*d))
            .and_then(|d| handoff_sizes.get(d).map(|n| (d, *n)));
        let size = e.size + new_handoff.map(|(_, n)| n).unwrap_or(0);
        if size > budget {
            continue;
        }
        budget -= size;
        if let Some((d, _)) = new_handoff {
            handoffs.insert(d.to_string());
        }
        entries.insert(i, e.place);
    }
    Choice { entries, handoffs }
}

/// The records a page is written from, in file order: held ([`page`]) or read from the run
/// folder's `results.jsonl` a record at a time ([`write`]), so that writing the page holds no
/// record beyond the one it writes.
trait Records {
    fn each(&self, f: &mut dyn FnMut(&RunRecord) -> std::io::Result<()>) -> std::io::Result<()>;
}

/// Records held in memory.
struct Held<'a>(&'a [RunRecord]);

impl Records for Held<'_> {
    fn each(&self, f: &mut dyn FnMut(&RunRecord) -> std::io::Result<()>) -> std::io::Result<()> {
        self.0.iter().try_for_each(f)
    }
}

/// A `results.jsonl` read a record at a time.
struct Saved<'a>(&'a Path);

impl Records for Saved<'_> {
    fn each(&self, f: &mut dyn FnMut(&RunRecord) -> std::io::Result<()>) -> std::io::Result<()> {
        // An error of `f` (a failed write) travels through the scan as an I/O error and comes
        // back out as itself.
        crate::record::scan_records(self.0, |_, r| {
            f(&r).map_err(|source| crate::record::RecordError::Io {
                path: self.0.to_path_buf(),
                source,
            })
        })
        .map_err(|e| match e {
            crate::record::RecordError::Io { source, .. } => source,
            other => std::io::Error::other(other.to_string()),
        })
    }
}

fn candidates(records: &dyn Records) -> std::io::Result<Vec<Candidate>> {
    let mut out = Vec::new();
    records.each(&mut |r| {
        out.push(Candidate::of(r));
        Ok(())
    })?;
    Ok(out)
}

/// One cell's object in the page's data.
fn cell_value(i: usize, r: &RunRecord, entry: Option<&Entry>) -> Value {
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
}

/// The page's data, written in pieces: `{"cells": [...], "handoffs": {...}, "health": [...]}`,
/// one object per cell, the handoffs the embedded cells name, the live destinations' health.
/// Each piece is redacted and escaped on its own ([`piece`]), which gives the bytes the whole
/// object would: redaction and escaping act inside strings, and no string spans two pieces.
fn write_data(
    out: &mut dyn Write,
    records: &dyn Records,
    entries: &BTreeMap<usize, String>,
    choice: &Choice,
    handoffs: &BTreeMap<String, String>,
) -> std::io::Result<()> {
    out.write_all(b"{\"cells\":[")?;
    let mut health = crate::health::Assessor::default();
    let mut i = 0usize;
    records.each(&mut |r| {
        if i > 0 {
            out.write_all(b",")?;
        }
        health.add(r);
        // Kept as text and read again here: an entry's structure takes several times its text.
        // Chosen by the digest of the cell's id; shown only if it is this cell's (a digest two
        // cells share leaves the second without its conversation, never with another's).
        let entry: Option<Entry> = choice
            .entries
            .get(&i)
            .and_then(|place| entries.get(place))
            .and_then(|t| serde_json::from_str::<Entry>(t).ok())
            .filter(|e| r.same_id(&e.cell));
        out.write_all(piece(&cell_value(i, r, entry.as_ref())).as_bytes())?;
        i += 1;
        Ok(())
    })?;
    // The handoffs shown, by digest (hex: a key needs no escaping), each read from its text.
    out.write_all(b"],\"handoffs\":{")?;
    for (k, (digest, messages)) in handoffs.iter().enumerate() {
        if k > 0 {
            out.write_all(b",")?;
        }
        let v: Value = serde_json::from_str(messages).unwrap_or(Value::Null);
        out.write_all(piece(&Value::String(digest.clone())).as_bytes())?;
        out.write_all(b":")?;
        out.write_all(piece(&v).as_bytes())?;
    }
    out.write_all(b"}")?;
    let health: Vec<Value> = health
        .finish()
        .iter()
        .map(|h| {
            json!({"model": h.model, "figures": h.figures(), "meaningful": h.meaningful(),
                "warning": h.warning()})
        })
        .collect();
    out.write_all(b",\"health\":")?;
    out.write_all(piece(&Value::Array(health)).as_bytes())?;
    out.write_all(b"}")
}

/// One piece of the page's data: redacted ([`crate::secrets::json_line`]) and escaped as
/// [`script_json`] escapes.
fn piece(v: &Value) -> String {
    escape_script(&crate::secrets::json_line(v))
}

/// JSON that cannot end a `<script>` element nor be read as markup: `<`, `>`, `&`, U+2028 and
/// U+2029 as `\uXXXX` escapes (the same string for `JSON.parse`).
pub fn script_json(v: &Value) -> String {
    escape_script(&serde_json::to_string(v).unwrap_or_else(|_| "null".into()))
}

/// JSON text with `<`, `>`, `&`, U+2028 and U+2029 written as `\uXXXX` escapes.
fn escape_script(text: &str) -> String {
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

/// The page for these records, conversation entries (in the order written) and handoffs.
pub fn page(
    records: &[RunRecord],
    entries: Vec<Entry>,
    handoffs: &BTreeMap<String, Handoff>,
) -> String {
    let mut by_cell = std::collections::HashMap::new();
    for (place, e) in entries.iter().enumerate() {
        by_cell.insert(e.cell.digest(), sized(place, e));
    }
    let sizes = handoffs
        .iter()
        .map(|(d, h)| (d.clone(), messages_size(h)))
        .collect();
    // Reading held records does not fail.
    let choice = choose(
        &candidates(&Held(records)).unwrap_or_default(),
        &by_cell,
        &sizes,
    );
    let kept: BTreeMap<usize, String> = entries
        .iter()
        .enumerate()
        .filter_map(|(place, e)| serde_json::to_string(e).ok().map(|t| (place, t)))
        .collect();
    let shown: BTreeMap<String, String> = handoffs
        .iter()
        .filter(|(d, _)| choice.handoffs.contains(*d))
        .filter_map(|(d, h)| {
            serde_json::to_string(&h.messages)
                .ok()
                .map(|t| (d.clone(), t))
        })
        .collect();
    let mut out = Vec::new();
    let (head, tail) = template();
    out.extend_from_slice(head.as_bytes());
    // Writing to memory does not fail.
    let _ = write_data(&mut out, &Held(records), &kept, &choice, &shown);
    out.extend_from_slice(tail.as_bytes());
    String::from_utf8(out).unwrap_or_default()
}

fn sized(place: usize, e: &Entry) -> Sized {
    Sized {
        place,
        size: serde_json::to_string(e).map(|t| t.len()).unwrap_or(0),
        handoff: e.handoff.clone(),
    }
}

fn messages_size(h: &Handoff) -> usize {
    serde_json::to_string(&h.messages)
        .map(|t| t.len())
        .unwrap_or(0)
}

/// The template before and after the data's place.
fn template() -> (&'static str, &'static str) {
    TEMPLATE.split_once("/*DATA*/").unwrap_or((TEMPLATE, ""))
}

/// Writes `DIR/viewer.html` from the folder's records and conversations, reading each file
/// twice (records: once to choose what is embedded, once to write each cell; conversations: once
/// for the sizes that choose, once for the entries chosen) and writing the page in pieces: what
/// it holds is the embedded part (at most [`EMBED_LIMIT`] of text) and 16 bytes a cell, never
/// every record nor every cell's conversation.
pub fn write(dir: &Path) -> Result<(), ViewerError> {
    let results = dir.join("results.jsonl");
    let records = Saved(&results);
    let io = |source| ViewerError::Io {
        path: results.clone(),
        source,
    };
    let conversations = dir.join(conversation::FILE);
    let handoffs_file = dir.join(conversation::HANDOFFS);
    // By the digest of the cell's id, not a second copy of every id. The last entry of a cell wins (a rerun's).
    let mut by_cell = std::collections::HashMap::new();
    conversation::each(&conversations, |place, e: Entry| {
        by_cell.insert(e.cell.digest(), sized(place, &e));
        Ok(())
    })?;
    let mut sizes = BTreeMap::new();
    conversation::each(&handoffs_file, |_, h: Handoff| {
        sizes.insert(h.digest.clone(), messages_size(&h));
        Ok(())
    })?;
    let choice = choose(&candidates(&records).map_err(io)?, &by_cell, &sizes);
    drop(by_cell);
    let wanted: BTreeSet<usize> = choice.entries.values().copied().collect();
    let mut entries = BTreeMap::new();
    conversation::each(&conversations, |place, e: Entry| {
        if wanted.contains(&place)
            && let Ok(t) = serde_json::to_string(&e)
        {
            entries.insert(place, t);
        }
        Ok(())
    })?;
    let mut shown = BTreeMap::new();
    conversation::each(&handoffs_file, |_, h: Handoff| {
        if choice.handoffs.contains(&h.digest)
            && let Ok(t) = serde_json::to_string(&h.messages)
        {
            shown.insert(h.digest, t);
        }
        Ok(())
    })?;
    let path = dir.join(FILE);
    let (head, tail) = template();
    crate::durable::write_streamed(&path, |out| {
        out.write_all(head.as_bytes())?;
        write_data(out, &records, &entries, &choice, &shown)?;
        out.write_all(tail.as_bytes())
    })
    .map_err(|source| ViewerError::Io { path, source })
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
