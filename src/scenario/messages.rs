//! Parsing a scenario file with errors for people: every error names the field's path in the
//! document's own terms (`interrupts[2].perturb[0].approval`) and says what is wrong in words a
//! scenario author uses (text, a whole number, a list, a mapping), with its line and column;
//! never a Rust type (`u32`, `Option<String>`) or a parser option (`DuplicateKeyPolicy`).
//!
//! Owns: the path tracking around the YAML deserializer and the wording of its errors. Must
//! not: check what the format's types do not (validation and the limits do, with their own
//! paths).

use std::cell::RefCell;

use serde_saphyr::Error as YamlError;

use crate::spec::Scenario;

/// Parses `text` as a scenario; the error is one line for people (see the module doc).
pub(super) fn parse(text: &str) -> Result<Scenario, String> {
    // YAML 1.1 reads `no`/`off` as booleans; scenario text is full of such words.
    let options = serde_saphyr::options! { strict_booleans: true };
    let path: RefCell<Option<String>> = RefCell::new(None);
    serde_saphyr::with_deserializer_from_str_with_options(text, options, |de| {
        serde_path_to_error::deserialize::<_, Scenario>(de).map_err(|e| {
            *path.borrow_mut() = Some(e.path().to_string());
            e.into_inner()
        })
    })
    .map_err(|e| describe(&e, path.borrow().as_deref()))
}

/// The innermost error (snippets and alias context unwrapped).
fn inner(mut e: &YamlError) -> &YamlError {
    loop {
        match e {
            YamlError::WithSnippet { error, .. } | YamlError::AliasError { error, .. } => e = error,
            _ => return e,
        }
    }
}

/// A path as the file reads: segments the tracker could not name (`?`) dropped, the root named.
fn clean(path: Option<&str>) -> String {
    let p = path.unwrap_or(".");
    let kept: Vec<&str> = p
        .split('.')
        .filter(|s| !s.is_empty() && *s != "?")
        .collect();
    kept.join(".")
}

fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else if parent == key || parent.ends_with(&format!(".{key}")) {
        parent.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// A Rust or serde type name as a scenario author reads it.
fn kind(t: &str) -> String {
    let t = t.trim();
    let word = match t {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a whole number (0 or more)",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "a whole number",
        "f32" | "f64" => "a number",
        "bool" | "a boolean" | "boolean" => "true or false",
        "char" | "a character" => "a single character",
        "string" | "a string" | "a borrowed string" | "String" => "text",
        "sequence" | "a sequence" => "a list",
        "map" | "a map" | "mapping" => "a mapping (key: value lines)",
        "unit" | "unit value" => "nothing",
        "null" | "Option value" | "option" => "empty (null)",
        _ if t.starts_with("struct ") || t.starts_with("a map") => "a mapping (key: value lines)",
        _ if t.contains("enum") => "one of the allowed values",
        _ if t.starts_with("tuple") || t.starts_with("a tuple") => "a list",
        _ => return humane(t),
    };
    word.to_string()
}

/// What the file had, as serde describes it (`integer `-5``, `string "x"`, `map`), in words.
fn found(u: &str) -> String {
    let u = u.trim();
    for (prefix, word) in [
        ("integer", "the number"),
        ("floating point", "the number"),
        ("boolean", ""),
        ("string", "the text"),
        ("char", "the character"),
    ] {
        if let Some(rest) = u.strip_prefix(prefix) {
            return format!("{word} {}", rest.trim()).trim().to_string();
        }
    }
    match u {
        "map" => "a mapping".into(),
        "sequence" => "a list".into(),
        "unit value" | "null" | "unit" | "Option value" => "empty (null)".into(),
        _ => humane(u),
    }
}

/// Any remaining type words replaced, for messages that embed them; a place the message repeats
/// (` at line 3, column 5`) is dropped (the caller adds it once).
fn humane(text: &str) -> String {
    let mut s = match text.find(" at line ") {
        Some(i) if text[i..].contains(", column ") => text[..i].to_string(),
        _ => text.to_string(),
    };
    // An untagged choice of forms (a detector, a parameter) says only that none fitted, and names
    // the Rust type: what matters to an author is the entry that fits none of its forms.
    if s.contains("did not match any variant") {
        return "fits none of the forms allowed here (see docs/scenario-format.md)".into();
    }
    for (from, to) in [
        ("expected string scalar", "must be text"),
        (
            "expected mapping start",
            "must be a mapping (key: value lines)",
        ),
        ("expected sequence start", "must be a list"),
        ("expected scalar", "must be a single value"),
        ("; use Option<String>", ""),
        ("; use Option<char>", ""),
        (", set DuplicateKeyPolicy in Options if acceptable", ""),
        (
            "cannot deserialize null into string",
            "empty (null) where text is needed",
        ),
        ("deserialize", "read"),
        ("invalid u8", "not a whole number (0 or more)"),
        ("invalid u16", "not a whole number (0 or more)"),
        ("invalid u32", "not a whole number (0 or more)"),
        ("invalid u64", "not a whole number (0 or more)"),
        ("invalid usize", "not a whole number (0 or more)"),
        ("invalid i32", "not a whole number"),
        ("invalid i64", "not a whole number"),
        ("invalid f64", "not a number"),
        ("invalid f32", "not a number"),
        ("variant", "value"),
        ("a sequence", "a list"),
        ("a map", "a mapping"),
        ("struct ", "mapping "),
    ] {
        s = s.replace(from, to);
    }
    s
}

/// One line for people: the field's path, what is wrong, the place in the file.
fn describe(e: &YamlError, path: Option<&str>) -> String {
    let at = clean(path);
    let e = inner(e);
    let place = e
        .location()
        .filter(|l| l.line() > 0)
        .map(|l| format!(" (line {}, column {})", l.line(), l.column()))
        .unwrap_or_default();
    let (field, what) = match e {
        YamlError::NullIntoString { .. } => (at, "is empty (null); it must be text".to_string()),
        YamlError::InvalidCharNull { .. } => (
            at,
            "is empty (null); it must be a single character".to_string(),
        ),
        YamlError::InvalidScalar { ty, .. } => (at, format!("must be {}", kind(ty))),
        YamlError::InvalidBooleanStrict { .. } => (at, "must be true or false".to_string()),
        YamlError::SerdeInvalidType {
            unexpected,
            expected,
            ..
        }
        | YamlError::SerdeInvalidValue {
            unexpected,
            expected,
            ..
        } => (
            at,
            format!("is {}; it must be {}", found(unexpected), kind(expected)),
        ),
        YamlError::SerdeInvalidLength { len, expected, .. } => (
            at,
            format!("has {len} entries; it must have {}", humane(expected)),
        ),
        YamlError::SerdeUnknownVariant {
            variant, expected, ..
        } => (
            at,
            format!(
                "`{variant}` is not one of the allowed values: {}",
                expected.join(", ")
            ),
        ),
        YamlError::SerdeUnknownField {
            field, expected, ..
        } => (
            join(&at, field),
            format!(
                "is not a field here (a typo?); the fields here are: {}",
                expected.join(", ")
            ),
        ),
        YamlError::SerdeMissingField { field, .. } => {
            (join(&at, field), "is missing (it is required)".to_string())
        }
        YamlError::DuplicateMappingKey { key, .. } => match key {
            Some(k) => (
                join(&at, k),
                "appears twice in the same mapping (each key once)".to_string(),
            ),
            None => (at, "has a key twice (each key once)".to_string()),
        },
        other => {
            let text = other.render_with_formatter(&serde_saphyr::UserMessageFormatter);
            // The rendering repeats the place; keep its first line.
            let first = text.lines().next().unwrap_or_default().to_string();
            (at, humane(&first))
        }
    };
    let field = if field.is_empty() {
        "the document".to_string()
    } else {
        field
    };
    format!("{field}: {what}{place}")
}
