//! The layout transforms of `tests/layout_invariance.rs`: rewrites of a handoff's text that keep
//! its meaning (paragraphing, blank lines, hard wrapping, bullets and prose, heading levels,
//! section order, white space, line endings, message separation).
//!
//! Owns the transforms and the line classes they respect. Must not change meaning: no transform
//! touches a fenced code block, a JSON or tag line, a blockquote's `>` markers, the inside of
//! brackets or straight quotes when it breaks a line, or a role header; which transform applies
//! to which strategy's handoff is [`applies`].

/// A line's class, as the transforms see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Blank,
    Prose,
    List,
    Quote,
    Heading,
    /// Fences and their contents, tag lines, JSON lines, tables, rules, indented code and list
    /// continuations: left exactly as they are.
    Other,
}

fn is_list(l: &str) -> bool {
    let t = l.trim_start();
    if t.starts_with("- ") || t.starts_with("* ") || t.starts_with("• ") {
        return true;
    }
    let digits: String = t.chars().take_while(|c| c.is_ascii_digit()).collect();
    !digits.is_empty()
        && (t[digits.len()..].starts_with(". ") || t[digits.len()..].starts_with(") "))
}

fn is_heading(l: &str) -> bool {
    let h = l.chars().take_while(|c| *c == '#').count();
    (1..=6).contains(&h) && l[h..].starts_with(' ')
}

/// The class of every line of `lines`.
pub fn classify(lines: &[&str]) -> Vec<Kind> {
    let mut out = Vec::with_capacity(lines.len());
    let mut fence = false;
    // Inside a tagged block (`<external …>` … `</external>`) the text is quoted material: a
    // `# NOTE` line there is the quote's own, not a heading of the handoff.
    let mut tagged = false;
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        let next = lines.get(i + 1).map(|n| n.trim()).unwrap_or("");
        let opens = t.starts_with('<')
            && t[1..].starts_with(|c: char| c.is_ascii_alphabetic())
            && !t.contains("</")
            && !t.trim_end().ends_with("/>");
        let k = if t.starts_with("```") {
            fence = !fence;
            Kind::Other
        } else if fence {
            Kind::Other
        } else if tagged || opens {
            tagged = if tagged { !t.contains("</") } else { true };
            Kind::Other
        } else if l.trim().is_empty() {
            Kind::Blank
        } else if is_heading(l) {
            Kind::Heading
        } else if l.starts_with('>') {
            Kind::Quote
        } else if is_list(l) && !l.starts_with(' ') {
            Kind::List
        } else if l.starts_with(' ')
            || l.starts_with('\t')
            || t.starts_with(['<', '{', '[', '"', '}', ']', '|', '-', '=', '+', '*'])
            || t.trim_end().ends_with(':') && !t.contains(' ')
            || (!next.is_empty() && next.chars().all(|c| c == '-' || c == '='))
        {
            Kind::Other
        } else {
            Kind::Prose
        };
        out.push(k);
    }
    out
}

fn lines(s: &str) -> Vec<&str> {
    s.split('\n').collect()
}

/// The byte offsets in `s` where a sentence ends and a space follows (outside brackets, tags and
/// straight quotes; not after a common abbreviation): the offset of that space.
fn sentence_gaps(s: &str) -> Vec<usize> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let (mut depth, mut quote, mut tag) = (0i32, false, false);
    for (i, c) in s.char_indices() {
        // Parentheses are not tracked: prose leaves them unbalanced ("(incl." cut at a period).
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth = (depth - 1).max(0),
            '"' => quote = !quote,
            '<' => tag = true,
            '>' => tag = false,
            _ => {}
        }
        if depth > 0 || quote || tag || !matches!(c, '.' | '!' | '?') {
            continue;
        }
        if b.get(i + 1) != Some(&b' ') {
            continue;
        }
        let head = &s[..=i];
        let word = head.rsplit(' ').next().unwrap_or("");
        let abbrev = ["P.S.", "e.g.", "i.e.", "etc.", "vs.", "Mr.", "Ms.", "Dr."]
            .iter()
            .any(|a| word.ends_with(a));
        let next = s[i + 2..].chars().next();
        if !abbrev && word.len() > 1 && next.is_some_and(|n| n.is_uppercase()) {
            out.push(i + 1);
        }
    }
    out
}

