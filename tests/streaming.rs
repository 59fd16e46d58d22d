//! A run that builds its points while its cells run (`plan_streaming`, what `run` does) gives
//! the records, continuity rows and governed documents of a plan built whole, whatever the
//! concurrency; resumed, it runs only the cells left and still writes every point's rows.

mod common;

use std::path::{Path, PathBuf};

use compaction_eval::runner::{self, RunConfig, Silent};
use compaction_eval::scenario::volume::Scale;

fn tmp() -> PathBuf {
    tempfile::tempdir().expect("tempdir").keep()
}

fn config(out: &Path, concurrency: usize) -> RunConfig {
    RunConfig {
        // Two scenarios of 4 points each: more points than the plan builds before the run.
        scenarios: Some(vec![
            "support-ticket-timeout".into(),
            "cloud-cost-rightsizing-freeze".into(),
        ]),
        strategies: vec!["C".into(), "A".into(), "gov:C".into()],
        reps: 2,
        concurrency,
        out: out.to_path_buf(),
        scales: vec![Scale::Base],
        ..RunConfig::default()
    }
}

fn run(cfg: &RunConfig, streaming: bool) -> usize {
    let scenarios = runner::select_scenarios(cfg).expect("scenarios");
    let plan = if streaming {
        runner::plan_streaming(cfg, scenarios).expect("plan")
    } else {
        runner::plan_with(cfg, scenarios).expect("plan")
    };
    assert!(
        plan.order.len() > runner::FAIL_FAST_AFTER,
        "some points are streamed"
    );
    runner::write_manifest(cfg, &plan).expect("manifest");
    let n = runner::execute(cfg, &plan, &mut Silent).expect("run");
    runner::check_complete(cfg, &plan).expect("complete");
    n
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn a_streamed_run_writes_what_a_plan_built_whole_writes() {
    let whole = tmp();
    let n = run(&config(&whole, 1), false);
    assert_eq!(
        n,
        8 * 3 * 2 * 2,
        "8 points × 3 strategies × 2 models × 2 repetitions"
    );
    for concurrency in [1, 3] {
        let streamed = tmp();
        assert_eq!(run(&config(&streamed, concurrency), true), n);
        assert!(
            common::records(&whole) == common::records(&streamed),
            "records differ at concurrency {concurrency}"
        );
        for f in ["continuity.jsonl", "manifest.json"] {
            let a = std::fs::read_to_string(whole.join(f)).expect("file");
            let b = std::fs::read_to_string(streamed.join(f)).expect("file");
            if f == "manifest.json" {
                // The manifest names its folder and concurrency: compare its matrix only.
                let a: serde_json::Value = serde_json::from_str(&a).expect("json");
                let b: serde_json::Value = serde_json::from_str(&b).expect("json");
                assert_eq!(a["interrupts"], b["interrupts"]);
                assert_eq!(a["cells"], b["cells"]);
            } else {
                assert_eq!(
                    a.lines().count(),
                    8 * 3,
                    "one continuity row per point × strategy"
                );
                assert!(a == b, "{f} differs at concurrency {concurrency}");
            }
        }
        for d in ["policies", "artifacts"] {
            assert!(!listing(&whole.join(d)).is_empty(), "gov:C writes {d}");
            assert_eq!(listing(&whole.join(d)), listing(&streamed.join(d)), "{d}");
        }
    }
}

#[test]
fn a_resumed_streamed_run_runs_the_cells_left_and_writes_every_points_rows() {
    let out = tmp();
    let cfg = config(&out, 2);
    let total = run(&cfg, true);
    let expected = common::records(&out);
    let continuity = std::fs::read_to_string(out.join("continuity.jsonl")).expect("rows");
    // Every record but the last point's 12: the streamed points before it have no cell left.
    let results = out.join("results.jsonl");
    let kept: String = std::fs::read_to_string(&results)
        .expect("results")
        .lines()
        .take(total - 12)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&results, kept).expect("cut");
    let resumed = RunConfig {
        resume: true,
        ..cfg.clone()
    };
    assert_eq!(run(&resumed, true), 12, "only the cells left run");
    assert!(
        common::records(&out) == expected,
        "the resumed folder holds the same records"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("continuity.jsonl")).expect("rows"),
        continuity,
        "every point's continuity rows, those of points with no cell left included"
    );
}

#[test]
fn a_pass_over_the_records_sees_what_reading_them_whole_gives_and_cells_match_by_digest() {
    let out = tmp();
    let cfg = config(&out, 2);
    run(&cfg, true);
    let results = out.join("results.jsonl");
    let whole = runner::read_records(&results).expect("records");
    let mut passed = Vec::new();
    compaction_eval::record::scan_records(&results, |line, r| {
        passed.push((line, r));
        Ok(())
    })
    .expect("pass");
    assert_eq!(passed.len(), whole.len());
    for (k, ((line, r), w)) in passed.iter().zip(&whole).enumerate() {
        assert_eq!(*line, k + 1, "line numbers count from 1");
        assert_eq!(r, w, "line {line}");
        // A record's digest is its id's; another cell's differs.
        assert_eq!(r.digest(), r.id().digest());
        assert!(r.same_cell(w));
        assert!(r.same_id(&w.id()));
    }
    let (a, b) = (&whole[0], &whole[1]);
    assert!(!a.same_cell(b));
    assert!(!a.same_id(&b.id()));
    assert_ne!(a.digest(), b.digest());
    let mut other = a.id();
    other.rep += 1;
    assert_ne!(
        other.digest(),
        a.digest(),
        "the repetition is part of the digest"
    );
    // A cell missing from the file is found missing by its digest.
    let kept: String = std::fs::read_to_string(&results)
        .expect("results")
        .lines()
        .skip(1)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&results, kept).expect("cut");
    let plan = runner::plan_streaming(&cfg, runner::select_scenarios(&cfg).expect("scenarios"))
        .expect("plan");
    let e = runner::check_complete(&cfg, &plan).expect_err("one cell is missing");
    assert!(
        e.to_string().contains(&format!("{}", whole.len() - 1)),
        "{e}"
    );
}
