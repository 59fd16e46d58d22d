//! `show RUN [CELL]`: one cell of a run folder, readably, on the terminal — its identity and
//! outcome, its score explained ([`crate::viewer::explain`]), its handoff, every exchange with a
//! live endpoint (the request's new messages, the answer, tool calls and their verdicts,
//! `finish_reason`, usage, timings) and the actions with the world's answers. Without CELL, the
//! cells with their numbers.
//!
//! Owns: the terminal form. Control characters of saved text (model-written above all) are shown
//! as escapes, so an answer cannot move the cursor or recolour the terminal. Must not: change a
//! saved file.

use serde_json::Value;

use crate::cli::args::ShowArgs;
use crate::conversation::{self, Entry};
use crate::error::Error;
use crate::exit;
use crate::record::RunRecord;

/// `text` with control characters other than line breaks and tabs escaped.
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `text` indented by `pad` on every line.
fn indent(text: &str, pad: &str) -> String {
    clean(text)
        .lines()
        .map(|l| format!("{pad}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn message(m: &Value, pad: &str) -> String {
    let role = m["role"].as_str().unwrap_or("?");
    let mut head = format!("{pad}[{role}]");
    if let Some(id) = m["tool_call_id"].as_str() {
        head.push_str(&format!(" (result of {})", clean(id)));
    }
    let mut out = vec![head];
    match &m["content"] {
        Value::String(s) if !s.is_empty() => out.push(indent(s, &format!("{pad}  "))),
        Value::Null | Value::String(_) => {}
        other => out.push(indent(&other.to_string(), &format!("{pad}  "))),
    }
    for tc in m["tool_calls"].as_array().into_iter().flatten() {
        out.push(format!(
            "{pad}  call {}: {}({})",
            clean(tc["id"].as_str().unwrap_or("")),
            clean(tc["function"]["name"].as_str().unwrap_or("")),
            clean(tc["function"]["arguments"].as_str().unwrap_or(""))
        ));
    }
    out.join("\n")
}

/// The cell's conversation, as lines.
fn conversation(e: &Entry, handoff: &[Value], full: bool) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(note) = &e.outcome.note {
        out.push(clean(note));
    }
    out.push(format!("handoff ({} tokens):", e.handoff_tokens));
    out.extend(handoff.iter().map(|m| message(m, "  ")));
    if !e.tools.is_empty() {
        let names: Vec<&str> = e
            .tools
            .iter()
            .filter_map(|t| t["function"]["name"].as_str())
            .collect();
        out.push(format!("functions offered: {}", clean(&names.join(", "))));
    }
    for (i, x) in e.exchanges.iter().enumerate() {
        let mut head = format!(
            "request {} (sent at {:.0} ms, answered after {:.0} ms, {} HTTP request(s){}), finish_reason {}",
            x.turn,
            x.started_ms,
            x.latency_ms,
            x.requests,
            if x.from_cache { ", from the cache" } else { "" },
            x.finish_reason.as_deref().unwrap_or("-")
        );
        if let Some(u) = &x.usage {
            head.push_str(&format!(
                ", usage {} prompt / {} completion tokens",
                u["prompt_tokens"], u["completion_tokens"]
            ));
        }
        out.push(head);
        let params = Value::Object(x.request.params.clone());
        out.push(format!("  parameters: {}", clean(&params.to_string())));
        match (full, e.request(i)) {
            (true, Some(body)) => {
                for m in body["messages"].as_array().into_iter().flatten() {
                    out.push(message(m, "  "));
                }
            }
            _ => {
                if x.request.extends > 0 {
                    out.push(format!(
                        "  (the previous request's {} messages, then:)",
                        x.request.extends
                    ));
                }
                out.extend(x.request.messages.iter().map(|m| message(m, "  ")));
            }
        }
        if !x.text.is_empty() {
            out.push("  answer:".into());
            out.push(indent(&x.text, "    "));
        }
        for tc in &x.tool_calls {
            out.push(format!(
                "  tool call {}({}) [{}]",
                clean(&tc.name),
                clean(&tc.arguments),
                serde_json::to_value(tc.verdict)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            ));
        }
        if let Some(err) = &x.error {
            out.push(format!("  error: {}", clean(err)));
        }
    }
    out.push(format!("actions ({}):", e.steps.len()));
    for s in &e.steps {
        out.push(format!(
            "  {}. at {:.0} ms: {}",
            s.step,
            s.at_ms,
            clean(&s.action.to_string())
        ));
        if let Some(r) = &s.result {
            out.push(indent(r, "     → "));
        }
    }
    out
}

fn identity(n: usize, r: &RunRecord) -> String {
    format!(
        "{n}: {} · {} · {} · {} · {} · rep {} · {}{}",
        r.scenario,
        r.scale,
        r.interrupt,
        r.strategy,
        r.model,
        r.rep,
        crate::viewer::outcome(r),
        r.error_class
            .map(|c| format!(" ({})", c.as_str()))
            .unwrap_or_default()
    )
}

pub fn run(args: &ShowArgs) -> Result<i32, Error> {
    let records = crate::record::read_records(&args.dir.join("results.jsonl"))
        .map_err(|e| Error::Usage(e.to_string()))?;
    let Some(n) = args.cell else {
        for (i, r) in records.iter().enumerate() {
            say!("{}", clean(&identity(i + 1, r)));
        }
        return Ok(exit::OK);
    };
    let Some(r) = n.checked_sub(1).and_then(|i| records.get(i)) else {
        return Err(Error::Usage(format!(
            "{}: there is no cell {n}; the run has cells 1 to {} (`show {}` lists them)",
            args.dir.join("results.jsonl").display(),
            records.len(),
            args.dir.display()
        )));
    };
    say!("cell {}", clean(&identity(n, r)));
    for line in crate::viewer::explain(r) {
        say!("  {}", clean(&line));
    }
    let m = &r.metrics;
    say!(
        "metrics: restore tokens {}, history tokens {}, total tokens {}, first action {:.0} ms, completion {:.0} ms",
        m.restore_tokens,
        m.history_tokens,
        m.total_tokens,
        m.first_action_ms,
        m.completion_ms
    );
    if let Some(l) = &r.diagnostics.live {
        say!(
            "live: {} calls, {} HTTP requests, {} retries, {} with a valid tool call, {} cut at max_tokens, {} malformed tool calls, {} text-only turns; first request {} ms, {} prompt tokens",
            l.calls,
            l.requests,
            l.retries,
            l.tool_call_turns,
            l.length_turns,
            l.malformed_tool_calls,
            l.text_only_turns,
            l.first_request_ms
                .map(|x| format!("{x:.0}"))
                .unwrap_or_else(|| "-".into()),
            l.first_prompt_tokens
                .map(|x| x.to_string())
                .unwrap_or_else(|| "-".into())
        );
    }
    if r.conversation.is_none() {
        say!(
            "no conversation was saved for this cell (a transcript cell, or a run folder written before conversations were saved)"
        );
        return Ok(exit::OK);
    }
    let cell = r.id();
    let entry = conversation::find(&args.dir, &cell).map_err(|e| Error::Usage(e.to_string()))?;
    match entry {
        Some(e) => {
            let handoffs =
                conversation::handoffs(&args.dir).map_err(|err| Error::Usage(err.to_string()))?;
            let handoff = e
                .handoff
                .as_ref()
                .and_then(|d| handoffs.get(d))
                .map(|h| h.messages.clone())
                .unwrap_or_default();
            for line in conversation(&e, &handoff, args.full) {
                say!("{line}");
            }
        }
        None => {
            return Err(Error::Usage(format!(
                "{}: the record of cell {n} names its conversation, and the file has no entry for it (a torn or replaced file)",
                args.dir.join(conversation::FILE).display()
            )));
        }
    }
    Ok(exit::OK)
}
