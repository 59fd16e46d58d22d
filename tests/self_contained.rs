//! A fresh clone is self-contained: no source file, test, README, doc, recipe or CI script names a
//! path outside the repository, so `cargo test --all-targets` and README's commands work in a
//! folder with nothing beside it.
//!
//! How it reads the files (text only): every path-like token that climbs with `../` is resolved —
//! from the file's own folder for Markdown (where links are relative to the page), from the
//! repository root for everything else (commands run there; code joins onto
//! `CARGO_MANIFEST_DIR`) — and fails when it leaves the repository; absolute paths into
//! home or workspace folders (`/home/`, `/root/`, `/Users/`, `/work/`) fail anywhere. Limits: a
//! path assembled at run time from pieces is not seen.

use std::path::{Component, Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The files whose text must not point outside the repository.
fn checked_files() -> Vec<PathBuf> {
    let root = root();
    let mut out = Vec::new();
    for top in ["src", "tests", "docs", ".ci"] {
        collect(&root.join(top), &mut out);
    }
    for f in ["README.md", "justfile", "DESIGN.md", "Cargo.toml"] {
        let p = root.join(f);
        if p.is_file() {
            out.push(p);
        }
    }
    out
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            // Fixtures are data written by others (transcripts, corpora); they are read, never run.
            if p.file_name()
                .is_some_and(|n| n == "fixtures" || n == "snapshots")
            {
                continue;
            }
            collect(&p, out);
        } else if is_text_kind(&p) {
            out.push(p);
        }
    }
}

fn is_text_kind(p: &Path) -> bool {
    let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
    matches!(
        ext,
        "rs" | "md" | "toml" | "sh" | "py" | "yaml" | "yml" | "json" | "j2" | "html"
    ) || p.file_name().is_some_and(|n| n == "run" || n == "justfile")
}

