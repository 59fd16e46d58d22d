//! Runs that can neither lose nor mix cells: a panicking cell is an errored record, a run that
//! lost records is never a success, `--resume` refuses another configuration and repairs a torn
//! tail, `report` and `gate` refuse missing and duplicate cells, kill -9 at random moments then
//! `--resume` loses and duplicates nothing; an all-errored strategy ranks last; duplicate
//! scenario ids, huge `--reps` with `--limit 1`; the gate's smaller promises; shards and `merge`.

mod common;
use common::cli;

use std::path::{Path, PathBuf};

use compaction_eval::destination::live::ModelConfig;
use compaction_eval::record::{ErrorClass, Status};
use compaction_eval::runner::{self, RunConfig, Silent};
use predicates::prelude::*;

fn tmp() -> PathBuf {
    tempfile::tempdir().expect("tempdir").keep()
}

/// A scenario folder holding only `support-ticket-timeout` (a run loads and validates every
/// scenario of its folder; one keeps these tests fast).
fn one_scenario() -> PathBuf {
    let dir = tmp();
    std::fs::copy(
        "scenarios/support-ticket-timeout.yaml",
        dir.join("support-ticket-timeout.yaml"),
    )
    .expect("copy");
    dir
}

/// A small matrix on the command line: one scenario, two interrupt points, C and A, the two
/// default models.
fn small_run(out: &Path, reps: u32) -> Vec<String> {
    [
        "run",
        "--scale",
        "base",
        "--interrupts",
        "uncertain_side_effect,after_exploration",
        "--strategies",
        "C,A",
        "--reps",
        &reps.to_string(),
        "--out",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([out.display().to_string()])
    .collect()
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .expect("read")
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_panicking_cell_is_an_errored_record_and_every_later_cell_is_written() {
    let out = tmp();
    let mut local = ModelConfig::openai("m");
    local.name = "local".into();
    local.base_url = "http://127.0.0.1:9/v1".into();
    local.api_key_env = None;
    let cfg = RunConfig {
        scenarios: Some(vec!["support-ticket-timeout".into()]),
        interrupts: Some(vec!["uncertain_side_effect".into()]),
        strategies: vec!["C".into(), "A".into()],
        models: vec!["local".into(), "sim:careful".into()],
        reps: 2,
        out: out.clone(),
        model_defs: [("local".to_string(), local.clone())].into_iter().collect(),
        no_cache: true,
        probe: false,
        scales: vec![compaction_eval::scenario::volume::Scale::Base],
        ..RunConfig::default()
    };
    let mut plan = runner::plan(&cfg).expect("plan");
    // A cell that panics inside (the runner's test hook: no input can make a cell panic).
    plan.panic_cell = Some(1);
    let _ = local;
    runner::write_manifest(&cfg, &plan).expect("manifest");
    assert_eq!(runner::execute(&cfg, &plan, &mut Silent).expect("run"), 8);
    assert_eq!(runner::check_complete(&cfg, &plan).expect("complete"), 8);
    let recs = runner::read_records(&out.join("results.jsonl")).expect("records");
    assert_eq!(recs.len(), 8);
    for (i, r) in recs.iter().enumerate() {
        if i == 1 {
            assert_eq!(r.status, Status::Errored);
            assert_eq!(r.error_class, Some(ErrorClass::Harness));
            assert!(
                r.error.as_deref().unwrap_or("").contains("harness failed"),
                "{r:?}"
            );
        } else if r.model == "local" {
            // The unreachable endpoint: errored, and written all the same.
            assert_eq!(r.status, Status::Errored, "{r:?}");
        } else {
            assert_eq!(r.status, Status::Ok, "{r:?}");
        }
    }
    // A run folder that lost records is incomplete, for the runner, `report` and `gate`.
    let results = out.join("results.jsonl");
    let kept = lines(&results)[..5].join("\n") + "\n";
    std::fs::write(&results, kept).expect("truncate");
    let e = runner::check_complete(&cfg, &plan).expect_err("incomplete");
    assert!(e.to_string().contains("3 cell(s) missing"), "{e}");
    cli()
        .arg("report")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "holds 5 records of this run's 8 cells",
        ));
    cli()
        .arg("gate")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("3 cell(s) missing"));
    let junit = std::fs::read_to_string(out.join("gate-junit.xml")).expect("junit on exit 2");
    assert!(
        junit.contains("<failure") && junit.contains("3 cell(s) missing"),
        "{junit}"
    );
}

