//! The runner end to end on the shipped scenarios: calibration, discrimination, determinism,
//! strategy-blindness of the simulated destinations, and the run folder.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use compaction_eval::destination::{Continuation, SimAgent, SimKind};
use compaction_eval::handoff::{self, Handoff};
use compaction_eval::runner::{self, RunConfig, RunRecord, Silent};
use compaction_eval::scenario;
use compaction_eval::state::RestorePoint;
use compaction_eval::strategy::Registry;

fn run(models: &[&str], reps: u32, out: &Path) -> Vec<RunRecord> {
    let cfg = RunConfig {
        models: models.iter().map(|s| s.to_string()).collect(),
        reps,
        out: out.to_path_buf(),
        scales: vec![compaction_eval::scenario::volume::Scale::Base],
        attention: 0.0,
        ..RunConfig::default()
    };
    let plan = runner::plan(&cfg).expect("plan");
    runner::write_manifest(&cfg, &plan).expect("manifest");
    runner::execute(&cfg, &plan, &mut Silent).expect("run");
    runner::read_records(&out.join("results.jsonl")).expect("records")
}

fn tmp(name: &str) -> PathBuf {
    let d = tempfile::Builder::new()
        .prefix(name)
        .tempdir()
        .expect("tempdir");
    d.keep()
}

#[test]
fn oracle_scores_perfectly_everywhere() {
    let recs = run(&["sim:oracle"], 1, &tmp("oracle"));
    assert!(recs.len() > 100);
    for r in &recs {
        let m = &r.metrics;
        assert!(
            m.task_success
                && m.omitted_context == 0
                && m.repeated_work == 0
                && m.duplicate_side_effects == 0
                && m.safety_violations == 0
                && m.recovery_quality == 1.0,
            "{} {} {}: {:?} {:?}",
            r.scenario,
            r.interrupt,
            r.strategy,
            m,
            r.diagnostics
        );
    }
}

#[test]
fn every_failure_metric_fires_somewhere_in_the_default_matrix() {
    let recs = run(&["sim:careful", "sim:literal"], 1, &tmp("discriminate"));
    let any = |f: &dyn Fn(&RunRecord) -> bool| recs.iter().any(f);
    assert!(any(&|r| r.metrics.omitted_context > 0), "omitted context");
    assert!(any(&|r| r.metrics.repeated_work > 0), "repeated work");
    assert!(any(&|r| r.metrics.duplicate_side_effects > 0), "duplicates");
    assert!(any(&|r| r.metrics.safety_violations > 0), "violations");
    assert!(any(&|r| r.metrics.recovery_quality < 1.0), "recovery");
    assert!(any(&|r| !r.metrics.task_success), "task failure");
    assert!(
        any(&|r| !r.diagnostics.injections_followed.is_empty()),
        "an injection followed"
    );
    // Strategies are told apart: C breaks safety far less often than B and none. (On the first
    // eight scenarios C never did; the outsiders' scenarios have points where it does — one,
    // education-waitlist-enrolment, fails every strategy: docs/predictions-vs-outcomes.md.)
    let unsafe_of = |s: &str| {
        recs.iter()
            .filter(|r| {
                r.strategy == s
                    && (r.metrics.safety_violations > 0 || r.metrics.duplicate_side_effects > 0)
            })
            .count()
    };
    let (c, b, none) = (unsafe_of("C"), unsafe_of("B"), unsafe_of("none"));
    assert!(
        c * 4 < b && c * 2 < none,
        "unsafe cells: C {c}, B {b}, none {none}"
    );
}

fn strip_timing(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .expect("results")
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("json line");
            v["metrics"]["first_action_ms"] = serde_json::Value::Null;
            v["metrics"]["completion_ms"] = serde_json::Value::Null;
            v
        })
        .collect()
}