/// Normalises `base/rel` lexically; `None` when it climbs above the filesystem root.
fn resolve(base: &Path, rel: &str) -> Option<PathBuf> {
    let mut out: Vec<Component> = base.components().collect();
    for c in Path::new(rel).components() {
        match c {
            Component::ParentDir => {
                if out.len() <= 1 {
                    return None;
                }
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out.iter().collect())
}

/// Every `../…` token of a text (the run of path characters around it).
fn climbing_tokens(text: &str) -> Vec<(usize, String)> {
    let is_path_char = |c: char| c.is_alphanumeric() || "._-/~".contains(c);
    let mut found = Vec::new();
    for (line_no, line) in text.lines().enumerate() {
        let mut rest = line;
        let mut offset = 0;
        while let Some(i) = rest.find("../") {
            let at = offset + i;
            let start = line[..at]
                .char_indices()
                .rev()
                .take_while(|(_, c)| is_path_char(*c))
                .last()
                .map_or(at, |(j, _)| j);
            let end = line[at..]
                .char_indices()
                .find(|(_, c)| !is_path_char(*c))
                .map_or(line.len(), |(j, _)| at + j);
            found.push((line_no + 1, line[start..end].to_string()));
            offset = end.max(at + 3);
            rest = &line[offset..];
        }
    }
    found
}

/// The marker on a line whose `../` is hostile input for a test, not a path the code uses.
const HOSTILE: &str = "hostile input";

fn outside_paths(file: &Path, text: &str) -> Vec<String> {
    let root = root();
    let markdown = file.extension().is_some_and(|e| e == "md");
    let base = if markdown {
        file.parent().unwrap_or(&root).to_path_buf()
    } else {
        root.clone()
    };
    let mut bad = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (line, token) in climbing_tokens(text) {
        let src = lines.get(line - 1).copied().unwrap_or("");
        // A deliberate traversal attempt that a test feeds to a check says so on its line.
        if src.contains(HOSTILE) {
            continue;
        }
        // `include_str!`/`include_bytes!` resolve from the including file's folder.
        let from = if src.contains("include_str!(") || src.contains("include_bytes!(") {
            file.parent().unwrap_or(&root).to_path_buf()
        } else {
            base.clone()
        };
        // `../` inside a longer relative token (`a/../b`) resolves from where the token starts.
        let escapes = resolve(&from, &token).is_none_or(|p| !p.starts_with(&root));
        if escapes {
            bad.push(format!("line {line}: `{token}` leaves the repository"));
        }
    }
    for (line_no, line) in text.lines().enumerate() {
        for prefix in ["/home/", "/root/", "/Users/", "/work/"] {
            if let Some(i) = line.find(prefix) {
                let before = line[..i].chars().last();
                // A path starts the token; `a/work/b` is a relative path, not an absolute one.
                if before.is_none_or(|c| !(c.is_alphanumeric() || "._-/".contains(c))) {
                    bad.push(format!(
                        "line {}: absolute path `{prefix}…` outside the repository",
                        line_no + 1
                    ));
                }
            }
        }
    }
    bad
}

#[test]
fn nothing_checked_names_a_path_outside_the_repository() {
    let root = root();
    let mut problems = Vec::new();
    for f in checked_files() {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        // This file names the patterns it looks for.
        if f.ends_with("tests/self_contained.rs") {
            continue;
        }
        for p in outside_paths(&f, &text) {
            problems.push(format!(
                "{}: {p}",
                f.strip_prefix(&root).unwrap_or(&f).display()
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "paths outside the repository (a fresh clone has nothing beside it):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_check_finds_what_it_looks_for() {
    let root = root();
    let code = root.join("src/x.rs");
    assert_eq!(
        outside_paths(&code, "let p = \"../beside/data/x.json\";").len(),
        1
    );
    assert_eq!(outside_paths(&code, "join(\"data/../data/tau\")").len(), 0);
    assert_eq!(outside_paths(&code, "see /home/someone/data").len(), 1);
    assert_eq!(outside_paths(&code, "a/work/b and super::x").len(), 0);
    let plots = root.join("src/report/plots/mod.rs");
    assert_eq!(
        outside_paths(&plots, "include_bytes!(\"../../../assets/f.ttf\")").len(),
        0
    );
    assert_eq!(
        outside_paths(&plots, "include_bytes!(\"../../../../f.ttf\")").len(),
        1
    );
    assert_eq!(
        outside_paths(&code, "\"../../etc/passwd\" // hostile input").len(),
        0
    );
    let doc = root.join("docs/page.md");
    assert_eq!(outside_paths(&doc, "[README](../README.md)").len(), 0);
    assert_eq!(outside_paths(&doc, "[x](../../elsewhere.md)").len(), 1);
    let readme = root.join("README.md");
    assert_eq!(
        outside_paths(&readme, "import ../beside/data/tau.json").len(),
        1
    );
    assert_eq!(
        outside_paths(&readme, "import data/tau-bench-airline/runs.json").len(),
        0
    );
}

#[test]
fn the_shipped_data_is_in_the_repository_with_its_licence() {
    let d = root().join("data/tau-bench-airline");
    for f in [
        "LICENSE",
        "README.md",
        "gpt-4o-airline.tasks-00-29.json",
        "env/flights.json",
        "env/reservations.json",
        "env/users.json",
        "env/tasks.json",
        "env/policy.md",
    ] {
        assert!(d.join(f).is_file(), "{} is missing", d.join(f).display());
    }
    let licence = std::fs::read_to_string(d.join("LICENSE")).expect("readable");
    assert!(licence.contains("MIT License"), "the data's licence is MIT");
}

#[test]
fn runs_without_out_get_their_own_folder_and_latest_points_at_the_newest() {
    let work = tempfile::tempdir().expect("tempdir");
    let root = root();
    let run = || {
        let out = assert_cmd::Command::cargo_bin("compaction-eval")
            .expect("binary")
            .env_remove("RUST_BACKTRACE")
            .current_dir(work.path())
            .arg("--scenario-dir")
            .arg(root.join("scenarios"))
            .args([
                "run",
                "--scenarios",
                "support-ticket-timeout",
                "--interrupts",
                "uncertain_side_effect",
                "--strategies",
                "C",
                "--models",
                "sim:careful",
                "--reps",
                "1",
                "--scale",
                "base",
                "--strategy-dir",
            ])
            .arg(root.join("strategies"))
            .assert()
            .success()
            .get_output()
            .clone();
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let first = run();
    let second = run();
    let runs: Vec<PathBuf> = {
        let mut v: Vec<PathBuf> = std::fs::read_dir(work.path().join("reports/runs"))
            .expect("reports/runs exists")
            .map(|e| e.expect("entry").path())
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        runs.len(),
        2,
        "two runs, two folders: {runs:?}\n{first}\n{second}"
    );
    for r in &runs {
        assert!(
            r.join("results.jsonl").is_file(),
            "{} is complete",
            r.display()
        );
        assert!(r.join("report.md").is_file());
    }
    let latest = work.path().join("reports/latest");
    assert!(latest.is_symlink(), "reports/latest is a link");
    let target = std::fs::canonicalize(&latest).expect("resolves");
    assert_eq!(target, std::fs::canonicalize(&runs[1]).expect("resolves"));
    assert!(second.contains(&runs[1].file_name().unwrap().to_string_lossy().into_owned()));
}

/// README is the user's guide; the detail lives in docs/ (issue 37: it had grown to 56 kB).
#[test]
fn the_readme_stays_a_guide() {
    let len = std::fs::metadata(root().join("README.md"))
        .expect("README.md")
        .len();
    assert!(
        len < 50_000,
        "README.md is {len} bytes; move detail to docs/ and link it (limit 50,000)"
    );
}
