//! Helpers shared by the integration tests that drive the binary.
// Each test binary compiles this module and uses only some of it.
#![allow(dead_code)]

use assert_cmd::Command;

/// The binary, with the environment variables that would change its output removed.
pub fn cli() -> Command {
    let mut c = Command::cargo_bin("compaction-eval").expect("binary builds");
    c.env_remove("RUST_BACKTRACE")
        .env_remove("COMPACTION_EVAL_SCENARIOS");
    c
}

/// `handoff --json` for one scenario, interrupt point and strategy, parsed.
pub fn handoff_json(scenario: &str, interrupt: &str, strategy: &str) -> serde_json::Value {
    let out = cli()
        .args([
            "handoff",
            "--scenario",
            scenario,
            "--interrupt",
            interrupt,
            "--strategy",
            strategy,
            "--json",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).expect("one JSON object")
}
