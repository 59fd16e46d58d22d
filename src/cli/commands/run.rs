//! `run`: the benchmark matrix, with a progress bar on stderr and the top of the ranking on stdout.
//!
//! Owns: merging `--config` with the flags, checking the values the flags allow but the run does
//! not, and the progress display. Must not: plan, run or score cells, or render the report
//! ([`crate::runner`] and [`crate::report`] do).

use std::path::Path;

use crate::cli::args::RunArgs;
use crate::error::Error;
use crate::exit;
use crate::runner::{Reporter, RunConfig, RunEvent, Status};
use crate::scenario::volume::Scale;

pub fn run(dir: &Path, args: RunArgs) -> Result<i32, Error> {
    let transcripts = args.transcripts.clone();
    let cuts = args.cuts;
    let write_tools = args.write_tools.clone();
    let cfg = config(dir, args)?;
    if let Some(dir) = transcripts {
        return run_transcripts(&cfg, dir, cuts, &write_tools);
    }
    let plan = crate::runner::plan(&cfg)?;
    for n in &plan.notes {
        eprintln!("note: {n}");
    }
    crate::runner::write_manifest(&cfg, &plan)?;
    let mut progress = Progress::new();
    let written = crate::runner::execute(&cfg, &plan, &mut progress)?;
    // Every cell of the matrix must have its record; a run that lost some is never a success.
    if let Err(e) = crate::runner::check_complete(&cfg, &plan) {
        eprintln!("error: {e}");
        return Ok(exit::run::INCOMPLETE);
    }
    let summary = crate::report::render_dir(&cfg.out)?;
    println!(
        "{written} cells run ({} errored){}; wrote {}",
        progress.errored,
        cfg.shard
            .map(|s| format!(" in shard {s}"))
            .unwrap_or_default(),
        cfg.out.join("report.md").display()
    );
    for r in summary.ranking.iter().filter(|r| r.rank <= 3) {
        if r.all_errored {
            println!(
                "  {} #{}: {} (every cell errored: not ranked)",
                r.model, r.rank, r.strategy
            );
            continue;
        }
        println!(
            "  {} #{}: {} (task success {:.2}, unsafe cells {}, median restore tokens {})",
            r.model, r.rank, r.strategy, r.task_success, r.unsafe_cells, r.median_restore_tokens
        );
    }
    Ok(exit::OK)
}

/// `run --transcripts DIR`: the transcript cells, then the report.
fn run_transcripts(
    cfg: &RunConfig,
    dir: std::path::PathBuf,
    cuts: Option<usize>,
    write_tools: &Option<Vec<String>>,
) -> Result<i32, Error> {
    if cfg.resume {
        return Err(Error::Usage(
            "--resume does not apply to --transcripts: a transcript run is rewritten whole (its cache makes live reruns cheap)".into(),
        ));
    }
    let opts = crate::transcript::eval::Options {
        dir,
        cuts,
        write_rule: super::transcripts::write_rule(write_tools),
    };
    let o = crate::transcript::eval::run(cfg, &opts)?;
    if !o.skipped_models.is_empty() {
        eprintln!(
            "note: {} left out: simulated destinations need a scenario world; transcripts are measured offline",
            o.skipped_models.join(", ")
        );
    }
    let summary = crate::report::render_dir(&cfg.out)?;
    println!(
        "{} runs, {} cuts: {} cells ({} errored); wrote {}",
        o.runs,
        o.cuts,
        o.records,
        o.errored,
        cfg.out.join("report.md").display()
    );
    for r in summary
        .transcripts
        .iter()
        .filter(|r| r.model == crate::transcript::eval::OFFLINE_MODEL && r.cut_rule.is_none())
    {
        println!(
            "  {}: needed-value retention {}, median restore tokens {}",
            r.strategy,
            r.needed_value_retention
                .map(|x| format!("{x:.3}"))
                .unwrap_or_else(|| "-".into()),
            r.restore_tokens.map(|s| s.median).unwrap_or(f64::NAN)
        );
    }
    Ok(exit::OK)
}

