//! `calibrate` end to end, against a live destination whose policy is known: a local
//! OpenAI-compatible server (127.0.0.1, started here) that finishes every task at once, without
//! a tool call. Its task success is therefore constant (never), so κ on task success is 0 against
//! any sim that varies; every cell it got is one of the sample's, the dry run sends nothing, the
//! report's summary quotes κ, and an offline run's report says its verdict is uncalibrated. Bad
//! input — a sample larger than the matrix, a sim in --live, a calibration file that is not one —
//! gets a clear error and writes nothing.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};

fn finish_at_once(State(n): State<Arc<AtomicUsize>>, Json(body): Json<Value>) -> Json<Value> {
    n.fetch_add(1, Ordering::SeqCst);
    let model = body["model"].as_str().unwrap_or("m").to_string();
    let args = json!({"status": "completed", "report": "done"}).to_string();
    Json(json!({
        "id": "chatcmpl-cal", "object": "chat.completion", "created": 1_700_000_000u32,
        "model": model,
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
            "content": null, "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "finish", "arguments": args}}]}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105}
    }))
}

fn start() -> (u16, Arc<AtomicUsize>) {
    let n = Arc::new(AtomicUsize::new(0));
    let app = axum::Router::new()
        .route(
            "/v1/chat/completions",
            axum::routing::post(|s: State<Arc<AtomicUsize>>, b: Json<Value>| async move {
                finish_at_once(s, b)
            }),
        )
        .route(
            "/v1/models",
            axum::routing::get(|| async { Json(json!({"object": "list", "data": []})) }),
        )
        .with_state(n.clone());
    (common::serve(app), n)
}

