//! `calibrate`: the same cells on the simulated destinations (`--models`, default `sim:careful`
//! and `sim:literal`) and on live ones (`--live`), a stratified sample of the matrix (`--sample`,
//! default six interrupt points × the strategies), run as `run` runs them; the report then
//! writes `calibration.json` and `calibration.md` ([`crate::report::calibration`]) and its
//! summary states each sim's κ. `--dry-run` plans the sample offline and prints what it would
//! send.
//!
//! Owns: which destinations are simulated and which live, the default sample, and the dry run's
//! estimate. Must not: compute agreement (the report does) or run cells itself (`run` does).

use std::collections::BTreeMap;

use crate::cli::args::{CalibrateArgs, RunArgs};
use crate::error::Error;
use crate::exit;
use crate::runner::{PointKey, RunConfig};
use crate::shipped::Source;

/// Interrupt points of the default sample (each runs every strategy).
const DEFAULT_POINTS: usize = 6;

/// Tokens a turn adds to the conversation a live destination re-reads (a tool call and its
/// result), for the dry run's estimate.
const TOKENS_PER_TURN: u64 = 120;

pub fn run(dir: &Source, args: CalibrateArgs) -> Result<i32, Error> {
    let dry_run = args.dry_run;
    let (fit, holdout) = (args.fit, args.fit_holdout);
    if fit {
        super::fit::check(holdout, &args.run)?;
    }
    let (a, live) = destinations(args)?;
    if dry_run && (a.tau.is_some() || a.transcripts.is_some()) {
        return Err(Error::Usage(
            "--dry-run estimates a scenario calibration; a τ-bench one's cells are --tasks × --cut-rules × the strategies".into(),
        ));
    }
    if dry_run {
        return estimate(dir, a, &live);
    }
    let fit_args = fit.then(|| a.clone());
    let (code, out) = super::run::run_into(dir, a)?;
    let file = out.join(crate::report::calibration::FILE);
    match crate::report::calibration::read(&file) {
        Ok(c) => {
            say!("{}", crate::report::calibration::trust_line(Some(&c), None));
            say!(
                "wrote {} and {}",
                file.display(),
                out.join(crate::report::calibration::MARKDOWN).display()
            );
        }
        Err(_) => {
            eprintln!(
                "error: no cell was scored on both a simulated and a live destination, so there is no calibration: see \"Errored cells\" in {}",
                out.join("report.md").display()
            );
            return Ok(if code == exit::OK { exit::FAILED } else { code });
        }
    }
    if let Some(fa) = fit_args {
        super::fit::run(dir, fa, &out, &live, holdout)?;
    }
    Ok(code)
}

/// The run's arguments with `--models` the simulated destinations followed by the live ones,
/// and the sample set; and the live destinations' names.
fn destinations(args: CalibrateArgs) -> Result<(RunArgs, Vec<String>), Error> {
    let mut a = args.run;
    let sims = a
        .models
        .take()
        .unwrap_or_else(|| RunConfig::default().models);
    if let Some(s) = sims.iter().find(|s| !s.starts_with("sim:")) {
        return Err(Error::Usage(format!(
            "calibrate: --models names the simulated destinations to calibrate, and `{s}` is not one (sim:careful, sim:literal, …); live destinations go in --live"
        )));
    }
    let mut live = args.live;
    if let Some(name) = &a.model_name
        && !live.contains(name)
    {
        live.push(name.clone());
    }
    if live.is_empty() {
        return Err(Error::Usage(
            "calibrate needs a live destination: --live NAME (a [model.NAME] table of --config, or vllm:MODEL, ollama:MODEL, llamacpp:MODEL, openai:MODEL), or --model-name with --base-url".into(),
        ));
    }
    if let Some(l) = live.iter().find(|l| l.starts_with("sim:")) {
        return Err(Error::Usage(format!(
            "calibrate: --live names live destinations, and `{l}` is a simulated one (put it in --models)"
        )));
    }
    let mut models = sims;
    models.extend(live.iter().cloned());
    a.models = Some(models);
    // A τ-bench calibration takes its cells from --tasks and --cut-rules (sim:follow stands for
    // the scenario sims there).
    if a.sample.is_none() && a.limit.is_none() && a.tau.is_none() && a.transcripts.is_none() {
        let strategies = crate::delivery::sweep(
            &a.strategies
                .clone()
                .unwrap_or_else(|| RunConfig::default().strategies),
            a.governed_max_bytes.as_deref().unwrap_or(&[]),
        )
        .map_err(|e| Error::Usage(e.to_string()))?;
        // Chained arms (`--cycles`) are strategies of the sample too.
        let strategies =
            crate::strategy::chain::expand(&strategies, a.cycles.as_deref().unwrap_or(&[]))
                .map_err(Error::Usage)?;
        a.sample = Some(DEFAULT_POINTS * strategies.len().max(1));
    }
    Ok((a, live))
}

