//! `transcripts import|list|show`: real agent logs in, normalised transcripts out, and what is in
//! them (messages, tool calls, tokens, cut points).
//!
//! Owns what these commands print. Must not: parse log formats, choose cuts or count tokens
//! itself ([`crate::transcript`] does).

use crate::cli::args::{CutArgs, TranscriptsCmd};
use crate::error::Error;
use crate::exit;
use crate::transcript::{self, Transcript, WriteRule, model::TRole};

/// The write rule the flags ask for.
pub fn write_rule(tools: &Option<Vec<String>>) -> WriteRule {
    match tools {
        Some(list) => WriteRule::listed(list.iter().cloned()),
        None => WriteRule::default(),
    }
}

pub fn run(cmd: TranscriptsCmd) -> Result<i32, Error> {
    match cmd {
        TranscriptsCmd::Import(a) => {
            let report = transcript::import_to(&a.file, a.format, a.skip_bad, &a.out)?;
            for bad in &report.skipped {
                eprintln!("skipped: {bad}");
            }
            say!(
                "{} runs imported into {} ({} skipped)",
                report.written.len(),
                a.out.display(),
                report.skipped.len()
            );
            Ok(exit::OK)
        }
        TranscriptsCmd::List { dir, cut } => {
            let all = transcript::read_dir(&dir)?;
            say!("run\tmessages\tuser\tassistant\ttool\tcalls\ttokens\treward\tground_truth\tcuts");
            for t in &all {
                let n = |r: TRole| t.messages.iter().filter(|m| m.role == r).count();
                let cuts = cuts_of(t, &cut);
                say!(
                    "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                    t.id,
                    t.messages.len(),
                    n(TRole::User),
                    n(TRole::Assistant),
                    n(TRole::Tool),
                    t.calls().count(),
                    t.tokens(),
                    t.reward
                        .map(|r| r.to_string())
                        .unwrap_or_else(|| "-".into()),
                    t.ground_truth.len(),
                    cuts.iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(",")
                );
            }
            eprintln!("{} runs", all.len());
            Ok(exit::OK)
        }
        TranscriptsCmd::Show {
            dir,
            run,
            json,
            cut,
        } => {
            let t = transcript::find(&dir, &run)?;
            if json {
                say!(
                    "{}",
                    serde_json::to_string_pretty(&t).map_err(|e| Error::Usage(e.to_string()))?
                );
                return Ok(exit::OK);
            }
            print_run(&t, &cut);
            Ok(exit::OK)
        }
    }
}

fn cuts_of(t: &Transcript, cut: &CutArgs) -> Vec<transcript::Cut> {
    transcript::cuts(t, &write_rule(&cut.write_tools), cut.cuts)
}

fn print_run(t: &Transcript, cut: &CutArgs) {
    use crate::tokens::count;
    say!(
        "{} · {} messages · {} tokens · reward {} · from {} ({}, run {})",
        t.id,
        t.messages.len(),
        t.tokens(),
        t.reward
            .map(|r| r.to_string())
            .unwrap_or_else(|| "-".into()),
        t.origin.file,
        t.origin.format,
        t.origin.position
    );
    if let Some(s) = &t.system {
        say!("system prompt: {} tokens (travels unchanged)", count(s));
    }
    let cuts = cuts_of(t, cut);
    for (i, m) in t.messages.iter().enumerate() {
        for c in cuts.iter().filter(|c| c.at == i) {
            say!("--- cut {} ({}) ---", c.name, c.rule.as_str());
        }
        let role = match m.role {
            TRole::User => "user",
            TRole::Assistant => "assistant",
            TRole::Tool => "tool",
        };
        let first: String = m
            .content
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(100)
            .collect();
        say!(
            "{:>4} {role:<9} {:>5} tok  {first}",
            m.index,
            count(&m.content)
        );
        for c in &m.tool_calls {
            say!(
                "{:>4}   → {} {}",
                "",
                c.name,
                serde_json::to_string(&c.arguments).unwrap_or_default()
            );
        }
    }
    for g in &t.ground_truth {
        say!(
            "ground truth: {} {}",
            g.name,
            serde_json::to_string(&g.arguments).unwrap_or_default()
        );
    }
}
