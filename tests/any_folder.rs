//! The built binary works from any folder (issue 42): run from an empty temporary folder it reads
//! the scenarios and strategies shipped inside it (`embedded v<version>`), a `--scenario-dir` or a
//! local `strategies/` folder wins over them, the manifest and the report say which source each
//! came from, `scenarios export` / `strategies export` write the shipped files out, and a start
//! that fails leaves no folder behind.
//!
//! Each run is one cell (`--limit 1`): the whole matrix is still planned over every scenario, so
//! the manifest lists every scenario the run loaded.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn embedded() -> String {
    format!("embedded v{}", env!("CARGO_PKG_VERSION"))
}

/// The built binary, run in `dir` with nothing from the environment pointing at the repository;
/// copies of shipped files (a plug-in's folder) go to `cache`.
fn bin(dir: &Path, cache: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_compaction-eval"))
        .current_dir(dir)
        .env_remove("COMPACTION_EVAL_SCENARIOS")
        .env_remove("COMPACTION_EVAL_TAU_BENCH")
        .env_remove("RUST_BACKTRACE")
        .env("XDG_CACHE_HOME", cache)
        .args(args)
        .output()
        .expect("the binary runs")
}

fn ok(o: &Output) -> (String, String) {
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    assert!(o.status.success(), "{:?}\n{out}\n{err}", o.status);
    (out, err)
}

