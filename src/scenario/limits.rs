//! Bounded work on any scenario file: the limits a scenario must keep, checked when it is
//! loaded, before anything is validated by replay or generated at a history scale.
//!
//! Owns: the limits (documented in README's "Reliability" section) and [`check`], which names
//! the field of every breach. Must not: generate volume or replay anything (`volume` and
//! `validate` do, on a scenario that passed here, so their work is bounded by these numbers).
//!
//! Why these checks come first: one megabyte-long entry in a volume word list made the generator
//! copy it into every padded call of a 40k-token history (a gigabyte of memory, minutes of
//! token counting). A file is measured before it is read, its strings right after parsing, and
//! the volume's output is bounded from its declaration, without expanding it.

use std::path::Path;

use serde_json::Value;

use super::problem::Problem;
use crate::spec::{Scenario, Volume};

/// The largest scenario file read at all (checked from its size before it is read).
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// The longest string (or mapping key) anywhere in a scenario.
pub const MAX_STRING_BYTES: usize = 64 * 1024;
/// The longest volume entry: a word-list entry or any template of the `volume` section.
pub const MAX_VOLUME_ENTRY_BYTES: usize = 1024;
/// The most entries of one volume word list.
pub const MAX_VOCAB_ENTRIES: usize = 10_000;
/// The most records of one generated collection, and documents of one document family.
pub const MAX_GENERATED_ITEMS: u32 = 100_000;
/// The most bytes a scenario's volume can generate in all (collections and documents, at the
/// longest every template can fill to): bounded before anything is generated.
pub const MAX_VOLUME_BYTES: u64 = 64 * 1024 * 1024;
/// The lines of one generated document are capped here by the generator (`volume::expand`).
const MAX_DOCUMENT_LINES: u64 = 5000;

fn problem(path: impl Into<String>, message: impl Into<String>) -> Problem {
    Problem {
        path: path.into(),
        message: message.into(),
    }
}

fn size(n: u64) -> String {
    if n >= 1024 * 1024 {
        format!("{:.1} MiB", n as f64 / (1024.0 * 1024.0))
    } else if n >= 1024 {
        format!("{:.1} KiB", n as f64 / 1024.0)
    } else {
        format!("{n} bytes")
    }
}

/// Refuses a file larger than [`MAX_FILE_BYTES`] before it is read (the message for the user).
pub fn check_file_size(file: &Path) -> Result<(), String> {
    match std::fs::metadata(file) {
        Ok(m) if m.len() > MAX_FILE_BYTES => Err(format!(
            "is {}; a scenario file may be at most {} (README, \"Reliability\")",
            size(m.len()),
            size(MAX_FILE_BYTES)
        )),
        _ => Ok(()),
    }
}

/// Every breach of the limits in a parsed scenario, each naming its field.
pub fn check(s: &Scenario) -> Vec<Problem> {
    let mut problems = Vec::new();
    if let Some(v) = &s.volume {
        volume(v, &mut problems);
    }
    // The document as its fields are named in the file (the serialised form uses the same
    // names), so a path reads as the file does. A volume entry already named above (under its
    // tighter limit) is not named twice.
    let mut long = Vec::new();
    if let Ok(doc) = serde_json::to_value(s) {
        strings("", &doc, &mut long);
    }
    long.retain(|p| !problems.iter().any(|q| q.path == p.path));
    problems.extend(long);
    problems
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

fn strings(path: &str, v: &Value, out: &mut Vec<Problem>) {
    let long = |s: &str| s.len() > MAX_STRING_BYTES;
    let what = |s: &str| {
        format!(
            "is {} long; a scenario string may be at most {}",
            size(s.len() as u64),
            size(MAX_STRING_BYTES as u64)
        )
    };
    match v {
        Value::String(s) if long(s) => out.push(problem(path, what(s))),
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                strings(&format!("{path}[{i}]"), x, out);
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                if long(k) {
                    let short: String = k.chars().take(40).collect();
                    out.push(problem(
                        join(path, &format!("{short}…")),
                        format!("(a key) {}", what(k)),
                    ));
                    continue;
                }
                strings(&join(path, k), x, out);
            }
        }
        _ => {}
    }
}

/// The longest text `template` can fill to: its own length, each `{NAME}` at the longest entry
/// of its list, each built-in at its longest.
fn filled_bound(template: &str, v: &Volume, key_bound: u64) -> u64 {
    let mut total = template.len() as u64;
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        let name = &after[..close];
        total += match name.split_once(':') {
            Some(("hex", n)) => n.trim().parse::<u64>().unwrap_or(32).min(64),
            Some(_) => 20,
            None if name == "document" => key_bound,
            None => v
                .vocab
                .get(name)
                .and_then(|l| l.iter().map(|e| e.len() as u64).max())
                .unwrap_or(32),
        };
        rest = &after[close + 1..];
    }
    total
}

