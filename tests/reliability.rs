//! One writer per run folder, merges that never overwrite another run, resumes that do not
//! depend on how a folder is spelled, and outputs that are whole or absent after a full disk
//! (issue 28, items 1, 2, 4 and 5).

mod common;
use common::cli;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use compaction_eval::exit;
use compaction_eval::runner;
use predicates::prelude::*;

fn tmp() -> PathBuf {
    tempfile::tempdir().expect("tempdir").keep()
}

/// A scenario folder holding only `support-ticket-timeout`, at `root/name`.
fn one_scenario(root: &Path, name: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::copy(
        "scenarios/support-ticket-timeout.yaml",
        dir.join("support-ticket-timeout.yaml"),
    )
    .expect("copy");
    dir
}

/// A small matrix: one scenario at its base scale, two points, C and A, one model.
fn small(scenarios: &Path, out: &Path) -> Vec<String> {
    [
        "--scenario-dir",
        &scenarios.display().to_string(),
        "run",
        "--scale",
        "base",
        "--interrupts",
        "uncertain_side_effect,after_exploration",
        "--strategies",
        "C,A",
        "--models",
        "sim:careful",
        "--reps",
        "2",
        "--out",
        &out.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Every file under `dir` (relative path → bytes).
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("list").filter_map(|e| e.ok()) {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).expect("inside").display().to_string();
                out.insert(rel, std::fs::read(&p).expect("read"));
            }
        }
    }
    out
}

#[test]
fn a_second_writer_is_refused_at_once_naming_the_holder_and_readers_wait_for_the_run() {
    let root = tmp();
    let sc = one_scenario(&root, "sc");
    let out = root.join("run");
    // This test process holds the folder, as a run in progress does.
    let held = runner::lock(&out, "run").expect("lock");
    let t0 = Instant::now();
    cli()
        .args(small(&sc, &out))
        .assert()
        .code(exit::BUSY)
        .stderr(
            predicate::str::contains(format!("pid {}", std::process::id()))
                .and(predicate::str::contains("another process is writing")),
        );
    eprintln!("second writer refused in {:?}", t0.elapsed());
    cli()
        .args(small(&sc, &out))
        .arg("--resume")
        .assert()
        .code(exit::BUSY);
    cli()
        .args(["merge"])
        .arg(&out)
        .arg(root.join("elsewhere"))
        .assert()
        .code(exit::BUSY);
    cli()
        .arg("report")
        .arg(&out)
        .assert()
        .code(exit::BUSY)
        .stderr(predicate::str::contains("in progress"));
    cli()
        .arg("gate")
        .arg(&out)
        .assert()
        .code(exit::gate::BUSY)
        .stderr(predicate::str::contains("in progress"));
    assert!(
        !out.join("gate.md").exists(),
        "a refused gate writes nothing"
    );
    // Told otherwise, a reader reads the folder as it is (here: no records yet).
    let code = cli()
        .args(["report", "--allow-incomplete"])
        .arg(&out)
        .output()
        .expect("report")
        .status
        .code();
    assert_ne!(code, Some(exit::BUSY));
    drop(held);

    // A lock file left by a killed writer (its text, no lock: the kernel released it) is taken
    // over, and a finished run leaves no lock file.
    std::fs::create_dir_all(&out).expect("dir");
    std::fs::write(
        out.join(runner::LOCK_FILE),
        "pid 1 on host gone (run, since then)\n",
    )
    .expect("stale");
    cli().args(small(&sc, &out)).assert().success();
    assert!(!out.join(runner::LOCK_FILE).exists());
    cli().arg("report").arg(&out).assert().success();
}

#[test]
fn two_real_runs_into_one_folder_one_is_refused_and_the_other_completes() {
    let root = tmp();
    let sc = one_scenario(&root, "sc");
    let out = root.join("run");
    let mut long = small(&sc, &out);
    // A run long enough to still be running when the second starts.
    let reps = long.iter().position(|a| a == "--reps").expect("reps") + 1;
    long[reps] = "20".into();
    let bin = assert_cmd::cargo::cargo_bin("compaction-eval");
    let mut first = std::process::Command::new(&bin)
        .args(&long)
        .args(["--seed", "1"])
        .env_remove("RUST_BACKTRACE")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !out.join(runner::JOURNAL).exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let second = std::process::Command::new(&bin)
        .args(small(&sc, &out))
        .args(["--seed", "2"])
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("second");
    let still_running = first.try_wait().expect("wait").is_none();
    assert_eq!(second.status.code(), Some(exit::BUSY));
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains(&format!("pid {}", first.id())), "{err}");
    assert!(
        still_running,
        "the first run ended before the second was refused"
    );
    assert_eq!(first.wait().expect("first").code(), Some(0));
    let recs = runner::read_records(&out.join("results.jsonl")).expect("records");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).expect("m"))
            .expect("json");
    assert_eq!(manifest["seed"], 1, "the folder is the first run's");
    assert_eq!(
        recs.len() as u64,
        manifest["cells"].as_u64().expect("cells")
    );
    assert!(
        recs.iter().any(|r| r.rep == 19),
        "the records are the first run's (20 repetitions)"
    );
}