/// The offsets in a line where it may be broken: spaces outside brackets, tags and straight
/// quotes, not before a token that would start a list item, heading, quote, tag or header.
fn break_points(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut tag) = (0i32, false, false);
    for (i, c) in s.char_indices() {
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            '"' => quote = !quote,
            '<' => tag = true,
            '>' => tag = false,
            _ => {}
        }
        if c != ' ' || depth > 0 || quote || tag {
            continue;
        }
        let rest = &s[i + 1..];
        let starts_block = rest
            .starts_with(['-', '*', '#', '>', '<', '[', '|', '{', '+', '=', '•'])
            || is_list(rest)
            || rest.is_empty()
            || rest.starts_with(' ');
        if !starts_block {
            out.push(i);
        }
    }
    out
}

fn wrap_line(l: &str, width: usize, cont: &str) -> String {
    let mut out = String::new();
    let mut start = 0;
    let points = break_points(l);
    let mut last_ok = None;
    for &p in &points {
        if p - start > width
            && let Some(q) = last_ok
        {
            out.push_str(&l[start..q]);
            out.push('\n');
            out.push_str(cont);
            start = q + 1;
        }
        last_ok = Some(p);
        if p <= start {
            last_ok = None;
        }
    }
    if l.len() - start > width
        && let Some(q) = last_ok
        && q > start
    {
        out.push_str(&l[start..q]);
        out.push('\n');
        out.push_str(cont);
        start = q + 1;
    }
    out.push_str(&l[start..]);
    out
}

/// Hard-wraps prose, list items (continuation indented under the item) and blockquotes (each
/// line keeps its `> `) at about 60 columns.
pub fn wrap(s: &str) -> String {
    let ls = lines(s);
    let ks = classify(&ls);
    let out: Vec<String> = ls
        .iter()
        .zip(&ks)
        .map(|(l, k)| match k {
            Kind::Prose => wrap_line(l, 60, ""),
            Kind::List => {
                let t = l.trim_start();
                let marker = t.split_once(' ').map(|(m, _)| m.len() + 1).unwrap_or(2);
                wrap_line(l, 60, &" ".repeat(marker))
            }
            Kind::Quote => {
                let body = l.trim_start_matches('>').trim_start();
                format!("> {}", wrap_line(body, 60, "> "))
            }
            _ => l.to_string(),
        })
        .collect();
    out.join("\n")
}

/// Puts every sentence of a prose line in a paragraph of its own.
pub fn split_paragraphs(s: &str) -> String {
    let ls = lines(s);
    let ks = classify(&ls);
    let mut out = Vec::new();
    for (l, k) in ls.iter().zip(&ks) {
        if *k != Kind::Prose {
            out.push(l.to_string());
            continue;
        }
        let mut line = l.to_string();
        for g in sentence_gaps(l).into_iter().rev() {
            line.replace_range(g..g + 1, "\n\n");
        }
        out.push(line);
    }
    out.join("\n")
}

/// Joins a prose paragraph that ends a sentence with the prose paragraph after it.
pub fn join_paragraphs(s: &str) -> String {
    let ls = lines(s);
    let ks = classify(&ls);
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ls.len() {
        let ends = ls[i].trim_end().ends_with(['.', '!', '?']);
        let joinable = ks[i] == Kind::Prose
            && ends
            && ks.get(i + 1) == Some(&Kind::Blank)
            && ks.get(i + 2) == Some(&Kind::Prose);
        if joinable {
            out.push(format!("{} {}", ls[i].trim_end(), ls[i + 2]));
            i += 3;
            continue;
        }
        out.push(ls[i].to_string());
        i += 1;
    }
    out.join("\n")
}

/// Doubles every blank line.
pub fn blank_doubled(s: &str) -> String {
    let ls = lines(s);
    let ks = classify(&ls);
    let mut out = Vec::new();
    for (l, k) in ls.iter().zip(&ks) {
        out.push(*l);
        if *k == Kind::Blank {
            out.push("");
        }
    }
    out.join("\n")
}

/// Removes the blank lines markdown does not need: between prose, headings and list items
/// (never after a list item before prose — that would continue the item —, never next to a
/// blockquote or a line left as it is).
pub fn blank_removed(s: &str) -> String {
    let ls = lines(s);
    let ks = classify(&ls);
    let mut out = Vec::new();
    for i in 0..ls.len() {
        if ks[i] == Kind::Blank {
            let prev = ks[..i].iter().rev().find(|k| **k != Kind::Blank);
            let next = ks[i + 1..].iter().find(|k| **k != Kind::Blank);
            let ok = matches!(
                (prev, next),
                (
                    Some(Kind::Prose | Kind::Heading),
                    Some(Kind::Prose | Kind::Heading)
                ) | (
                    Some(Kind::Prose | Kind::Heading | Kind::List),
                    Some(Kind::List)
                ) | (Some(Kind::List), Some(Kind::Heading))
            );
            if ok {
                continue;
            }
        }
        out.push(ls[i]);
    }
    out.join("\n")
}

