//! The `coding-context-policy/1` document and its validation, exactly as seed 004 states it.
//!
//! Owns: [`ContextPolicy`] and its references, [`validate`] (a JSON value → the typed policy, or every
//! error in document order, each naming the field's path and what is wrong), [`ContextPolicy::check`] (the
//! same rules on a typed value), the policy digest, and [`inspect_file`] (`inspect-context POLICY.json`).
//!
//! The rules: closed records at every level (an unknown field is refused, and a field whose name claims
//! permissions or authority is refused as such); all five top-level fields required; `format` exactly
//! `coding-context-policy/1`; `instructions` 1–16 references and `retainedEvidence` 0–16; names nonblank,
//! at most 128 characters and unique across both lists; every digest a bare lowercase SHA-256; `summary`
//! `null` or an exact digest plus `basedOn` naming every unique original digest (and nothing else, once
//! each); `maxBytes` an integer from 1 to 32768.
//!
//! Must not: read artifacts (whether the bytes exist is the report's question, not the policy's), accept
//! a field it does not know, or repair a policy (no defaults, no trimming, no case folding of digests).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use thiserror::Error;

use super::{POLICY_FORMAT, digest, is_digest};

/// The most references `instructions` and `retainedEvidence` may each hold.
pub const MAX_REFERENCES: usize = 16;
/// The longest reference name, in characters.
pub const MAX_NAME_CHARS: usize = 128;
/// The largest `maxBytes` a policy may declare.
pub const MAX_BYTES_LIMIT: u64 = 32_768;

/// A governing-context policy (`coding-context-policy/1`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContextPolicy {
    pub format: String,
    /// The original instructions every execution must receive.
    pub instructions: Vec<ArtifactRef>,
    /// Retained evidence (historical; not current acceptance proof).
    pub retained_evidence: Vec<ArtifactRef>,
    /// An optional advisory summary.
    pub summary: Option<SummaryRef>,
    /// The total raw document byte budget, a configured summary included.
    pub max_bytes: u64,
}

/// A named reference to an artifact's exact bytes.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArtifactRef {
    pub name: String,
    pub artifact_digest: String,
}

/// The advisory summary: its exact digest and the original digests it is based on.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SummaryRef {
    pub artifact_digest: String,
    pub based_on: Vec<String>,
}

/// One validation error: the field's path (`instructions[0].artifactDigest`; `policy` for the document
/// itself) and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("`{path}`: {message}")]
pub struct PolicyError {
    pub path: String,
    pub message: String,
}

/// Why `inspect-context FILE` could not produce a valid policy.
#[derive(Debug, Error)]
pub enum InspectError {
    #[error("cannot read policy file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}:{column}: not valid JSON: {message}", path.display())]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{}: {}", path.display(), list(errors))]
    Invalid {
        path: PathBuf,
        errors: Vec<PolicyError>,
    },
}

fn list(errors: &[PolicyError]) -> String {
    let mut out = format!(
        "the policy is invalid ({} error{}):",
        errors.len(),
        if errors.len() == 1 { "" } else { "s" }
    );
    for e in errors {
        out.push_str("\n  ");
        out.push_str(&e.to_string());
    }
    out
}

/// `inspect-context FILE`: read, parse and validate a policy file. Errors name the file (and, for JSON
/// syntax, the line and column).
pub fn inspect_file(path: &Path) -> Result<ContextPolicy, InspectError> {
    let bytes = std::fs::read(path).map_err(|source| InspectError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let value: Value = serde_json::from_slice::<Strict>(&bytes)
        .map(|s| s.0)
        .map_err(|e| {
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            let text = e.to_string();
            InspectError::Syntax {
                path: path.to_path_buf(),
                line: e.line(),
                column: e.column(),
                message: text.strip_suffix(&suffix).unwrap_or(&text).to_string(),
            }
        })?;
    validate(&value).map_err(|errors| InspectError::Invalid {
        path: path.to_path_buf(),
        errors,
    })
}

/// A JSON value read with duplicate object keys refused: in a policy file, `{"maxBytes": 8192,
/// "maxBytes": 32768}` would otherwise keep only the last one, and a reader of the file may see the first.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Strict, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> serde::de::Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(serde::de::Error::custom(format!(
                    "duplicate field `{key}` (a policy names each field once)"
                )));
            }
            let Strict(v) = map.next_value()?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