/// The dry run: the sample planned offline (handoffs built, no live model called), and per live
/// destination its cells, requests and input tokens, estimated.
fn estimate(dir: &Source, a: RunArgs, live: &[String]) -> Result<i32, Error> {
    let (mut cfg, _) = super::run::config(dir, a)?;
    cfg.probe = false;
    let registry = crate::strategy::Registry::from_source(&cfg.strategy_dir)?;
    for id in &cfg.strategies {
        let inner = crate::delivery::GovSpec::parse(id)
            .and_then(Result::ok)
            .map_or_else(|| id.clone(), |g| g.inner);
        if registry
            .config(&inner)
            .is_some_and(|c| c.kind == crate::strategy::StrategyKind::LlmSummary)
        {
            return Err(Error::Usage(format!(
                "--dry-run cannot build strategy `{id}`'s handoffs without calling its summariser model; leave it out of --strategies for the estimate"
            )));
        }
    }
    let scenarios = crate::runner::check_inputs(&cfg)?;
    let plan = crate::runner::plan_with(&cfg, scenarios)?;
    let mut per: BTreeMap<&str, (usize, u64, u64)> = BTreeMap::new();
    let mut sim_cells = 0usize;
    for &i in plan.selected.iter() {
        let Some(c) = plan.cells.get(i) else { continue };
        if !live.iter().any(|l| **l == *c.model) {
            sim_cells += 1;
            continue;
        }
        let tokens = match plan.handoffs.get(&plan.handoff_key(&c)) {
            Some(crate::runner::Prepared::Ready { handoff, .. }) => handoff.tokens_at_restore,
            _ => 0,
        };
        let point = PointKey {
            scenario: c.scenario,
            point: c.point.clone(),
        };
        let steps = plan
            .points
            .get(&point)
            .map(|p| p.interrupt.continuation.len() as u64 + 1)
            .unwrap_or(1)
            .min(u64::from(cfg.step_budget));
        let e = per
            .entry(live.iter().find(|l| **l == *c.model).map_or("", |l| l))
            .or_default();
        e.0 += 1;
        e.1 += steps;
        e.2 += (0..steps)
            .map(|t| tokens + TOKENS_PER_TURN * t)
            .sum::<u64>();
        if cfg.live_probe_questions {
            // The probe questions' request: the handoff again, and the questions.
            e.1 += 1;
            e.2 += tokens + TOKENS_PER_TURN;
        }
    }
    say!(
        "calibrate --dry-run: {} units sampled (scenario × scale × interrupt point × strategy), {} cells on the simulated destinations (offline), nothing sent",
        plan.cells.len() / cfg.models.len().max(1) / cfg.reps.max(1) as usize,
        sim_cells
    );
    for name in live {
        let (cells, requests, tokens) = per.get(name.as_str()).copied().unwrap_or_default();
        let cap = cfg
            .model_defs
            .get(name)
            .map(|m| m.max_requests_per_cell as u64)
            .unwrap_or(u64::from(cfg.step_budget));
        say!(
            "  {name}: {cells} cells, about {requests} requests (at most {} by its per-cell cap) and {tokens} input tokens",
            cells as u64 * cap
        );
    }
    say!(
        "  (estimate: one request per step of each cell's reference continuation plus its finish; each re-sends the handoff and {TOKENS_PER_TURN} tokens per earlier turn; with --live-probe-questions one more request per cell; system prompt and tool definitions not counted)"
    );
    Ok(exit::OK)
}