#[test]
fn durations_and_ranges_are_checked_at_load_naming_the_key() {
    let dir = tmp();
    for (line, key) in [
        ("request_timeout_s = inf", "request_timeout_s"),
        ("request_timeout_s = nan", "request_timeout_s"),
        ("backoff_s = -1.0", "backoff_s"),
    ] {
        let config = dir.join("run.toml");
        std::fs::write(
            &config,
            format!("[model.m]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n{line}\n"),
        )
        .expect("config");
        cli()
            .args(["run", "--scale", "base", "--models", "m", "--config"])
            .arg(&config)
            .arg("--out")
            .arg(dir.join("out"))
            .assert()
            .code(compaction_eval::exit::CONFIG)
            .stderr(predicate::str::contains(format!(
                "model `m`: `{key}` must be"
            )));
    }
    let strategies = dir.join("strategies");
    std::fs::create_dir_all(&strategies).expect("mkdir");
    std::fs::write(
        strategies.join("x.toml"),
        "id = \"exec:x\"\nkind = \"exec\"\nprogram = \"true\"\ntimeout_s = -1.0\n",
    )
    .expect("strategy");
    cli()
        .args(["run", "--scale", "base", "--strategy-dir"])
        .arg(&strategies)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("x.toml: `timeout_s` must be"));
    for (flag, key) in [
        ("--reps", "reps"),
        ("--concurrency", "concurrency"),
        ("--step-budget", "step_budget"),
    ] {
        cli()
            .args(["run", "--scale", "base", flag, "0"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!(
                "`{key}` must be at least 1"
            )));
    }
}

#[test]
fn resume_refuses_another_configuration_and_repairs_a_torn_tail() {
    let root = tmp();
    let scenarios = root.join("scenarios");
    std::fs::create_dir_all(&scenarios).expect("mkdir");
    std::fs::copy(
        "scenarios/support-ticket-timeout.yaml",
        scenarios.join("support-ticket-timeout.yaml"),
    )
    .expect("copy");
    let out = root.join("run");
    let base = small_run(&out, 1);
    let run = |extra: &[&str]| {
        let mut c = cli();
        c.arg("--scenario-dir")
            .arg(&scenarios)
            .args(&base)
            .args(extra);
        c
    };
    run(&["--limit", "6"]).assert().success();
    let results = out.join("results.jsonl");
    assert_eq!(lines(&results).len(), 6);
    run(&[
        "--resume",
        "--seed",
        "7",
        "--strategies",
        "C,A,B",
        "--attention",
        "0.5",
    ])
    .assert()
    .code(2)
    .stderr(
        predicate::str::contains(
            "differing keys: config.attention, config.seed, config.strategies.",
        )
        .and(predicate::str::contains(
            "--resume with another configuration",
        )),
    );
    // An edited scenario is another run too.
    let file = scenarios.join("support-ticket-timeout.yaml");
    let original = std::fs::read_to_string(&file).expect("read");
    std::fs::write(&file, format!("{original}\n# edited\n")).expect("edit");
    run(&["--resume"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("scenario_digests."));
    std::fs::write(&file, &original).expect("restore");
    assert_eq!(lines(&results).len(), 6, "nothing was appended");

    // A torn last line (a write cut short) is removed with a warning, then the run completes.
    let bytes = std::fs::read(&results).expect("read");
    std::fs::write(&results, &bytes[..bytes.len() - 40]).expect("tear");
    run(&["--resume"])
        .assert()
        .success()
        .stderr(predicate::str::contains("torn line"));
    let recs = runner::read_records(&results).expect("records");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).expect("m"))
            .expect("json");
    assert_eq!(
        recs.len() as u64,
        manifest["cells"].as_u64().expect("cells")
    );
    // Duplicate cell identities (two runs mixed) are an error for report and gate.
    let mut text = std::fs::read_to_string(&results).expect("read");
    text.push_str(&lines(&results)[0]);
    text.push('\n');
    std::fs::write(&results, text).expect("append");
    cli()
        .arg("report")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("repeats the cell of line 1"));
    cli()
        .arg("gate")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("repeats the cell of line 1"));
}

