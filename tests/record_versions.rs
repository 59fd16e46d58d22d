//! Records of the previous format version (1: no `record_version`, each typed diagnostic one
//! string of text) are still read by everything that reads `results.jsonl`, and give the same
//! report files and gate verdicts as their version-2 equivalent.
//!
//! The fixtures: `tests/fixtures/records-v1/results.jsonl` is 57 lines of a default run written
//! by the build before version 2 (every strategy at one interrupt point, and cells with
//! duplicates, approval violations and provenance upgrades); `records-v2/results.jsonl` is the
//! same records as this build writes them; `records-v1/runs.csv` is the previous build's
//! `runs.csv` rows of those cells.

use std::path::{Path, PathBuf};

use compaction_eval::gate;
use compaction_eval::record::{RECORD_VERSION, RunRecord, read_records};

fn fixture(version: u32) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("records-v{version}"))
}

/// A run folder holding only the fixture's `results.jsonl`.
fn folder(tmp: &Path, version: u32) -> PathBuf {
    let dir = tmp.join(format!("v{version}"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::copy(
        fixture(version).join("results.jsonl"),
        dir.join("results.jsonl"),
    )
    .expect("copy");
    dir
}

fn lines(version: u32) -> Vec<String> {
    std::fs::read_to_string(fixture(version).join("results.jsonl"))
        .expect("fixture")
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn both_versions_read_as_the_same_records() {
    let v1 = read_records(&fixture(1).join("results.jsonl")).expect("version 1");
    let v2 = read_records(&fixture(2).join("results.jsonl")).expect("version 2");
    assert_eq!(v1.len(), 57);
    assert_eq!(v1, v2);
    // The fixture has every kind of typed diagnostic.
    let d = |f: &dyn Fn(&RunRecord) -> bool| v1.iter().any(f);
    assert!(d(&|r| !r.diagnostics.omitted.is_empty()));
    assert!(d(&|r| !r.diagnostics.repeated.is_empty()));
    assert!(d(&|r| !r.diagnostics.duplicates.is_empty()));
    assert!(d(&|r| !r.diagnostics.violations.is_empty()));
    assert!(d(&|r| !r.diagnostics.checkpoint_rule_violations.is_empty()));
    assert!(d(&|r| r.governed.is_some()));
}

#[test]
fn the_version_2_fixture_is_what_this_build_writes() {
    let old = lines(1);
    let new = lines(2);
    assert_eq!(old.len(), new.len());
    assert_eq!(RECORD_VERSION, 2);
    for (o, n) in old.iter().zip(&new) {
        assert!(!o.contains("\"record_version\""), "{o}");
        assert!(n.starts_with("{\"record_version\":2,"), "{n}");
        let r: RunRecord = serde_json::from_str(o).expect("version 1");
        assert_eq!(&serde_json::to_string(&r).expect("write"), n);
    }
}

#[test]
fn the_report_is_the_same_from_either_version() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (v1, v2) = (folder(tmp.path(), 1), folder(tmp.path(), 2));
    let s1 = compaction_eval::report::render_dir(&v1).expect("report of version 1");
    let s2 = compaction_eval::report::render_dir(&v2).expect("report of version 2");
    assert_eq!(
        serde_json::to_value(&s1).expect("json"),
        serde_json::to_value(&s2).expect("json")
    );
    let mut files = vec![
        "runs.csv".to_string(),
        "summary.csv".into(),
        "summary.json".into(),
        "report.md".into(),
        "report.html".into(),
    ];
    for e in std::fs::read_dir(v1.join("plots")).expect("plots") {
        files.push(format!(
            "plots/{}",
            e.expect("entry").file_name().to_string_lossy()
        ));
    }
    assert!(files.len() > 5, "plots written");
    for f in &files {
        let a = std::fs::read(v1.join(f)).expect(f);
        let b = std::fs::read(v2.join(f)).expect(f);
        assert!(a == b, "{f} differs between the versions");
    }
    // Numbers the report shows come from the typed diagnostics of version 1 too.
    let md = std::fs::read_to_string(v1.join("report.md")).expect("report.md");
    assert!(md.contains("constraint_missing"), "checkpoint rules listed");
    assert!(!s1.lost_facts.is_empty(), "omitted facts counted");
}

#[test]
fn the_gate_judges_either_version_alike() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (v1, v2) = (folder(tmp.path(), 1), folder(tmp.path(), 2));
    let policy = gate::load_policy(None).expect("default policy");
    let g1 = gate::evaluate(&v1, None, &policy).expect("gate on version 1");
    let g2 = gate::evaluate(&v2, None, &policy).expect("gate on version 2");
    assert!(!g1.is_empty());
    assert_eq!(g1, g2);
    // A version-1 baseline against a version-2 run, and the other way round.
    let a = gate::evaluate(&v2, Some(&v1), &policy).expect("v1 baseline");
    let b = gate::evaluate(&v1, Some(&v2), &policy).expect("v2 baseline");
    assert_eq!(a, b);
    assert!(a.len() > g1.len(), "the baseline rules ran");
}

#[test]
fn runs_csv_is_the_previous_build_s_bytes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for version in [1, 2] {
        let dir = folder(tmp.path(), version);
        compaction_eval::report::render_dir(&dir).expect("report");
        assert_eq!(
            std::fs::read_to_string(dir.join("runs.csv")).expect("runs.csv"),
            std::fs::read_to_string(fixture(1).join("runs.csv")).expect("fixture"),
            "version {version}"
        );
    }
}
