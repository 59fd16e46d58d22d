//! Which argument values of a call an agent must have seen (issue 11, item 3).
//!
//! A simulated destination may use a literal argument value only when it can see it: in the
//! handoff text, the objective, or a result it read during its own continuation. Values bound
//! from results (`$name.field`) and `$fresh` are visible by construction. `scenarios validate`
//! checks the same rule on every reference continuation.
//!
//! Which values count (a *copied* value — something an agent cannot compose and must have read):
//! - a string without white space of at least 4 characters (an id, key, path, amount, address,
//!   date) that is not one of the parameter's declared `allowed` values and not the parameter's
//!   own name;
//! - a number from 10 up or with a fraction (a count of 22, 90 days, a dose of 12.5; a numeric
//!   string of under 4 characters follows this rule too); a single-digit integer (1, 2, a step
//!   count, a revision) is not checked — the ordinary small integers of every call;
//! - whatever the rule says, a parameter that declares `copied: true` is always checked (a dose
//!   of 5, 3 refills) and one that declares `copied: false` never is (a page size the agent
//!   picks);
//! - never a boolean or null;
//! - never the idempotency key of a write (its `idempotency_key_param`, or a parameter named
//!   `idempotency_key`): a key the agent mints.
//!
//! Visible means: contained in the seen text after normalisation (lowercase, white space folded,
//! [`crate::text::normalize`]) and with thousands separators between digits dropped, so `1309.00`
//! is visible in "1,309.00". The seen text always includes the tool definitions (names,
//! descriptions, parameters) the agent is given.
//!
//! A string with white space is text the agent composes (a title, a message body, a code edit)
//! and is not checked as a whole; but any string that contains the new text of a resource
//! perturbation of the interrupt point (its `replace`, or the `to` of one of its `changes`) needs
//! that text visible — it is the stale resource's new revision.
//!
//! A value a perturbation's `changes` sets — of a resource or of a record, a string, number or
//! boolean, or a leaf of an object or array — is needed wherever an argument uses it, whatever
//! its length: a string argument that contains the new string (or is the new number or boolean),
//! a number or boolean argument equal to it. A number or boolean of a record is seen as its field
//! with the value (`capacity: 148`, or `"capacity":148` in a result): a bare `true` is everywhere.

use serde_json::Value;

use super::detect::normalize;
use crate::spec::{
    Object, ParamSpec, PathSeg, Perturbation, ToolSpec, ValueChange, parse_field_path,
};

/// One piece of an argument that must be visible.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Needed {
    /// Where in the arguments: `args.path`, `args.items[0].id`.
    pub path: String,
    /// The text that must be visible (the whole value, or a perturbation's `replace` text).
    pub piece: String,
    /// For a perturbation's `replace` text: the older text (`find`) it replaced.
    pub older: Option<String>,
}

/// A parameter's `copied` declaration: `Some(true)` a value read from somewhere whatever its
/// size, `Some(false)` the agent's own choice, `None` the general rule.
fn declared(spec: Option<&ParamSpec>) -> Option<bool> {
    match spec {
        Some(ParamSpec::Full(d)) => d.copied,
        _ => None,
    }
}

/// Whether a string is a copied value under the rule above.
pub fn is_copied_value(param: &str, spec: Option<&ParamSpec>, s: &str) -> bool {
    let t = s.trim();
    if t.is_empty() || t.starts_with('$') || t.chars().any(char::is_whitespace) {
        return false;
    }
    match declared(spec) {
        Some(false) => return false,
        Some(true) => return true,
        None => {}
    }
    // A number written as a string follows the number rule ("12.5", "90"), and keeps the
    // string rule from 4 characters on (an id such as `0007`).
    let short = t.chars().count() < 4;
    if short && t.parse::<f64>().is_ok_and(|n| n.is_finite()) {
        return t.parse::<f64>().is_ok_and(small_number_counts);
    }
    if short || t.eq_ignore_ascii_case(param) {
        return false;
    }
    let allowed = match spec {
        Some(ParamSpec::Full(d)) => d.allowed.as_deref().unwrap_or(&[]),
        _ => &[],
    };
    !allowed
        .iter()
        .any(|a| a.as_str().is_some_and(|a| a.eq_ignore_ascii_case(t)))
}

/// The general rule for a number: from 10 up, or any fraction (a dose of 12.5, a count of 22,
/// 90 days); a single-digit integer (1, 2, a step count, a revision) only where the parameter
/// declares `copied: true`.
fn small_number_counts(n: f64) -> bool {
    n.abs() >= 10.0 || n.fract() != 0.0
}

