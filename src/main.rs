//! The `compaction-eval` binary: parse the command line, run it, exit with its code. Everything
//! else is in the library ([`compaction_eval::cli`]); nothing more belongs here.

use clap::Parser;

fn main() {
    let cli = compaction_eval::cli::Cli::parse();
    let code = compaction_eval::cli::run(cli);
    std::process::exit(code);
}