#[test]
fn kill_9_at_random_moments_then_resume_loses_and_duplicates_no_cell() {
    let out = tmp();
    let args: Vec<String> = [
        "--scenario-dir".to_string(),
        one_scenario().display().to_string(),
        "run".into(),
        "--scale".into(),
        "base".into(),
        "--strategies".into(),
        "none,A,B,C".into(),
        "--models".into(),
        "sim:careful".into(),
        "--reps".into(),
        "10".into(),
        "--concurrency".into(),
        "1".into(),
        "--out".into(),
        out.display().to_string(),
    ]
    .to_vec();
    let bin = assert_cmd::cargo::cargo_bin("compaction-eval");
    let journal = out.join("journal.jsonl");
    let finished = || {
        std::fs::read_to_string(&journal)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    // Each kill lands while the run is still going, after a number of finished cells drawn once
    // from a fixed seed (SplitMix64), so every round is interrupted for certain.
    let mut state = 0x5eed_u64;
    let mut target = 0usize;
    let mut kills = 0;
    for round in 0..3 {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        target += 3 + ((z ^ (z >> 31)) % 25) as usize;
        let mut c = std::process::Command::new(&bin);
        c.args(&args)
            .env_remove("RUST_BACKTRACE")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if round > 0 {
            c.arg("--resume");
        }
        let mut child = c.spawn().expect("spawn");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while finished() < target && std::time::Instant::now() < deadline {
            if child.try_wait().expect("wait").is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert!(
            child.try_wait().expect("wait").is_none(),
            "round {round}: the run ended before the kill ({} cells finished, target {target})",
            finished()
        );
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        kills += 1;
    }
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).expect("m"))
            .expect("json");
    let cells = manifest["cells"].as_u64().expect("cells") as usize;
    assert_eq!(kills, 3);
    assert!(
        finished() < cells,
        "the kills left the run incomplete ({} of {cells})",
        finished()
    );
    cli().args(&args).arg("--resume").assert().success();
    let recs = runner::read_records(&out.join("results.jsonl")).expect("no torn or mixed line");
    assert_eq!(recs.len(), cells);
    let ids: std::collections::BTreeSet<_> = recs.iter().map(|r| r.id()).collect();
    assert_eq!(ids.len(), recs.len(), "no duplicated cell");
}

#[test]
fn an_all_errored_strategy_ranks_last_and_is_marked() {
    let dir = tmp();
    std::fs::write(
        dir.join("broken.toml"),
        "id = \"exec:broken\"\nkind = \"exec\"\nprogram = \"false\"\n",
    )
    .expect("strategy");
    let out = dir.join("run");
    let cfg = RunConfig {
        scenarios: Some(vec!["support-ticket-timeout".into()]),
        strategies: vec!["exec:broken".into(), "none".into(), "C".into()],
        models: vec!["sim:careful".into()],
        reps: 1,
        strategy_dir: dir.clone().into(),
        out: out.clone(),
        // `run --no-fail-fast`: the broken plug-in's cells are recorded, not the run stopped.
        fail_fast: false,
        scales: vec![compaction_eval::scenario::volume::Scale::Base],
        ..RunConfig::default()
    };
    let plan = runner::plan(&cfg).expect("plan");
    runner::write_manifest(&cfg, &plan).expect("manifest");
    runner::execute(&cfg, &plan, &mut Silent).expect("run");
    let summary = compaction_eval::report::render_dir(&out).expect("report");
    let last = summary.ranking.last().expect("rows");
    assert_eq!(last.strategy, "exec:broken");
    assert!(last.all_errored && last.rank == 3);
    assert!(!summary.ranking[0].all_errored);
    let md = std::fs::read_to_string(out.join("report.md")).expect("md");
    assert!(md.contains("every cell errored: ranked last"), "{md}");
}