fn number_needed(spec: Option<&ParamSpec>, v: &Value) -> bool {
    match declared(spec) {
        Some(c) => c && v.is_number(),
        None => v.as_f64().is_some_and(small_number_counts),
    }
}

/// Every piece the interrupt point's reference continuation copies into its calls, with the
/// call's tool, in the continuation's order (`tools`: the world's definitions).
pub fn continuation_needs<'a>(
    tools: &[ToolSpec],
    it: &'a crate::spec::Interrupt,
) -> Vec<(&'a str, Needed)> {
    let mut out = Vec::new();
    for step in &it.continuation {
        let (Some(tool), Some(args)) = (&step.call, &step.args) else {
            continue;
        };
        let spec = tools.iter().find(|t| &t.name == tool);
        for n in needed_values(spec, args, &it.perturb) {
            out.push((tool.as_str(), n));
        }
    }
    out
}

/// The pieces of `args` (literal, unresolved: `$…` references are skipped) that must be visible
/// before a call of `tool` is made from an interrupt point with perturbations `perturb`.
pub fn needed_values(
    tool: Option<&ToolSpec>,
    args: &Object,
    perturb: &[Perturbation],
) -> Vec<Needed> {
    let mut out = Vec::new();
    for (k, v) in args {
        let spec = tool.and_then(|t| t.params.get(k));
        let minted = tool.is_some_and(|t| {
            t.idempotency_key_param.as_deref() == Some(k.as_str())
                || (t.effect.is_write() && k == "idempotency_key")
        });
        let before = out.len();
        walk(&format!("args.{k}"), k, spec, v, perturb, &mut out);
        if minted {
            // A new idempotency key is the agent's own choice (any fresh value would do); reusing
            // the original key after a timeout is what the pending-operation facts test.
            let mut i = before;
            while i < out.len() {
                if out[i].older.is_none() {
                    out.remove(i);
                } else {
                    i += 1;
                }
            }
        }
    }
    out
}

fn walk(
    path: &str,
    param: &str,
    spec: Option<&ParamSpec>,
    v: &Value,
    perturb: &[Perturbation],
    out: &mut Vec<Needed>,
) {
    match v {
        Value::String(s) => {
            if s == "$fresh" || super::script::is_reference(s) {
                return;
            }
            if is_copied_value(param, spec, s) {
                out.push(Needed {
                    path: path.to_string(),
                    piece: s.clone(),
                    older: None,
                });
            }
            for r in revised_values(perturb) {
                if r.matches_string(s) {
                    out.push(Needed {
                        path: path.to_string(),
                        piece: r.newer,
                        older: Some(r.older),
                    });
                }
            }
        }
        Value::Number(_) | Value::Bool(_) => {
            if number_needed(spec, v) {
                out.push(Needed {
                    path: path.to_string(),
                    piece: v.to_string(),
                    older: None,
                });
            }
            for r in revised_values(perturb) {
                if r.matches_scalar(v) {
                    out.push(Needed {
                        path: path.to_string(),
                        piece: r.newer,
                        older: Some(r.older),
                    });
                }
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                walk(&format!("{path}[{i}]"), param, None, x, perturb, out);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                walk(&format!("{path}.{k}"), k, None, x, perturb, out);
            }
        }
        _ => {}
    }
}

/// The form of a text that [`visible`] searches: normalised (SHA-256 digests reduced to
/// `sha256:…` — a checksum is not a place an agent reads an id or an amount from), thousands
/// separators dropped, and a JSON key written as YAML or prose writes it (`"capacity":148` reads
/// `capacity: 148`, so a record's field shows the same in a result and in a summary).
pub fn seen_text(text: &str) -> String {
    unquote_keys(&fold_digits(&normalize(text)))
}

