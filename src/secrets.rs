//! The secrets of this process's run: the values of every API-key variable the run loaded
//! (`OPENAI_API_KEY`, each configured `api_key_env`, and any variable named like a credential:
//! `*API_KEY`, `*_TOKEN`, `*_SECRET`, `*_PASSWORD`, `*_KEY`), and their redaction from everything
//! the harness writes or sends.
//!
//! Owns: the process-wide, append-only set of secret values ([`register_env`], [`load_run`]),
//! finding them in text ([`contains`]) and replacing them ([`redact`], [`redact_json`],
//! [`redact_serde`]). The set is process-wide so that every writer (records, reports, audit
//! files, plug-in stderr tails, gate files) redacts without each caller passing it along.
//!
//! A leaf: it imports nothing of the pipeline. Must not: log, store or print a secret, or decide
//! what a secret in a handoff means (the runner errors the cell).
//!
//! Only the literal value is found (and its JSON-escaped form): a plug-in that encodes a key it
//! obtained (base64, reversed) is not caught here; keeping keys away from plug-ins is
//! `plugin`'s isolation. Values shorter than [`MIN_LEN`] bytes are not treated as secrets (they
//! would garble every output and are not real keys).

use std::borrow::Cow;
use std::sync::RwLock;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted secret]";
/// The shortest value treated as a secret, bytes.
pub const MIN_LEN: usize = 4;

/// Each secret as (raw value, JSON-escaped value without quotes), longest first.
static SECRETS: RwLock<Vec<(String, String)>> = RwLock::new(Vec::new());

/// Adds a secret value (ignored when shorter than [`MIN_LEN`] or already known).
pub fn register(value: &str) {
    register_min(value, MIN_LEN);
}

/// The shortest value of a variable that is a secret only by its name ([`CREDENTIAL_SUFFIXES`]):
/// real keys are long, and a short value (`SORT_KEY=name`) would garble every output.
pub const MIN_LEN_BY_NAME: usize = 16;

fn register_min(value: &str, min: usize) {
    let value = value.trim();
    if value.len() < min {
        return;
    }
    let escaped = serde_json::to_string(value).unwrap_or_default();
    let escaped = escaped
        .strip_prefix('"')
        .and_then(|e| e.strip_suffix('"'))
        .unwrap_or(value)
        .to_string();
    let mut s = SECRETS.write().unwrap_or_else(|e| e.into_inner());
    if s.iter().any(|(v, _)| v == value) {
        return;
    }
    s.push((value.to_string(), escaped));
    s.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
}

/// Adds the value of an environment variable, if it is set.
pub fn register_env(var: &str) {
    if let Ok(v) = std::env::var(var) {
        register(&v);
    }
}

/// Names of environment variables that hold credentials by convention: their values are
/// secrets too, whether or not a configuration names them (`audit` loads no model table).
pub const CREDENTIAL_SUFFIXES: &[&str] = &["API_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_KEY"];

/// Registers the secrets of a run: `OPENAI_API_KEY`, each named key variable, and every variable
/// of this process's environment whose name ends in one of [`CREDENTIAL_SUFFIXES`] and whose
/// value has at least [`MIN_LEN_BY_NAME`] bytes.
pub fn load_run<'a>(key_vars: impl IntoIterator<Item = &'a str>) {
    register_env("OPENAI_API_KEY");
    for v in key_vars {
        register_env(v);
    }
    for (name, value) in std::env::vars_os() {
        let (Some(name), Some(value)) = (name.to_str(), value.to_str()) else {
            continue;
        };
        if CREDENTIAL_SUFFIXES.iter().any(|s| name.ends_with(s)) {
            register_min(value, MIN_LEN_BY_NAME);
        }
    }
}

/// Registers the secrets of the run a `manifest.json` describes (its models' `api_key_env`
/// names, read from this process's environment) and `OPENAI_API_KEY`.
pub fn load_manifest(manifest: &serde_json::Value) {
    let vars: Vec<&str> = manifest
        .pointer("/config/model_defs")
        .and_then(|m| m.as_object())
        .map(|m| {
            m.values()
                .filter_map(|d| d.get("api_key_env").and_then(|v| v.as_str()))
                .collect()
        })
        .unwrap_or_default();
    load_run(vars);
}

