//! The chaos test (issue 28, item 8): a run killed with SIGKILL at seeded random moments, again
//! and again (while it plans, writes its manifest, runs cells, writes its reports), then
//! resumed to the end, must equal the same run uninterrupted: no cell lost, none twice, every
//! record and the continuity trace identical once timings are set aside, no lock or temporary
//! file left. Bounded: a small matrix and a fixed number of kills.

mod common;
use common::cli;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use compaction_eval::runner;

/// Deterministic draws (SplitMix64) from the test's seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

const KILLS: usize = 6;
const SEED: u64 = 0xc4a0_5eed;

fn args(scenarios: &Path, out: &Path) -> Vec<String> {
    [
        "--scenario-dir",
        &scenarios.display().to_string(),
        "run",
        "--scale",
        "base",
        "--strategies",
        "none,C,gov:C",
        "--models",
        "sim:careful",
        "--reps",
        "2",
        "--concurrency",
        "2",
        "--out",
        &out.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Records without their timings (the only fields a rerun may change).
fn normalised(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .expect("results")
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("a whole json line");
            v["metrics"]["first_action_ms"] = serde_json::Value::Null;
            v["metrics"]["completion_ms"] = serde_json::Value::Null;
            v
        })
        .collect()
}

#[test]
fn kill_9_at_seeded_moments_then_resume_equals_the_uninterrupted_run() {
    let root: PathBuf = tempfile::tempdir().expect("tmp").keep();
    let sc = root.join("sc");
    std::fs::create_dir_all(&sc).expect("dir");
    std::fs::copy(
        "scenarios/support-ticket-timeout.yaml",
        sc.join("support-ticket-timeout.yaml"),
    )
    .expect("copy");

    // The reference, uninterrupted; its length sets the window the kills are drawn from.
    let whole = root.join("whole");
    let t0 = Instant::now();
    cli().args(args(&sc, &whole)).assert().success();
    let span = t0.elapsed();

    let out = root.join("chaos");
    let bin = assert_cmd::cargo::cargo_bin("compaction-eval");
    let mut rng = Rng(SEED);
    let (mut landed, started) = (0usize, Instant::now());
    for _ in 0..KILLS {
        // A moment within an uninterrupted run's length: while it plans, writes its manifest,
        // runs cells or renders its report (a resumed run has less to do, so later kills may
        // come after it ended: those are counted apart).
        let at = Duration::from_micros(rng.next() % (span.as_micros().max(1) as u64));
        let mut child = std::process::Command::new(&bin)
            .args(args(&sc, &out))
            .arg("--resume")
            .env_remove("RUST_BACKTRACE")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(at);
        if child.try_wait().expect("wait").is_none() {
            landed += 1;
        }
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
    }
    cli()
        .args(args(&sc, &out))
        .arg("--resume")
        .assert()
        .success();
    eprintln!(
        "{KILLS} kills ({landed} landed while the run was going) and the resume took {:?}; an uninterrupted run takes {span:?}",
        started.elapsed()
    );
    assert!(landed > 0, "no kill landed while the run was going");

    let (got, want) = (
        normalised(&out.join("results.jsonl")),
        normalised(&whole.join("results.jsonl")),
    );
    let ids = |v: &[serde_json::Value]| -> std::collections::BTreeSet<String> {
        v.iter()
            .map(|r| {
                format!(
                    "{}|{}|{}|{}|{}|{}",
                    r["scenario"], r["scale"], r["interrupt"], r["strategy"], r["model"], r["rep"]
                )
            })
            .collect()
    };
    assert_eq!(ids(&got).len(), got.len(), "a cell is recorded twice");
    assert_eq!(ids(&got), ids(&want), "cells lost or foreign");
    assert_eq!(got, want, "the records differ from the uninterrupted run's");
    for name in ["continuity.jsonl", "summary.csv", "runs.csv"] {
        if name.ends_with(".csv") {
            // The tables carry timings; their rows must be there all the same.
            let lines = |d: &Path| {
                std::fs::read_to_string(d.join(name))
                    .expect("csv")
                    .lines()
                    .count()
            };
            assert_eq!(lines(&out), lines(&whole), "{name}");
        } else {
            assert_eq!(
                std::fs::read(out.join(name)).expect("out"),
                std::fs::read(whole.join(name)).expect("whole"),
                "{name}"
            );
        }
    }
    assert!(!out.join(runner::JOURNAL).exists());
    assert!(!out.join(runner::LOCK_FILE).exists());
    let left: Vec<String> = std::fs::read_dir(&out)
        .expect("list")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}
