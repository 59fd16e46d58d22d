//! The spans around a position: the transcript message, closed XML-ish elements, the line that
//! introduces a quotation, a markdown blockquote, a JSON object, a YAML item with its parents'
//! keys, a list item or a sentence, and the quotation marks around a place. Geometry only: it
//! reads no cue word and reaches no verdict.

use crate::text::fold_case;

/// The quotation marks around `rel` in `span` (byte range of the quoted content), if any.
pub(super) fn quote_around(span: &str, rel: usize) -> Option<(usize, usize)> {
    for (open, close) in [('"', '"'), ('“', '”'), ('«', '»'), ('„', '“')] {
        let before = &span[..rel.min(span.len())];
        let Some(a) = before.rfind(open) else {
            continue;
        };
        // Straight quotes pair up: an even count before the position means we are outside.
        if open == close && before.matches(open).count() % 2 == 0 {
            continue;
        }
        let after_open = a + open.len_utf8();
        if let Some(b) = span[rel.min(span.len())..].find(close) {
            return Some((after_open, rel + b));
        }
    }
    None
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub(super) enum Role {
    User,
    Agent,
    ToolResult,
}

/// The transcript message around `pos`: (start of its content, end, role). Messages begin with a
/// role header at the start of a line: `[user]`, `[assistant]`, `[assistant → tool {…}]`,
/// `[tool result]`, `[system]`.
pub(super) fn message_around(text: &str, pos: usize) -> Option<(usize, usize, Role)> {
    // The nearest header line at or before `pos`'s line (walking back line by line: the cost is
    // the message's length, not the text's), then the first header line after it.
    let pos = pos.min(text.len());
    let line_at = |start: usize| -> &str {
        let end = text[start..]
            .find('\n')
            .map(|i| start + i + 1)
            .unwrap_or(text.len());
        &text[start..end]
    };
    let mut start = text[..pos].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let here = start;
    let header = loop {
        let line = line_at(start);
        if let Some(r) = header_role(line) {
            let close = line.find(']').map(|i| start + i + 1).unwrap_or(start);
            break (close, r);
        }
        if start == 0 {
            return None;
        }
        start = text[..start - 1].rfind('\n').map(|i| i + 1).unwrap_or(0);
    };
    let mut next = here + line_at(here).len();
    let mut next_header = text.len();
    while next < text.len() {
        let line = line_at(next);
        if header_role(line).is_some() {
            next_header = next;
            break;
        }
        next += line.len();
    }
    let (content, role) = header;
    Some((content.min(pos), next_header, role))
}

fn header_role(line: &str) -> Option<Role> {
    let t = line.trim_start();
    if !t.starts_with('[') {
        return None;
    }
    let t: String = fold_case(&t.chars().take(24).collect::<String>());
    let inner = t.strip_prefix('[')?;
    if inner.starts_with("tool result") || inner.starts_with("tool]") || inner.starts_with("tool ")
    {
        Some(Role::ToolResult)
    } else if inner.starts_with("user]") || inner.starts_with("system]") {
        Some(Role::User)
    } else if inner.starts_with("assistant") {
        Some(Role::Agent)
    } else {
        None
    }
}

/// Closed XML-ish elements around `pos` within `lo..hi`, innermost first:
/// (open tag start, open tag end, close tag start, quotational).
pub(super) fn elements_around(
    text: &str,
    lo: usize,
    hi: usize,
    pos: usize,
) -> Vec<(usize, usize, usize, bool)> {
    let mut out = Vec::new();
    let region = &text[lo..hi];
    let rel = pos - lo;
    let mut search_end = rel;
    while let Some(open) = region[..search_end].rfind('<') {
        search_end = open;
        let tag_text = &region[open..];
        let Some(gt) = tag_text.find('>') else {
            continue;
        };
        let tag = &tag_text[1..gt];
        if tag.starts_with('/') || tag.starts_with('!') || tag.starts_with('?') {
            continue;
        }
        let name: String = tag
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '-' || *c == ':')
            .collect();
        if name.is_empty() || tag.ends_with('/') {
            continue;
        }
        let open_end = open + gt + 1;
        if open_end > rel {
            continue;
        }
        // The matching close after the position (counting nested elements of the same name).
        let close_pat = format!("</{name}>");
        if !region[rel..].contains(&close_pat) {
            // Unclosed after the position: it quotes nothing here.
            continue;
        }
        let open_pat = format!("<{name}");
        let mut depth = 0i32;
        let mut i = open_end;
        let mut close_at = None;
        while i < region.len() {
            let rest = &region[i..];
            let next_open = rest.find(&open_pat);
            let next_close = rest.find(&close_pat);
            match (next_open, next_close) {
                (Some(o), Some(c)) if o < c => {
                    depth += 1;
                    i += o + open_pat.len();
                }
                (_, Some(c)) => {
                    if depth == 0 {
                        close_at = Some(i + c);
                        break;
                    }
                    depth -= 1;
                    i += c + close_pat.len();
                }
                _ => break,
            }
        }
        let Some(close) = close_at else {
            // Unclosed: quotes nothing.
            continue;
        };
        if close < rel {
            continue;
        }
        let lname = fold_case(&name);
        let ltag = fold_case(tag);
        let quotational = crate::lexicon::get().quotation_elements.iter().any(|q| {
            lname == *q || lname.starts_with(&format!("{q}_")) || lname.ends_with(&format!("_{q}"))
        }) || ltag.contains(" source=")
            || ltag.contains(" from=")
            || ltag.contains(" origin=");
        out.push((lo + open, lo + open_end, lo + close, quotational));
    }
    out
}

