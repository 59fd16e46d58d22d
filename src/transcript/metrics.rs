//! The measures of a handoff built from a transcript prefix, computed without a model.
//!
//! - **Needed values**: the argument values of the run's tool calls after the cut, and of its
//!   ground-truth actions, that already appeared before the cut (in the full prefix rendered as a
//!   transcript). Leaves of nested arguments count one by one; booleans, nulls, values shorter than
//!   [`MIN_VALUE_CHARS`] after normalisation and strings over [`MAX_VALUE_CHARS`] (free text, not
//!   an id, amount, date or name) are not values. **Retention** is the fraction the handoff text
//!   carries verbatim after [`normalize`].
//! - **User-statement retention**: per user turn before the cut, the fraction of its content words
//!   (normalised words of three or more characters that are not [`STOP_WORDS`]) found among the
//!   handoff's words; the mean over turns that have any.
//!
//! Owns these definitions. Must not: build handoffs, call a model, or read records.

use std::collections::BTreeSet;

use serde_json::Value;

use super::model::{TRole, Transcript};

/// Values shorter than this after normalisation (`5`, `no`) match too much text to mean anything.
pub const MIN_VALUE_CHARS: usize = 3;
/// Strings longer than this are free text (a thought, a message body), not a value.
pub const MAX_VALUE_CHARS: usize = 64;

/// Words that carry no content for the user-statement overlap.
pub const STOP_WORDS: [&str; 60] = [
    "the", "and", "for", "are", "but", "not", "you", "your", "yours", "all", "any", "can", "had",
    "her", "was", "one", "our", "out", "has", "have", "his", "how", "its", "may", "now", "see",
    "who", "did", "get", "him", "let", "she", "too", "use", "that", "this", "with", "from", "they",
    "will", "would", "could", "should", "what", "when", "where", "which", "there", "their", "then",
    "than", "them", "been", "were", "also", "just", "like", "please", "thanks", "thank",
];

/// The matching form of a text: lower case, words are maximal runs of letters and digits, joined
/// by one space and framed by spaces. Punctuation, underscores and line breaks do not matter
/// (`credit_card_4421486` matches "credit card 4421486"); spelling does (`2024-05-20` does not
/// match "May 20th").
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push(' ');
    let mut in_word = false;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
            in_word = true;
        } else if !c.is_ascii() && c.is_alphanumeric() {
            out.extend(c.to_lowercase());
            in_word = true;
        } else if in_word {
            out.push(' ');
            in_word = false;
        }
    }
    if in_word {
        out.push(' ');
    }
    out
}

/// A JSON number as people write it: `250.0` is `250`.
pub fn number_text(n: &serde_json::Number) -> String {
    match (n.as_i64(), n.as_f64()) {
        (Some(i), _) => i.to_string(),
        (None, Some(f)) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
        _ => n.to_string(),
    }
}

/// The leaves of an argument value with their paths (`flights[0].date`).
pub fn leaves(path: String, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::String(s) => out.push((path, s.clone())),
        Value::Number(n) => out.push((path, number_text(n))),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                leaves(format!("{path}[{i}]"), x, out);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                leaves(p, x, out);
            }
        }
        Value::Bool(_) | Value::Null => {}
    }
}

/// A value a continuation needs, where it first appeared before the cut and what uses it.
#[derive(Debug, Clone, PartialEq)]
pub struct NeededValue {
    pub value: String,
    /// Its normalised form (what is matched).
    pub norm: String,
    /// `message N (role[, tool])`, or `the prefix` when it spans messages.
    pub first_seen: String,
    /// `message N tool.arg` or `ground truth tool.arg`.
    pub used_by: String,
}

impl std::fmt::Display for NeededValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (first seen {}; used by {})",
            self.value, self.first_seen, self.used_by
        )
    }
}

