use clap::Parser;

fn main() {
    let cli = compaction_eval::cli::Cli::parse();
    let code = compaction_eval::cli::run(cli);
    std::process::exit(code);
}
