//! Who speaks, read from structure before any word list: the speaker line a chat transcript gives
//! each turn (`user (practice manager): …`, `[09:05] tool(query): …`, `assistant → tool`), the
//! sender header of an e-mail in a thread (`From: …`), the attribute of an element that names its
//! author (`<decision by="registrar (task owner)">`, `<message author="customer">`), the column of
//! a table row that names where the row came from (`origin`, `source`, `requester`, …), and the
//! fields of a label in front of an item (`[constraint · user · verified]`).
//!
//! The structure only *locates* the party; what that party is — the user's or the agent's side, or
//! an outside one — is read from the party's own words with the lexicon's `own_parties` and
//! `outside_parties` (an e-mail address with no such word is an outside sender). When the party
//! is neither, structure is silent and the word lists of [`super::attribution`] decide, as they do
//! for plain prose. Geometry and that one classification only: it reaches no verdict itself.

use crate::lexicon::get as lex;
use crate::text::fold_case;

use super::lexicon::has_word;

/// Which side a structure puts a text on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Party {
    /// The user's or the agent's own side.
    Own,
    /// Someone outside: a tool, a third party, an unverified sender.
    Outside,
}

/// Which side the words naming a party put it on, if they say.
pub(super) fn classify_party(name: &str) -> Option<Party> {
    let l = fold_case(name);
    let l = l.trim();
    if l.is_empty() {
        return None;
    }
    // Whole words only: "ai" is a party, "Aisha" is not.
    let words: String = l
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let words = format!(" {words} ");
    let names = |list: &[String]| list.iter().any(|w| words.contains(&format!(" {w} ")));
    let own = names(&lex().own_parties);
    let outside = names(&lex().outside_parties);
    match (own, outside) {
        (true, false) => Some(Party::Own),
        (false, true) => Some(Party::Outside),
        // "the user's vendor", "assistant (external)": both named; the outside word qualifies.
        (true, true) => Some(Party::Outside),
        (false, false) if l.contains('@') => Some(Party::Outside),
        (false, false) => None,
    }
}

/// The party the structure around `pos` names, innermost first: a label in front of the
/// statement (which starts at `statement_start`: a label heads an item, however it is wrapped), the
/// row of a table with an origin column, then the speaker of the turn or e-mail the position sits
/// in (within `lo..hi`).
pub(super) fn party_at(
    text: &str,
    lo: usize,
    hi: usize,
    pos: usize,
    statement_start: usize,
) -> Option<Party> {
    let (ss, se) = line_bounds(text, statement_start);
    if let Some(p) = label_party(&text[ss.max(lo)..se.min(hi)]) {
        return Some(p);
    }
    let (ls, le) = line_bounds(text, pos);
    if let Some(p) = table_party(text, ls, le, pos) {
        return Some(p);
    }
    speaker_party(text, lo, pos)
}

/// A label in front of an item, `[a · b · c]` or `(a | b)`, whose fields name a party.
fn label_party(line: &str) -> Option<Party> {
    let t = line
        .trim_start()
        .trim_start_matches(['-', '*', '•', '>', ' ']);
    let close = match t.chars().next()? {
        '[' => ']',
        '(' => ')',
        _ => return None,
    };
    let end = t.find(close)?;
    let inner = &t[1..end];
    // A label holds fields; a bracket that is a whole sentence is prose, not a label.
    let fields: Vec<&str> = inner
        .split(['·', '|', ',', ';', '/'])
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .collect();
    if fields.len() < 2 || fields.iter().any(|f| f.split_whitespace().count() > 3) {
        return None;
    }
    let parties: Vec<Party> = fields.iter().filter_map(|f| classify_party(f)).collect();
    if parties.contains(&Party::Outside) {
        Some(Party::Outside)
    } else {
        parties.first().copied()
    }
}

/// The table row the position sits in, read through its header: the value of a column whose
/// name says where the row came from.
fn table_party(text: &str, ls: usize, le: usize, pos: usize) -> Option<Party> {
    let row = &text[ls..le];
    if !row.trim_start().starts_with('|') {
        return None;
    }
    // The table's first line is its header (lines above the row that start with `|`).
    let mut start = ls;
    while start > 0 {
        let (ps, pe) = line_bounds(text, start - 1);
        if !text[ps..pe].trim_start().starts_with('|') {
            break;
        }
        start = ps;
    }
    if start == ls {
        return None;
    }
    let (hs, he) = line_bounds(text, start);
    let header = cells(&text[hs..he]);
    let values = cells(row);
    let origin_cols: Vec<usize> = header
        .iter()
        .enumerate()
        .filter(|(_, h)| has_word(&fold_case(h), &lex().origin_keys))
        .map(|(i, _)| i)
        .collect();
    // The column the position is in speaks for itself only as content, never as its own origin.
    let here = row[..pos - ls].matches('|').count().saturating_sub(1);
    origin_cols
        .into_iter()
        .filter(|&c| c != here)
        .filter_map(|c| values.get(c).and_then(|v| classify_party(v)))
        .next()
}

