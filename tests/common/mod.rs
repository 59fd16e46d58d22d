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

/// Continues `h` at `at` with a simulated destination at attention 0 (seed 7, at most 60
/// actions) and scores the run; returns the metrics and the destination, for its diagnostics.
pub fn continue_and_score(
    at: &compaction_eval::state::RestorePoint,
    h: &compaction_eval::handoff::Handoff,
    kind: compaction_eval::destination::SimKind,
) -> (
    compaction_eval::score::Metrics,
    compaction_eval::destination::SimAgent,
) {
    use compaction_eval::destination::{Continuation, SimAgent};
    use compaction_eval::score::{self, Run};
    let mut agent = SimAgent::new(kind, at.scenario.clone(), &at.interrupt, h, 7, 0.0);
    let mut c = Continuation::new(at, h);
    let steps = c.drive(&mut agent, 60);
    let finish = c.finish();
    let world = c.into_world();
    let run = Run {
        scenario: &at.scenario,
        interrupt: &at.interrupt,
        world: &world,
        finish,
        degraded: false,
        restore_tokens: 0,
        total_tokens: 0,
        first_action_ms: 0.0,
        completion_ms: 0.0,
        steps,
        step_budget_exhausted: finish.is_none(),
    };
    (score::score(&run, vec![], vec![]).0, agent)
}

/// The seed of [`scenario_sample`]: fixed, so every run of a test sees the same scenarios.
pub const SAMPLE_SEED: u64 = 20_261_202;

/// How many scenarios [`scenario_sample`] draws: the suite's size when these tests were written
/// (8), so their time does not grow with the suite.
pub const SAMPLE_SIZE: usize = 8;

/// A fixed, deterministic sample of the shipped scenarios, loaded and validated: 8 drawn by
/// [`SAMPLE_SEED`] that together cover every feature the suite has (injection, stale resource,
/// hypothesis, uncertain write, approval, mid-run stop; `scenario::coverage::covering_sample`).
/// For the tests whose cost grows with every scenario they iterate over; the whole suite is still
/// validated by `scenarios_cli` and checked for pseudo-replication by `suite_coverage`.
pub fn scenario_sample() -> Vec<compaction_eval::scenario::Scenario> {
    use compaction_eval::scenario;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let files = scenario::scenario_files(&dir).expect("scenario files");
    let parsed: Vec<scenario::Scenario> = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).expect("reads");
            scenario::parse_scenario(&text, f).expect("parses")
        })
        .collect();
    scenario::coverage::covering_sample(&parsed, SAMPLE_SIZE, SAMPLE_SEED)
        .into_iter()
        .map(|i| scenario::load_file(&files[i]).expect("a sampled scenario loads"))
        .collect()
}

/// Serves `app` on 127.0.0.1 (a free port) on its own thread and runtime, so a test that runs
/// the harness (which makes its own runtime) can talk to it; returns the port.
pub fn serve(app: axum::Router) -> u16 {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            tx.send(listener.local_addr().expect("addr").port())
                .expect("send port");
            axum::serve(listener, app).await.expect("serve");
        });
    });
    rx.recv().expect("port")
}

/// A run folder's records, each without its timings (the metrics ending in `_ms`: the one part
/// of a record that may differ between runs, or in its last digit when a record is read and
/// written again).
pub fn records(out: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(out.join("results.jsonl"))
        .expect("results")
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("record");
            if let Some(m) = v["metrics"].as_object_mut() {
                m.retain(|k, _| !k.ends_with("_ms"));
            }
            v
        })
        .collect()
}