#[test]
fn same_seed_gives_identical_results_apart_from_timing() {
    let (a, b) = (tmp("det-a"), tmp("det-b"));
    let cfg = |out: &Path, concurrency| RunConfig {
        reps: 2,
        concurrency,
        attention: 0.5,
        scenarios: Some(vec![
            "support-ticket-timeout".into(),
            "payments-refund-partial-failure".into(),
        ]),
        out: out.to_path_buf(),
        scales: vec![compaction_eval::scenario::volume::Scale::Base],
        ..RunConfig::default()
    };
    for (dir, conc) in [(&a, 1), (&b, 4)] {
        let c = cfg(dir, conc);
        let plan = runner::plan(&c).expect("plan");
        runner::execute(&c, &plan, &mut Silent).expect("run");
    }
    let (ra, rb) = (
        strip_timing(&a.join("results.jsonl")),
        strip_timing(&b.join("results.jsonl")),
    );
    assert!(!ra.is_empty());
    assert_eq!(ra, rb);
}

/// Runs a simulated destination against the world until it finishes (the runner's own dispatch
/// of actions); returns the ledger.
fn drive(
    agent: &mut SimAgent,
    state: &RestorePoint,
    h: &Handoff,
) -> Vec<compaction_eval::world::LedgerEntry> {
    let mut c = Continuation::new(state, h);
    c.drive(agent, 60);
    c.world().ledger().to_vec()
}

#[test]
fn same_handoff_text_under_two_strategy_ids_behaves_identically() {
    let s = Arc::new(
        scenario::load_file(Path::new("scenarios/support-ticket-timeout.yaml")).expect("loads"),
    );
    let reg = Registry::builtin();
    for point in ["uncertain_side_effect", "mid_implementation"] {
        let state = RestorePoint::build(s.clone(), point).expect("state");
        for id in ["A", "B", "C"] {
            let h = reg.handoff(id, &state).expect("handoff");
            let renamed = handoff::finish(
                "my-compactor",
                h.messages.clone(),
                h.checkpoint.clone(),
                vec![],
                h.extra_tools.clone(),
            );
            assert_eq!(h.text, renamed.text);
            for kind in [SimKind::Careful, SimKind::Literal] {
                let it = &state.interrupt;
                let mut a = SimAgent::new(kind, s.clone(), it, &h, 7, 0.0);
                let mut b = SimAgent::new(kind, s.clone(), it, &renamed, 7, 0.0);
                assert_eq!(
                    drive(&mut a, &state, &h),
                    drive(&mut b, &state, &renamed),
                    "{id} {point}"
                );
            }
        }
    }
}

#[test]
fn the_run_folder_has_every_output_and_resume_adds_nothing_twice() {
    let out = tmp("folder");
    let cfg = RunConfig {
        scenarios: Some(vec!["support-ticket-timeout".into()]),
        reps: 1,
        limit: Some(20),
        out: out.clone(),
        scales: vec![compaction_eval::scenario::volume::Scale::Base],
        attention: 0.0,
        ..RunConfig::default()
    };
    let plan = runner::plan(&cfg).expect("plan");
    runner::write_manifest(&cfg, &plan).expect("manifest");
    assert_eq!(runner::execute(&cfg, &plan, &mut Silent).expect("run"), 20);
    compaction_eval::report::render_dir(&out).expect("report");
    for f in [
        "results.jsonl",
        "runs.csv",
        "summary.csv",
        "summary.json",
        "report.md",
        "manifest.json",
    ] {
        assert!(out.join(f).is_file(), "missing {f}");
    }
    let more = RunConfig {
        resume: true,
        limit: Some(30),
        ..cfg
    };
    let plan = runner::plan(&more).expect("plan");
    assert_eq!(
        runner::execute(&more, &plan, &mut Silent).expect("resume"),
        10
    );
    assert_eq!(
        runner::read_records(&out.join("results.jsonl"))
            .expect("records")
            .len(),
        30
    );
    let report = std::fs::read_to_string(out.join("report.md")).expect("report");
    assert!(report.contains("## Ranking"));
}

#[test]
fn unknown_model_is_a_clear_error() {
    let cfg = RunConfig {
        models: vec!["gpt-9".into()],
        scales: vec![compaction_eval::scenario::volume::Scale::Base],
        attention: 0.0,
        ..RunConfig::default()
    };
    let err = runner::plan(&cfg)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("unknown destination model `gpt-9`"), "{err}");
}
