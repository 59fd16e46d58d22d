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
    /// Build one handoff and print it as a destination would see it, with its token count.
    Handoff(HandoffArgs),
    /// The continuity-envelope reference exercise of seed 000 (exit 0 reauthorization_required,
    /// 3 blocked_on_reconciliation, 4 continuity_validation_failed).
    InspectContinuity(crate::envelope::InspectContinuityArgs),
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
    use crate::strategy::{InterruptedState, Registry};
    let scenario = std::sync::Arc::new(find_scenario(dir, &args.scenario)?);
    let registry = Registry::load(&args.strategy_dir)?;
    let strategy = registry.get(&args.strategy)?;
    let state = InterruptedState::build(scenario.clone(), &args.interrupt)
        .map_err(crate::strategy::StrategyError::from)?;
    let h = strategy.build(&state)?;
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
