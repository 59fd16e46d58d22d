//! What a checkpoint keeps of a tool's output: text clipped to a length, a JSON output's long
//! fields cut, and a write's returned fields (ids, numbers, statuses) as `key=value`. Shared by C's
//! build and by the merge of a chain's checkpoints.
//!
//! Owns the clipping rules only; it never decides what a checkpoint holds.

pub(super) fn clip(text: &str, n: usize) -> (String, bool) {
    if text.chars().count() <= n {
        (text.to_string(), false)
    } else {
        (text.chars().take(n).collect::<String>() + " …", true)
    }
}

/// The fields of a write's (or its lookup's) JSON result that are single tokens — ids, numbers,
/// statuses, dates — as `key=value`, clipped, leaving out what the call's own arguments already
/// say. Why only those: a result's prose is the world's text, which may carry a directive; a token
/// without white space cannot, and the ids are what later steps need.
pub(super) fn returned_fields(
    result: &str,
    args: &serde_json::Map<String, serde_json::Value>,
) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(result).ok()?;
    let objects: Vec<&serde_json::Map<String, serde_json::Value>> = match &v {
        serde_json::Value::Object(o) => vec![o],
        serde_json::Value::Array(a) => a.iter().filter_map(|x| x.as_object()).take(3).collect(),
        _ => vec![],
    };
    let fields: Vec<String> = objects
        .iter()
        .flat_map(|o| o.iter())
        .filter(|(k, v)| args.get(*k) != Some(*v))
        .filter_map(|(k, v)| {
            let v = match v {
                serde_json::Value::String(s)
                    if !s.is_empty() && s.len() <= 64 && !s.chars().any(char::is_whitespace) =>
                {
                    s.clone()
                }
                serde_json::Value::Number(n) => n.to_string(),
                serde_json::Value::Bool(b) => b.to_string(),
                _ => return None,
            };
            Some(format!("{k}={v}"))
        })
        .collect();
    (!fields.is_empty()).then(|| clip(&fields.join(", "), RETURNED_CHARS).0)
}

/// A JSON tool output with every string field longer than [`FIELD_CHARS`] cut to that length,
/// and whether any was. Why: condensing an output to its first characters kept a record's first
/// long text field and lost every field after it (a policy's mortgagee behind its endorsement
/// text); cutting each field first keeps every field's start. Other output is returned as it is.
pub(super) fn shorten_fields(output: &str) -> (String, bool) {
    fn walk(v: &mut serde_json::Value, cut: &mut bool) {
        match v {
            serde_json::Value::String(s) if s.chars().count() > FIELD_CHARS => {
                *s = s.chars().take(FIELD_CHARS).collect::<String>() + " …";
                *cut = true;
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| walk(x, cut)),
            serde_json::Value::Object(o) => o.values_mut().for_each(|x| walk(x, cut)),
            _ => {}
        }
    }
    let Ok(mut v) = serde_json::from_str::<serde_json::Value>(output) else {
        return (output.to_string(), false);
    };
    let mut cut = false;
    walk(&mut v, &mut cut);
    if !cut {
        return (output.to_string(), false);
    }
    (
        serde_json::to_string(&v).unwrap_or_else(|_| output.to_string()),
        true,
    )
}

/// How long a text field of a condensed tool output may be.
pub(super) const FIELD_CHARS: usize = 80;

/// How much of a write's returned fields an operation line carries.
const RETURNED_CHARS: usize = 240;
