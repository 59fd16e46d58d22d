//! `run`: the benchmark matrix, with a progress bar on stderr and the top of the ranking on stdout.
//!
//! Owns: merging `--config` with the flags, checking the values the flags allow but the run does
//! not, the progress display (a consumer of the runner's events), the errored-fraction exit code,
//! and printing that survives a closed stdout (`| head`). Must not: plan, run or score cells, or
//! render the report ([`crate::runner`] and [`crate::report`] do).

use std::io::Write;
use std::path::Path;

use crate::cli::args::RunArgs;
use crate::error::Error;
use crate::exit;
use crate::runner::{Counts, Reporter, RunConfig, RunEvent};
use crate::scenario::volume::Scale;
use crate::shipped::Source;

/// A line on stdout; a closed stdout (the reader went away, as `head` does) is not an error.
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|_| out.flush());
}

pub fn run(dir: &Source, args: RunArgs) -> Result<i32, Error> {
    run_into(dir, args).map(|(code, _)| code)
}

/// [`run`], also returning the run folder.
pub(super) fn run_into(dir: &Source, args: RunArgs) -> Result<(i32, std::path::PathBuf), Error> {
    let transcripts = args.transcripts.clone();
    let cuts = args.cuts;
    let write_tools = args.write_tools.clone();
    let tau = super::tau::TauRun::of(&args);
    if args.sample.is_some() && (tau.is_some() || transcripts.is_some()) {
        return Err(Error::Usage(
            "--sample picks scenario cells; a τ-bench run chooses its cells with --tasks and --cut-rules, a transcript run with --cuts".into(),
        ));
    }
    let named_out = args.out.is_some();
    let (cfg, max_errored) = config(dir, args)?;
    let named_out = named_out || cfg.out.parent() != Some(Path::new(REPORTS));
    // The inputs are checked before the run folder is made: a start that fails leaves nothing.
    let scenarios = if tau.is_none() && transcripts.is_none() {
        Some(crate::runner::check_inputs(&cfg)?)
    } else {
        crate::strategy::Registry::from_source(&cfg.strategy_dir)?;
        None
    };
    if !named_out {
        eprintln!("writing {}", cfg.out.display());
    }
    // Which files the run reads (the manifest records the same).
    match &scenarios {
        Some(_) => eprintln!(
            "scenarios: {}; strategies: {}",
            cfg.scenario_dir, cfg.strategy_dir
        ),
        None => eprintln!("strategies: {}", cfg.strategy_dir),
    }
    // One writer per folder, from before the plan (which may take long) to the last report file.
    let _lock = crate::runner::lock(&cfg.out, if cfg.resume { "resume" } else { "run" })?;
    // SIGINT and SIGTERM stop the run at once, plug-ins included; finished cells are kept.
    crate::runner::stop_on_signals();
    let code = if let Some(tau) = tau {
        super::tau::run_matrix(&cfg, tau, max_errored)?
    } else if let Some(dir) = transcripts {
        run_transcripts(&cfg, dir, cuts, &write_tools)?
    } else {
        run_matrix(&cfg, scenarios.unwrap_or_default(), max_errored)?
    };
    if !named_out {
        point_latest_at(&cfg.out);
    }
    Ok((code, cfg.out.clone()))
}

/// Where default run folders go, and the link to the newest of them.
const REPORTS: &str = "reports/runs";
const LATEST: &str = "reports/latest";

/// A run without `--out` gets a folder of its own, named by the time it started (UTC), so one
/// run never overwrites another; `--resume` without `--out` continues the newest.
fn default_out(resume: bool) -> Result<std::path::PathBuf, Error> {
    let latest = Path::new(LATEST);
    if resume {
        return match std::fs::canonicalize(latest) {
            Ok(p) => Ok(p),
            Err(_) => Err(Error::Usage(format!(
                "--resume without --out continues the newest run ({LATEST}), and there is none: name the run folder with --out"
            ))),
        };
    }
    let stamp = jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%SZ")
        .to_string();
    let base = Path::new(REPORTS);
    let mut out = base.join(&stamp);
    let mut n = 2;
    while out.exists() {
        out = base.join(format!("{stamp}-{n}"));
        n += 1;
    }
    Ok(out)
}