impl ContextPolicy {
    /// The validation rules on a typed value (builders call this before using a policy).
    pub fn check(&self) -> Result<(), Vec<PolicyError>> {
        validate(&self.to_value()).map(|_| ())
    }

    /// SHA-256 of the policy's canonical JSON (`serde_json::to_vec`, fields in declaration order).
    pub fn digest(&self) -> String {
        // Invariant: strings, integers, lists and options only; serializing cannot fail.
        digest(&serde_json::to_vec(self).expect("a policy always serializes"))
    }

    /// The unique instruction and evidence digests, in first-seen order (what `basedOn` must name).
    pub fn originals(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in self.instructions.iter().chain(&self.retained_evidence) {
            if !out.contains(&r.artifact_digest) {
                out.push(r.artifact_digest.clone());
            }
        }
        out
    }

    fn to_value(&self) -> Value {
        // Invariant as in `digest`.
        serde_json::to_value(self).expect("a policy always serializes")
    }
}

const TOP_FIELDS: [&str; 5] = [
    "format",
    "instructions",
    "retainedEvidence",
    "summary",
    "maxBytes",
];

/// Fragments of a field name that claims permissions or authority (matched case-insensitively).
const AUTHORITY_WORDS: [&str; 14] = [
    "permission",
    "authori",
    "approv",
    "grant",
    "scope",
    "role",
    "tool",
    "capabilit",
    "privilege",
    "allow",
    "access",
    "admin",
    "sudo",
    "trust",
];

/// Whether a field name claims permissions or authority.
fn claims_authority(field: &str) -> bool {
    let lower = field.to_lowercase();
    AUTHORITY_WORDS.iter().any(|w| lower.contains(w))
}

/// Errors collected per top-level field, so that they come out in document order even though the
/// summary is checked after the lists it refers to.
struct Collector {
    buckets: Vec<Vec<PolicyError>>,
    missing: Vec<PolicyError>,
}

impl Collector {
    fn push(&mut self, bucket: usize, path: impl Into<String>, message: impl Into<String>) {
        self.buckets[bucket].push(PolicyError {
            path: path.into(),
            message: message.into(),
        });
    }
}

/// A valid name or digest seen so far, with the path it was seen at.
struct Seen {
    value: String,
    path: String,
}