/// `calibrate` with the one-flag live set-up, on two scenarios at base scale, three strategies.
fn calibrate(port: u16, out: &Path, extra: &[&str]) -> (i32, String, String) {
    let url = format!("http://127.0.0.1:{port}/v1");
    let cache = out.with_extension("cache");
    let mut args = vec![
        "calibrate",
        "--model-name",
        "policy",
        "--base-url",
        &url,
        "--scenarios",
        "support-ticket-timeout,ops-db-migration-timeout",
        "--strategies",
        "A,C,none",
        "--scale",
        "base",
        "--out",
        out.to_str().expect("utf-8"),
        "--cache-dir",
        cache.to_str().expect("utf-8"),
    ];
    args.extend_from_slice(extra);
    let o = common::cli().args(&args).output().expect("runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_live_policy_that_never_succeeds_has_kappa_zero_on_task_success() {
    let (port, requests) = start();
    let tmp = tempfile::tempdir().expect("tmp");
    let out = tmp.path().join("cal");
    let (code, stdout, stderr) = calibrate(port, &out, &["--sample", "6"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    // Two points × three strategies, once per destination: the live model saw six cells, one
    // request each (it finished at once).
    assert_eq!(requests.load(Ordering::SeqCst), 6, "{stderr}");
    let records =
        compaction_eval::record::read_records(&out.join("results.jsonl")).expect("records");
    assert_eq!(records.len(), 18, "2 sims + 1 live × 6 units");
    let text = std::fs::read_to_string(out.join("calibration.json")).expect("calibration.json");
    let c: compaction_eval::report::calibration::Calibration =
        serde_json::from_str(&text).expect("parses");
    assert_eq!(c.pairs.len(), 2);
    for p in &c.pairs {
        assert_eq!((p.live.as_str(), p.cells), ("policy", 6));
        let ts = p
            .metrics
            .iter()
            .find(|m| m.metric == "task success")
            .expect("row");
        // The live column "yes" is empty: the policy never succeeds.
        assert_eq!(
            ts.confusion[0][1] + ts.confusion[1][1],
            0,
            "{:?}",
            ts.confusion
        );
        let sim_yes = ts.confusion[1][0];
        if sim_yes > 0 && sim_yes < 6 {
            assert_eq!(ts.kappa, Some(0.0), "{ts:?}");
        }
        assert!((ts.rate - (6 - sim_yes) as f64 / 6.0).abs() < 1e-12);
        let g = p.gate.as_ref().expect("C and A are both in the sample");
        assert_eq!(g.live_verdict, "not told apart");
        let r = p.ranking.as_ref().expect("three strategies");
        assert_eq!(r.strategies.len(), 3);
        assert!(r.live_rates.iter().all(|x| *x == 0.0));
    }
    assert!(stdout.contains("against policy: κ"), "{stdout}");
    let md = std::fs::read_to_string(out.join("calibration.md")).expect("calibration.md");
    assert!(md.contains("## sim:careful against policy"), "{md}");
    let report = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(
        report.contains(
            "How far the simulated verdicts hold for a live model: sim:careful against policy: κ"
        ),
        "{report}"
    );
    assert!(report.contains("calibration.md"));

    // Another run's report quotes it with --calibration; without, it says it is uncalibrated.
    let offline = tmp.path().join("offline");
    let o = common::cli()
        .args([
            "run",
            "--scenarios",
            "support-ticket-timeout",
            "--strategies",
            "A,C",
            "--scale",
            "base",
            "--out",
            offline.to_str().expect("utf-8"),
        ])
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report = std::fs::read_to_string(offline.join("report.md")).expect("report.md");
    assert!(report.contains("is uncalibrated"), "{report}");
    let cal = out.join("calibration.json");
    let o = common::cli()
        .args(["report", offline.to_str().expect("utf-8"), "--calibration"])
        .arg(&cal)
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report = std::fs::read_to_string(offline.join("report.md")).expect("report.md");
    assert!(report.contains("(calibration from "), "{report}");
    assert!(!report.contains("is uncalibrated"));

    // A file that is not a calibration: a clear error, and the report already written stays.
    let bogus = tmp.path().join("bogus.json");
    std::fs::write(&bogus, "{\"pairs\": 3}").expect("write");
    let o = common::cli()
        .args(["report", offline.to_str().expect("utf-8"), "--calibration"])
        .arg(&bogus)
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("bogus.json: not a calibration file"), "{err}");
    let again = std::fs::read_to_string(offline.join("report.md")).expect("report.md");
    assert_eq!(again, report, "the failed render changed nothing");
}

#[test]
fn the_dry_run_counts_and_sends_nothing_and_bad_input_is_named() {
    let (port, requests) = start();
    let tmp = tempfile::tempdir().expect("tmp");
    let out = tmp.path().join("dry");
    let (code, stdout, stderr) = calibrate(port, &out, &["--sample", "6", "--dry-run"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("6 units sampled"), "{stdout}");
    assert!(
        stdout.contains("12 cells on the simulated destinations"),
        "{stdout}"
    );
    assert!(stdout.contains("policy: 6 cells, about"), "{stdout}");
    assert_eq!(
        requests.load(Ordering::SeqCst),
        0,
        "a dry run sends nothing"
    );
    assert!(!out.exists(), "a dry run writes no run folder");

    let (code, _, stderr) = calibrate(port, &out, &["--sample", "600", "--dry-run"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--sample 600 is larger than the matrix: it has"),
        "{stderr}"
    );
    let (code, _, stderr) = calibrate(port, &out, &["--sample", "2", "--dry-run"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("smaller than one interrupt point's 3 strategies"),
        "{stderr}"
    );
    let o = common::cli()
        .args(["calibrate", "--live", "sim:literal", "--dry-run"])
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("`sim:literal` is a simulated one"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(requests.load(Ordering::SeqCst), 0);
}

/// The sampled units of a plan: (scenario, scale, point, strategy) per model-0 cell.
fn sampled(seed: u64, n: usize) -> Vec<(String, String, String, String)> {
    let cfg = compaction_eval::runner::RunConfig {
        sample: Some(n),
        seed,
        scales: vec![compaction_eval::scenario::volume::Scale::Base],
        strategies: vec!["A".into(), "C".into(), "none".into()],
        models: vec!["sim:careful".into(), "sim:literal".into()],
        ..Default::default()
    };
    let plan = compaction_eval::runner::plan(&cfg).expect("plan");
    (0..plan.cells.len())
        .filter_map(|i| plan.cells.id(i))
        .filter(|id| id.model == "sim:careful")
        .map(|id| (id.scenario, id.scale, id.interrupt, id.strategy))
        .collect()
}

#[test]
fn a_sample_runs_every_strategy_on_points_spread_over_scenarios_from_the_seed() {
    let a = sampled(7, 30);
    assert_eq!(a.len(), 30);
    assert_eq!(a, sampled(7, 30), "deterministic in the seed");
    assert_ne!(a, sampled(8, 30), "another seed, another sample");
    // Ten points, each with all three strategies; ten different scenarios (the suite has more
    // than ten, so none gives a second point before every other gave one).
    let mut points: std::collections::BTreeMap<(String, String), Vec<String>> = Default::default();
    for (s, _, p, st) in &a {
        points
            .entry((s.clone(), p.clone()))
            .or_default()
            .push(st.clone());
    }
    assert_eq!(points.len(), 10);
    assert!(
        points.values().all(|v| v == &["A", "C", "none"]),
        "{points:?}"
    );
    let scenarios: std::collections::BTreeSet<&String> = points.keys().map(|(s, _)| s).collect();
    assert_eq!(scenarios.len(), 10);
    // A sample that is not a multiple of the strategies is rounded down to whole points.
    assert_eq!(sampled(7, 31).len(), 30);
    // --sample and --limit both choose cells.
    let cfg = compaction_eval::runner::RunConfig {
        sample: Some(6),
        limit: Some(3),
        ..Default::default()
    };
    let err = compaction_eval::runner::plan(&cfg)
        .err()
        .expect("refused")
        .to_string();
    assert!(err.contains("--sample and --limit"), "{err}");
}