/// Every entry under `dir`, relative, sorted (what a command left behind).
fn tree(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).expect("readable").flatten() {
            let p = e.path();
            out.push(p.strip_prefix(root).unwrap().display().to_string());
            if p.is_dir() && !p.is_symlink() {
                walk(root, &p, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// The repository's scenario files (`NAME.yaml`) and their ids.
fn shipped_scenarios() -> Vec<(String, String)> {
    let dir = repo().join("scenarios");
    compaction_eval::scenario::scenario_files(&dir)
        .expect("scenario files")
        .into_iter()
        .map(|f| {
            let s = compaction_eval::scenario::load_file(&f).expect("loads");
            (f.file_name().unwrap().to_string_lossy().into_owned(), s.id)
        })
        .collect()
}

fn sha256(bytes: &[u8]) -> String {
    compaction_eval::world::sha256_digest(bytes)
}

fn manifest(run: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).expect("manifest"))
        .expect("json")
}

/// A run's first report line naming its sources.
fn sources_line(run: &Path) -> String {
    let md = std::fs::read_to_string(run.join("report.md")).expect("report.md");
    md.lines()
        .find(|l| l.starts_with("Scenarios from"))
        .unwrap_or_else(|| panic!("no sources line in report.md:\n{md}"))
        .to_string()
}

#[test]
fn the_default_run_from_an_empty_folder_reads_every_shipped_scenario_and_strategy() {
    let (work, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let shipped = shipped_scenarios();
    assert!(shipped.len() >= 30, "{} scenarios", shipped.len());

    // `scenarios list` sees every shipped scenario and writes nothing.
    let (list, _) = ok(&bin(work.path(), cache.path(), &["scenarios", "list"]));
    for (_, id) in &shipped {
        assert!(
            list.lines()
                .any(|l| l.split_whitespace().next() == Some(id)),
            "{id} is not listed:\n{list}"
        );
    }
    assert!(
        list.contains(&format!("\n{} scenarios in ", shipped.len())),
        "{list}"
    );
    assert!(tree(work.path()).is_empty(), "{:?}", tree(work.path()));

    // The default run, one cell of it.
    let (_, err) = ok(&bin(
        work.path(),
        cache.path(),
        &["run", "--limit", "1", "--no-cache"],
    ));
    let e = embedded();
    assert!(
        err.contains(&format!("scenarios: {e}; strategies: {e}")),
        "{err}"
    );
    let runs: Vec<PathBuf> = std::fs::read_dir(work.path().join("reports/runs"))
        .expect("reports/runs")
        .map(|d| d.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let run = &runs[0];
    let m = manifest(run);
    assert_eq!(m["config"]["scenario_dir"], e.as_str());
    assert_eq!(m["config"]["strategy_dir"], e.as_str());
    assert_eq!(m["sources"]["scenarios"], e.as_str());
    assert_eq!(m["sources"]["strategies"], e.as_str());
    // Every shipped scenario file, with the repository's bytes, and every scenario in the matrix.
    let digests = m["scenario_digests"].as_object().expect("digests");
    assert_eq!(digests.len(), shipped.len(), "{digests:?}");
    for (file, id) in &shipped {
        let bytes = std::fs::read(repo().join("scenarios").join(file)).unwrap();
        assert_eq!(digests[file], sha256(&bytes).as_str(), "{file}");
        assert!(m["domains"].get(id).is_some(), "{id} is not in the run");
    }
    // The strategy files are the repository's too.
    let strategy_digests = m["strategy_digests"].as_object().expect("digests");
    assert!(
        strategy_digests.contains_key("C.toml"),
        "{strategy_digests:?}"
    );
    for (file, digest) in strategy_digests {
        let bytes = std::fs::read(repo().join("strategies").join(file)).unwrap();
        assert_eq!(digest, sha256(&bytes).as_str(), "{file}");
    }
    assert_eq!(
        sources_line(run),
        format!("Scenarios from `{e}`; strategies from `{e}`.")
    );
    let html = std::fs::read_to_string(run.join("report.html")).expect("report.html");
    assert!(
        html.contains(&format!("Scenarios from {e}; strategies from {e}.")),
        "the HTML report names the sources"
    );
}

#[test]
fn a_scenario_flag_and_a_local_strategy_folder_win_over_the_shipped_files() {
    let (work, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let w = work.path();
    // The shipped files written out, byte for byte.
    let (said, _) = ok(&bin(w, cache.path(), &["scenarios", "export", "all"]));
    assert!(said.contains("to all"), "{said}");
    for (file, _) in shipped_scenarios() {
        assert_eq!(
            std::fs::read(w.join("all").join(&file)).unwrap(),
            std::fs::read(repo().join("scenarios").join(&file)).unwrap(),
            "{file}"
        );
    }
    ok(&bin(
        w,
        cache.path(),
        &["strategies", "export", "strategies"],
    ));
    for f in [
        "C.toml",
        "templates/checkpoint.md.j2",
        "examples/checkpoint.py",
    ] {
        assert_eq!(
            std::fs::read(w.join("strategies").join(f)).unwrap(),
            std::fs::read(repo().join("strategies").join(f)).unwrap(),
            "{f}"
        );
    }
    // Exported again: nothing to write; a file edited since is refused unless --force.
    let (again, _) = ok(&bin(
        w,
        cache.path(),
        &["strategies", "export", "strategies"],
    ));
    assert!(again.starts_with("wrote 0 of the"), "{again}");
    std::fs::write(w.join("all/support-ticket-timeout.yaml"), "edited").unwrap();
    let refused = bin(w, cache.path(), &["scenarios", "export", "all"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("support-ticket-timeout.yaml"));
    ok(&bin(
        w,
        cache.path(),
        &["scenarios", "export", "all", "--force"],
    ));

    // A strategy only the local folder has: the run can only find it there.
    std::fs::write(
        w.join("strategies/local-only.toml"),
        "id = \"local-only\"\nkind = \"checkpoint\"\nexcerpt_chars = 100\n",
    )
    .unwrap();
    let mine = w.join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::copy(
        w.join("all/support-ticket-timeout.yaml"),
        mine.join("support-ticket-timeout.yaml"),
    )
    .unwrap();
    let (_, err) = ok(&bin(
        w,
        cache.path(),
        &[
            "--scenario-dir",
            "mine",
            "run",
            "--limit",
            "1",
            "--no-cache",
            "--strategies",
            "local-only",
            "--out",
            "out",
        ],
    ));
    assert!(
        err.contains("scenarios: mine; strategies: strategies"),
        "{err}"
    );
    let m = manifest(&w.join("out"));
    assert_eq!(m["config"]["scenario_dir"], "mine");
    assert_eq!(m["config"]["strategy_dir"], "strategies");
    assert_eq!(m["sources"]["scenarios"], "folder");
    assert_eq!(m["sources"]["strategies"], "folder");
    let digests: Vec<&String> = m["scenario_digests"].as_object().unwrap().keys().collect();
    assert_eq!(digests, ["support-ticket-timeout.yaml"]);
    assert!(m["strategy_digests"].get("local-only.toml").is_some());
    assert_eq!(
        sources_line(&w.join("out")),
        "Scenarios from `mine`; strategies from `strategies`."
    );

    // A local `scenarios/` folder wins as well, without a flag.
    std::fs::rename(&mine, w.join("scenarios")).unwrap();
    let (list, _) = ok(&bin(w, cache.path(), &["scenarios", "list"]));
    assert!(list.contains("\n1 scenarios in 1 domains"), "{list}");
    assert!(list.contains("\nsupport-ticket-timeout "), "{list}");

    // Resumed with the shipped strategies (no local folder): refused, naming what the run read.
    std::fs::rename(w.join("strategies"), w.join("kept")).unwrap();
    let o = bin(
        w,
        cache.path(),
        &[
            "run",
            "--resume",
            "--no-cache",
            "--strategies",
            "C",
            "--out",
            "out",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("sources.strategies"), "{err}");
    assert!(
        err.contains("read its scenarios from `mine` and its strategies from `strategies`"),
        "{err}"
    );
}

#[test]
fn a_shipped_plugin_runs_from_an_empty_folder_in_a_private_copy() {
    let (work, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    ok(&bin(
        work.path(),
        cache.path(),
        &[
            "run",
            "--limit",
            "1",
            "--no-cache",
            "--strategies",
            "exec:shell-example",
            "--out",
            "out",
        ],
    ));
    let records = std::fs::read_to_string(work.path().join("out/results.jsonl")).unwrap();
    assert!(records.contains("\"status\":\"ok\""), "{records}");
    // The copy is in the cache folder, never in the working directory.
    let shipped = cache.path().join("compaction-eval/shipped");
    let copies: Vec<String> = std::fs::read_dir(&shipped)
        .expect("a copy was made")
        .map(|d| d.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(copies.len(), 1, "{copies:?}");
    assert!(copies[0].starts_with(&format!("strategies-v{}-", env!("CARGO_PKG_VERSION"))));
    assert_eq!(
        tree(work.path())
            .iter()
            .filter(|p| !p.starts_with("out"))
            .count(),
        0
    );
}

#[test]
fn a_start_that_fails_leaves_no_folder_behind() {
    let (work, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let w = work.path();
    let cases: &[&[&str]] = &[
        // The case: a scenario folder that does not exist, default run folder.
        &["--scenario-dir", "no-such-folder", "run", "--limit", "1"],
        // The same with a named, nested --out.
        &[
            "--scenario-dir",
            "no-such-folder",
            "run",
            "--out",
            "a/b/run",
        ],
        &["run", "--strategy-dir", "no-such-folder", "--limit", "1"],
        &["run", "--strategies", "no-such-strategy", "--limit", "1"],
        &["run", "--scenarios", "no-such-scenario", "--limit", "1"],
        &["run", "--interrupts", "no-such-point", "--limit", "1"],
    ];
    for args in cases {
        let o = bin(w, cache.path(), args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} started:\n{err}");
        assert!(err.contains("error:"), "{args:?}: {err}");
        assert!(!err.contains("writing reports/runs"), "{args:?}: {err}");
        assert!(tree(w).is_empty(), "{args:?} left {:?}", tree(w));
    }
}