/// Validate a JSON value: every error, in document order (errors about missing fields last), or the typed
/// policy.
pub fn validate(v: &Value) -> Result<ContextPolicy, Vec<PolicyError>> {
    let Some(obj) = v.as_object() else {
        return Err(vec![PolicyError {
            path: "policy".into(),
            message: format!("a policy must be a JSON object, found {}", kind(v)),
        }]);
    };
    let mut c = Collector {
        buckets: vec![Vec::new(); obj.len()],
        missing: Vec::new(),
    };
    let mut format = None;
    let mut instructions = None;
    let mut evidence = None;
    let mut max_bytes = None;
    let mut names: Vec<Seen> = Vec::new();
    let mut originals: Vec<Seen> = Vec::new();
    let mut summary_at = None;
    for (k, (key, value)) in obj.iter().enumerate() {
        match key.as_str() {
            "format" => format = check_format(value, k, &mut c),
            "instructions" => {
                instructions = check_refs(key, value, 1, k, &mut c, &mut names, &mut originals)
            }
            "retainedEvidence" => {
                evidence = check_refs(key, value, 0, k, &mut c, &mut names, &mut originals)
            }
            "maxBytes" => max_bytes = check_max_bytes(value, k, &mut c),
            "summary" => summary_at = Some(k),
            other => closed(other, other, "a policy", &TOP_FIELDS, k, &mut c),
        }
    }
    // The summary refers to the originals, so it is checked once both lists have been read.
    // Membership in `basedOn` is only judged when both lists could be read (no cascade of errors).
    let lists_read = ["instructions", "retainedEvidence"]
        .iter()
        .all(|f| obj.get(*f).is_some_and(Value::is_array));
    let originals = lists_read.then_some(originals.as_slice());
    let summary = summary_at.map(|k| check_summary(&obj["summary"], k, &mut c, originals));
    for field in TOP_FIELDS {
        if !obj.contains_key(field) {
            let hint = if field == "summary" {
                " (use null for no summary)"
            } else {
                ""
            };
            c.missing.push(PolicyError {
                path: field.into(),
                message: format!("required field is missing{hint}"),
            });
        }
    }
    let errors: Vec<PolicyError> = c.buckets.into_iter().flatten().chain(c.missing).collect();
    match (format, instructions, evidence, summary, max_bytes) {
        (
            Some(format),
            Some(instructions),
            Some(retained_evidence),
            Some(Some(summary)),
            Some(max_bytes),
        ) if errors.is_empty() => Ok(ContextPolicy {
            format,
            instructions,
            retained_evidence,
            summary,
            max_bytes,
        }),
        _ => Err(errors),
    }
}

/// The JSON type of a value, for messages ("found a string").
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A user value quoted in a message, cut to a readable length.
fn shown(s: &str) -> String {
    const MAX: usize = 72;
    if s.chars().count() > MAX {
        let head: String = s.chars().take(MAX).collect();
        format!("`{head}…`")
    } else {
        format!("`{s}`")
    }
}

/// An unknown field of a closed record (`what` names the record, `known` its fields).
fn closed(path: &str, field: &str, what: &str, known: &[&str], k: usize, c: &mut Collector) {
    let message = if claims_authority(field) {
        "a policy cannot claim permissions or authority: fields claiming permissions or authority are \
         refused (permissions, approvals and validation stay with the existing mechanisms)"
            .to_string()
    } else {
        let fields: Vec<String> = known.iter().map(|f| format!("`{f}`")).collect();
        format!(
            "unknown field: {what} is a closed record with only {}",
            fields.join(", ")
        )
    };
    c.push(k, path, message);
}

fn check_format(v: &Value, k: usize, c: &mut Collector) -> Option<String> {
    match v.as_str() {
        Some(s) if s == POLICY_FORMAT => Some(s.to_string()),
        Some(s) => {
            c.push(
                k,
                "format",
                format!("must be exactly `{POLICY_FORMAT}`, found {}", shown(s)),
            );
            None
        }
        None => {
            c.push(
                k,
                "format",
                format!("must be the string `{POLICY_FORMAT}`, found {}", kind(v)),
            );
            None
        }
    }
}

/// Checks a digest field; `Some` only for a valid digest.
fn check_digest(path: &str, v: &Value, k: usize, c: &mut Collector) -> Option<String> {
    let Some(s) = v.as_str() else {
        c.push(
            k,
            path,
            format!(
                "must be a string (a lowercase SHA-256 digest), found {}",
                kind(v)
            ),
        );
        return None;
    };
    if is_digest(s) {
        return Some(s.to_string());
    }
    let message = if s.to_ascii_lowercase().starts_with("sha256:") {
        format!(
            "must be a bare lowercase SHA-256 digest (64 lowercase hex characters) without the \
             `sha256:` prefix, found {}",
            shown(s)
        )
    } else if s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        format!(
            "must be lowercase: a SHA-256 digest is 64 lowercase hex characters, found {}",
            shown(s)
        )
    } else {
        format!(
            "must be a lowercase SHA-256 digest (64 lowercase hex characters), found {} ({} characters)",
            shown(s),
            s.chars().count()
        )
    };
    c.push(k, path, message);
    None
}

