//! Every process exit code of the `compaction-eval` binary, in one place.
//!
//! Owns: the numeric codes and what each means, per command. Must not: decide which code a
//! situation earns (commands and the library do that) or hold any other constant.
//!
//! A leaf: `gate` (`gate::exit`) and `envelope::inspect` (`EXIT_*`) re-export these constants
//! rather than defining their own.

/// Success: the command did what was asked (`scenarios`, `run` with no more errored cells than
/// allowed, `bench`, `compare`, `report`,
/// `audit`, `handoff`, `plugin-schemas`, `plugin-input`, `cache`; `scenarios validate` and
/// `check-handoff` when nothing is wrong).
pub const OK: i32 = 0;
/// The command ran and found a failure: `scenarios validate` found an invalid scenario,
/// `check-handoff` found a rule violation, or a scenario file is invalid
/// ([`crate::error::Error::exit_code`]).
pub const FAILED: i32 = 1;
/// Unusable input, for every command: bad arguments (also clap's own parse errors), a named
/// file or folder that does not exist, corrupt files, unknown ids.
pub const USAGE: i32 = 2;
/// A configuration that cannot work: a live model's table (impossible durations, a client that
/// cannot be built), a strategy whose summariser names no configured model.
pub const CONFIG: i32 = 8;
/// The file system failed: a file or folder could not be read or written for a reason other
/// than its absence (a full disk, permissions). What was written before stays whole.
pub const IO: i32 = 9;
/// A report could not be rendered (a template or a plot failed): the run's records are intact
/// and `report DIR` renders again from them.
pub const RENDER: i32 = 10;
/// The harness failed (its async runtime, a value it could not serialise): a bug or an
/// exhausted machine, never the input. Please report it.
pub const HARNESS: i32 = 11;
/// The run folder is in use: another live process (a `run`, `--resume` or `merge`) holds its
/// lock (`OUT/run.lock` names its pid and host). A second writer is refused at once; `report`
/// and `gate` refuse a folder whose run is in progress unless given `--allow-incomplete`.
/// Nothing was written.
pub const BUSY: i32 = 12;

/// Exit codes of `gate`.
pub mod gate {
    /// Every rule held.
    pub const HELD: i32 = super::OK;
    /// At least one rule failed.
    pub const FAILED: i32 = super::FAILED;
    /// The input could not be used (missing or corrupt run folder, bad policy, unwritable
    /// JUnit or summary file).
    pub const UNUSABLE: i32 = super::USAGE;
    /// No rule failed, but a comparison with the baseline was inconclusive (its interval too
    /// wide to tell) and the policy's `on_inconclusive` is `"exit-3"` (the default).
    pub const INCONCLUSIVE: i32 = 3;
    /// The run folder's run is in progress (without `--allow-incomplete`).
    pub const BUSY: i32 = super::BUSY;
}

/// Exit codes of `inspect-continuity`, one per continuity decision (a report that cannot be
/// written ends with [`USAGE`], clap's parse errors too).
pub mod inspect {
    /// `reauthorization_required`: continuity holds; the next action still needs authorization.
    pub const REAUTHORIZATION_REQUIRED: i32 = super::OK;
    /// `blocked_on_reconciliation`: an unknown side effect must be reconciled first.
    pub const BLOCKED_ON_RECONCILIATION: i32 = 3;
    /// `continuity_validation_failed`: the envelope, summary or current state does not check out.
    pub const CONTINUITY_VALIDATION_FAILED: i32 = 4;
}

/// Exit codes of `run` besides [`OK`] and [`USAGE`].
pub mod run {
    /// `results.jsonl` holds fewer records than the run's matrix has cells: cells were lost
    /// (run again with `--resume`).
    pub const INCOMPLETE: i32 = 5;
    /// More cells errored than `--max-errored-fraction` allows (default 0: any errored cell).
    /// The run folder and its reports are complete; the errored cells are listed in `report.md`.
    pub const TOO_MANY_ERRORED: i32 = 6;
    /// Before the first cell, a live model failed its probe (its key variable is not set, its
    /// base URL does not answer, or it refuses the key), or a plug-in failed on each of its first
    /// handoffs (`runner::FAIL_FAST_AFTER`): no cell ran.
    pub const PREFLIGHT_FAILED: i32 = 7;
    /// A live destination's ranking is not meaningful: it never made a valid tool call, or most
    /// of its cells errored on its side ([`crate::health`]). The run folder and its reports are complete;
    /// `report.md` and the terminal say which destination and why.
    pub const NOT_MEANINGFUL: i32 = 13;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every code a process can end with, by command: within one command no two meanings share
    /// a code, and a command's own codes never reuse a code every command gives.
    #[test]
    fn codes_are_distinct_where_they_must_be() {
        let global = [OK, FAILED, USAGE, CONFIG, IO, RENDER, HARNESS, BUSY];
        let own: [&[i32]; 3] = [
            &[gate::INCONCLUSIVE],
            &[
                inspect::BLOCKED_ON_RECONCILIATION,
                inspect::CONTINUITY_VALIDATION_FAILED,
            ],
            &[
                run::INCOMPLETE,
                run::TOO_MANY_ERRORED,
                run::PREFLIGHT_FAILED,
                run::NOT_MEANINGFUL,
            ],
        ];
        for codes in own.iter().map(|o| [&global[..], o].concat()) {
            let distinct: std::collections::BTreeSet<_> = codes.iter().collect();
            assert_eq!(distinct.len(), codes.len(), "{codes:?}");
        }
        // A shell reads 126 and above as "not executable", "not found" and signals.
        assert!(
            own.concat()
                .iter()
                .chain(&global)
                .all(|c| (0..126).contains(c))
        );
    }
}