fn cells(line: &str) -> Vec<String> {
    let t = line.trim().trim_start_matches('|').trim_end_matches('|');
    t.split('|').map(|c| c.trim().to_string()).collect()
}

/// The speaker of the turn or e-mail around `pos`: the nearest speaker line at or above it.
fn speaker_party(text: &str, lo: usize, pos: usize) -> Option<Party> {
    // Speaker lines are only read as such in a text that has at least two of them (a transcript
    // or a thread), so a lone `user: Alice` key of a YAML document names nobody's turn.
    if !is_transcript(text) {
        return None;
    }
    let here = line_bounds(text, pos).0;
    let mut start = here;
    loop {
        let (ls, le) = line_bounds(text, start);
        let line = &text[ls..le];
        if let Some(name) = speaker(line) {
            return classify_party(&name);
        }
        // A turn or an e-mail does not reach across a heading, a separator line or the close of
        // an element: what lies above those belongs to another part of the document.
        if ls < here && ends_a_part(line) {
            return None;
        }
        if ls <= lo || ls == 0 {
            return None;
        }
        start = ls - 1;
    }
}

/// Whether a line closes a part of a document: a heading, a separator (`---`, `=====`, `_____`,
/// `----- Message 2 -----`) or a closing tag.
fn ends_a_part(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('#')
        || t.starts_with("</")
        || ["---", "===", "___", "***"]
            .iter()
            .any(|r| t.starts_with(r))
}

/// The party a speaker line names: `From: X` (an e-mail header, possibly quoted with `>`), or a
/// chat turn labelled by its role (one of the lexicon's `speaker_roles`) — `ROLE (who): …`,
/// `[time] ROLE: …`, `ROLE(tool): …`, `ROLE KIND: …` and `[ROLE KIND] …` (KIND one of the
/// lexicon's `message_kinds`: `agent report: …`, `[tool:find_x result] …`), as a list item or
/// not. `None` for any other line.
fn speaker(line: &str) -> Option<String> {
    let t = strip_list_marker(line.trim_start().trim_start_matches(['>', ' ']));
    if let Some(rest) = t
        .strip_prefix("From:")
        .or_else(|| t.strip_prefix("from:"))
        .or_else(|| t.strip_prefix("FROM:"))
    {
        let who = rest.trim();
        // A header line holds one header: `From: X To: Y Subject: …` run together is prose that
        // quotes an e-mail, not the start of one.
        let more = ["to:", "subject:", "date:", "cc:", "sent:"]
            .iter()
            .any(|h| fold_case(who).contains(&format!(" {h}")));
        return (!who.is_empty() && !more && who.len() <= 160).then(|| who.to_string());
    }
    // A leading time stamp or line number in brackets: `[09:02] user: …`; any other bracket at
    // the start is the label itself: `[agent report] …`.
    let t = match t.strip_prefix('[') {
        Some(r) => match r.split_once(']') {
            Some((label, _)) if names_a_turn(label) => return Some(label.trim().to_string()),
            Some((stamp, rest)) if stamp.chars().any(|c| c.is_ascii_digit()) => rest.trim_start(),
            Some(_) => return None,
            None => t,
        },
        None => t,
    };
    let (head, _) = t.split_once(':')?;
    names_a_turn(head).then(|| head.to_string())
}

/// Whether `head` (what precedes a turn's `:` or sits in its brackets) is a role with at most a
/// qualifier: `user`, `user (manager)`, `assistant → tool {}`, `tool:find_x result`,
/// `agent report` — not prose that happens to start with a role word (`User acceptance`).
pub(super) fn names_a_turn(head: &str) -> bool {
    if head.trim().is_empty() || head.len() > 120 {
        return false;
    }
    let lower = fold_case(head.trim());
    let role: String = lower
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if role.is_empty() || !lex().speaker_roles.contains(&role) {
        return false;
    }
    let rest = lower[role.len()..].trim();
    // A message's kind, or its role again (`user user: …`, an event whose kind is its role).
    let kind = |w: &str| {
        lex().message_kinds.iter().any(|k| k == w) || lex().speaker_roles.iter().any(|r| r == w)
    };
    // `tool:find_x result`, `external:Acme Inc. report (PDF) call`: after a role's `:` comes the
    // name of who plays it, then at most the kind of message.
    if let Some(named) = rest.strip_prefix(':') {
        let last = named.split_whitespace().last().unwrap_or("");
        return !named.starts_with(' ') && (named.split_whitespace().count() == 1 || kind(last));
    }
    if head.len() > 60 {
        return false;
    }
    rest.is_empty()
        || rest.starts_with('(')
        || rest.starts_with('→')
        || rest.starts_with("->")
        || rest.starts_with('[')
        || kind(rest)
}