/// The nearest non-blank line before `at` (what introduces a quotation), if it is not itself a
/// list item or heading that belongs to another statement.
pub(super) fn intro_line(text: &str, at: usize) -> String {
    let before = &text[..at];
    let mut lines = before.rsplit('\n');
    // The part of the line the block starts on (an element can follow text on the same line).
    let same = lines.next().unwrap_or("");
    if !same.trim().is_empty() {
        return same.to_string();
    }
    for l in lines {
        if l.trim().is_empty() {
            continue;
        }
        return l.to_string();
    }
    String::new()
}

/// The markdown blockquote around `pos` within `lo..hi`: its byte range.
pub(super) fn blockquote_around(
    text: &str,
    lo: usize,
    hi: usize,
    pos: usize,
) -> Option<(usize, usize)> {
    let (ls, le) = line_bounds(text, pos);
    if !text[ls..le].trim_start().starts_with('>') {
        return None;
    }
    let mut start = ls;
    while start > lo {
        let (ps, pe) = line_bounds(text, start - 1);
        if ps < lo || !text[ps..pe].trim_start().starts_with('>') {
            break;
        }
        start = ps;
    }
    let mut end = le;
    while end < hi {
        let (ns, ne) = line_bounds(text, (end + 1).min(text.len()));
        if ns <= end || !text[ns..ne].trim_start().starts_with('>') {
            break;
        }
        end = ne;
    }
    Some((start, end))
}

