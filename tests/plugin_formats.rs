//! Plug-in input formats (issue 37, item 3): a plug-in's file states the format it reads
//! (`reads`); a plug-in of the release before format 3 runs unchanged when its file says
//! `reads = "compaction-eval/state/2"`; an unknown format is refused when the file is read, naming
//! the file and the key; and a plug-in that fails on every input stops the run before its first
//! cell, naming the plug-in, its last stderr line and what to change.

use std::path::{Path, PathBuf};

use compaction_eval::record::{ErrorClass, Status};
use compaction_eval::runner::{self, RunConfig, RunError, Silent};
use compaction_eval::strategy::Registry;

fn config(strategy_dir: &Path, strategies: &[&str], out: &Path) -> RunConfig {
    RunConfig {
        scenarios: Some(vec![
            "support-ticket-timeout".into(),
            "payments-vendor-bank-change".into(),
        ]),
        strategies: strategies.iter().map(|s| s.to_string()).collect(),
        models: vec!["sim:careful".into()],
        reps: 1,
        out: out.to_path_buf(),
        strategy_dir: strategy_dir.into(),
        scales: vec![compaction_eval::scenario::volume::Scale::Base],
        attention: 0.0,
        ..RunConfig::default()
    }
}

/// The previous release's example plug-in, in a folder of its own, with `toml` as its file.
fn state2_plugin(toml: &str) -> PathBuf {
    let dir = tempfile::tempdir().expect("tempdir").keep();
    let fixture = Path::new("tests/fixtures/plugin-state2");
    std::fs::create_dir_all(dir.join("examples")).expect("mkdir");
    std::fs::copy(
        fixture.join("examples/checkpoint.py"),
        dir.join("examples/checkpoint.py"),
    )
    .expect("copy the plug-in");
    std::fs::write(dir.join("python-state2.toml"), toml).expect("write its file");
    dir
}

fn shipped_toml() -> String {
    std::fs::read_to_string("tests/fixtures/plugin-state2/python-state2.toml").expect("fixture")
}

#[test]
fn a_state2_plugin_runs_unchanged_when_its_file_says_what_it_reads() {
    let dir = state2_plugin(&shipped_toml());
    let out = tempfile::tempdir().expect("tempdir");
    let cfg = config(&dir, &["C", "exec:python-state2"], out.path());
    let plan = runner::plan(&cfg).expect("plan");
    runner::execute(&cfg, &plan, &mut Silent).expect("run");
    let recs = runner::read_records(&out.path().join("results.jsonl")).expect("records");
    let mine: Vec<_> = recs
        .iter()
        .filter(|r| r.strategy == "exec:python-state2")
        .collect();
    assert!(!mine.is_empty());
    assert!(
        mine.iter().all(|r| r.status == Status::Ok),
        "{:?}",
        mine.iter()
            .filter_map(|r| r.error.as_ref())
            .collect::<Vec<_>>()
    );
    // It keeps the user's messages: some of its continuations succeed.
    assert!(mine.iter().any(|r| r.metrics.task_success));
}

#[test]
fn the_state2_document_has_format_2s_keys_and_not_the_fields_format_3_removed() {
    use compaction_eval::plugin::protocol::{InputFormat, state_input};
    let s = std::sync::Arc::new(
        compaction_eval::scenario::load_file(Path::new("scenarios/support-ticket-timeout.yaml"))
            .expect("loads"),
    );
    let at =
        compaction_eval::state::RestorePoint::build(s, "uncertain_side_effect").expect("state");
    let v2: serde_json::Value =
        serde_json::from_slice(&state_input(&at.state, Some(100), InputFormat::State2).unwrap())
            .expect("json");
    let v3: serde_json::Value =
        serde_json::from_slice(&state_input(&at.state, Some(100), InputFormat::State3).unwrap())
            .expect("json");
    assert_eq!(v2["format"], "compaction-eval/state/2");
    assert_eq!(v2["scenario"], v3["task"]);
    assert_eq!(v2["interrupt"]["after"], v3["after"]);
    for key in ["events", "resources", "tools", "approvals", "token_budget"] {
        assert_eq!(v2[key], v3[key], "{key}");
    }
    // The scenario's id, title and domain and the point's name stay out (format 3's reason).
    for gone in ["id", "title", "domain"] {
        assert!(v2["scenario"].get(gone).is_none(), "{gone}");
    }
    assert!(v2["interrupt"].get("point").is_none());
    let text = serde_json::to_string(&v2).unwrap();
    assert!(!text.contains("support-ticket-timeout") && !text.contains("uncertain_side_effect"));
}

#[test]
fn an_unknown_input_format_is_refused_naming_the_file_and_the_key() {
    let dir = state2_plugin(&shipped_toml().replace("state/2", "state/9"));
    let err = match Registry::load(&dir) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("an unknown format loads"),
    };
    assert!(err.contains("python-state2.toml"), "{err}");
    assert!(
        err.contains("`reads`") && err.contains("compaction-eval/state/9"),
        "{err}"
    );
    assert!(err.contains("compaction-eval/state/3"), "{err}");
}

#[test]
fn a_plugin_that_fails_on_its_first_handoffs_stops_the_run_with_what_to_change() {
    // The previous release's plug-in without `reads`: it is given format 3 and looks up
    // `scenario`, a KeyError on every input.
    let toml: String = shipped_toml()
        .lines()
        .filter(|l| !l.starts_with("reads"))
        .map(|l| format!("{l}\n"))
        .collect();
    let dir = state2_plugin(&toml);
    let out = tempfile::tempdir().expect("tempdir");
    let cfg = config(&dir, &["C", "exec:python-state2"], out.path());
    let err = match runner::plan(&cfg) {
        Err(e) => e,
        Ok(_) => panic!("the plan was built"),
    };
    let msg = err.to_string();
    assert!(
        matches!(err, RunError::PluginFailing { failed: 3, .. }),
        "{msg}"
    );
    assert!(msg.contains("exec:python-state2"), "{msg}");
    assert!(
        msg.contains("KeyError: 'scenario'"),
        "the last stderr line: {msg}"
    );
    assert!(
        msg.contains("reads = \"compaction-eval/state/2\""),
        "what to change: {msg}"
    );
    assert!(msg.contains("--no-fail-fast"), "{msg}");

    // With --no-fail-fast the run goes on and its cells are errored.
    let cfg = RunConfig {
        fail_fast: false,
        ..cfg
    };
    let plan = runner::plan(&cfg).expect("plan");
    runner::execute(&cfg, &plan, &mut Silent).expect("run");
    let recs = runner::read_records(&out.path().join("results.jsonl")).expect("records");
    assert!(
        recs.iter()
            .filter(|r| r.strategy == "exec:python-state2")
            .all(|r| r.status == Status::Errored && r.error_class == Some(ErrorClass::Plugin))
    );
}
