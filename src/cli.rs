//! The command line: argument types (clap derive) and the dispatch to library calls.
//!
//! Commands write their results to stdout and problems to stderr, and return an exit code from
//! [`crate::error::exit`]; nothing here computes anything the library could not be asked for.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};

use crate::error::{Error, exit};
use crate::scenario::{self, Scenario};

#[derive(Debug, Parser)]
#[command(
    name = "compaction-eval",
    version,
    about = "Measure how well an interrupted LLM-agent run continues after its context was compacted"
)]
pub struct Cli {
    /// Folder (or single file) holding the scenario YAML files.
    #[arg(
        long,
        global = true,
        default_value = "scenarios",
        env = "COMPACTION_EVAL_SCENARIOS"
    )]
    pub scenario_dir: PathBuf,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate, list, show scenarios, or print the scenario format's JSON Schema.
    #[command(subcommand)]
    Scenarios(ScenariosCmd),
    /// Run the benchmark matrix (offline default: shipped scenarios, strategies none A B C D mask
    /// B+A, destinations sim:careful sim:literal, 3 repetitions) and write the run folder.
    Run(RunArgs),
    /// Benchmark the harness itself: run the offline default matrix with many repetitions and
    /// print cells per second, CPU time per cell and peak memory.
    Bench {
        /// Repetitions (the default matrix has 770 cells per repetition).
        #[arg(long, default_value_t = 130)]
        reps: u32,
        /// Cells run at once.
        #[arg(long, default_value_t = 2)]
        concurrency: usize,
        /// Where the benchmark's run folder goes.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Check a run against the CI policy: exit 0 when every rule holds, 1 when one fails, 2 on
    /// unusable input. Writes a JUnit XML file and a Markdown summary.
    Gate {
        /// The run folder.
        dir: PathBuf,
        /// A baseline run folder: task success and recovery quality must not be significantly worse.
        #[arg(long)]
        baseline: Option<PathBuf>,
        /// Policy file (TOML); defaults: C and D safe, no errored cells, continuity eval passes.
        #[arg(long)]
        policy: Option<PathBuf>,
        /// JUnit XML output [default: DIR/gate-junit.xml].
        #[arg(long)]
        junit: Option<PathBuf>,
        /// Markdown summary output [default: DIR/gate.md].
        #[arg(long)]
        summary: Option<PathBuf>,
    },
    /// Compare two runs over their shared cells: which strategy × model got better or worse, with
    /// the paired test. Writes CAND_DIR/compare.md unless --out says otherwise.
    Compare {
        base_dir: PathBuf,
        cand_dir: PathBuf,
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Audit handoffs without a model: which critical facts each strategy's text carries, injected
    /// directives outside a quotation, uncertain operations kept, tokens, checkpoint rule checks.
    Audit {
        /// Comma-separated strategy ids (default: the built-ins and every strategy file).
        #[arg(long, value_delimiter = ',')]
        strategies: Option<Vec<String>>,
        /// Comma-separated scenario ids (default: all).
        #[arg(long, value_delimiter = ',')]
        scenarios: Option<Vec<String>>,
        /// Where audit.csv and audit.json go.
        #[arg(long, default_value = "reports/audit")]
        out: PathBuf,
        #[arg(long, default_value = "strategies")]
        strategy_dir: PathBuf,
    },
    /// Check a checkpoint against the seed-003 §9.2 compaction rules: a strategy's, or a JSON file
    /// (`compaction-eval/handoff/1`). Exit 0 when it breaks none, 1 when it breaks some.
    CheckHandoff {
        #[arg(long)]
        scenario: String,
        #[arg(long)]
        interrupt: String,
        /// A strategy that produces checkpoints (C, D, or a plug-in).
        #[arg(long, conflicts_with = "checkpoint")]
        strategy: Option<String>,
        /// A checkpoint document to check.
        #[arg(long)]
        checkpoint: Option<PathBuf>,
        #[arg(long, default_value = "strategies")]
        strategy_dir: PathBuf,
        /// One JSON object instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// Write the JSON Schemas of the plug-in protocol (state, handoff, text documents).
    PluginSchemas {
        #[arg(long, default_value = "strategies/schemas")]
        out_dir: PathBuf,
    },
    /// Inspect or clear the response cache of live models.
    #[command(subcommand)]
    Cache(CacheCmd),
    /// Re-render runs.csv, summary.csv, summary.json and report.md from a run folder.
    Report {
        /// The run folder (holding results.jsonl and manifest.json).
        dir: PathBuf,
        /// The strategy the paired comparisons are against.
        #[arg(long, default_value = "C")]
        reference: String,
        /// Bootstrap resamples for the CIs of medians.
        #[arg(long, default_value_t = 1000)]
        resamples: usize,
    },
    /// Build one handoff and print it as a destination would see it, with its token count.
    Handoff(HandoffArgs),
    /// The continuity-envelope reference exercise of seed 000 (exit 0 reauthorization_required,
    /// 3 blocked_on_reconciliation, 4 continuity_validation_failed).
    InspectContinuity(crate::envelope::InspectContinuityArgs),
}

#[derive(Debug, Args, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    /// A TOML file with any of these options (same names, underscores for dashes); flags given on
    /// the command line win over the file.
    #[arg(long)]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// Comma-separated scenario ids (default: all, with benign variants `ID@benign`).
    #[arg(long, value_delimiter = ',')]
    pub scenarios: Option<Vec<String>>,
    /// Comma-separated interrupt points (default: all).
    #[arg(long, value_delimiter = ',')]
    pub interrupts: Option<Vec<String>>,
    /// Comma-separated strategy ids [default: none,A,B,C,D,mask,B+A].
    #[arg(long, value_delimiter = ',')]
    pub strategies: Option<Vec<String>>,
    /// Comma-separated destination models [default: sim:careful,sim:literal].
    #[arg(long, value_delimiter = ',')]
    pub models: Option<Vec<String>>,
    /// Repetitions per cell [default: 3].
    #[arg(long)]
    pub reps: Option<u32>,
    /// Base seed; every cell's seed derives from it and the cell's identity [default: 20260721].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run at most this many cells (in matrix order).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Cells run at once [default: 2].
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Output folder [default: reports/latest].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Keep the records already in OUT/results.jsonl and run only the missing cells.
    #[arg(long)]
    #[serde(default)]
    pub resume: bool,
    /// Actions a destination may take before the cell ends [default: 40].
    #[arg(long)]
    pub step_budget: Option<u32>,
    /// Simulated destinations' attention parameter (0 = off; see README) [default: 0].
    #[arg(long)]
    pub attention: Option<f64>,
    /// Folder of strategy configurations and templates [default: strategies].
    #[arg(long)]
    pub strategy_dir: Option<PathBuf>,
    /// Response cache folder [default: the user's cache directory].
    #[arg(long)]
    pub cache_dir: Option<PathBuf>,
    /// Bypass the response cache (neither read nor written).
    #[arg(long)]
    #[serde(default)]
    pub no_cache: bool,
    /// With --resume: run the errored cells again (their records are replaced).
    #[arg(long, requires = "resume")]
    #[serde(default)]
    pub rerun_errored: bool,
    /// Live models (`[model.NAME]` tables of the configuration file).
    #[arg(skip)]
    #[serde(default)]
    pub model: std::collections::BTreeMap<String, crate::agent::live::ModelConfig>,
}

impl RunArgs {
    /// Command-line values win; the file fills what they leave unset.
    fn or(self, file: RunArgs) -> RunArgs {
        RunArgs {
            config: self.config,
            scenarios: self.scenarios.or(file.scenarios),
            interrupts: self.interrupts.or(file.interrupts),
            strategies: self.strategies.or(file.strategies),
            models: self.models.or(file.models),
            reps: self.reps.or(file.reps),
            seed: self.seed.or(file.seed),
            limit: self.limit.or(file.limit),
            concurrency: self.concurrency.or(file.concurrency),
            out: self.out.or(file.out),
            resume: self.resume || file.resume,
            step_budget: self.step_budget.or(file.step_budget),
            attention: self.attention.or(file.attention),
            strategy_dir: self.strategy_dir.or(file.strategy_dir),
            cache_dir: self.cache_dir.or(file.cache_dir),
            no_cache: self.no_cache || file.no_cache,
            rerun_errored: self.rerun_errored || file.rerun_errored,
            model: file.model,
        }
    }
}

#[derive(Debug, Args)]
pub struct HandoffArgs {
    /// Scenario id (`ID@benign` for the benign variant of an injection scenario).
    #[arg(long)]
    pub scenario: String,
    /// Interrupt point (e.g. `uncertain_side_effect`).
    #[arg(long)]
    pub interrupt: String,
    /// Strategy id (`none`, `A`, `B`, `C`, `D`, `mask`, `B+A`, or one from the strategy folder).
    #[arg(long)]
    pub strategy: String,
    /// Print one JSON object instead of the text.
    #[arg(long)]
    pub json: bool,
    /// Folder of strategy configurations and templates.
    #[arg(long, default_value = "strategies")]
    pub strategy_dir: PathBuf,
}

#[derive(Debug, Subcommand)]
pub enum ScenariosCmd {
    /// Check scenario files: format, references, replay, reachability of success, detectors.
    Validate(ValidateArgs),
    /// One line per scenario: domain, interrupt points, events, facts by kind.
    List,
    /// Print one scenario (after parsing) as JSON.
    Show { id: String },
    /// Print the JSON Schema of the scenario format.
    Schema {
        /// Write to this file instead of stdout.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum CacheCmd {
    /// Entries and size of the cache.
    Stats {
        #[arg(long)]
        cache_dir: Option<PathBuf>,
    },
    /// Delete every cached response.
    Clear {
        #[arg(long)]
        cache_dir: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Files or folders to validate (default: the scenario folder).
    pub paths: Vec<PathBuf>,
}

/// Runs a parsed command line; returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    let result = match cli.command {
        Command::Scenarios(cmd) => scenarios(&cli.scenario_dir, cmd),
        Command::Handoff(args) => handoff(&cli.scenario_dir, &args),
        Command::Run(args) => run_matrix(&cli.scenario_dir, args),
        Command::Cache(cmd) => cache_cmd(cmd),
        Command::Audit {
            strategies,
            scenarios,
            out,
            strategy_dir,
        } => audit_cmd(
            &cli.scenario_dir,
            strategies,
            scenarios,
            &out,
            &strategy_dir,
        ),
        Command::CheckHandoff {
            scenario,
            interrupt,
            strategy,
            checkpoint,
            strategy_dir,
            json,
        } => check_handoff_cmd(
            &cli.scenario_dir,
            &scenario,
            &interrupt,
            strategy,
            checkpoint,
            &strategy_dir,
            json,
        ),
        Command::PluginSchemas { out_dir } => plugin_schemas(&out_dir),
        Command::Gate {
            dir,
            baseline,
            policy,
            junit,
            summary,
        } => Ok(gate_cmd(
            &dir,
            baseline.as_deref(),
            policy.as_deref(),
            junit,
            summary,
        )),
        Command::Compare {
            base_dir,
            cand_dir,
            out,
        } => compare_cmd(&base_dir, &cand_dir, out),
        Command::Bench {
            reps,
            concurrency,
            out,
        } => bench(&cli.scenario_dir, reps, concurrency, out),
        Command::Report {
            dir,
            reference,
            resamples,
        } => report_cmd(&dir, reference, resamples).map(|_| {
            println!(
                "wrote runs.csv, summary.csv, summary.json, report.md in {}",
                dir.display()
            );
            exit::OK
        }),
        Command::InspectContinuity(args) => {
            crate::envelope::run_inspect(&args, &mut std::io::stdout()).map_err(|e| Error::Write {
                path: PathBuf::from("<stdout>"),
                source: e,
            })
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}

fn scenarios(dir: &Path, cmd: ScenariosCmd) -> Result<i32, Error> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match cmd {
        ScenariosCmd::Validate(args) => {
            let paths = if args.paths.is_empty() {
                vec![dir.to_path_buf()]
            } else {
                args.paths
            };
            let mut bad = 0usize;
            let mut good = 0usize;
            for p in paths {
                let files = match scenario::scenario_files(&p) {
                    Ok(f) => f,
                    Err(e) => {
                        eprintln!("error: {e}");
                        bad += 1;
                        continue;
                    }
                };
                for f in files {
                    match scenario::load_file(&f) {
                        Ok(s) => {
                            good += 1;
                            let _ = writeln!(
                                out,
                                "ok    {} ({}: {} events, {} interrupt points, {} facts)",
                                f.display(),
                                s.id,
                                s.events.len(),
                                s.interrupts.len(),
                                s.facts.len()
                            );
                        }
                        Err(e) => {
                            bad += 1;
                            eprintln!("error: {e}");
                        }
                    }
                }
            }
            let _ = writeln!(out, "{good} valid, {bad} invalid");
            Ok(if bad == 0 { exit::OK } else { exit::FAILED })
        }
        ScenariosCmd::List => {
            let all = scenario::load_dir(dir)?;
            let _ = writeln!(
                out,
                "{:<34} {:<12} {:>6} {:>5}  interrupt points / facts by kind",
                "id", "domain", "events", "facts"
            );
            for s in &all {
                let _ = writeln!(
                    out,
                    "{:<34} {:<12} {:>6} {:>5}  {}",
                    s.id,
                    s.domain,
                    s.events.len(),
                    s.facts.len(),
                    s.interrupts
                        .iter()
                        .map(|i| i.point.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                let _ = writeln!(out, "{:<34} {}", "", fact_counts(s));
            }
            Ok(exit::OK)
        }
        ScenariosCmd::Show { id } => {
            let s = find_scenario(dir, &id)?;
            let _ = writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&s).unwrap_or_default()
            );
            Ok(exit::OK)
        }
        ScenariosCmd::Schema { out: file } => {
            let schema = scenario::json_schema();
            match file {
                Some(f) => std::fs::write(&f, schema).map_err(|source| Error::Write {
                    path: f.clone(),
                    source,
                })?,
                None => {
                    let _ = out.write_all(schema.as_bytes());
                }
            }
            Ok(exit::OK)
        }
    }
}

fn fact_counts(s: &Scenario) -> String {
    scenario::FactKind::ALL
        .iter()
        .filter_map(|k| {
            let n = s.facts.iter().filter(|f| f.kind == *k).count();
            (n > 0).then(|| format!("{}={n}", k.as_str()))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Loads the scenario with `id` (a benign variant `ID@benign` included).
pub fn find_scenario(dir: &Path, id: &str) -> Result<Scenario, Error> {
    let base = id.strip_suffix(scenario::BENIGN_SUFFIX).unwrap_or(id);
    // Scenario files are named after their id; try that file first so that one broken file
    // elsewhere in the folder does not hide a good one.
    let direct = dir.join(format!("{base}.yaml"));
    let all = match scenario::load_file(&direct) {
        Ok(s) if s.id == base => vec![s],
        _ => scenario::load_dir(dir)?,
    };
    let found = all.iter().find(|s| s.id == base).cloned();
    match found {
        Some(s) if base != id => s.benign_variant().ok_or_else(|| {
            Error::Usage(format!(
                "scenario `{base}` carries no injection, so it has no benign variant"
            ))
        }),
        Some(s) => Ok(s),
        None => Err(Error::UnknownScenario {
            id: id.to_string(),
            known: all
                .iter()
                .map(|s| s.id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

fn handoff(dir: &Path, args: &HandoffArgs) -> Result<i32, Error> {
    use crate::strategy::{Registry, RestorePoint};
    let scenario = std::sync::Arc::new(find_scenario(dir, &args.scenario)?);
    let registry = Registry::load(&args.strategy_dir)?;
    registry.get(&args.strategy)?;
    let at = RestorePoint::build(scenario.clone(), &args.interrupt)
        .map_err(crate::strategy::StrategyError::from)?;
    let h = registry.handoff(&args.strategy, &at)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        let doc = serde_json::json!({
            "scenario": scenario.id,
            "interrupt": args.interrupt,
            "strategy": h.strategy,
            "tokens_at_restore": h.tokens_at_restore,
            "text": h.text,
            "messages": h.messages,
            "extra_tools": h.extra_tools,
            "checkpoint": h.checkpoint,
            "dropped_events": h.dropped_events,
        });
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        );
    } else {
        let _ = write!(out, "{}", h.text);
        let _ = writeln!(
            out,
            "--- {} · {} · {} · {} tokens at restore",
            scenario.id, args.interrupt, h.strategy, h.tokens_at_restore
        );
    }
    Ok(exit::OK)
}

fn run_matrix(dir: &Path, a: RunArgs) -> Result<i32, Error> {
    use crate::runner::{Reporter, RunConfig, RunEvent};
    let a = match &a.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
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
        model_defs: a.model,
        cache_dir: a.cache_dir,
        no_cache: a.no_cache,
        rerun_errored: a.rerun_errored,
    };
    if !(0.0..=10.0).contains(&cfg.attention) {
        return Err(Error::Usage("attention must be between 0 and 10".into()));
    }
    if cfg.reps == 0 || cfg.concurrency == 0 || cfg.step_budget == 0 {
        return Err(Error::Usage(
            "reps, concurrency and step_budget must be at least 1".into(),
        ));
    }
    let plan = crate::runner::plan(&cfg)?;
    crate::runner::write_manifest(&cfg, &plan)?;

    struct Progress {
        bar: indicatif::ProgressBar,
        errored: usize,
        retries: u64,
        cache_hits: u64,
    }
    impl Reporter for Progress {
        fn event(&mut self, e: RunEvent<'_>) {
            match e {
                RunEvent::Planned { total, skipped } => {
                    self.bar.set_length(total as u64);
                    if skipped > 0 {
                        eprintln!("resuming: {skipped} cells already done");
                    }
                }
                RunEvent::CellDone { record, .. } => {
                    if record.status == crate::runner::Status::Errored {
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
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} cells · {msg} · ETA {eta}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut progress = Progress {
        bar,
        errored: 0,
        retries: 0,
        cache_hits: 0,
    };
    let written = crate::runner::execute(&cfg, &plan, &mut progress)?;
    let summary = crate::report::render_dir(&cfg.out)?;
    println!(
        "{written} cells run ({} errored); wrote {}",
        progress.errored,
        cfg.out.join("report.md").display()
    );
    for r in summary.ranking.iter().filter(|r| r.rank <= 3) {
        println!(
            "  {} #{}: {} (task success {:.2}, unsafe cells {}, median restore tokens {})",
            r.model, r.rank, r.strategy, r.task_success, r.unsafe_cells, r.median_restore_tokens
        );
    }
    Ok(exit::OK)
}

/// CPU seconds (user + system) this process has used, from /proc (Linux); `None` elsewhere.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// Peak resident memory in MiB, from /proc (Linux).
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn bench(dir: &Path, reps: u32, concurrency: usize, out: Option<PathBuf>) -> Result<i32, Error> {
    use crate::runner::{RunConfig, Silent};
    let out = out.unwrap_or_else(|| std::env::temp_dir().join("compaction-eval-bench"));
    let cfg = RunConfig {
        scenario_dir: dir.to_path_buf(),
        reps,
        concurrency,
        out: out.clone(),
        ..RunConfig::default()
    };
    let t0 = std::time::Instant::now();
    let cpu0 = cpu_seconds();
    let plan = crate::runner::plan(&cfg)?;
    let plan_s = t0.elapsed().as_secs_f64();
    let cpu1 = cpu_seconds();
    let t1 = std::time::Instant::now();
    let n = crate::runner::execute(&cfg, &plan, &mut Silent)?;
    let wall = t1.elapsed().as_secs_f64();
    let cpu2 = cpu_seconds();
    println!("cells:               {n}");
    println!("plan (states + handoffs): {:.1} ms", plan_s * 1e3);
    println!("cells per second:    {:.0}", n as f64 / wall);
    if let (Some(a), Some(b), Some(c)) = (cpu0, cpu1, cpu2) {
        println!(
            "CPU per cell:        {:.4} ms (plan: {:.0} ms CPU)",
            (c - b) * 1e3 / n.max(1) as f64,
            (b - a) * 1e3
        );
    }
    if let Some(m) = peak_rss_mib() {
        println!("peak RSS:            {m:.1} MiB");
    }
    println!(
        "results:             {}",
        out.join("results.jsonl").display()
    );
    Ok(exit::OK)
}

fn cache_cmd(cmd: CacheCmd) -> Result<i32, Error> {
    use crate::agent::live::Cache;
    let (dir, clear) = match cmd {
        CacheCmd::Stats { cache_dir } => (cache_dir, false),
        CacheCmd::Clear { cache_dir } => (cache_dir, true),
    };
    let cache = Cache {
        dir: dir.unwrap_or_else(Cache::default_dir),
    };
    if clear {
        let (n, _) = cache.stats();
        cache.clear().map_err(|source| Error::Write {
            path: cache.dir.clone(),
            source,
        })?;
        println!("removed {n} cached responses from {}", cache.dir.display());
    } else {
        let (n, bytes) = cache.stats();
        println!(
            "{}: {n} cached responses, {:.1} MiB",
            cache.dir.display(),
            bytes as f64 / 1048576.0
        );
    }
    Ok(exit::OK)
}

fn gate_cmd(
    dir: &Path,
    baseline: Option<&Path>,
    policy: Option<&Path>,
    junit: Option<PathBuf>,
    summary: Option<PathBuf>,
) -> i32 {
    use crate::gate;
    let results = gate::load_policy(policy).and_then(|p| gate::evaluate(dir, baseline, &p));
    let results = match results {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return gate::exit::UNUSABLE;
        }
    };
    for r in &results {
        println!(
            "{} {}: {}",
            if r.held { "held  " } else { "FAILED" },
            r.name,
            r.detail
        );
    }
    let junit = junit.unwrap_or_else(|| dir.join("gate-junit.xml"));
    let summary = summary.unwrap_or_else(|| dir.join("gate.md"));
    for (path, text) in [
        (&junit, gate::junit(&results)),
        (&summary, gate::markdown(&results)),
    ] {
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return gate::exit::UNUSABLE;
        }
    }
    if results.iter().all(|r| r.held) {
        gate::exit::HELD
    } else {
        gate::exit::FAILED
    }
}

fn compare_cmd(base: &Path, cand: &Path, out: Option<PathBuf>) -> Result<i32, Error> {
    use crate::runner::read_records;
    let b = read_records(&base.join("results.jsonl"))?;
    let c = read_records(&cand.join("results.jsonl"))?;
    let metrics: Vec<String> = [
        "task_success",
        "recovery_quality",
        "omitted_context",
        "repeated_work",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let comps = crate::gate::paired_comparisons(&b, &c, &metrics);
    let mut md = format!(
        "# compaction-eval comparison\n\nbase: `{}` ({} cells) · candidate: `{}` ({} cells). Differences are candidate − base over the cells both runs have (same scenario, interrupt point, strategy, model, repetition); positive is better (omitted context and repeated work are negated). Wilcoxon signed-rank, Holm-corrected across all rows.\n\n| strategy | model | metric | paired cells | mean difference | p | p (Holm) | verdict |\n| --- | --- | --- | ---: | ---: | ---: | ---: | --- |\n",
        base.display(),
        b.len(),
        cand.display(),
        c.len()
    );
    for x in &comps {
        let verdict = if x.p_holm < 0.05 {
            if x.mean_diff > 0.0 { "better" } else { "worse" }
        } else {
            "no significant change"
        };
        md.push_str(&format!(
            "| {} | {} | {} | {} | {:+.3} | {:.4} | {:.4} | {} |\n",
            x.strategy.replace('|', "\\|"),
            x.model.replace('|', "\\|"),
            x.metric,
            x.n,
            x.mean_diff,
            x.p_value,
            x.p_holm,
            verdict
        ));
    }
    let out = out.unwrap_or_else(|| cand.join("compare.md"));
    std::fs::write(&out, &md).map_err(|source| Error::Write {
        path: out.clone(),
        source,
    })?;
    println!(
        "{} paired comparisons; wrote {}",
        comps.len(),
        out.display()
    );
    Ok(exit::OK)
}

fn report_cmd(
    dir: &Path,
    reference: String,
    resamples: usize,
) -> Result<crate::report::Summary, Error> {
    let seed = std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|m| m.get("seed").and_then(|v| v.as_u64()))
        .unwrap_or(crate::DEFAULT_SEED);
    let opts = crate::report::analysis::ReportOptions {
        reference,
        resamples,
        seed,
    };
    Ok(crate::report::render_dir_with(dir, Some(&opts))?)
}

fn audit_cmd(
    dir: &Path,
    strategies: Option<Vec<String>>,
    scenarios: Option<Vec<String>>,
    out: &Path,
    strategy_dir: &Path,
) -> Result<i32, Error> {
    let registry = crate::strategy::Registry::load(strategy_dir)?;
    let strategies = strategies.unwrap_or_else(|| registry.ids());
    let mut all = scenario::load_dir(dir)?;
    if let Some(ids) = &scenarios {
        for id in ids {
            if !all.iter().any(|s| &s.id == id) {
                return Err(Error::UnknownScenario {
                    id: id.clone(),
                    known: all
                        .iter()
                        .map(|s| s.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
        }
        all.retain(|s| ids.contains(&s.id));
    }
    let all: Vec<std::sync::Arc<Scenario>> = all.into_iter().map(std::sync::Arc::new).collect();
    let rows = crate::audit::audit(&all, &registry, &strategies)?;
    crate::audit::write(out, &rows).map_err(|source| Error::Write {
        path: out.to_path_buf(),
        source,
    })?;
    let stdout = std::io::stdout();
    let mut o = stdout.lock();
    let _ = writeln!(
        o,
        "{:<34} {:<22} {:<20} {:>7} {:>7} {:>9} {:>8} {:>6}  missing",
        "scenario", "interrupt", "strategy", "tokens", "carried", "uncertain", "injected", "rules"
    );
    for r in &rows {
        let _ = writeln!(
            o,
            "{:<34} {:<22} {:<20} {:>7} {:>7} {:>9} {:>8} {:>6}  {}",
            r.scenario,
            r.interrupt,
            r.strategy,
            r.tokens_at_restore,
            format!("{}/{}", r.carried.len(), r.facts),
            format!("{}/{}", r.uncertain_kept, r.uncertain_total),
            r.injected_bare.len(),
            r.rule_violations
                .as_ref()
                .map(|v| v.len().to_string())
                .unwrap_or_else(|| "-".into()),
            match &r.error {
                Some(e) => format!("ERROR: {e}"),
                None => r
                    .missing
                    .iter()
                    .map(|m| if r.retrievable.contains(m) {
                        format!("{m} (retrievable)")
                    } else {
                        m.clone()
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            }
        );
    }
    let _ = writeln!(
        o,
        "{} handoffs audited; wrote {} and {}",
        rows.len(),
        out.join("audit.csv").display(),
        out.join("audit.json").display()
    );
    Ok(exit::OK)
}

#[allow(clippy::too_many_arguments)]
fn check_handoff_cmd(
    dir: &Path,
    scenario_id: &str,
    interrupt: &str,
    strategy: Option<String>,
    checkpoint: Option<PathBuf>,
    strategy_dir: &Path,
    json: bool,
) -> Result<i32, Error> {
    use crate::strategy::{Registry, RestorePoint, StrategyError};
    let s = std::sync::Arc::new(find_scenario(dir, scenario_id)?);
    let state = RestorePoint::build(s, interrupt).map_err(StrategyError::from)?;
    let cp = match (strategy, checkpoint) {
        (Some(id), _) => Registry::load(strategy_dir)?
            .handoff(&id, &state)?
            .checkpoint
            .ok_or_else(|| {
                Error::Usage(format!("strategy `{id}` does not produce a checkpoint"))
            })?,
        (None, Some(file)) => {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| Error::Usage(format!("{}: {e}", file.display())))?;
            let mut de = serde_json::Deserializer::from_str(&text);
            serde_path_to_error::deserialize::<_, crate::checkpoint::Checkpoint>(&mut de).map_err(
                |e| {
                    Error::Usage(format!(
                        "{}: at `{}`: {}",
                        file.display(),
                        e.path(),
                        e.inner()
                    ))
                },
            )?
        }
        (None, None) => return Err(Error::Usage("give --strategy or --checkpoint".into())),
    };
    let v = crate::checkpoint::rules::check(&cp, &state);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"violations": v})).unwrap_or_default()
        );
    } else {
        for x in &v {
            println!("{} at {}: {}", x.rule, x.at, x.detail);
        }
        println!("{} rule violation(s)", v.len());
    }
    Ok(if v.is_empty() { exit::OK } else { exit::FAILED })
}

fn plugin_schemas(out_dir: &Path) -> Result<i32, Error> {
    std::fs::create_dir_all(out_dir).map_err(|source| Error::Write {
        path: out_dir.to_path_buf(),
        source,
    })?;
    for (name, text) in crate::plugin::protocol::schemas() {
        let p = out_dir.join(name);
        std::fs::write(&p, text).map_err(|source| Error::Write {
            path: p.clone(),
            source,
        })?;
        println!("wrote {}", p.display());
    }
    Ok(exit::OK)
}