/// Turns every run of list items into one prose paragraph of sentences.
pub fn bullets_to_prose(s: &str) -> String {
    let ls = lines(s);
    let ks = classify(&ls);
    let mut out: Vec<String> = Vec::new();
    let mut run: Vec<String> = Vec::new();
    let flush = |run: &mut Vec<String>, out: &mut Vec<String>| {
        if !run.is_empty() {
            out.push(run.join(" "));
            run.clear();
        }
    };
    for i in 0..ls.len() {
        // An item with continuation lines stays a list item.
        let single = ks.get(i + 1) != Some(&Kind::Other);
        if ks[i] == Kind::List && single {
            let t = ls[i].trim_start();
            let body = t.split_once(' ').map(|(_, b)| b).unwrap_or(t).trim_end();
            let mut sentence = body.to_string();
            if !sentence.ends_with(['.', '!', '?', ':', ';']) {
                sentence.push('.');
            }
            run.push(sentence);
            continue;
        }
        flush(&mut run, &mut out);
        out.push(ls[i].to_string());
    }
    flush(&mut run, &mut out);
    out.join("\n")
}

/// Turns every prose line of two or more sentences into a list, one item per sentence.
pub fn prose_to_bullets(s: &str) -> String {
    let ls = lines(s);
    let ks = classify(&ls);
    let mut out = Vec::new();
    for (l, k) in ls.iter().zip(&ks) {
        let gaps = sentence_gaps(l);
        if *k != Kind::Prose || gaps.is_empty() {
            out.push(l.to_string());
            continue;
        }
        let mut from = 0;
        let mut items = Vec::new();
        for g in gaps.into_iter().chain([l.len()]) {
            items.push(format!("- {}", l[from..g].trim()));
            from = (g + 1).min(l.len());
        }
        out.push(items.join("\n"));
    }
    out.join("\n")
}

/// ATX headings two levels deeper (`#` → `###`).
pub fn headings_deeper(s: &str) -> String {
    let ls = lines(s);
    let ks = classify(&ls);
    let out: Vec<String> = ls
        .iter()
        .zip(&ks)
        .map(|(l, k)| {
            if *k == Kind::Heading {
                let h = l.chars().take_while(|c| *c == '#').count();
                format!("{}{}", "#".repeat((h + 2).min(6)), &l[h..])
            } else {
                l.to_string()
            }
        })
        .collect();
    out.join("\n")
}

/// Level-1 and level-2 ATX headings as setext headings (`===` / `---` underlines).
pub fn setext(s: &str) -> String {
    let ls = lines(s);
    let ks = classify(&ls);
    let out: Vec<String> = ls
        .iter()
        .zip(&ks)
        .map(|(l, k)| {
            let h = l.chars().take_while(|c| *c == '#').count();
            if *k == Kind::Heading && h <= 2 {
                let title = l[h..].trim();
                let bar = if h == 1 { "=" } else { "-" };
                format!("{title}\n{}", bar.repeat(title.chars().count().max(3)))
            } else {
                l.to_string()
            }
        })
        .collect();
    out.join("\n")
}

/// Reverses the order of the sections under the shallowest heading level (the preamble before
/// the first heading, and a closing tag after the last section, stay where they are).
pub fn shuffle_sections(s: &str) -> String {
    let ls = lines(s);
    let ks = classify(&ls);
    let level = |l: &str| l.chars().take_while(|c| *c == '#').count();
    let Some(top) = ls
        .iter()
        .zip(&ks)
        .filter(|(_, k)| **k == Kind::Heading)
        .map(|(l, _)| level(l))
        .min()
    else {
        return s.to_string();
    };
    let starts: Vec<usize> = (0..ls.len())
        .filter(|&i| ks[i] == Kind::Heading && level(ls[i]) == top)
        .collect();
    if starts.len() < 2 {
        return s.to_string();
    }
    let mut tail_at = ls.len();
    while tail_at > starts[starts.len() - 1] + 1 {
        let l = ls[tail_at - 1].trim();
        if l.is_empty() || l.starts_with("</") {
            tail_at -= 1;
        } else {
            break;
        }
    }
    let mut sections: Vec<Vec<&str>> = Vec::new();
    for (n, &a) in starts.iter().enumerate() {
        let b = starts.get(n + 1).copied().unwrap_or(tail_at);
        let mut sec: Vec<&str> = ls[a..b].to_vec();
        while sec.last().is_some_and(|l| l.trim().is_empty()) {
            sec.pop();
        }
        sections.push(sec);
    }
    sections.reverse();
    let mut out: Vec<&str> = ls[..starts[0]].to_vec();
    for sec in sections {
        out.extend(sec);
        out.push("");
    }
    out.extend(&ls[tail_at..]);
    out.join("\n")
}