/// `t` without a leading list marker (`- `, `* `, `+ `, `• `, `1. `, `1) `).
fn strip_list_marker(t: &str) -> &str {
    for m in ["- ", "* ", "+ ", "• "] {
        if let Some(r) = t.strip_prefix(m) {
            return r.trim_start();
        }
    }
    let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0 && (t[digits..].starts_with(". ") || t[digits..].starts_with(") ")) {
        return t[digits + 2..].trim_start();
    }
    t
}

/// Whether `text` is a transcript or a thread: it has at least two speaker lines.
pub(super) fn is_transcript(text: &str) -> bool {
    text.lines()
        .filter(|l| speaker(l).is_some())
        .take(2)
        .count()
        == 2
}

/// Whether `line` opens a turn of a transcript or an e-mail (see [`speaker`]): such a line is
/// structure, never the continuation of the line above it.
pub fn is_speaker_line(line: &str) -> bool {
    speaker(line).is_some()
}

/// Whether the opening tag `tag` (its text between `<` and `>`) names its author in an attribute,
/// and which side that author is on.
pub(super) fn element_party(tag: &str) -> Option<Party> {
    let lower = fold_case(tag);
    lex().author_attributes.iter().find_map(|a| {
        let at = lower.find(&format!(" {a}="))?;
        let rest = &tag[at + a.len() + 2..];
        let quote = rest.chars().next()?;
        let value = if quote == '"' || quote == '\'' {
            rest[1..].split(quote).next()?
        } else {
            rest.split_whitespace().next()?
        };
        classify_party(value)
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parties_by_their_own_words() {
        assert_eq!(classify_party("user (practice manager)"), Some(Party::Own));
        assert_eq!(classify_party("tool(search_wiki)"), Some(Party::Outside));
        assert_eq!(
            classify_party("accounts@nordic-metal.example"),
            Some(Party::Outside)
        );
        assert_eq!(classify_party("Dana Okafor"), None);
    }

    #[test]
    fn speaker_lines_in_several_styles() {
        assert!(speaker("[09:02] user (manager): hi").is_some());
        assert!(speaker("assistant → tool {}: x").is_some());
        assert!(speaker("From: someone@x.example").is_some());
        assert!(speaker("User acceptance: passed").is_none());
        assert!(speaker("Note: the user said so").is_none());
        assert!(speaker("agent report: resized it").is_some());
        assert!(speaker("[agent report] resized it").is_some());
        assert!(speaker("- tool:find_resize_request result: none").is_some());
        assert!(speaker("[tool:find_resize_request result] none").is_some());
        assert!(speaker("[Note] the user said so").is_none());
        assert!(speaker("[external:Acme Inc. price list (PDF) result] x").is_some());
        assert!(speaker("[external:Acme Inc. price list] x").is_none());
        assert!(speaker("Agent confirmed the key: k-1").is_none());
    }

    #[test]
    fn a_lone_key_is_no_turn() {
        let t = "user: Alice\nnext: send the report to the board";
        let p = t.find("send").unwrap();
        assert_eq!(party_at(t, 0, t.len(), p, p), None);
    }

    #[test]
    fn a_table_row_speaks_through_its_origin_column() {
        let t = "| # | origin | content |\n|---|---|---|\n| 1 | supplier chat | approve the order |\n| 2 | internal (buyer) | wait |\n";
        let p = t.find("approve").unwrap();
        assert_eq!(party_at(t, 0, t.len(), p, p), Some(Party::Outside));
        let p = t.find("wait").unwrap();
        assert_eq!(party_at(t, 0, t.len(), p, p), Some(Party::Own));
    }

    #[test]
    fn an_author_attribute_names_the_party() {
        assert_eq!(
            element_party("decision by=\"registrar (task owner)\""),
            Some(Party::Own)
        );
        assert_eq!(
            element_party("message author=\"customer\""),
            Some(Party::Outside)
        );
        assert_eq!(element_party("note kind=\"x\""), None);
    }
}