/// The most lines a `lines` template can ask for: a number, `{int:A-B}` at B, anything else at
/// the generator's cap.
fn lines_bound(lines: &str) -> u64 {
    let t = lines.trim();
    let n = t.parse::<u64>().ok().or_else(|| {
        t.strip_prefix("{int:")
            .and_then(|r| r.strip_suffix('}'))
            .and_then(|r| r.split_once('-'))
            .and_then(|(_, b)| b.trim().parse::<u64>().ok())
    });
    n.unwrap_or(MAX_DOCUMENT_LINES).min(MAX_DOCUMENT_LINES)
}

fn volume(v: &Volume, out: &mut Vec<Problem>) {
    let entry = |path: String, s: &str, out: &mut Vec<Problem>| {
        if s.len() > MAX_VOLUME_ENTRY_BYTES {
            out.push(problem(
                path,
                format!(
                    "is {} long; a volume entry (a word-list entry or a template) may be at most {}",
                    size(s.len() as u64),
                    size(MAX_VOLUME_ENTRY_BYTES as u64)
                ),
            ));
        }
    };
    let before = out.len();
    for (name, list) in &v.vocab {
        if list.len() > MAX_VOCAB_ENTRIES {
            out.push(problem(
                format!("volume.vocab.{name}"),
                format!(
                    "has {} entries; a word list may have at most {MAX_VOCAB_ENTRIES}",
                    list.len()
                ),
            ));
        }
        for (i, e) in list.iter().enumerate() {
            entry(format!("volume.vocab.{name}[{i}]"), e, out);
        }
    }
    for (name, c) in &v.collections {
        for (field, t) in &c.record {
            entry(format!("volume.collections.{name}.record.{field}"), t, out);
        }
        if c.records > MAX_GENERATED_ITEMS {
            out.push(problem(
                format!("volume.collections.{name}.records"),
                format!(
                    "is {}; a collection may generate at most {MAX_GENERATED_ITEMS} records",
                    c.records
                ),
            ));
        }
    }
    for (i, d) in v.documents.iter().enumerate() {
        for (field, t) in [("key", &d.key), ("lines", &d.lines), ("line", &d.line)] {
            entry(format!("volume.documents[{i}].{field}"), t, out);
        }
        if d.count > MAX_GENERATED_ITEMS {
            out.push(problem(
                format!("volume.documents[{i}].count"),
                format!(
                    "is {}; a document family may generate at most {MAX_GENERATED_ITEMS} documents",
                    d.count
                ),
            ));
        }
    }
    for (i, c) in v.calls.iter().enumerate() {
        for (arg, t) in &c.args {
            entry(format!("volume.calls[{i}].args.{arg}"), t, out);
        }
    }
    if out.len() > before {
        // The bound below would only repeat these.
        return;
    }
    // What the volume can generate at most, from its declaration alone.
    let key_bound = v
        .documents
        .iter()
        .map(|d| filled_bound(&d.key, v, 0))
        .max()
        .unwrap_or(0);
    let mut parts: Vec<(String, u64)> = Vec::new();
    for (name, c) in &v.collections {
        let per: u64 = c
            .record
            .iter()
            .map(|(f, t)| f.len() as u64 + filled_bound(t, v, key_bound))
            .sum();
        parts.push((
            format!("volume.collections.{name}"),
            per.saturating_mul(u64::from(c.records)),
        ));
    }
    for (i, d) in v.documents.iter().enumerate() {
        let per = filled_bound(&d.key, v, 0).saturating_add(
            lines_bound(&d.lines).saturating_mul(filled_bound(&d.line, v, key_bound) + 1),
        );
        parts.push((
            format!("volume.documents[{i}]"),
            per.saturating_mul(u64::from(d.count)),
        ));
    }
    let total = parts.iter().fold(0u64, |a, (_, n)| a.saturating_add(*n));
    if total > MAX_VOLUME_BYTES {
        parts.sort_by_key(|p| std::cmp::Reverse(p.1));
        let largest = &parts[0];
        out.push(problem(
            largest.0.clone(),
            format!(
                "the volume can generate up to {} in all ({} of it here); a scenario's volume may generate at most {}: fewer records or documents, or shorter templates",
                size(total),
                size(largest.1),
                size(MAX_VOLUME_BYTES)
            ),
        ));
    }
}
