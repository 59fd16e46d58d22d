//! Text helpers every stage shares: normalisation for matching, sentence splitting, the one
//! set of constraint cues, reading a text file with an error that names the byte where it
//! stops being UTF-8, and the one HTML/XML escape function of the crate.
//!
//! A leaf: it imports nothing of the crate, so scenarios, strategies, destinations, scoring and
//! reports can all read text the same way. It must not know any domain type.

/// Lowercases every character whose lowercase form has the same UTF-8 length and keeps the
/// others as they are (`İ`, whose lowercase is longer; the Kelvin sign, whose lowercase `k` is
/// shorter), so a byte offset found in the folded copy indexes the original text at the same
/// character. Case-insensitive matching that reports positions must fold with this, never with
/// `to_lowercase`. Limit: those few characters then match only themselves.
pub fn fold_case(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        // Most text is ASCII: its own table is far cheaper than the Unicode one.
        if ch.is_ascii() {
            out.push(ch.to_ascii_lowercase());
            continue;
        }
        let mut lower = ch.to_lowercase();
        match (lower.next(), lower.next()) {
            (Some(c), None) if c.len_utf8() == ch.len_utf8() => out.push(c),
            _ => out.push(ch),
        }
    }
    out
}

/// A fast, non-cryptographic digest of a text: the key of the per-thread memos that spare
/// re-reading one long text (never a content address: collisions are merely unlikely).
pub fn digest(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ text.len() as u64;
    let b = text.as_bytes();
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h ^ u64::from_le_bytes(w))
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(23);
    }
    for &x in chunks.remainder() {
        h = (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Lowercases and folds white space; detectors and texts are compared in this form.
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for ch in text.chars() {
        if ch.is_whitespace() {
            space = true;
        } else {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            if ch.is_ascii() {
                out.push(ch.to_ascii_lowercase());
            } else {
                out.extend(ch.to_lowercase());
            }
        }
    }
    if out.contains("sha256:") {
        drop_digests(&out)
    } else {
        out
    }
}

/// `sha256:` and 64 hex digits become `sha256:…`: a checksum carries no fact and no value, but
/// its digits would match a detector (`7500`) or a number by chance.
fn drop_digests(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("sha256:") {
        let after = &rest[i + 7..];
        let hex = after
            .char_indices()
            .take_while(|(_, c)| c.is_ascii_hexdigit())
            .count();
        out.push_str(&rest[..i + 7]);
        if hex >= 64 {
            out.push('…');
            rest = &after[hex..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// Splits text into sentences (on `.`, `!`, `?` followed by white space, and on blank lines).
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &ch) in chars.iter().enumerate() {
        if ch == '\n' && chars.get(i + 1) == Some(&'\n') {
            push_sentence(&mut out, &mut cur);
            continue;
        }
        cur.push(if ch == '\n' { ' ' } else { ch });
        let next_is_space = chars.get(i + 1).is_none_or(|c| c.is_whitespace());
        if matches!(ch, '.' | '!' | '?') && next_is_space && !ends_with_abbreviation(&cur) {
            push_sentence(&mut out, &mut cur);
        }
    }
    push_sentence(&mut out, &mut cur);
    out
}

fn ends_with_abbreviation(s: &str) -> bool {
    let t = s.trim_end();
    ["P.S.", "e.g.", "i.e.", "etc.", "vs.", "Mr.", "Ms.", "Dr."]
        .iter()
        .any(|a| t.ends_with(a))
}

fn push_sentence(out: &mut Vec<String>, cur: &mut String) {
    let s = cur.split_whitespace().collect::<Vec<_>>().join(" ");
    if !s.is_empty() {
        out.push(s);
    }
    cur.clear();
}

/// Whether a sentence holds one of `cues` at the start of a word: "no " matches "no emails" but not
/// "piano ". The cue lists are `data/lexicon.toml`'s `constraint_cues` and `stop_cues`, used by
/// strategy C, and by the graders only for transcripts without annotations.
fn has_cue(sentence: &str, cues: &[String]) -> bool {
    let l = format!(" {} ", sentence.to_lowercase());
    cues.iter().any(|c| l.contains(&format!(" {c}")))
}

/// Whether a user sentence states a constraint (the lexicon's `constraint_cues`).
pub fn is_constraint(sentence: &str) -> bool {
    has_cue(sentence, &crate::lexicon::get().constraint_cues)
}

/// Whether a constraint is also a stop condition (the lexicon's `stop_cues`).
pub fn is_stop_condition(sentence: &str) -> bool {
    has_cue(sentence, &crate::lexicon::get().stop_cues)
}

/// A serde or TOML type name as a file's author reads it.
fn humane(text: &str) -> String {
    let mut s = text.to_string();
    for (from, to) in [
        ("expected usize", "expected a whole number (0 or more)"),
        ("expected u64", "expected a whole number (0 or more)"),
        ("expected u32", "expected a whole number (0 or more)"),
        ("expected f64", "expected a number"),
        ("expected a string", "expected text in quotes"),
        ("expected a sequence", "expected a list [..]"),
        ("expected a boolean", "expected true or false"),
        ("floating point", "the number"),
        ("integer", "the number"),
        ("invalid type: ", ""),
        ("invalid value: ", ""),
        ("unknown variant", "unknown value"),
        ("variant", "value"),
    ] {
        s = s.replace(from, to);
    }
    s
}

/// Parses a TOML document (a strategy file, a gate policy) into `T`, with an error in the file's
/// terms: the setting's name (`timeout_s: …`), what was expected (a whole number, a number, text
/// in quotes; never a Rust type) and the line.
pub fn parse_toml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    let de = toml::Deserializer::parse(text).map_err(|e| one_line(&e, text, ""))?;
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        one_line(e.inner(), text, &path)
    })
}

fn one_line(e: &toml::de::Error, text: &str, path: &str) -> String {
    let line = e
        .span()
        .map(|s| {
            format!(
                " (line {})",
                text[..s.start.min(text.len())].lines().count().max(1)
            )
        })
        .unwrap_or_default();
    let message = humane(e.message().trim());
    let path = path.trim_matches('.');
    if path.is_empty() || path == "?" {
        format!("{message}{line}")
    } else {
        format!("`{path}`: {message}{line}")
    }
}

/// Reads a UTF-8 text file. A file that is not UTF-8 is an `InvalidData` error naming the byte
/// offset of the first invalid sequence (`std::fs::read_to_string` names none).
pub fn read_file(path: &std::path::Path) -> std::io::Result<String> {
    let bytes = std::fs::read(path)?;
    String::from_utf8(bytes).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text: invalid byte sequence at byte offset {}",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// Escapes text for HTML and XML element content and attribute values (the gate's JUnit file;
/// the report page's templates escape through minijinja). Control characters other than newline
/// and tab, which XML 1.0 forbids, become spaces.
pub fn escape_markup(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => o.push(' '),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_html_and_xml() {
        assert_eq!(
            escape_markup("<a href=\"x\">'&'</a>\u{1}\n"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt; \n"
        );
    }
}
