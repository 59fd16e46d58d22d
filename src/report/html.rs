//! `report.html`: one self-contained file — the Markdown report's content as HTML, every string
//! escaped (strategy names, model names and error texts can come from plug-ins and models), and
//! the plots inlined as SVG. No script, no external fetch.

use std::fmt::Write as _;

use super::plots::Plot;

/// Escapes text for HTML and XML element content and attribute values (the report page and the
/// gate's JUnit file). Control characters other than newline and tab, which XML 1.0 forbids,
/// become spaces.
pub fn escape(s: &str) -> String {
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

/// Inline Markdown of the generated report: `code` and **bold**, on already-escaped text.
fn inline(escaped: &str) -> String {
    let mut out = String::new();
    let mut code = false;
    for (i, part) in escaped.split('`').enumerate() {
        if i > 0 {
            out.push_str(if code { "</code>" } else { "<code>" });
            code = !code;
        }
        if code {
            out.push_str(part);
        } else {
            let mut bold = false;
            for (j, p) in part.split("**").enumerate() {
                if j > 0 {
                    out.push_str(if bold { "</strong>" } else { "<strong>" });
                    bold = !bold;
                }
                out.push_str(p);
            }
            if bold {
                out.push_str("</strong>");
            }
        }
    }
    if code {
        out.push_str("</code>");
    }
    out
}

/// Splits a Markdown table row on `|` that are not escaped as `\|`.
fn cells(row: &str) -> Vec<String> {
    let inner = row.trim().trim_start_matches('|').trim_end_matches('|');
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&'|') {
            cur.push('|');
            chars.next();
        } else if c == '|' {
            out.push(cur.trim().to_string());
            cur.clear();
        } else {
            cur.push(c);
        }
    }
    out.push(cur.trim().to_string());
    out
}

/// Converts the report's Markdown (headings, paragraphs, tables, lists) to HTML.
pub fn markdown_to_html(md: &str) -> String {
    let mut o = String::new();
    let lines: Vec<&str> = md.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if let Some(h) = l.strip_prefix("## ") {
            let _ = writeln!(o, "<h2>{}</h2>", inline(&escape(h)));
        } else if let Some(h) = l.strip_prefix("# ") {
            let _ = writeln!(o, "<h1>{}</h1>", inline(&escape(h)));
        } else if l.starts_with('|') {
            o.push_str("<table>\n");
            let header = cells(l);
            o.push_str("<thead><tr>");
            for c in &header {
                let _ = write!(o, "<th>{}</th>", inline(&escape(c)));
            }
            o.push_str("</tr></thead>\n<tbody>\n");
            i += 1;
            // Skip the alignment row.
            if lines
                .get(i)
                .is_some_and(|x| x.starts_with("| ---") || x.starts_with("|---"))
            {
                i += 1;
            }
            while i < lines.len() && lines[i].starts_with('|') {
                o.push_str("<tr>");
                for c in cells(lines[i]) {
                    let _ = write!(o, "<td>{}</td>", inline(&escape(&c)));
                }
                o.push_str("</tr>\n");
                i += 1;
            }
            o.push_str("</tbody></table>\n");
            continue;
        } else if l.starts_with("- ") {
            o.push_str("<ul>\n");
            while i < lines.len() && lines[i].starts_with("- ") {
                let _ = writeln!(o, "<li>{}</li>", inline(&escape(&lines[i][2..])));
                i += 1;
            }
            o.push_str("</ul>\n");
            continue;
        } else if !l.trim().is_empty() {
            let _ = writeln!(o, "<p>{}</p>", inline(&escape(l)));
        }
        i += 1;
    }
    o
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:1em 0;font-size:0.85em}th,td{border:1px solid #ccc;padding:3px 7px;text-align:left}\
th{background:#f3f3f3}tr:nth-child(even){background:#fafafa}code{background:#f3f3f3;padding:0 3px}\
figure{margin:1.5em 0}figcaption{font-size:0.85em;color:#555}.plot svg{max-width:100%;height:auto}";

/// The whole page: the report's Markdown as HTML, then the plots.
pub fn page(markdown: &str, plots: &[Plot]) -> String {
    let mut o = String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    let _ = writeln!(
        o,
        "<title>compaction-eval report</title><style>{STYLE}</style></head><body>"
    );
    o.push_str(&markdown_to_html(markdown));
    if !plots.is_empty() {
        o.push_str("<h2>Plots</h2>\n");
        for p in plots {
            // plotters' SVG backend escapes the text it draws; the SVG is inlined as is.
            let svg = p.svg.trim_start_matches(|c| c != '<');
            let svg = match svg.strip_prefix("<?xml") {
                Some(rest) => rest.split_once("?>").map(|(_, r)| r).unwrap_or(rest),
                None => svg,
            };
            let _ = writeln!(
                o,
                "<figure class=\"plot\">{svg}<figcaption>plots/{0}.svg · plots/{0}.png</figcaption></figure>",
                escape(p.name)
            );
        }
    }
    o.push_str("</body></html>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_headings_and_escapes() {
        let md = "# T\n\nText with `code` and **bold** <b>.\n\n| a | b |\n| --- | --- |\n| x \\| y | <script>alert(1)</script> |\n\n- item\n";
        let h = markdown_to_html(md);
        assert!(h.contains("<h1>T</h1>"));
        assert!(h.contains("<code>code</code>") && h.contains("<strong>bold</strong>"));
        assert!(h.contains("<td>x | y</td>"));
        assert!(h.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(!h.contains("<script>"));
        assert!(h.contains("<li>item</li>"));
    }
}
