//! How a simulated destination reads a handoff's layout: the canonical form it judges, so that
//! what it does depends on what the text says, not on how it is laid out.
//!
//! Owns the reading of layout-only characters, as markdown and plain text treat them: line
//! endings (`\r\n`, `\r`) are newlines, tabs and other white space are spaces, trailing white
//! space and white-space-only lines are nothing, a run of blank lines is one blank line, and a
//! soft line break inside a prose paragraph or a list item (a hard-wrapped line) is a space.
//! Must not: read a word's meaning, reorder anything, or join what is structure — a list item,
//! heading, blockquote line, tag, JSON or table line, fenced code, a turn's role label (`user:`,
//! `agent report: …`, `[tool result] …`), a setext underline, or a `key: value` line under
//! another one (email headers, YAML) stays its own line.

/// The canonical layout of `text` (see the module doc).
pub fn canonical(text: &str) -> String {
    let unified = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut lines: Vec<String> = Vec::new();
    let mut fence = false;
    let mut prev_blank = true;
    // Whether the last line kept may take a soft-wrapped continuation.
    let mut open = false;
    let mut prev_key = false;
    for raw in unified.split('\n') {
        let line: String = raw
            .chars()
            .map(|c| if c.is_whitespace() { ' ' } else { c })
            .collect::<String>()
            .trim_end()
            .to_string();
        if line.trim_start().starts_with("```") {
            fence = !fence;
            lines.push(line);
            open = false;
            prev_blank = false;
            continue;
        }
        if fence {
            lines.push(line);
            continue;
        }
        if line.is_empty() {
            if !prev_blank {
                lines.push(String::new());
            }
            prev_blank = true;
            open = false;
            prev_key = false;
            continue;
        }
        let t = line.trim_start();
        let indented = t.len() < line.len();
        let key = is_key_line(t);
        // A turn's label (`agent report: …`) starts a message of its own: one message per line
        // reads as the same messages with blank lines between them.
        let speaker = crate::provenance::is_speaker_line(t);
        let structure = block_start(t) || underline(t) || (key && prev_key) || speaker;
        let continues = open && !structure;
        // An indented line continues only a list item or a paragraph that is not a key block.
        if continues
            && (!indented || !key)
            && let Some(last) = lines.last_mut()
        {
            last.push(' ');
            last.push_str(t);
            prev_blank = false;
            continue;
        }
        // A turn's message may be hard-wrapped under its label, as a list item's may.
        open = !block_start(t) || is_list_item(t) || speaker;
        open &= !underline(t) && !t.starts_with('<') && (!t.starts_with('[') || speaker);
        prev_key = key;
        prev_blank = false;
        lines.push(line);
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    let mut out = lines.join("\n");
    if text.ends_with('\n') || text.ends_with('\r') || text.ends_with(char::is_whitespace) {
        out.push('\n');
    }
    out
}

/// `text[..at]`'s length in the canonical form (where a part that starts at `at` starts there).
pub fn canonical_offset(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    canonical(&text[..at]).len()
}

fn is_list_item(t: &str) -> bool {
    if t.starts_with("- ") || t.starts_with("* ") || t.starts_with("+ ") || t.starts_with("• ") {
        return true;
    }
    let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
    digits > 0 && (t[digits..].starts_with(". ") || t[digits..].starts_with(") "))
}

/// A line that starts a block of its own (never a soft-wrapped continuation).
fn block_start(t: &str) -> bool {
    is_list_item(t)
        || t.starts_with(['#', '>', '<', '[', '{', '}', ']', '|', '`', '~'])
        || t == "-"
        || t == "*"
}

/// A setext underline or a thematic break.
fn underline(t: &str) -> bool {
    let c = t.chars().next();
    c.is_some_and(|c| matches!(c, '-' | '=' | '*' | '_'))
        && t.chars().all(|x| x == c.unwrap_or(' ') || x == ' ')
}

/// `key: value` or `key:` with a one-word key (an email header, a YAML mapping line).
fn is_key_line(t: &str) -> bool {
    t.split_once(':').is_some_and(|(k, rest)| {
        !k.is_empty()
            && k.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
            && (rest.is_empty() || rest.starts_with(' '))
    })
}

#[cfg(test)]
mod tests {
    use super::canonical;

    #[test]
    fn layout_only_differences_read_the_same() {
        let a = "Requested a review: approval x is pending, so the PR\ncannot be merged yet.\n\n- one item that\n  wraps\n";
        let b = "Requested a review: approval x is pending, so the PR cannot be merged yet. \t\r\n\r\n\r\n\r\n- one item that wraps\r\n";
        assert_eq!(canonical(a), canonical(b));
        assert_eq!(
            canonical(a),
            "Requested a review: approval x is pending, so the PR cannot be merged yet.\n\n- one item that wraps\n"
        );
    }

    #[test]
    fn structure_stays_on_its_own_lines() {
        let t = "From: a@b.example\nTo: c@d.example\nSubject: hi\n\n> quoted\n> more\n[assistant]\n## Head\ntext\n---\nkind: external\n  text: x\n";
        let c = canonical(t);
        for l in [
            "From: a@b.example",
            "To: c@d.example",
            "> more",
            "[assistant]",
            "## Head",
            "---",
            "  text: x",
        ] {
            assert!(c.lines().any(|x| x == l), "{l:?} in {c}");
        }
    }
}