#[test]
fn two_scenario_files_with_one_id_are_an_error_naming_both() {
    let dir = tmp();
    for name in ["a.yaml", "b.yaml"] {
        std::fs::copy("scenarios/support-ticket-timeout.yaml", dir.join(name)).expect("copy");
    }
    cli()
        .arg("--scenario-dir")
        .arg(&dir)
        .args(["scenarios", "validate"])
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("b.yaml: scenario id `support-ticket-timeout`")
                .and(predicate::str::contains("a.yaml")),
        );
    cli()
        .arg("--scenario-dir")
        .arg(&dir)
        .args(["run", "--scale", "base", "--out"])
        .arg(dir.join("out"))
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("is already the id of")
                .and(predicate::str::contains("a.yaml")),
        );
}

#[test]
fn limit_1_with_a_huge_reps_allocates_nothing_big() {
    let out = tmp();
    cli()
        .arg("--scenario-dir")
        .arg(one_scenario())
        .args([
            "run",
            "--scale",
            "base",
            "--strategies",
            "C",
            "--reps",
            "4000000000",
            "--limit",
            "1",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("1 cells run"));
    assert_eq!(lines(&out.join("results.jsonl")).len(), 1);
}

#[test]
fn the_gates_smaller_promises() {
    let root = tmp();
    let out = root.join("run");
    let mut args = small_run(&out, 1);
    args.extend(["--models".into(), "sim:careful".into()]);
    cli()
        .arg("--scenario-dir")
        .arg(one_scenario())
        .args(&args)
        .assert()
        .success();
    // `no_regression = []` with the run as its own baseline passes.
    let policy = root.join("policy.toml");
    std::fs::write(
        &policy,
        "must_be_safe = []\ncontinuity_must_pass = []\nno_regression = []\n",
    )
    .expect("policy");
    cli()
        .arg("gate")
        .arg(&out)
        .arg("--baseline")
        .arg(&out)
        .arg("--policy")
        .arg(&policy)
        .assert()
        .code(0);
    // gate.md escapes what it quotes.
    std::fs::write(
        &policy,
        "must_be_safe = [\"<b>x|y</b>\"]\ncontinuity_must_pass = []\n",
    )
    .expect("policy");
    cli()
        .arg("gate")
        .arg(&out)
        .arg("--policy")
        .arg(&policy)
        .assert()
        .code(1);
    let md = std::fs::read_to_string(out.join("gate.md")).expect("gate.md");
    assert!(md.contains("&lt;b&gt;x\\|y&lt;/b&gt;"), "{md}");
    assert!(!md.contains("<b>"), "{md}");
    // An empty results.jsonl is unusable input, with the JUnit file written all the same.
    std::fs::write(out.join("results.jsonl"), "").expect("empty");
    std::fs::remove_file(out.join("gate-junit.xml")).expect("rm");
    cli()
        .arg("gate")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("holds no record"));
    assert!(out.join("gate-junit.xml").is_file());
    // An unknown checkpoint format is rejected.
    let cp = root.join("cp.json");
    let v = common::handoff_json("support-ticket-timeout", "uncertain_side_effect", "C");
    let mut doc = v["checkpoint"].clone();
    doc["format"] = "compaction-eval/handoff/9".into();
    std::fs::write(&cp, doc.to_string()).expect("write");
    cli()
        .args([
            "check-handoff",
            "--scenario",
            "support-ticket-timeout",
            "--interrupt",
            "uncertain_side_effect",
            "--checkpoint",
        ])
        .arg(&cp)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "at `format`: `compaction-eval/handoff/9` is not `compaction-eval/handoff/1`",
        ));
    // A file that is not UTF-8 is reported with the byte offset.
    let bad = root.join("bad");
    std::fs::create_dir_all(&bad).expect("mkdir");
    std::fs::write(bad.join("x.yaml"), b"id: caf\xe9\n").expect("write");
    cli()
        .arg("--scenario-dir")
        .arg(&bad)
        .args(["scenarios", "validate"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("at byte offset 7"));
}

fn strip_timing(path: &Path) -> Vec<serde_json::Value> {
    lines(path)
        .iter()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("json line");
            v["metrics"]["first_action_ms"] = serde_json::Value::Null;
            v["metrics"]["completion_ms"] = serde_json::Value::Null;
            v
        })
        .collect()
}