/// Trailing spaces and tabs on every line, whitespace-only blank lines, and a leading and a
/// trailing whitespace-only line.
pub fn whitespace(s: &str) -> String {
    let ls = lines(s);
    let ks = classify(&ls);
    let body: Vec<String> = ls
        .iter()
        .zip(&ks)
        .map(|(l, k)| match k {
            Kind::Blank => " \t".to_string(),
            _ if l.trim_start().starts_with("```") => l.to_string(),
            _ => format!("{l} \t"),
        })
        .collect();
    format!("\t \n{}\n \t", body.join("\n"))
}

/// A rendered text's messages separated by `sep` instead of one blank line.
pub fn message_separation(text: &str, sep: &str) -> String {
    let mut out = String::new();
    let parts: Vec<&str> = text.split("\n\n[").collect();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            let header = ["user]", "assistant", "tool result]", "system]"];
            if header.iter().any(|h| p.starts_with(h)) {
                out.push_str(sep);
            } else {
                out.push_str("\n\n");
            }
            out.push('[');
        }
        out.push_str(p);
    }
    out
}

/// Whether a transform applies to a strategy's handoff. C and D render a checkpoint whose list
/// items are its records: turning them into prose (or prose into records) changes the structure,
/// so bullets ↔ prose applies to the narrative and transcript handoffs only. Every other
/// transform keeps a checkpoint's structure (it never touches tag, JSON or indented lines).
pub fn applies(transform: &str, strategy: &str) -> bool {
    let structured = matches!(strategy, "C" | "D" | "exec:python-example");
    !(structured && matches!(transform, "bullets_to_prose" | "prose_to_bullets"))
}

/// Whether a line opens a labelled message, as plug-ins write one message per line: a bracketed
/// origin (`[agent report] …`, `[tool:find_x] …`) or a role and kind before a colon
/// (`agent report: …`, `user: …`).
pub fn is_labelled(l: &str) -> bool {
    let t = l.trim_start();
    // The label and the message's text on one line (a role header alone on its line, as A
    // renders its messages, is another layout).
    let split = if let Some(r) = t.strip_prefix('[') {
        r.split_once("] ")
    } else {
        t.split_once(": ")
    };
    split.is_some_and(|(h, rest)| {
        !rest.trim().is_empty() && {
            let role: String = h
                .chars()
                .take_while(|c| c.is_ascii_alphabetic())
                .collect::<String>()
                .to_lowercase();
            h.split_whitespace().count() <= 3
                && [
                    "user",
                    "agent",
                    "assistant",
                    "tool",
                    "external",
                    "approver",
                    "system",
                ]
                .contains(&role.as_str())
        }
    })
}

/// Messages written one per line, separated by `sep` before every labelled line instead of one
/// newline (a blank line, several, or a bullet).
pub fn labelled_lines(s: &str, sep: &str) -> String {
    let ls = lines(s);
    let mut out = String::new();
    for (i, l) in ls.iter().enumerate() {
        if i > 0 {
            out.push_str(if is_labelled(l) && is_labelled(ls[i - 1]) {
                sep
            } else {
                "\n"
            });
        }
        out.push_str(l);
    }
    out
}

/// Every labelled line as a list item.
pub fn labelled_bullets(s: &str) -> String {
    let ls = lines(s);
    let out: Vec<String> = ls
        .iter()
        .map(|l| {
            if is_labelled(l) {
                format!("- {l}")
            } else {
                l.to_string()
            }
        })
        .collect();
    out.join("\n")
}

/// `[role kind] text` labels written as `role kind: text`.
pub fn labels_as_colons(s: &str) -> String {
    let ls = lines(s);
    let out: Vec<String> = ls
        .iter()
        .map(
            |l| match l.strip_prefix('[').and_then(|r| r.split_once("] ")) {
                Some((head, rest)) if is_labelled(l) => format!("{head}: {rest}"),
                _ => l.to_string(),
            },
        )
        .collect();
    out.join("\n")
}

/// A labelled message of two or more sentences split in two: its later sentences on the next
/// line, unlabelled.
pub fn split_messages(s: &str) -> String {
    let ls = lines(s);
    let out: Vec<String> = ls
        .iter()
        .map(|l| {
            let gaps = sentence_gaps(l);
            match gaps.first() {
                Some(&g) if is_labelled(l) => format!("{}\n{}", &l[..g], &l[g + 1..]),
                _ => l.to_string(),
            }
        })
        .collect();
    out.join("\n")
}