/// Checks `instructions` or `retainedEvidence` (at top-level position `k`); records valid names and
/// digests for the cross-field rules.
fn check_refs(
    key: &str,
    v: &Value,
    min: usize,
    k: usize,
    c: &mut Collector,
    names: &mut Vec<Seen>,
    originals: &mut Vec<Seen>,
) -> Option<Vec<ArtifactRef>> {
    let Some(items) = v.as_array() else {
        c.push(
            k,
            key,
            format!(
                "must be an array of references {{name, artifactDigest}}, found {}",
                kind(v)
            ),
        );
        return None;
    };
    let mut ok = true;
    if items.len() < min || items.len() > MAX_REFERENCES {
        c.push(
            k,
            key,
            format!(
                "must hold {min}–{MAX_REFERENCES} references, found {}",
                items.len()
            ),
        );
        ok = false;
    }
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("{key}[{i}]");
        match check_ref(&at, item, k, c, names, originals) {
            Some(r) => out.push(r),
            None => ok = false,
        }
    }
    ok.then_some(out)
}

fn check_ref(
    at: &str,
    item: &Value,
    k: usize,
    c: &mut Collector,
    names: &mut Vec<Seen>,
    originals: &mut Vec<Seen>,
) -> Option<ArtifactRef> {
    const FIELDS: [&str; 2] = ["name", "artifactDigest"];
    let Some(obj) = item.as_object() else {
        c.push(
            k,
            at,
            format!(
                "must be an object {{name, artifactDigest}}, found {}",
                kind(item)
            ),
        );
        return None;
    };
    let mut name = None;
    let mut artifact = None;
    let mut ok = true;
    for (field, value) in obj {
        let path = format!("{at}.{field}");
        match field.as_str() {
            "name" => {
                name = check_name(&path, value, k, c, names);
                ok &= name.is_some();
            }
            "artifactDigest" => {
                artifact = check_digest(&path, value, k, c);
                match &artifact {
                    Some(d) => originals.push(Seen {
                        value: d.clone(),
                        path: at.to_string(),
                    }),
                    None => ok = false,
                }
            }
            other => {
                closed(&path, other, "a reference", &FIELDS, k, c);
                ok = false;
            }
        }
    }
    missing_fields(at, obj, &FIELDS, k, c);
    match (name, artifact) {
        (Some(name), Some(artifact_digest)) if ok => Some(ArtifactRef {
            name,
            artifact_digest,
        }),
        _ => None,
    }
}

/// A missing field of a nested record, reported where the record is (its position in the document).
fn missing_fields(
    at: &str,
    obj: &Map<String, Value>,
    fields: &[&str],
    k: usize,
    c: &mut Collector,
) {
    for f in fields {
        if !obj.contains_key(*f) {
            c.push(k, format!("{at}.{f}"), "required field is missing");
        }
    }
}

fn check_name(
    path: &str,
    v: &Value,
    k: usize,
    c: &mut Collector,
    names: &mut Vec<Seen>,
) -> Option<String> {
    let Some(s) = v.as_str() else {
        c.push(k, path, format!("must be a string, found {}", kind(v)));
        return None;
    };
    if s.trim().is_empty() {
        c.push(k, path, "must not be blank");
        return None;
    }
    let chars = s.chars().count();
    if chars > MAX_NAME_CHARS {
        c.push(
            k,
            path,
            format!("must be at most {MAX_NAME_CHARS} characters, found {chars}"),
        );
        return None;
    }
    if let Some(first) = names.iter().find(|n| n.value == s) {
        c.push(
            k,
            path,
            format!(
                "name {} is already used by `{}`: names must be unique across instructions and \
                 retainedEvidence",
                shown(s),
                first.path
            ),
        );
        return None;
    }
    names.push(Seen {
        value: s.to_string(),
        path: path.to_string(),
    });
    Some(s.to_string())
}

