//! `tau replay`: recorded τ-bench runs replayed on the native airline environment, one JSON line
//! per run, and a one-line summary on stderr.
//!
//! Owns what this command prints. Must not: load, replay or write the file itself
//! ([`crate::tau`] does).

use crate::cli::args::TauCmd;
use crate::error::Error;
use crate::exit;
use crate::tau;

pub fn run(cmd: TauCmd) -> Result<i32, Error> {
    match cmd {
        TauCmd::Replay(a) => {
            let data = a.data.unwrap_or_else(tau::data_dir);
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
