//! The command line: the parser type and the dispatch of each subcommand to its command.
//!
//! Owns: [`Cli`] (the global flags) and [`run`]. Argument types are in [`args`], command bodies
//! in `commands/` (one file each), exit codes in [`exit`]. Must not: do a command's work here or
//! compute anything the library could be asked for. Commands write results to stdout and
//! problems to stderr.

pub mod args;
mod commands;
pub mod run_args;
pub use crate::exit;

use std::path::PathBuf;

use clap::Parser;

use crate::shipped::Source;

pub use args::*;

#[derive(Debug, Parser)]
#[command(
    name = "compaction-eval",
    version,
    about = "Measure how well an interrupted LLM-agent run continues after its context was compacted"
)]
pub struct Cli {
    /// Folder (or single file) holding the scenario YAML files [default: `scenarios/` in the
    /// working directory when it is there, else the scenarios shipped inside the binary].
    #[arg(long, global = true, env = "COMPACTION_EVAL_SCENARIOS")]
    pub scenario_dir: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

/// Runs a parsed command line; returns the process exit code ([`exit`]). An error is printed as
/// `error: …` on stderr and ends with its [`crate::error::Error::exit_code`].
pub fn run(cli: Cli) -> i32 {
    use commands as c;
    let dir = &Source::resolve(cli.scenario_dir, "scenarios");
    let result = match cli.command {
        Command::Scenarios(cmd) => c::scenarios::run(dir, cmd),
        Command::Strategies(cmd) => c::strategies::run(cmd),
        Command::Handoff(args) => c::handoff::run(dir, &args),
        Command::Run(args) => c::run::run(dir, args),
        Command::Calibrate(args) => c::calibrate::run(dir, args),
        Command::Cache(cmd) => c::cache::run(cmd),
        Command::Audit(args) => c::audit::run(dir, args),
        Command::CheckHandoff(args) => c::check_handoff::run(dir, &args),
        Command::PluginSchemas(args) => c::plugin_schemas::run(&args),
        Command::PluginInput(args) => c::plugin_input::run(dir, &args),
        Command::Gate(args) => Ok(c::gate::run(&args)),
        Command::Compare(args) => c::compare::run(&args),
        Command::Bench(args) => c::bench::run(dir, &args),
        Command::Report(args) => c::report::run(args),
        Command::Merge(args) => c::merge::run(&args),
        Command::Show(args) => c::show::run(&args),
        Command::InspectContinuity(args) => c::inspect_continuity::run(&args),
        Command::ContextReport(args) => c::context::report(dir, &args),
        Command::InspectContext(args) => c::context::inspect(&args),
        Command::Transcripts(cmd) => c::transcripts::run(cmd),
        Command::Tau(cmd) => c::tau::run(cmd),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", crate::secrets::redact(&e.to_string()));
            e.exit_code()
        }
    }
}