fn line_bounds(text: &str, pos: usize) -> (usize, usize) {
    let pos = pos.min(text.len());
    let start = text[..pos].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let end = text[pos..]
        .find('\n')
        .map(|i| pos + i)
        .unwrap_or(text.len());
    (start, end)
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn is_list_item(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("- ")
        || t.starts_with("* ")
        || t.starts_with("• ")
        || t.split_once(". ")
            .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        || t.split_once(") ")
            .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// The length of a list item line's indentation and marker with the spaces after it.
fn marker_len(line: &str) -> usize {
    let t = line.trim_start();
    let lead = line.len() - t.len();
    let marker = if t.starts_with(['-', '*', '•']) {
        t.chars().next().map_or(0, char::len_utf8)
    } else {
        t.find([')', '.']).map_or(0, |i| i + 1)
    };
    let rest = &t[marker..];
    lead + marker + (rest.len() - rest.trim_start().len())
}

/// The statement around `pos`: (start, end, context, structured). A JSON object or a YAML list
/// item with the keys of its parents as context (structured); a markdown list item; else the
/// sentence.
pub(super) fn statement_around(
    text: &str,
    lo: usize,
    hi: usize,
    pos: usize,
) -> (usize, usize, String, bool) {
    if let Some((a, b, c)) = json_object_around(text, lo, hi, pos) {
        return (a, b, c, true);
    }
    let (ls, le) = line_bounds(text, pos);
    let (ls, le) = (ls.max(lo), le.min(hi));
    let line = &text[ls..le];
    // A YAML or markdown list item, with its continuation lines (deeper indentation).
    // Walk up through the same mapping (lines at this indentation or deeper) to the list item that
    // holds it: `- kind: external` holds the `text:` and `trust:` lines below it.
    let mut item_start = None;
    let mut s = ls;
    let here = indent(line);
    loop {
        let (cs, ce) = line_bounds(text, s);
        let l = &text[cs..ce];
        if is_list_item(l) && (cs == ls || indent(l) + 2 <= here) {
            if cs == ls || indent(l) + 2 == here || indent(l) < here {
                item_start = Some((cs, indent(l)));
            }
            break;
        }
        if cs < ls && !l.trim().is_empty() && indent(l) < here {
            break;
        }
        if cs <= lo || cs == 0 {
            break;
        }
        s = cs - 1;
    }
    // In a transcript, `tool: …` opens a turn: its statements are sentences, not a YAML value.
    let turn = super::structure::is_speaker_line(line) && super::structure::is_transcript(text);
    let yaml_key_line = !turn
        && line.trim_start().split_once(':').is_some_and(|(k, _)| {
            !k.is_empty()
                && k.chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
        });
    if let Some((start, ind)) = item_start.or_else(|| yaml_key_line.then_some((ls, indent(line)))) {
        let mut end = le;
        while end < hi {
            let (ns, ne) = line_bounds(text, (end + 1).min(text.len()));
            if ns <= end {
                break;
            }
            let l = &text[ns..ne];
            if l.trim().is_empty() || indent(l) <= ind {
                break;
            }
            end = ne;
        }
        let context = yaml_parents(text, lo, start, ind);
        if is_list_item(&text[start..end]) && context.is_empty() && !yaml_key_line {
            // The item's statement starts at its first word: the marker (`- `, `1. `) is layout,
            // as the white space before a sentence is.
            let body = start + marker_len(&text[start..end]);
            // A transcript written as a list (`- [agent report] …`) holds a message per item:
            // its statements are its sentences, as without the marker.
            if !super::structure::is_speaker_line(&text[start..end]) {
                return (body.min(pos), end, String::new(), false);
            }
            return prose_sentence(text, lo.max(body.min(pos)), hi.min(end), pos);
        }
        let structured = yaml_key_line || !context.is_empty();
        return (start, end, context, structured);
    }
    prose_sentence(text, lo, hi, pos)
}

/// The sentence around `pos` within `lo..hi` (split on . ! ? followed by white space, not after
/// an abbreviation such as "P.S." or "e.g." — the sentences of `crate::text::sentences` — at a
/// blank line, and where a line opens a new turn: one message per line is one message per
/// paragraph).
fn prose_sentence(text: &str, lo: usize, hi: usize, pos: usize) -> (usize, usize, String, bool) {
    let region = &text[lo..hi];
    let rel = pos - lo;
    let mut start = 0;
    let mut end = region.len();
    let bytes = region.as_bytes();
    for (i, c) in region.char_indices() {
        let next_ws = bytes.get(i + 1).is_none_or(|b| b.is_ascii_whitespace());
        let boundary = (matches!(c, '.' | '!' | '?') && next_ws && !abbreviation(&region[..=i]))
            || (c == '\n' && (bytes.get(i + 1) == Some(&b'\n') || next_is_turn(&region[i + 1..])));
        if boundary {
            if i < rel {
                start = i + 1;
            } else {
                end = i + 1;
                break;
            }
        }
    }
    // A sentence starts at its first word: the white space before it (a space after the last
    // sentence, or the line break of a new paragraph) is layout, not part of the statement.
    let lead = region[start..rel].len() - region[start..rel].trim_start().len();
    (lo + start + lead, lo + end, String::new(), false)
}

/// Whether the line `rest` starts with opens a turn (`[agent report] …`, `user: …`).
fn next_is_turn(rest: &str) -> bool {
    super::structure::is_speaker_line(rest.split('\n').next().unwrap_or(""))
}

/// Whether `head` ends with an abbreviation whose period ends no sentence.
fn abbreviation(head: &str) -> bool {
    let word = head.rsplit(char::is_whitespace).next().unwrap_or("");
    ["P.S.", "e.g.", "i.e.", "etc.", "vs.", "Mr.", "Ms.", "Dr."]
        .iter()
        .any(|a| word.ends_with(a))
}

/// The keys of the YAML mappings that hold the line at `start` (less-indented `key:` lines above).
fn yaml_parents(text: &str, lo: usize, start: usize, ind: usize) -> String {
    let mut keys = Vec::new();
    let mut want = ind;
    let mut s = start;
    while s > lo && want > 0 {
        let (cs, ce) = line_bounds(text, s - 1);
        let l = &text[cs..ce];
        if !l.trim().is_empty() && indent(l) < want {
            let t = l.trim_start().trim_start_matches("- ");
            if let Some((k, _)) = t.split_once(':') {
                keys.push(k.trim().to_string());
            }
            want = indent(l);
        }
        if cs == 0 {
            break;
        }
        s = cs;
    }
    // A top-level key directly above an unindented list.
    if ind == 0 && is_list_item(&text[start..line_bounds(text, start).1]) {
        let mut s = start;
        while s > lo {
            let (cs, ce) = line_bounds(text, s - 1);
            let l = &text[cs..ce];
            if !l.trim().is_empty() && !is_list_item(l) {
                if l.trim_end().ends_with(':') && !l.trim_start().starts_with('#') {
                    keys.push(l.trim().trim_end_matches(':').to_string());
                }
                break;
            }
            if cs == 0 {
                break;
            }
            s = cs;
        }
    }
    keys.join(" / ")
}

/// The innermost JSON object `{…}` around `pos` (when the text looks like JSON), with the key of
/// the array or object that holds it as context.
fn json_object_around(
    text: &str,
    lo: usize,
    hi: usize,
    pos: usize,
) -> Option<(usize, usize, String)> {
    let region = &text[lo..hi];
    if !region.trim_start().starts_with('{') && !region.trim_start().starts_with('[') {
        return None;
    }
    let rel = pos - lo;
    let bytes = region.as_bytes();
    // Scan from the start, tracking strings, to find the innermost object containing `rel`.
    let mut stack: Vec<usize> = Vec::new();
    let mut in_str = false;
    let mut esc = false;
    let mut best: Option<(usize, usize)> = None;
    for (i, &b) in bytes.iter().enumerate() {
        if in_str {
            if esc {
                esc = false;
            } else if b == b'\\' {
                esc = true;
            } else if b == b'"' {
                in_str = false;
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'{' => stack.push(i),
            b'}' => {
                if let Some(open) = stack.pop()
                    && open <= rel
                    && i >= rel
                    && best.is_none_or(|(o, _)| open > o)
                {
                    best = Some((open, i + 1));
                }
            }
            _ => {}
        }
    }
    let (open, close) = best?;
    // The key of the array or object that holds this object (or the string at `pos`).
    let holder = |at: usize| -> String {
        let before = &region[..at];
        let mut depth = 0i32;
        for (i, c) in before.char_indices().rev() {
            match c {
                ']' | '}' => depth += 1,
                '[' | '{' if depth > 0 => depth -= 1,
                '[' | '{' => {
                    let head = before[..i].trim_end().trim_end_matches(':').trim_end();
                    return head.rsplit('"').nth(1).unwrap_or_default().to_string();
                }
                _ => {}
            }
        }
        String::new()
    };
    if open == 0 || region[..open].trim().is_empty() {
        // The position is directly in the top-level object: the string itself is the statement
        // (its JSON quotes are syntax, not quotation), and its key — or the key of the array that
        // holds it — the context.
        let (s, e) = string_around(region, rel).unwrap_or((open, close));
        let own_key = region[..s]
            .trim_end()
            .strip_suffix(':')
            .and_then(|h| h.trim_end().strip_suffix('"'))
            .and_then(|h| h.rsplit('"').next())
            .map(str::to_string);
        let key = own_key.unwrap_or_else(|| holder(rel));
        let (s, e) = if e > s + 1 { (s + 1, e - 1) } else { (s, e) };
        return Some((lo + s, lo + e, key));
    }
    let key = holder(open);
    Some((lo + open, lo + close, key))
}

/// The JSON string literal around `rel`.
fn string_around(region: &str, rel: usize) -> Option<(usize, usize)> {
    let before = &region[..rel];
    let a = before.rfind('"')?;
    let b = region[rel..].find('"')? + rel;
    Some((a, b + 1))
}