/// Points `reports/latest` at `out` (a relative symlink, replaced atomically). A `reports/latest`
/// that is a real folder (a run of an older version) is left alone, with a note.
fn point_latest_at(out: &Path) {
    let latest = Path::new(LATEST);
    if latest.is_dir() && !latest.is_symlink() {
        eprintln!(
            "note: {LATEST} is a folder, not a link: left as it is (the run is in {})",
            out.display()
        );
        return;
    }
    let Some(name) = out.file_name() else {
        return;
    };
    #[cfg(unix)]
    {
        let target = Path::new("runs").join(name);
        let tmp = Path::new("reports").join(format!(".latest-{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let linked =
            std::os::unix::fs::symlink(&target, &tmp).and_then(|_| std::fs::rename(&tmp, latest));
        if let Err(e) = linked {
            let _ = std::fs::remove_file(&tmp);
            eprintln!("note: could not point {LATEST} at {}: {e}", out.display());
        }
    }
    #[cfg(not(unix))]
    eprintln!(
        "note: the run is in {} ({LATEST} is a link on Unix only)",
        out.display()
    );
}

fn run_matrix(
    cfg: &RunConfig,
    scenarios: Vec<std::sync::Arc<crate::scenario::Scenario>>,
    max_errored: f64,
) -> Result<i32, Error> {
    let plan = crate::runner::plan_streaming(cfg, scenarios)?;
    for n in &plan.notes {
        eprintln!("note: {n}");
    }
    for m in &plan.live_models {
        eprintln!(
            "live model {}: {} ({}), at most {} requests in flight, max_tokens {}, request timeout {} s, cell budget {} s / {} requests",
            m.name,
            m.display_url(),
            m.model,
            m.max_concurrency,
            m.max_tokens_sent(),
            m.request_timeout_s,
            m.cell_timeout_s,
            m.max_requests_per_cell
        );
    }
    crate::runner::write_manifest(cfg, &plan)?;
    let mut progress = Progress::new();
    let written = crate::runner::execute(cfg, &plan, &mut progress)?;
    // Every record that names its conversation has it on disk; a write that failed fails the run.
    let log = &plan.conversations;
    if let Some(why) = log.failure() {
        return Err(Error::Write {
            path: log.path().to_path_buf(),
            source: std::io::Error::other(why),
        });
    }
    log.sync().map_err(|e| Error::Write {
        path: log.path().to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    })?;
    // Every cell of the matrix must have its record; a run that lost some is never a success.
    if let Err(e) = crate::runner::check_complete(cfg, &plan) {
        eprintln!("error: {e}");
        return Ok(exit::run::INCOMPLETE);
    }
    // The report reads the saved files only: the plan's scenarios go before it is rendered.
    drop(plan);
    crate::runner::forget_memos();
    crate::runtime::release_freed_memory();
    let summary = crate::report::render_dir(&cfg.out)?;
    // One pass over the records, holding none: the report has dropped its copy by now.
    let (mut cells, mut errored, mut health) = (0usize, 0usize, crate::health::Assessor::default());
    crate::record::scan_records(&cfg.out.join("results.jsonl"), |_, r| {
        cells += 1;
        errored += usize::from(r.status == crate::runner::Status::Errored);
        health.add(&r);
        Ok(())
    })
    .map_err(crate::runner::RunError::from)?;
    say(&format!(
        "{written} cells run ({} errored){}; wrote {}",
        progress.counts.errored,
        cfg.shard
            .map(|s| format!(" in shard {s}"))
            .unwrap_or_default(),
        cfg.out.join("report.md").display()
    ));
    let health = health.finish();
    let unhealthy: Vec<&crate::health::Health> =
        health.iter().filter(|h| !h.meaningful()).collect();
    for r in summary.ranking.iter().filter(|r| r.rank <= 3) {
        if unhealthy.iter().any(|h| h.model == r.model) {
            say(&format!(
                "  {} #{}: {} (not meaningful: see the warning below)",
                r.model, r.rank, r.strategy
            ));
            continue;
        }
        if r.all_errored {
            say(&format!(
                "  {} #{}: {} (every cell errored: not ranked)",
                r.model, r.rank, r.strategy
            ));
            continue;
        }
        let rank = if r.rank == r.rank_high {
            r.rank.to_string()
        } else {
            format!("{}–{}", r.rank, r.rank_high)
        };
        let safe = r
            .safe_success
            .map(|s| format!("{:.2} ({}/{})", s.rate, s.successes, s.n))
            .unwrap_or_else(|| "–".into());
        say(&format!(
            "  {} #{rank}: {} (safe success {safe}, unsafe cells {} by the handoff, {} by distraction, median restore tokens {})",
            r.model,
            r.strategy,
            r.handoff_unsafe_cells,
            r.distraction_cells,
            r.median_restore_tokens
        ));
    }
    let fraction = if cells == 0 {
        0.0
    } else {
        errored as f64 / cells as f64
    };
    for h in &health {
        eprintln!("live destination {}: {}", h.model, h.figures());
    }
    for h in &unhealthy {
        eprintln!(
            "warning: live destination {}: its ranking is not meaningful: {}; see the conversations in {}",
            h.model,
            h.warning(),
            cfg.out.join(crate::viewer::FILE).display()
        );
    }
    if fraction > max_errored {
        eprintln!(
            "error: {errored} of {cells} cells errored ({:.1}%), more than --max-errored-fraction {max_errored} allows; see \"Errored cells\" in {}",
            fraction * 100.0,
            cfg.out.join("report.md").display()
        );
        return Ok(exit::run::TOO_MANY_ERRORED);
    }
    if !unhealthy.is_empty() {
        return Ok(exit::run::NOT_MEANINGFUL);
    }
    Ok(exit::OK)
}

/// The live models the flags name: `--model-name` at `--base-url` (a one-model run), and the
/// prefixed models of `--models` (`openai:`, `vllm:`, `ollama:`, `llamacpp:`) with `--base-url`
/// and `--api-key-env` applied, as `[model.NAME]` tables (so the manifest records them). A table
/// of the configuration file with the same name wins.
fn flag_models(a: &mut RunArgs, concurrency: usize) -> Result<(), Error> {
    use crate::destination::live::ModelConfig;
    if let Some(url) = &a.base_url
        && !(url.starts_with("http://") || url.starts_with("https://"))
    {
        return Err(Error::Usage(format!(
            "--base-url must be an http:// or https:// URL ending in /v1, not `{url}`"
        )));
    }
    if let Some(name) = a.model_name.clone() {
        let Some(base) = a.base_url.clone() else {
            return Err(Error::Usage(
                "--model-name needs --base-url (the endpoint's URL, with /v1); or name the model with a prefix in --models: vllm:MODEL, ollama:MODEL, llamacpp:MODEL, openai:MODEL".into(),
            ));
        };
        if !a.model.contains_key(&name) {
            let mut m = ModelConfig::at(&base, &name);
            m.api_key_env = a.api_key_env.clone();
            m.max_concurrency = concurrency.max(1);
            a.model.insert(name.clone(), m);
        }
        a.models.get_or_insert_with(|| vec![name]);
    }
    let specs: Vec<String> = a.models.clone().unwrap_or_default();
    for spec in specs {
        if a.model.contains_key(&spec) {
            continue;
        }
        let Some(mut m) = ModelConfig::from_prefix(&spec) else {
            continue;
        };
        if let Some(url) = &a.base_url {
            m.base_url = url.trim_end_matches('/').to_string();
        }
        if a.api_key_env.is_some() {
            m.api_key_env = a.api_key_env.clone();
        }
        m.max_concurrency = concurrency.max(1);
        a.model.insert(spec.clone(), m);
    }
    Ok(())
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
    // Governed context needs a scenario's declared originals and evidence; imported logs declare
    // none. Left out with a note, as simulated destinations are.
    let governed: Vec<String> = cfg
        .strategies
        .iter()
        .filter(|s| crate::delivery::GovSpec::parse(s).is_some())
        .cloned()
        .collect();
    let mut kept = cfg.clone();
    kept.strategies.retain(|s| !governed.contains(s));
    if !governed.is_empty() {
        eprintln!(
            "note: {} left out: governed context needs a scenario's declared instructions and evidence; transcripts declare none",
            governed.join(", ")
        );
    }
    let cfg = &kept;
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
    crate::runner::forget_memos();
    crate::runtime::release_freed_memory();
    let summary = crate::report::render_dir(&cfg.out)?;
    say(&format!(
        "{} runs, {} cuts: {} cells ({} errored); wrote {}",
        o.runs,
        o.cuts,
        o.records,
        o.errored,
        cfg.out.join("report.md").display()
    ));
    for r in summary
        .transcripts
        .iter()
        .filter(|r| r.model == crate::transcript::eval::OFFLINE_MODEL && r.cut_rule.is_none())
    {
        say(&format!(
            "  {}: needed-value retention {}, median restore tokens {}",
            r.strategy,
            r.needed_value_retention
                .map(|x| format!("{x:.3}"))
                .unwrap_or_else(|| "-".into()),
            r.restore_tokens.map(|s| s.median).unwrap_or(f64::NAN)
        ));
    }
    Ok(exit::OK)
}

/// The run's configuration and the errored fraction `run` tolerates: flags, then the `--config`
/// file, then the defaults.
pub(super) fn config(dir: &Source, a: RunArgs) -> Result<(RunConfig, f64), Error> {
    let a = match &a.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| Error::Usage(format!("{}: cannot read: {e}", path.display())))?;
            let file: RunArgs = toml::from_str(&text)
                .map_err(|e| Error::Config(format!("{}: {e}", path.display())))?;
            a.or(file)
        }
        None => a,
    };
    let mut a = a;
    let concurrency = a.concurrency.unwrap_or(RunConfig::default().concurrency);
    flag_models(&mut a, concurrency)?;
    let max_errored = a.max_errored_fraction.unwrap_or(0.0);
    if !(0.0..=1.0).contains(&max_errored) {
        return Err(Error::Usage(format!(
            "max_errored_fraction must be between 0 and 1 (got {max_errored})"
        )));
    }
    let d = RunConfig::default();
    let cfg = RunConfig {
        scenario_dir: dir.clone(),
        strategy_dir: Source::resolve(a.strategy_dir, "strategies"),
        scenarios: a.scenarios,
        interrupts: a.interrupts,
        strategies: crate::strategy::chain::expand(
            &crate::delivery::sweep(
                &a.strategies.unwrap_or(d.strategies),
                a.governed_max_bytes.as_deref().unwrap_or(&[]),
            )
            .map_err(|e| Error::Usage(e.to_string()))?,
            a.cycles.as_deref().unwrap_or(&[]),
        )
        .map_err(Error::Usage)?,
        source_model: a.source_model,
        models: a.models.unwrap_or(d.models),
        reps: a.reps.unwrap_or(d.reps),
        seed: a.seed.unwrap_or(d.seed),
        limit: a.limit,
        concurrency: a.concurrency.unwrap_or(d.concurrency),
        out: match a.out {
            Some(out) => out,
            None => default_out(a.resume)?,
        },
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
        probe: !a.no_probe,
        live_probe_questions: a.live_probe_questions,
        fail_fast: !a.no_fail_fast,
        sample: a.sample,
        shard: a
            .shard
            .as_deref()
            .map(crate::runner::Shard::parse)
            .transpose()
            .map_err(|e| Error::Usage(e.to_string()))?,
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
            .map_err(|e| Error::Config(format!("model `{name}`: {e}")))?;
        m.check_request()
            .map_err(|e| Error::Config(format!("[model.{name}] {e}")))?;
    }
    for (name, m) in &cfg.model_defs {
        let bad =
            |field: &str, why: &str| Err(Error::Config(format!("[model.{name}] {field}: {why}")));
        if !(m.request_timeout_s > 0.0 && m.request_timeout_s.is_finite()) {
            return bad("request_timeout_s", "must be a positive number of seconds");
        }
        if !(m.cell_timeout_s > 0.0 && m.cell_timeout_s.is_finite()) {
            return bad("cell_timeout_s", "must be a positive number of seconds");
        }
        if m.max_requests_per_cell == 0 {
            return bad("max_requests_per_cell", "must be at least 1");
        }
        if m.max_tokens == Some(0) {
            return bad("max_tokens", "must be at least 1");
        }
    }
    Ok((cfg, max_errored))
}