#[test]
fn merge_refuses_another_run_replaces_it_only_when_forced_and_is_idempotent() {
    let root = tmp();
    let sc = one_scenario(&root, "sc");
    let args = |out: &Path| {
        let mut a = small(&sc, out);
        let st = a.iter().position(|x| x == "--strategies").expect("s") + 1;
        // A governed strategy, so the shards have artifacts/ and policies/.
        a[st] = "C,gov:C".into();
        a
    };
    let shards: Vec<PathBuf> = (1..=2).map(|k| root.join(format!("shard-{k}"))).collect();
    for (k, d) in shards.iter().enumerate() {
        cli()
            .args(args(d))
            .args(["--shard", &format!("{}/2", k + 1)])
            .assert()
            .success();
    }
    // A folder holding another run (another seed), with a journal and governed files of its own.
    let other = root.join("other");
    cli()
        .args(args(&other))
        .args(["--seed", "99"])
        .assert()
        .success();
    std::fs::write(other.join(runner::JOURNAL), "{}\n").expect("journal");
    std::fs::create_dir_all(other.join("artifacts")).expect("artifacts");
    std::fs::write(other.join("artifacts/stale"), "old").expect("stale artifact");
    std::fs::create_dir_all(other.join("policies")).expect("policies");
    std::fs::write(other.join("policies/stale.json"), "{}").expect("stale policy");
    let before = files(&other);
    cli()
        .arg("merge")
        .arg(&other)
        .args(&shards)
        .assert()
        .code(exit::USAGE)
        .stderr(
            predicate::str::contains("holds another run")
                .and(predicate::str::contains("config.seed"))
                .and(predicate::str::contains("--force")),
        );
    assert_eq!(files(&other), before, "a refused merge changes nothing");
    // A folder that holds files but no run is refused too.
    let notes = root.join("notes");
    std::fs::create_dir_all(&notes).expect("dir");
    std::fs::write(notes.join("todo.txt"), "mine").expect("w");
    cli()
        .arg("merge")
        .arg(&notes)
        .args(&shards)
        .assert()
        .code(exit::USAGE)
        .stderr(predicate::str::contains("holds no run"));

    cli()
        .arg("merge")
        .arg(&other)
        .args(&shards)
        .arg("--force")
        .assert()
        .success();
    assert!(!other.join(runner::JOURNAL).exists());
    assert!(!other.join("artifacts/stale").exists());
    assert!(!other.join("policies/stale.json").exists());
    let governed = |d: &Path, sub: &str| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d.join(sub))
            .map(|r| {
                r.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v.dedup();
        v
    };
    for sub in ["artifacts", "policies"] {
        let mut union: Vec<String> = shards.iter().flat_map(|s| governed(s, sub)).collect();
        union.sort();
        union.dedup();
        assert!(!union.is_empty(), "the shards have {sub}");
        assert_eq!(governed(&other, sub), union, "{sub}");
    }
    let recs = runner::read_records(&other.join("results.jsonl")).expect("records");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(other.join("manifest.json")).expect("m"))
            .expect("json");
    assert_eq!(
        recs.len() as u64,
        manifest["cells"].as_u64().expect("cells")
    );
    assert_ne!(manifest["seed"], 99);

    // The same merge again: allowed without --force, and every file is the same.
    let merged = files(&other);
    cli()
        .arg("merge")
        .arg(&other)
        .args(&shards)
        .assert()
        .success();
    assert_eq!(files(&other), merged);
}

