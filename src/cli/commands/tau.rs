//! `tau replay`: recorded τ-bench runs replayed on the native airline environment, one JSON line
//! per run, and a one-line summary on stderr; and `run --tau airline`: the τ-bench cells of a
//! run, its report and the lines `run` prints for them.
//!
//! Owns what these commands print and the checks of their flags. Must not: load, replay,
//! continue or write anything itself ([`crate::tau`] and [`crate::transcript::tau`] do).

use crate::cli::args::{RunArgs, TauCmd};
use crate::error::Error;
use crate::exit;
use crate::runner::RunConfig;
use crate::tau;
use crate::transcript::tau as cells;

pub fn run(cmd: TauCmd) -> Result<i32, Error> {
    match cmd {
        TauCmd::Replay(a) => {
            let data = match a.data {
                Some(d) => d,
                None => tau::data_dir()?,
            };
            let env = tau::Env::load(&data)?;
            let runs = tau::load_runs(&a.runs)?;
            let replayed = tau::replay_all(&env, &runs);
            tau::write_jsonl(&a.out, &replayed)?;
            let calls: usize = replayed.iter().map(|r| r.calls.len()).sum();
            let full = replayed
                .iter()
                .filter(|r| r.replayed_r_actions == 1.0)
                .count();
            eprintln!(
                "{} runs, {calls} calls replayed; r_actions=1 in {full} runs; written to {}",
                replayed.len(),
                a.out.display()
            );
            Ok(exit::OK)
        }
    }
}

/// The τ-bench flags of `run`.
#[derive(Debug, Clone)]
pub struct TauRun {
    env: String,
    tasks: Option<String>,
    cut_rules: Option<String>,
    user: Option<String>,
}

impl TauRun {
    /// `Some` when `run --tau` was given.
    pub fn of(a: &RunArgs) -> Option<TauRun> {
        a.tau.as_ref().map(|env| TauRun {
            env: env.clone(),
            tasks: a.tasks.clone(),
            cut_rules: a.cut_rules.clone(),
            user: a.tau_user.clone(),
        })
    }
}

fn say(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|_| out.flush());
}

/// `run --tau airline`: the cells, the report, a line per destination × strategy.
pub fn run_matrix(cfg: &RunConfig, t: TauRun, max_errored: f64) -> Result<i32, Error> {
    if t.env != "airline" {
        return Err(Error::Usage(format!(
            "--tau: `{}` is not a τ-bench environment here (the one shipped is `airline`)",
            t.env
        )));
    }
    let mut opts = cells::Options::shipped()?;
    if let Some(list) = &t.tasks {
        opts.tasks = Some(cells::parse_tasks(list)?);
    }
    if let Some(rules) = &t.cut_rules {
        opts.rules = cells::parse_rules(rules)?;
    }
    opts.user_model = t.user;
    // Governed context needs a scenario's declared originals and evidence; a τ-bench run
    // declares none.
    let mut kept = cfg.clone();
    let governed: Vec<String> = kept
        .strategies
        .iter()
        .filter(|s| crate::delivery::GovSpec::parse(s).is_some())
        .cloned()
        .collect();
    kept.strategies.retain(|s| !governed.contains(s));
    if !governed.is_empty() {
        eprintln!(
            "note: {} left out: governed context needs a scenario's declared instructions and evidence; τ-bench runs declare none",
            governed.join(", ")
        );
    }
    let o = cells::run(&kept, &opts)?;
    if !o.replaced_models.is_empty() {
        eprintln!(
            "note: {} stand for {} on τ-bench (the one simulated destination that can continue a recorded run)",
            o.replaced_models.join(", "),
            cells::follow::SIM_FOLLOW
        );
    }
    crate::runner::forget_memos();
    crate::runtime::release_freed_memory();
    crate::report::render_dir(&kept.out)?;
    let records = crate::runner::read_records(&kept.out.join("results.jsonl"))?;
    say(&format!(
        "{} successful runs, {} cuts: {} cells ({} errored{}); wrote {}",
        o.runs,
        o.cuts,
        o.records,
        o.errored,
        if o.kept > 0 {
            format!(", {} kept from the folder", o.kept)
        } else {
            String::new()
        },
        kept.out.join("report.md").display()
    ));
    for r in crate::report::tau::summarize(&records, kept.seed) {
        say(&format!(
            "  {} {}: reward {:.3}, extra calls {:.2}, extra turns {:.2}, extra tokens {:.0}",
            r.model,
            r.strategy,
            r.reward.mean,
            r.extra_tool_calls,
            r.extra_user_turns,
            r.extra_tokens
        ));
    }
    let fraction = if o.records == 0 {
        0.0
    } else {
        o.errored as f64 / o.records as f64
    };
    if fraction > max_errored {
        eprintln!(
            "error: {} of {} cells errored, more than --max-errored-fraction {max_errored} allows",
            o.errored, o.records
        );
        return Ok(exit::run::TOO_MANY_ERRORED);
    }
    Ok(exit::OK)
}