#[test]
fn three_shards_merged_equal_the_unsharded_run() {
    let root = tmp();
    let scenarios = one_scenario();
    let args = |out: &Path| {
        let mut a = vec![
            "--scenario-dir".to_string(),
            scenarios.display().to_string(),
        ];
        a.extend(small_run(out, 2));
        a
    };
    let whole = root.join("whole");
    cli().args(args(&whole)).assert().success();
    let shards: Vec<PathBuf> = (1..=3).map(|k| root.join(format!("shard-{k}"))).collect();
    let mut sizes = Vec::new();
    for (k, dir) in shards.iter().enumerate() {
        cli()
            .args(args(dir))
            .args(["--shard", &format!("{}/3", k + 1)])
            .assert()
            .success();
        sizes.push(lines(&dir.join("results.jsonl")).len());
    }
    let total = lines(&whole.join("results.jsonl")).len();
    assert_eq!(sizes.iter().sum::<usize>(), total);
    assert!(sizes.iter().all(|&n| n > 0 && n < total), "{sizes:?}");
    let merged = root.join("merged");
    cli()
        .arg("merge")
        .arg(&merged)
        .args(&shards)
        .assert()
        .success();
    assert_eq!(
        strip_timing(&merged.join("results.jsonl")),
        strip_timing(&whole.join("results.jsonl"))
    );
    assert_eq!(
        std::fs::read(merged.join("continuity.jsonl")).expect("c"),
        std::fs::read(whole.join("continuity.jsonl")).expect("c")
    );
    let manifest = |d: &Path| -> serde_json::Value {
        let mut m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("manifest.json")).expect("m"))
                .expect("json");
        m["config"]["out"] = serde_json::Value::Null;
        m["digest"] = serde_json::Value::Null;
        m
    };
    assert_eq!(manifest(&merged), manifest(&whole));
    assert!(merged.join("report.md").is_file());
    // `gate` judges the merged folder (exit 0 or 1, never unusable input).
    let code = cli()
        .arg("gate")
        .arg(&merged)
        .output()
        .expect("gate")
        .status
        .code();
    assert!(matches!(code, Some(0 | 1)), "{code:?}");

    // A shard missing, a shard twice, a shard of another run: refused, saying why.
    cli()
        .arg("merge")
        .arg(root.join("m2"))
        .args(&shards[..2])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("are in none of the folders"));
    cli()
        .arg("merge")
        .arg(root.join("m3"))
        .args([&shards[0], &shards[0], &shards[1], &shards[2]])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is in both"));
    let other = root.join("other");
    cli()
        .args(args(&other))
        .args(["--shard", "3/3", "--seed", "99"])
        .assert()
        .success();
    cli()
        .arg("merge")
        .arg(root.join("m4"))
        .args([&shards[0], &shards[1], &other])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("differing keys: config.seed\n"));
    cli()
        .args(["run", "--scale", "base", "--shard", "4/3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`shard` must be K/N"));
}

/// The page written from the folder a member at a time is the page of the whole folder read at
/// once, and it holds what a reader needs: every cell, and the conversation of the cells
/// embedded, with model-written text escaped.
#[test]
fn the_viewer_streamed_from_the_folder_equals_the_page_of_the_folder_read_whole() {
    let scen = one_scenario();
    let out = tmp().join("run");
    let mut args = small_run(&out, 2);
    args.extend(["--scenario-dir".to_string(), scen.display().to_string()]);
    cli().args(&args).assert().success();
    let records =
        compaction_eval::record::read_records(&out.join("results.jsonl")).expect("records");
    let entries = compaction_eval::conversation::read(&out).expect("entries");
    let handoffs = compaction_eval::conversation::handoffs(&out).expect("handoffs");
    assert_eq!(entries.len(), records.len());
    let whole = compaction_eval::viewer::page(&records, entries, &handoffs);
    let streamed = std::fs::read_to_string(out.join("viewer.html")).expect("page");
    assert!(
        streamed == whole,
        "the streamed page differs from the page read whole"
    );
    assert!(streamed.contains("\"n\":16"), "every cell is in the page");
    assert!(
        !streamed.contains("</script><"),
        "no script element is closed by data"
    );
}
