//! `gate`: check a run against the CI policy.
//!
//! Owns: one line per rule on stdout, writing the JUnit and Markdown files the gate renders, and
//! the gate's exit code ([`exit::gate`]). Must not: evaluate rules or render the files
//! ([`crate::gate`] does). It never returns an [`crate::error::Error`]: every problem is
//! [`exit::gate::UNUSABLE`], but a folder whose run is in progress, [`exit::gate::BUSY`].

use crate::cli::args::GateArgs;
use crate::exit;
use crate::gate;

pub fn run(args: &GateArgs) -> i32 {
    let dir = &args.dir;
    let junit = args
        .junit
        .clone()
        .unwrap_or_else(|| dir.join("gate-junit.xml"));
    let summary = args.summary.clone().unwrap_or_else(|| dir.join("gate.md"));
    // A run still being written is not judged (its records are not final), and its folder gets
    // no gate files: the message says which process holds it.
    if !args.allow_incomplete
        && let Err(e) = crate::runner::refuse_in_progress(dir)
    {
        eprintln!("error: {e}");
        return exit::gate::BUSY;
    }
    let results = gate::load_policy(args.policy.as_deref())
        .and_then(|p| gate::evaluate(dir, args.baseline.as_deref(), &p).map(|r| (r, p)));
    let (results, policy) = match results {
        Ok(r) => r,
        Err(e) => {
            let message = crate::secrets::redact(&e.to_string()).into_owned();
            eprintln!("error: {message}");
            // CI still gets its files: the error as one failed test case.
            let failed = [gate::RuleResult {
                name: "gate input is usable".into(),
                verdict: gate::Verdict::Failed,
                detail: message.clone(),
                warning: None,
            }];
            for (path, text) in [
                (&junit, gate::junit(&failed)),
                (&summary, gate::markdown_error(&message)),
            ] {
                if crate::durable::write(path, text.as_bytes()).is_err() {
                    eprintln!("error: cannot write {}", path.display());
                }
            }
            return exit::gate::UNUSABLE;
        }
    };
    for r in &results {
        say!("{} {}: {}", r.verdict.label(), r.name, r.detail);
        if let Some(w) = &r.warning {
            say!("       warning: {w}");
        }
    }
    for (path, text) in [
        (&junit, gate::junit(&results)),
        (&summary, gate::markdown(&results)),
    ] {
        if let Err(e) = crate::durable::write(path, text.as_bytes()) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return exit::gate::UNUSABLE;
        }
    }
    gate::exit_code(&results, &policy)
}
