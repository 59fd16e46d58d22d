//! How Python prints values, byte for byte, because the airline tools answer with Python's text:
//! `json.dumps` (", " and ": " separators, `ensure_ascii`), `repr` and `str` of JSON-shaped
//! values, float `repr` (`1.0`, `1e-05`, `1e+16`), and the canonical text τ-bench hashes a
//! database by (`str(to_hashable(data))`, SHA-256).
//!
//! Owns: those formats and [`consistent_hash`]. Must not: compute anything (arithmetic and
//! comparisons are in `py.rs`) or know about airline tables.

use std::fmt::Write as _;

use serde_json::{Number, Value};
use sha2::{Digest, Sha256};

/// Python's `repr(float)`: the shortest digits that read back to `x`, in positional notation
/// when the decimal exponent is in -5 < e < 16 and scientific (`1e-05`, `1.5e+16`) otherwise.
pub fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    // `{:e}` gives the shortest round-trip digits: `-1.2345e2`, `0e0`.
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut out = String::from(sign);
    if !(-5 < exp && exp < 16) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
        return out;
    }
    if exp < 0 {
        out.push_str("0.");
        out.push_str(&"0".repeat((-exp - 1) as usize));
        out.push_str(&digits);
    } else {
        let point = exp as usize + 1;
        if digits.len() <= point {
            out.push_str(&digits);
            out.push_str(&"0".repeat(point - digits.len()));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..point]);
            out.push('.');
            out.push_str(&digits[point..]);
        }
    }
    out
}

/// Python's text of a JSON number: an integer as digits, a float as [`float_repr`].
pub fn number_repr(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        i.to_string()
    } else if let Some(u) = n.as_u64() {
        u.to_string()
    } else {
        float_repr(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// Whether Python's `str.isprintable` holds for a non-ASCII character. Python asks the Unicode
/// database; this knows the separators (Zs, Zl, Zp), the format characters (Cf), controls,
/// surrogates and private use, and takes every other character as printable (so an unassigned
/// code point, non-printable in Python, prints as itself here).
fn printable(c: char) -> bool {
    let u = c as u32;
    let nonprintable = c.is_control()
        || matches!(u, 0xA0 | 0x1680 | 0x2000..=0x200F | 0x2028..=0x202F | 0x205F..=0x206F)
        || matches!(
            u,
            0x3000 | 0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x890 | 0x891
        )
        || matches!(
            u,
            0x8E2 | 0x180E | 0xFEFF | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD
        )
        || matches!(u, 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A)
        || matches!(u, 0xE0001 | 0xE0020..=0xE007F | 0xE000..=0xF8FF)
        || matches!(u, 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD);
    !nonprintable
}

/// Python's `repr(str)`: single quotes unless the text holds `'` and no `"`; backslash escapes
/// for the quote, `\\`, `\t`, `\n`, `\r`, `\xNN` for other controls, `\uNNNN`/`\UNNNNNNNN` for
/// non-printable non-ASCII.
pub fn str_repr(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_str_repr(&mut out, s);
    out
}

fn write_str_repr<W: std::fmt::Write>(out: &mut W, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let _ = out.write_char(quote);
    for c in s.chars() {
        let _ = match c {
            c if c == quote || c == '\\' => write!(out, "\\{c}"),
            '\t' => out.write_str("\\t"),
            '\n' => out.write_str("\\n"),
            '\r' => out.write_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7F => write!(out, "\\x{:02x}", c as u32),
            c if c.is_ascii() || printable(c) => out.write_char(c),
            c if (c as u32) <= 0xFF => write!(out, "\\x{:02x}", c as u32),
            c if (c as u32) <= 0xFFFF => write!(out, "\\u{:04x}", c as u32),
            c => write!(out, "\\U{:08x}", c as u32),
        };
    }
    let _ = out.write_char(quote);
}

/// Python's `repr` of a value read from JSON: `None`, `True`, `12`, `1.5`, `'text'`,
/// `[1, 'a']`, `{'k': 1}`.
pub fn repr(v: &Value) -> String {
    let mut out = String::new();
    write_repr(&mut out, v);
    out
}

fn write_repr(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
        Value::Number(n) => out.push_str(&number_repr(n)),
        Value::String(s) => write_str_repr(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, x);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, x)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_str_repr(out, k);
                out.push_str(": ");
                write_repr(out, x);
            }
            out.push('}');
        }
    }
}

