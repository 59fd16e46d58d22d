//! Every command, argument and option of the command line has help text, and `run --help` names
//! the model specs and the exit codes: the command tree is walked, so a new flag without a doc
//! comment fails here.

use clap::CommandFactory;
use compaction_eval::cli::Cli;

/// `(command path, argument id)` of every argument without help text, and commands without an
/// about line.
fn missing_help(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        if id == "help" || id == "version" {
            continue;
        }
        let has = arg
            .get_help()
            .is_some_and(|h| !h.to_string().trim().is_empty())
            || arg
                .get_long_help()
                .is_some_and(|h| !h.to_string().trim().is_empty());
        if !has {
            out.push(format!("{path}: argument `{id}` has no help text"));
        }
    }
    for sub in cmd.get_subcommands() {
        let name = format!("{path} {}", sub.get_name());
        if sub.get_name() == "help" {
            continue;
        }
        if sub.get_about().is_none() && sub.get_long_about().is_none() {
            out.push(format!("{name}: the command has no description"));
        }
        missing_help(sub, &name, out);
    }
}

#[test]
fn every_argument_of_every_command_has_help() {
    let cmd = Cli::command();
    let mut missing = Vec::new();
    missing_help(&cmd, "compaction-eval", &mut missing);
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn the_walk_finds_an_argument_without_help() {
    let cmd = clap::Command::new("t")
        .arg(
            clap::Arg::new("documented")
                .long("documented")
                .help("Says what it does."),
        )
        .subcommand(
            clap::Command::new("sub")
                .about("A sub.")
                .arg(clap::Arg::new("bare").long("bare")),
        );
    let mut missing = Vec::new();
    missing_help(&cmd, "t", &mut missing);
    assert_eq!(
        missing,
        vec!["t sub: argument `bare` has no help text".to_owned()]
    );
}

#[test]
fn no_default_is_printed_twice() {
    // A default given both by clap and in the doc comment's `[default: …]` prints twice.
    fn walk(cmd: &mut clap::Command, path: &str, out: &mut Vec<String>) {
        let help = cmd.render_long_help().to_string();
        for line in help.lines() {
            if line.matches("[default:").count() > 1 {
                out.push(format!("{path}: {}", line.trim()));
            }
        }
        let names: Vec<String> = cmd
            .get_subcommands()
            .map(|s| s.get_name().to_owned())
            .collect();
        for n in names {
            if let Some(sub) = cmd.find_subcommand_mut(&n) {
                walk(sub, &format!("{path} {n}"), out);
            }
        }
    }
    let mut cmd = Cli::command();
    cmd.build();
    let mut out = Vec::new();
    walk(&mut cmd, "compaction-eval", &mut out);
    assert!(out.is_empty(), "{}", out.join("\n"));
}

#[test]
fn run_help_names_model_specs_and_exit_codes() {
    let mut cmd = Cli::command();
    cmd.build();
    let run = cmd.find_subcommand_mut("run").expect("run");
    let help = run.render_long_help().to_string();
    for needle in [
        "sim:careful",
        "sim:literal",
        "sim:oracle",
        "openai:MODEL",
        "[model.NAME]",
        "Exit codes",
    ] {
        assert!(
            help.contains(needle),
            "run --help lacks {needle:?}:\n{help}"
        );
    }
    for code in [
        compaction_eval::exit::OK,
        compaction_eval::exit::USAGE,
        compaction_eval::exit::run::INCOMPLETE,
        compaction_eval::exit::run::TOO_MANY_ERRORED,
        compaction_eval::exit::run::PREFLIGHT_FAILED,
        compaction_eval::exit::IO,
        compaction_eval::exit::BUSY,
    ] {
        assert!(
            help.lines()
                .any(|l| l.trim_start().starts_with(&format!("{code} "))),
            "run --help does not list exit code {code}:\n{help}"
        );
    }
}