/// The run's configuration: flags, then the `--config` file, then the defaults.
fn config(dir: &Path, a: RunArgs) -> Result<RunConfig, Error> {
    let a = match &a.config {
        Some(path) => {
            let text = crate::text::read_file(path)
                .map_err(|e| Error::Usage(format!("{}: cannot read: {e}", path.display())))?;
            let file: RunArgs = toml::from_str(&text)
                .map_err(|e| Error::Usage(format!("{}: {e}", path.display())))?;
            a.or(file)
        }
        None => a,
    };
    let d = RunConfig::default();
    let cfg = RunConfig {
        scenario_dir: dir.to_path_buf(),
        strategy_dir: a.strategy_dir.unwrap_or(d.strategy_dir),
        scenarios: a.scenarios,
        interrupts: a.interrupts,
        strategies: a.strategies.unwrap_or(d.strategies),
        models: a.models.unwrap_or(d.models),
        reps: a.reps.unwrap_or(d.reps),
        seed: a.seed.unwrap_or(d.seed),
        limit: a.limit,
        concurrency: a.concurrency.unwrap_or(d.concurrency),
        out: a.out.unwrap_or(d.out),
        resume: a.resume,
        step_budget: a.step_budget.unwrap_or(d.step_budget),
        attention: a.attention.unwrap_or(d.attention),
        scales: match &a.scale {
            None => d.scales,
            Some(list) => list
                .iter()
                .map(|x| {
                    x.parse::<Scale>()
                        .map_err(|e| Error::Usage(format!("--scale: {e}")))
                })
                .collect::<Result<Vec<_>, _>>()?,
        },
        context_window: a.context_window,
        model_defs: a.model,
        cache_dir: a.cache_dir,
        no_cache: a.no_cache,
        rerun_errored: a.rerun_errored,
        shard: a
            .shard
            .as_deref()
            .map(crate::runner::Shard::parse)
            .transpose()
            .map_err(Error::Usage)?,
    };
    if cfg
        .context_window
        .is_some_and(|w| w <= crate::strategy::CONTEXT_RESERVE)
    {
        return Err(Error::Usage(format!(
            "context_window must be larger than the {}-token reserve",
            crate::strategy::CONTEXT_RESERVE
        )));
    }
    if !(0.0..=10.0).contains(&cfg.attention) {
        return Err(Error::Usage(format!(
            "`attention` must be between 0 and 10, not {}",
            cfg.attention
        )));
    }
    for (key, value) in [
        ("reps", cfg.reps as usize),
        ("concurrency", cfg.concurrency),
        ("step_budget", cfg.step_budget as usize),
    ] {
        if value == 0 {
            return Err(Error::Usage(format!("`{key}` must be at least 1")));
        }
    }
    for (name, m) in &cfg.model_defs {
        m.check_durations()
            .map_err(|e| Error::Usage(format!("model `{name}`: {e}")))?;
    }
    Ok(cfg)
}

/// The progress bar on stderr, with counts of errored cells, retries and cache hits.
struct Progress {
    bar: indicatif::ProgressBar,
    errored: usize,
    retries: u64,
    cache_hits: u64,
}

impl Progress {
    fn new() -> Self {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} cells · {msg} · ETA {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Progress {
            bar,
            errored: 0,
            retries: 0,
            cache_hits: 0,
        }
    }
}

impl Reporter for Progress {
    fn event(&mut self, e: RunEvent<'_>) {
        match e {
            RunEvent::TornTail { bytes } => eprintln!(
                "warning: results.jsonl ended in a torn line ({bytes} bytes of an interrupted write); removed it before resuming"
            ),
            RunEvent::Planned { total, skipped } => {
                self.bar.set_length(total as u64);
                if skipped > 0 {
                    eprintln!("resuming: {skipped} cells already done");
                }
            }
            RunEvent::CellDone { record, .. } => {
                if record.status == Status::Errored {
                    self.errored += 1;
                }
                if let Some(l) = &record.diagnostics.live {
                    self.retries += l.retries as u64;
                    self.cache_hits += l.cache_hits as u64;
                    self.bar.set_message(format!(
                        "{} errored · {} retries · {} cache hits",
                        self.errored, self.retries, self.cache_hits
                    ));
                } else {
                    self.bar.set_message(format!("{} errored", self.errored));
                }
                self.bar.inc(1);
            }
            RunEvent::Finished { .. } => self.bar.finish_and_clear(),
        }
    }
}