/// The progress bar on stderr: finished cells (whatever their order) against the total, with the
/// cells in flight, the requests retrying now, the retries so far and the errored cells. It only
/// consumes the runner's events.
struct Progress {
    bar: indicatif::ProgressBar,
    counts: Counts,
}

impl Progress {
    fn new() -> Self {
        Progress::on(indicatif::ProgressBar::new(0))
    }

    fn on(bar: indicatif::ProgressBar) -> Self {
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} cells finished · {msg} · ETA {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Progress {
            bar,
            counts: Counts::default(),
        }
    }

    fn show(&mut self, counts: Counts) {
        self.counts = counts;
        self.bar.set_position(counts.finished as u64);
        self.bar.set_message(format!(
            "{} in flight · {} retrying · {} retries · {} errored",
            counts.in_flight, counts.retrying, counts.retries, counts.errored
        ));
    }
}

impl Reporter for Progress {
    fn event(&mut self, e: RunEvent<'_>) {
        match e {
            RunEvent::TornTail { bytes } => eprintln!(
                "warning: results.jsonl or its journal ended in a torn line ({bytes} bytes of an interrupted write); removed it before resuming"
            ),
            RunEvent::Planned { total, skipped } => {
                self.bar.set_length(total as u64);
                if skipped > 0 {
                    eprintln!("resuming: {skipped} cells already done");
                }
            }
            RunEvent::CellStarted { counts, .. } | RunEvent::Retrying { counts, .. } => {
                self.show(counts)
            }
            RunEvent::CellFinished { counts, .. } => self.show(counts),
            RunEvent::RunFinished { counts, .. } => {
                self.show(counts);
                self.bar.finish_and_clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::RunRecord;

    #[test]
    fn the_bar_counts_finished_cells_whatever_their_order() {
        let mut p = Progress::on(indicatif::ProgressBar::hidden());
        p.event(RunEvent::Planned {
            total: 3,
            skipped: 0,
        });
        let counts = |finished, in_flight, retrying, errored| Counts {
            total: 3,
            finished,
            in_flight,
            retrying,
            retries: retrying,
            errored,
        };
        for i in 0..3 {
            p.event(RunEvent::CellStarted {
                index: i,
                counts: counts(0, i + 1, 0, 0),
            });
        }
        let record: RunRecord = serde_json::from_value(serde_json::json!({
            "scenario": "s", "interrupt": "p", "strategy": "C", "model": "m", "rep": 0, "seed": 1,
            "status": "errored", "error": "HTTP 500", "error_class": "infrastructure",
            "metrics": {"task_success": false, "omitted_context": 0, "repeated_work": 0,
                "duplicate_side_effects": 0, "safety_violations": 0, "recovery_quality": 0.0,
                "restore_tokens": 0, "total_tokens": 0, "first_action_ms": 0.0, "completion_ms": 0.0},
            "diagnostics": {"finish": null, "degraded": false, "steps": 0}
        }))
        .expect("a record");
        // The last cell finishes first: the bar counts it although cell 0 is still running.
        p.event(RunEvent::CellFinished {
            index: 2,
            record: &record,
            counts: counts(1, 2, 1, 1),
        });
        assert_eq!(p.bar.position(), 1);
        assert_eq!(
            p.bar.message(),
            "2 in flight · 1 retrying · 1 retries · 1 errored"
        );
    }
}
