//! The native τ-bench airline environment against the reference implementation: every output
//! of the 120 shipped runs replayed (the fixture holds what the reference Python answers), the
//! reward on constructed episodes, the end of an episode, argument errors worded as the
//! reference words them, Python's number printing, and `tau replay` end to end.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use compaction_eval::tau::{self, Env, Task, pyfmt};
use serde_json::{Value, json};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn data() -> PathBuf {
    repo().join("data/tau-bench-airline")
}

fn runs_file() -> PathBuf {
    data().join(tau::RUNS_FILE)
}

fn fixture() -> PathBuf {
    repo().join("tests/fixtures/tau-bench/reference-replay.tasks-00-29.jsonl")
}

fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| Env::load(&data()).expect("the shipped data loads"))
}

fn tasks() -> &'static [Task] {
    static TASKS: OnceLock<Vec<Task>> = OnceLock::new();
    TASKS.get_or_init(|| tau::load_tasks(&data()).expect("the shipped tasks load"))
}

fn fixture_lines() -> Vec<Value> {
    std::fs::read_to_string(fixture())
        .expect("fixture is readable")
        .lines()
        .map(|l| serde_json::from_str(l).expect("fixture line is JSON"))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// (a) fidelity

#[test]
fn replaying_the_shipped_runs_gives_the_reference_outputs_and_r_actions() {
    let runs = tau::load_runs(&runs_file()).expect("runs load");
    let expected = fixture_lines();
    assert_eq!(runs.len(), 120);
    assert_eq!(expected.len(), runs.len());
    let replayed = tau::replay_all(env(), &runs);

    let (mut calls, mut same, mut r_same) = (0, 0, 0);
    let mut differences = Vec::new();
    for (got, want) in replayed.iter().zip(&expected) {
        assert_eq!(got.task_id, want["task_id"].as_i64().unwrap_or(-1));
        assert_eq!(got.trial, want["trial"].as_i64().unwrap_or(-1));
        let want_calls = want["calls"].as_array().expect("calls");
        assert_eq!(
            got.calls.len(),
            want_calls.len(),
            "run {}: number of calls",
            want["run"]
        );
        // Call ids repeat within some runs, so calls are matched by position and id together.
        for (g, w) in got.calls.iter().zip(want_calls) {
            calls += 1;
            assert_eq!(g.call_id, w["call_id"].as_str().unwrap_or_default());
            assert_eq!(g.tool, w["tool"].as_str().unwrap_or_default());
            if g.output == w["output"].as_str().unwrap_or_default() {
                same += 1;
            } else if differences.len() < 5 {
                differences.push(format!(
                    "run {} call {} ({}):\n  got  {}\n  want {}",
                    want["run"],
                    g.call_id,
                    g.tool,
                    g.output.chars().take(300).collect::<String>(),
                    w["output"]
                        .as_str()
                        .unwrap_or_default()
                        .chars()
                        .take(300)
                        .collect::<String>()
                ));
            }
        }
        if got.replayed_r_actions == want["replayed_r_actions"].as_f64().unwrap_or(-1.0) {
            r_same += 1;
        } else {
            differences.push(format!(
                "run {}: replayed_r_actions {} (reference {})",
                want["run"], got.replayed_r_actions, want["replayed_r_actions"]
            ));
        }
    }
    eprintln!(
        "tau fidelity: {same}/{calls} outputs identical, {r_same}/{} replayed_r_actions equal",
        replayed.len()
    );
    assert_eq!(calls, 810);
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    assert_eq!(same, 810);
    assert_eq!(r_same, 120);
}