/// `"key":` (a quoted run without quotes or white space, then a colon) becomes `key: `.
fn unquote_keys(s: &str) -> String {
    if !s.contains("\":") {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('"') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let key_end = after.find(|c: char| c == '"' || c.is_whitespace());
        match key_end {
            Some(e) if after[e..].starts_with("\":") => {
                out.push_str(&after[..e]);
                out.push_str(": ");
                rest = after[e + 2..].strip_prefix(' ').unwrap_or(&after[e + 2..]);
            }
            _ => {
                out.push('"');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn fold_digits(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, c) in chars.iter().enumerate() {
        let between = *c == ','
            && i > 0
            && chars[i - 1].is_ascii_digit()
            && chars.get(i + 1).is_some_and(|n| n.is_ascii_digit());
        if !between {
            out.push(*c);
        }
    }
    out
}

/// What the agent is always given: the tool definitions.
pub fn tools_text(tools: &[ToolSpec]) -> String {
    let mut out = String::new();
    for t in tools {
        out.push_str(&t.name);
        out.push(' ');
        out.push_str(&t.description);
        out.push(' ');
        out.push_str(&serde_json::to_string(&t.params).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// A value an interrupt point's perturbation changes: the text a destination must see to know
/// the new value, the text that shows the older one, and — for a declared `changes` entry — the
/// new value itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Revision {
    /// The new value's text: a string as is; a number or boolean of a record as `field: value`
    /// (a bare `true` or `5` is seen everywhere; what shows it is the field with that value).
    pub newer: String,
    /// The older value's text, in the same form.
    pub older: String,
    /// The new value (`None` for a `replace` text).
    pub to: Option<Value>,
}

impl Revision {
    /// Whether a string argument uses the new value: it contains the new text (a string change or
    /// `replace`), or it is the number or boolean a change sets.
    fn matches_string(&self, s: &str) -> bool {
        match &self.to {
            None | Some(Value::String(_)) => {
                !self.newer.trim().is_empty() && s.contains(self.newer.as_str())
            }
            Some(v) => ValueChange::scalar_text(v).is_some_and(|t| s.trim() == t),
        }
    }

    /// Whether a number or boolean argument is the new value.
    fn matches_scalar(&self, v: &Value) -> bool {
        match (&self.to, v) {
            (Some(Value::Number(a)), Value::Number(b)) => a.as_f64() == b.as_f64(),
            (Some(Value::Bool(a)), Value::Bool(b)) => a == b,
            (Some(Value::String(t)), Value::Number(b)) => {
                t.trim().parse::<f64>().ok() == b.as_f64()
            }
            (Some(Value::String(t)), Value::Bool(b)) => t.trim() == b.to_string(),
            _ => false,
        }
    }
}

/// The values an interrupt point's perturbations change: a resource's `find` → `replace`, each
/// `changes` entry of a resource (its `from`/`to` texts), and each `changes` entry of a record,
/// an object or array value broken into the leaves that differ.
pub fn revised_values(perturb: &[Perturbation]) -> Vec<Revision> {
    let mut out = Vec::new();
    for p in perturb {
        if p.resource.is_some() {
            if let (Some(f), Some(r)) = (&p.find, &p.replace) {
                out.push(Revision {
                    newer: r.clone(),
                    older: f.clone(),
                    to: None,
                });
            }
            for c in &p.changes {
                if let (Some(older), Some(newer)) = (
                    ValueChange::scalar_text(&c.from),
                    ValueChange::scalar_text(&c.to),
                ) {
                    out.push(Revision {
                        newer,
                        older,
                        to: Some(c.to.clone()),
                    });
                }
            }
        } else if p.record.is_some() {
            for c in &p.changes {
                let key = c
                    .field
                    .as_deref()
                    .and_then(parse_field_path)
                    .and_then(|segs| {
                        segs.into_iter().rev().find_map(|s| match s {
                            PathSeg::Key(k) => Some(k),
                            PathSeg::Index(_) => None,
                        })
                    })
                    .unwrap_or_default();
                record_leaves(&key, &c.from, &c.to, &mut out);
            }
        }
    }
    out
}

/// The leaves in which a record field's older and new values differ (`key` is the nearest field
/// name, which qualifies a number or boolean).
fn record_leaves(key: &str, from: &Value, to: &Value, out: &mut Vec<Revision>) {
    match (from, to) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, nb) in b {
                if let Some(na) = a.get(k) {
                    record_leaves(k, na, nb, out);
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (na, nb) in a.iter().zip(b) {
                record_leaves(key, na, nb, out);
            }
        }
        _ if from == to => {}
        (Value::String(f), Value::String(t)) => out.push(Revision {
            newer: t.clone(),
            older: f.clone(),
            to: Some(to.clone()),
        }),
        _ => {
            if let (Some(f), Some(t)) =
                (ValueChange::scalar_text(from), ValueChange::scalar_text(to))
            {
                out.push(Revision {
                    newer: format!("{key}: {t}"),
                    older: format!("{key}: {f}"),
                    to: Some(to.clone()),
                });
            }
        }
    }
}

/// Whether `piece` is visible in `seen` (built with [`seen_text`]): it occurs there as a whole
/// value — not as the middle of a longer number or word (`100` is not seen in `1003`, `cust-9`
/// not in `cust-91`; `2026-07-21` is seen in `2026-07-21t16:33:00z`).
pub fn visible(seen: &str, piece: &str) -> bool {
    let p = seen_text(piece);
    if p.is_empty() {
        return false;
    }
    let same_class = |a: char, b: char| {
        (a.is_ascii_digit() && b.is_ascii_digit()) || (a.is_alphabetic() && b.is_alphabetic())
    };
    let (first, last) = match (p.chars().next(), p.chars().next_back()) {
        (Some(f), Some(l)) => (f, l),
        _ => return false,
    };
    // A number below 100 is seen only as a number of its own: not a piece of a date, a time, a
    // version or a decimal (`24` is not seen in `2026-09-24`, `09:24` or `1.24`).
    let small = is_small_number(&p);
    seen.match_indices(p.as_str()).any(|(i, m)| {
        let head = &seen[..i];
        let tail = &seen[i + m.len()..];
        let before = head.chars().next_back();
        let after = tail.chars().next();
        if small && (joined(head.chars().rev()) || joined(tail.chars())) {
            return false;
        }
        !before.is_some_and(|b| same_class(b, first)) && !after.is_some_and(|a| same_class(a, last))
    })
}

/// Whether a normalised piece is a plain number below 100 (`22`, `12.5`, `-3`).
pub fn is_small_number(p: &str) -> bool {
    p.chars()
        .all(|c| c.is_ascii_digit() || c == '.' || c == '-')
        && p.parse::<f64>().is_ok_and(|n| n.abs() < 100.0)
}

/// Whether the characters next to a match (read away from it) join it to a longer token: an
/// alphanumeric, or a `.`/`:`/`-`/`/` followed by a digit.
fn joined(mut next: impl Iterator<Item = char>) -> bool {
    match next.next() {
        Some(c) if c.is_alphanumeric() => true,
        Some('.' | ':' | '-' | '/') => next.next().is_some_and(|d| d.is_ascii_digit()),
        _ => false,
    }
}

/// Replaces `piece` by `older` in the leaf of `args` at `path` (the destination acts on the
/// older value it holds): inside a string; or, for a number or boolean (whose piece may read
/// `field: value`), the whole leaf takes the older value.
pub fn substitute(args: &mut Object, path: &str, piece: &str, older: &str) {
    let Some(rest) = path.strip_prefix("args.") else {
        return;
    };
    let mut cur: Option<&mut Value> = None;
    for (n, seg) in split_path(rest).into_iter().enumerate() {
        cur = match (n, cur, seg) {
            (0, _, Seg::Key(k)) => args.get_mut(&k),
            (_, Some(Value::Object(o)), Seg::Key(k)) => o.get_mut(&k),
            (_, Some(Value::Array(a)), Seg::Index(i)) => a.get_mut(i),
            _ => None,
        };
        if cur.is_none() {
            return;
        }
    }
    let bare = |t: &str| t.rsplit_once(": ").map_or(t, |(_, v)| v).trim().to_string();
    let (want, o) = (bare(piece), bare(older));
    match cur {
        Some(Value::String(s)) if s.contains(piece) => *s = s.replace(piece, older),
        Some(Value::String(s)) if s.trim() == want => *s = o,
        Some(leaf @ (Value::Number(_) | Value::Bool(_))) => {
            let text = leaf.to_string();
            if text == want {
                *leaf = serde_json::from_str(&o).unwrap_or(Value::String(o));
            }
        }
        _ => {}
    }
}

enum Seg {
    Key(String),
    Index(usize),
}

fn split_path(p: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    for part in p.split('.') {
        let (key, idx) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            out.push(Seg::Key(key.to_string()));
        }
        for n in idx
            .split(['[', ']'])
            .filter(|x| !x.is_empty())
            .filter_map(|x| x.parse().ok())
        {
            out.push(Seg::Index(n));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_rule_skips_short_generic_and_composed_values() {
        let args: Object = serde_json::from_value(json!({
            "id": "PR-318", "status": "new", "flag": true, "n": 12, "amount": 4200,
            "title": "a composed title", "key": "$fresh", "ref": "$pr.id", "path": "path",
            "nested": [{"x": "INV-2026-001"}]
        }))
        .unwrap_or_default();
        let mut got: Vec<String> = needed_values(None, &args, &[])
            .into_iter()
            .map(|n| format!("{}={}", n.path, n.piece))
            .collect();
        got.sort();
        assert_eq!(
            got,
            // A two-digit number is a copied value too (a dose, a count): docs, "A destination
            // uses only values it can see".
            vec![
                "args.amount=4200",
                "args.id=PR-318",
                "args.n=12",
                "args.nested[0].x=INV-2026-001"
            ]
        );
    }

    #[test]
    fn substitution_reaches_nested_leaves() {
        let mut args: Object =
            serde_json::from_value(json!({"a": [{"b": "x NEW y"}]})).unwrap_or_default();
        substitute(&mut args, "args.a[0].b", "NEW", "OLD");
        assert_eq!(args["a"][0]["b"], json!("x OLD y"));
    }
}