/// The values the rest of the run (calls from message position `at` on, and the ground truth)
/// uses that already appear in `prefix_text` (the full prefix as a transcript).
pub fn needed_values(t: &Transcript, at: usize, prefix_text: &str) -> Vec<NeededValue> {
    let prefix = normalize(prefix_text);
    let mut uses: Vec<(String, String)> = Vec::new();
    for m in &t.messages[at..] {
        for c in &m.tool_calls {
            let mut l = Vec::new();
            leaves(String::new(), &Value::Object(c.arguments.clone()), &mut l);
            for (p, v) in l {
                uses.push((v, format!("message {} {}.{p}", m.index, c.name)));
            }
        }
    }
    for g in &t.ground_truth {
        let mut l = Vec::new();
        leaves(String::new(), &Value::Object(g.arguments.clone()), &mut l);
        for (p, v) in l {
            uses.push((v, format!("ground truth {}.{p}", g.name)));
        }
    }
    // Where each message's text is, to say where a value first appeared.
    let seen: Vec<(String, String)> = t.messages[..at]
        .iter()
        .map(|m| {
            let mut text = m.content.clone();
            for c in &m.tool_calls {
                text.push(' ');
                text.push_str(&serde_json::to_string(&c.arguments).unwrap_or_default());
            }
            let role = match (m.role, &m.name) {
                (TRole::Tool, Some(n)) => format!("tool {n}"),
                (TRole::Tool, None) => "tool".into(),
                (TRole::User, _) => "user".into(),
                (TRole::Assistant, _) => "assistant".into(),
            };
            (normalize(&text), format!("message {} ({role})", m.index))
        })
        .collect();
    let mut out: Vec<NeededValue> = Vec::new();
    let mut done = BTreeSet::new();
    for (value, used_by) in uses {
        if value.chars().count() > MAX_VALUE_CHARS {
            continue;
        }
        let norm = normalize(&value);
        if norm.trim().chars().count() < MIN_VALUE_CHARS || !prefix.contains(&norm) {
            continue;
        }
        if !done.insert(norm.clone()) {
            continue;
        }
        let first_seen = seen
            .iter()
            .find(|(text, _)| text.contains(&norm))
            .map(|(_, w)| w.clone())
            .unwrap_or_else(|| "the prefix".into());
        out.push(NeededValue {
            value,
            norm,
            first_seen,
            used_by,
        });
    }
    out
}

/// The needed values `handoff_text` does not carry verbatim (after normalisation).
pub fn lost<'a>(needed: &'a [NeededValue], handoff_text: &str) -> Vec<&'a NeededValue> {
    let h = normalize(handoff_text);
    needed.iter().filter(|v| !h.contains(&v.norm)).collect()
}

/// The fraction of `needed` that `handoff_text` carries; `None` when nothing is needed.
pub fn retention(needed: &[NeededValue], handoff_text: &str) -> Option<f64> {
    (!needed.is_empty())
        .then(|| 1.0 - lost(needed, handoff_text).len() as f64 / needed.len() as f64)
}

fn content_words(text: &str) -> BTreeSet<String> {
    normalize(text)
        .split_whitespace()
        .filter(|w| w.chars().count() >= 3 && !STOP_WORDS.contains(w))
        .map(str::to_string)
        .collect()
}

/// The mean over user turns before position `at` of the share of their content words the handoff
/// has; `None` when no turn has a content word.
pub fn user_statement_retention(t: &Transcript, at: usize, handoff_text: &str) -> Option<f64> {
    let have: BTreeSet<String> = normalize(handoff_text)
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let scores: Vec<f64> = t.messages[..at]
        .iter()
        .filter(|m| m.role == TRole::User)
        .map(|m| content_words(&m.content))
        .filter(|w| !w.is_empty())
        .map(|w| w.iter().filter(|x| have.contains(*x)).count() as f64 / w.len() as f64)
        .collect();
    (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64)
}

/// A tool call's arguments in matching form (for next-action agreement): every leaf normalised,
/// keys sorted.
pub fn normalized_arguments(args: &crate::scenario::Object) -> Vec<(String, String)> {
    let mut l = Vec::new();
    leaves(String::new(), &Value::Object(args.clone()), &mut l);
    let mut out: Vec<(String, String)> = l
        .into_iter()
        .map(|(p, v)| (p, normalize(&v).trim().to_string()))
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_ignores_punctuation_not_spelling() {
        assert_eq!(normalize("Credit_Card-4421486!"), " credit card 4421486 ");
        assert!(
            normalize("pay with credit card 4421486.").contains(&normalize("credit_card_4421486"))
        );
        assert!(!normalize("May 20th").contains(&normalize("2024-05-20")));
        // Words match whole: 136 is not inside HAT1360.
        assert!(!normalize("HAT1360").contains(&normalize("136")));
        assert_eq!(
            number_text(&serde_json::Number::from_f64(250.0).expect("finite")),
            "250"
        );
    }

    #[test]
    fn user_overlap_counts_content_words() {
        let t: Transcript = serde_json::from_value(serde_json::json!({
            "format": super::super::model::FORMAT, "id": "x",
            "origin": {"file": "f", "format": "openai", "position": 0},
            "messages": [
                {"index": 0, "role": "user", "content": "Please cancel reservation ZFA04Y today"},
                {"index": 1, "role": "user", "content": "ok"}
            ]
        }))
        .expect("transcript");
        // content words: cancel, reservation, zfa04y, today ("ok" has none and is skipped).
        let s = user_statement_retention(&t, 2, "I will cancel ZFA04Y").expect("a turn");
        assert!((s - 0.5).abs() < 1e-9, "{s}");
        assert_eq!(user_statement_retention(&t, 0, "x"), None);
    }
}
