//! The validation rules of a `coding-context-policy/1` value: closed records, required fields,
//! the format string, reference lists and names, digests, the summary's `basedOn` and the byte
//! budget, with every error collected in document order. It reads a JSON value only: no file, no
//! artifact, and it never repairs what it refuses.

use serde_json::{Map, Value};

use super::{
    ArtifactRef, ContextPolicy, MAX_BYTES_LIMIT, MAX_NAME_CHARS, MAX_REFERENCES, PolicyError,
    SummaryRef,
};
use crate::governed::{POLICY_FORMAT, is_digest};

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