/// Python's `str` of a value (what an f-string interpolates): a string as itself, anything else
/// as its [`repr`].
pub fn str_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => repr(other),
    }
}

/// Python's `json.dumps(v)` with its defaults: keys in insertion order, `", "` and `": "`,
/// non-ASCII escaped as `\uXXXX` (surrogate pairs beyond the BMP), floats as [`float_repr`].
pub fn json_dumps(v: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, v);
    out
}

fn write_json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{u:04x}");
                }
            }
        }
    }
    out.push('"');
}

fn write_json(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.is_nan() => out.push_str("NaN"),
            Some(f) if n.is_f64() && f.is_infinite() => {
                out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" })
            }
            _ => out.push_str(&number_repr(n)),
        },
        Value::String(s) => write_json_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json(out, x);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, x)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json_str(out, k);
                out.push_str(": ");
                write_json(out, x);
            }
            out.push('}');
        }
    }
}

/// Feeds text into a SHA-256 without building it first (a database's text is megabytes).
struct HashWriter(Sha256);

impl std::fmt::Write for HashWriter {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.update(s.as_bytes());
        Ok(())
    }
}

/// Writes `str(to_hashable(v))`: objects become tuples of `(key, value)` pairs sorted by key,
/// arrays become tuples, scalars print as Python prints them (`('a', 1)`, `(1,)`, `()`).
fn write_hashable<W: std::fmt::Write>(out: &mut W, v: &Value) {
    fn tuple<W: std::fmt::Write, T>(out: &mut W, items: &[T], mut each: impl FnMut(&mut W, &T)) {
        let _ = out.write_char('(');
        for (i, x) in items.iter().enumerate() {
            if i > 0 {
                let _ = out.write_str(", ");
            }
            each(out, x);
        }
        let _ = out.write_str(if items.len() == 1 { ",)" } else { ")" });
    }
    match v {
        Value::Null => {
            let _ = out.write_str("None");
        }
        Value::Bool(b) => {
            let _ = out.write_str(if *b { "True" } else { "False" });
        }
        Value::Number(n) => {
            let _ = out.write_str(&number_repr(n));
        }
        Value::String(s) => write_str_repr(out, s),
        Value::Array(items) => tuple(out, items, |out, x| write_hashable(out, x)),
        Value::Object(map) => {
            let mut pairs: Vec<(&String, &Value)> = map.iter().collect();
            pairs.sort_by(|a, b| a.0.cmp(b.0));
            tuple(out, &pairs, |out, (k, x)| {
                let _ = out.write_char('(');
                write_str_repr(out, k);
                let _ = out.write_str(", ");
                write_hashable(out, x);
                let _ = out.write_char(')');
            });
        }
    }
}

/// τ-bench's `consistent_hash(to_hashable(v))`: the SHA-256 (lowercase hex) of the canonical
/// text above. Two databases are the same for the reward when their hashes are equal — so an
/// integer `1` and a float `1.0` differ, and key order does not matter.
pub fn consistent_hash(v: &Value) -> String {
    let mut w = HashWriter(Sha256::new());
    write_hashable(&mut w, v);
    hex::encode(w.0.finalize())
}

/// The canonical text [`consistent_hash`] hashes (for tests and diagnostics; small values only).
pub fn hashable_text(v: &Value) -> String {
    let mut out = String::new();
    write_hashable(&mut out, v);
    out
}