#[test]
fn resume_by_content_from_another_spelling_and_a_no_op_resume_changes_no_byte() {
    let root = tmp();
    one_scenario(&root, "sc");
    let abs = root.join("sc");
    let out = root.join("run");
    // The strategy folder beside them, so relative spellings reach it too.
    let strategies = root.join("strategies");
    std::fs::create_dir_all(strategies.join("templates")).expect("dir");
    for sub in ["", "templates"] {
        for e in std::fs::read_dir(Path::new("strategies").join(sub)).expect("list") {
            let p = e.expect("entry").path();
            if p.is_file() {
                std::fs::copy(&p, strategies.join(sub).join(p.file_name().expect("name")))
                    .expect("copy");
            }
        }
    }
    // First run: absolute paths, six cells of the matrix.
    cli()
        .args(small(&abs, &out))
        .args(["--limit", "6", "--strategy-dir"])
        .arg(&strategies)
        .assert()
        .success();
    let cells = |d: &Path| -> usize {
        let m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("manifest.json")).expect("m"))
                .expect("json");
        m["cells"].as_u64().expect("cells") as usize
    };
    // Resumed from the folder above, with relative spellings (`./sc`, `run`, the default
    // `strategies`), no limit.
    let mut rel = small(Path::new("./sc"), Path::new("run"));
    rel.push("--resume".into());
    cli()
        .current_dir(&root)
        .args(&rel)
        .assert()
        .success()
        .stderr(predicate::str::contains("resuming: 6 cells already done"));
    assert_eq!(
        runner::read_records(&out.join("results.jsonl"))
            .expect("records")
            .len(),
        cells(&out)
    );
    assert!(cells(&out) > 6);
    // From yet another working directory, spelled `sc` through a `..`: nothing left to do, and
    // no file of the folder changes.
    let before = files(&out);
    let elsewhere = root.join("jobs");
    std::fs::create_dir_all(&elsewhere).expect("dir");
    // The parent folder of `jobs`, spelled as a relative path.
    let up = Path::new("..");
    let mut again = small(&up.join("sc"), &up.join("run"));
    again.extend(["--resume".to_string(), "--strategy-dir".to_string()]);
    again.push(up.join("strategies").display().to_string());
    cli()
        .current_dir(&elsewhere)
        .args(&again)
        .assert()
        .success();
    let after = files(&out);
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    for (name, bytes) in &before {
        assert!(
            after[name] == *bytes,
            "{name} changed on a resume with nothing to do"
        );
    }
    // An edited scenario is still another run, however it is spelled.
    let file = abs.join("support-ticket-timeout.yaml");
    let text = std::fs::read_to_string(&file).expect("read");
    std::fs::write(&file, format!("{text}\n# edited\n")).expect("edit");
    cli()
        .current_dir(&root)
        .args(&rel)
        .assert()
        .code(exit::USAGE)
        .stderr(predicate::str::contains(
            "scenario_digests.support-ticket-timeout.yaml",
        ));
}

#[test]
fn a_full_disk_leaves_every_output_whole_or_absent_and_a_rerun_heals() {
    let root = tmp();
    let sc = one_scenario(&root, "sc");
    let out = root.join("run");
    cli().args(small(&sc, &out)).assert().success();
    let complete = files(&out);
    let outputs: Vec<String> = complete
        .keys()
        .filter(|k| {
            !matches!(
                k.as_str(),
                "results.jsonl"
                    | "manifest.json"
                    | "continuity.jsonl"
                    // The run's own records of each cell's exchange (the viewer reads them).
                    | "conversations.jsonl.gz"
                    | "handoffs.jsonl.gz"
            )
        })
        .cloned()
        .collect();
    assert!(outputs.iter().any(|k| k == "report.html"), "{outputs:?}");
    let total: usize = outputs.iter().map(|k| complete[k].len()).sum();
    // Each budget runs out in the middle of some file.
    for budget in [total / 5, total / 2, total - 1] {
        for k in &outputs {
            let _ = std::fs::remove_file(out.join(k));
        }
        cli()
            .env(
                compaction_eval::durable::TEST_DISK_BYTES,
                budget.to_string(),
            )
            .arg("report")
            .arg(&out)
            .assert()
            .code(exit::IO)
            .stderr(predicate::str::contains("No space left on device"));
        let now = files(&out);
        let mut absent = 0;
        for (name, bytes) in &now {
            assert!(
                !name.rsplit('/').next().unwrap_or_default().starts_with('.'),
                "a temporary file was left: {name}"
            );
            assert!(
                complete.get(name) == Some(bytes),
                "{name} is not whole after a full disk (budget {budget})"
            );
        }
        for k in &outputs {
            absent += usize::from(!now.contains_key(k));
        }
        assert!(absent > 0, "the budget {budget} ran out somewhere");
        // The disk has room again: a rerun heals.
        cli().arg("report").arg(&out).assert().success();
        assert_eq!(files(&out), complete);
    }
}