fn with<T>(f: impl FnOnce(&[(String, String)]) -> T) -> T {
    let s = SECRETS.read().unwrap_or_else(|e| e.into_inner());
    f(&s)
}

/// Whether any secret is known.
pub fn any() -> bool {
    with(|s| !s.is_empty())
}

/// Whether `text` holds a secret, raw or JSON-escaped.
pub fn contains(text: &str) -> bool {
    with(|s| {
        s.iter()
            .any(|(raw, esc)| text.contains(raw.as_str()) || text.contains(esc.as_str()))
    })
}

/// `text` with every secret replaced by [`REDACTED`].
pub fn redact(text: &str) -> Cow<'_, str> {
    with(|s| {
        if !s.iter().any(|(raw, _)| text.contains(raw.as_str())) {
            return Cow::Borrowed(text);
        }
        let mut out = text.to_string();
        for (raw, _) in s {
            if out.contains(raw.as_str()) {
                out = out.replace(raw.as_str(), REDACTED);
            }
        }
        Cow::Owned(out)
    })
}

/// `text` with every secret replaced, raw and in its JSON-escaped form (for JSON or CSV files
/// rendered as a whole).
pub fn redact_text(text: &str) -> Cow<'_, str> {
    let first = redact(text);
    with(|s| {
        if !s
            .iter()
            .any(|(raw, esc)| raw != esc && first.contains(esc.as_str()))
        {
            return first.clone();
        }
        let mut out = first.to_string();
        for (_, esc) in s {
            out = out.replace(esc.as_str(), REDACTED);
        }
        Cow::Owned(out)
    })
}

/// Redacts every string (and object key) of a JSON value in place.
pub fn redact_json(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            if let Cow::Owned(r) = redact(s) {
                *s = r;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(redact_json),
        Value::Object(m) => {
            let old = std::mem::take(m);
            for (k, mut x) in old {
                redact_json(&mut x);
                m.insert(redact(&k).into_owned(), x);
            }
        }
        _ => {}
    }
}

/// Redacts every string of a serialisable value (through its JSON form), when it holds a secret.
/// A value that does not survive the round trip is left as it was.
pub fn redact_serde<T: Serialize + DeserializeOwned>(x: &mut T) {
    if !any() {
        return;
    }
    let Ok(text) = serde_json::to_string(x) else {
        return;
    };
    if !contains(&text) {
        return;
    }
    if let Ok(mut v) = serde_json::from_str::<serde_json::Value>(&text) {
        redact_json(&mut v);
        if let Ok(back) = serde_json::from_value(v) {
            *x = back;
        }
    }
}

/// A JSON line for `x` with every secret redacted.
pub fn json_line<T: Serialize>(x: &T) -> String {
    let line = serde_json::to_string(x).unwrap_or_default();
    if !any() || !contains(&line) {
        return line;
    }
    match serde_json::from_str::<serde_json::Value>(&line) {
        Ok(mut v) => {
            redact_json(&mut v);
            serde_json::to_string(&v).unwrap_or_default()
        }
        Err(_) => redact(&line).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_found_and_replaced_raw_and_escaped() {
        register("sk-unit-\"quoted\"-secret-1234");
        register("ab"); // too short: ignored
        assert!(contains("x sk-unit-\"quoted\"-secret-1234 y"));
        let line = json_line(&serde_json::json!({"k": "a sk-unit-\"quoted\"-secret-1234 b"}));
        assert!(!contains(&line), "{line}");
        assert!(line.contains(REDACTED));
        assert_eq!(redact("ab cd"), "ab cd");
        let mut v: Vec<String> = vec!["sk-unit-\"quoted\"-secret-1234".into()];
        redact_serde(&mut v);
        assert_eq!(v, vec![REDACTED.to_string()]);
    }
}