/// Checks `summary`; `Some(None)` for a valid `null`, `Some(Some(_))` for a valid reference.
fn check_summary(
    v: &Value,
    k: usize,
    c: &mut Collector,
    originals: Option<&[Seen]>,
) -> Option<Option<SummaryRef>> {
    const FIELDS: [&str; 2] = ["artifactDigest", "basedOn"];
    if v.is_null() {
        return Some(None);
    }
    let Some(obj) = v.as_object() else {
        c.push(
            k,
            "summary",
            format!(
                "must be null or an object {{artifactDigest, basedOn}}, found {}",
                kind(v)
            ),
        );
        return None;
    };
    let mut artifact = None;
    let mut based_on = None;
    let mut ok = true;
    for (field, value) in obj {
        let path = format!("summary.{field}");
        match field.as_str() {
            "artifactDigest" => {
                artifact = check_digest(&path, value, k, c);
                ok &= artifact.is_some();
            }
            "basedOn" => {
                based_on = check_based_on(value, k, c, originals);
                ok &= based_on.is_some();
            }
            other => {
                closed(&path, other, "the summary", &FIELDS, k, c);
                ok = false;
            }
        }
    }
    missing_fields("summary", obj, &FIELDS, k, c);
    match (artifact, based_on) {
        (Some(artifact_digest), Some(based_on)) if ok => Some(Some(SummaryRef {
            artifact_digest,
            based_on,
        })),
        _ => None,
    }
}

fn check_based_on(
    v: &Value,
    k: usize,
    c: &mut Collector,
    originals: Option<&[Seen]>,
) -> Option<Vec<String>> {
    let Some(items) = v.as_array() else {
        c.push(
            k,
            "summary.basedOn",
            format!("must be an array of original digests, found {}", kind(v)),
        );
        return None;
    };
    let mut ok = true;
    // An entry that is not a digest may have meant any original: then no original is called missing.
    let mut unread = false;
    let mut out: Vec<String> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let path = format!("summary.basedOn[{i}]");
        let Some(d) = check_digest(&path, item, k, c) else {
            ok = false;
            unread = true;
            continue;
        };
        if out.contains(&d) {
            c.push(k, path, format!("{} is listed more than once", shown(&d)));
            ok = false;
        } else if originals.is_some_and(|o| !o.iter().any(|o| o.value == d)) {
            c.push(
                k,
                path,
                format!(
                    "{} is not an original: basedOn names only instruction and retainedEvidence digests",
                    shown(&d)
                ),
            );
            ok = false;
        }
        out.push(d);
    }
    let mut reported: Vec<&str> = Vec::new();
    let judged = if unread { None } else { originals };
    for o in judged.unwrap_or_default() {
        if !out.contains(&o.value) && !reported.contains(&o.value.as_str()) {
            reported.push(&o.value);
            c.push(
                k,
                "summary.basedOn",
                format!(
                    "does not name the original {} (`{}`): basedOn must name every unique original \
                     instruction and retainedEvidence digest",
                    shown(&o.value),
                    o.path
                ),
            );
            ok = false;
        }
    }
    ok.then_some(out)
}

fn check_max_bytes(v: &Value, k: usize, c: &mut Collector) -> Option<u64> {
    let range = format!("an integer from 1 to {MAX_BYTES_LIMIT}");
    let message = match v {
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(b), _) if (1..=MAX_BYTES_LIMIT).contains(&b) => return Some(b),
            (Some(b), _) => format!("must be {range} (bytes), found {b}"),
            (None, Some(b)) => format!("must be {range} (bytes), found {b}"),
            (None, None) => format!("must be {range} (bytes), found the fraction {n}"),
        },
        other => format!("must be {range} (bytes), found {}", kind(other)),
    };
    c.push(k, "maxBytes", message);
    None
}
