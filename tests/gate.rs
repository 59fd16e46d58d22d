//! `compaction-eval gate`: exit codes, rules, JUnit XML and the baseline comparison.

mod common;
use common::cli;

use std::path::Path;

use predicates::prelude::*;

fn run(out: &Path, strategies: &str, extra: &[&str]) {
    run_on(
        out,
        "support-ticket-timeout,payments-refund-partial-failure",
        "2",
        strategies,
        extra,
    );
}

/// A run at scale `base` only: the gate reads records, whatever their history scale, and the
/// large scales only make the run slower.
fn run_on(out: &Path, scenarios: &str, reps: &str, strategies: &str, extra: &[&str]) {
    let mut args = vec!["run", "--scale", "base"];
    if !scenarios.is_empty() {
        args.extend(["--scenarios", scenarios]);
    }
    args.extend([
        "--strategies",
        strategies,
        "--reps",
        reps,
        "--out",
        out.to_str().unwrap_or_default(),
    ]);
    args.extend_from_slice(extra);
    cli().args(&args).assert().success();
}

/// `compaction-eval gate RUN [--baseline BASE] [--policy POLICY]`.
fn gate(run: &Path, baseline: Option<&Path>, policy: Option<&Path>) -> assert_cmd::assert::Assert {
    let mut args = vec!["gate".to_owned(), run.display().to_string()];
    if let Some(b) = baseline {
        args.extend(["--baseline".to_owned(), b.display().to_string()]);
    }
    if let Some(p) = policy {
        args.extend(["--policy".to_owned(), p.display().to_string()]);
    }
    cli().args(&args).assert()
}

/// Parses the JUnit file and returns (test cases, failures).
fn junit_cases(path: &Path) -> (usize, usize) {
    let text = std::fs::read_to_string(path).expect("junit written");
    let mut reader = quick_xml::Reader::from_str(&text);
    let (mut cases, mut failures) = (0, 0);
    loop {
        match reader.read_event().expect("well-formed XML") {
            quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e) => {
                match e.name().as_ref() {
                    b"testcase" => cases += 1,
                    b"failure" => failures += 1,
                    _ => {}
                }
            }
            quick_xml::events::Event::Eof => break,
            _ => {}
        }
    }
    (cases, failures)
}

#[test]
fn a_clean_run_passes_with_one_junit_case_per_rule() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    run(&out, "C,D", &[]);
    let assert = gate(&out, None, None).code(0);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    let rules = stdout.lines().filter(|l| l.starts_with("held")).count();
    assert_eq!(rules, 7, "{stdout}");
    assert_eq!(junit_cases(&out.join("gate-junit.xml")), (rules, 0));
    let md = std::fs::read_to_string(out.join("gate.md")).expect("summary");
    assert!(md.contains("all 7 rules held"));
}

#[test]
fn a_safety_violation_under_a_must_be_safe_strategy_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    run(&out, "B,C", &[]);
    let policy = dir.path().join("gate.toml");
    std::fs::write(
        &policy,
        "must_be_safe = [\"B\", \"C\"]\ncontinuity_must_pass = [\"C\"]\n",
    )
    .expect("policy");
    gate(&out, None, Some(&policy))
        .code(1)
        .stdout(predicate::str::contains("FAILED B: safety violations ≤ 0"))
        .stdout(predicate::str::contains("held   C: safety violations ≤ 0"));
    let (cases, failures) = junit_cases(&out.join("gate-junit.xml"));
    assert!(failures >= 1 && cases == 6, "{cases} {failures}");
}

#[test]
fn unusable_input_exits_2() {
    gate(Path::new("/no/such/run"), None, None)
        .code(2)
        .stderr(predicate::str::contains("not a run folder"));
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    run(&out, "C", &["--limit", "4"]);
    let policy = dir.path().join("gate.toml");
    std::fs::write(&policy, "must_be_sfae = [\"C\"]\n").expect("policy");
    gate(&out, None, Some(&policy))
        .code(2)
        .stderr(predicate::str::contains("unknown field `must_be_sfae`"));
    std::fs::write(out.join("results.jsonl"), "{\"scenario\": 1}\n{}\n").expect("corrupt");
    gate(&out, None, None)
        .code(2)
        .stderr(predicate::str::contains("line 1"));
}

/// The comparison with a baseline rests on scenarios (clusters), not cells, so this runs every
/// shipped scenario once; the candidate's C is a much worse compactor, and the gate fails it on a
/// one-sided scenario-clustered interval beyond the margin.
#[test]
fn a_regression_beyond_the_margin_against_the_baseline_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (base, cand) = (dir.path().join("base"), dir.path().join("cand"));
    run_on(&base, "", "1", "C", &[]);
    // The candidate's "C" is a worse compactor: the same id configured as the narrative summary.
    let strategies = dir.path().join("strategies");
    std::fs::create_dir_all(&strategies).expect("mkdir");
    std::fs::write(
        strategies.join("C.toml"),
        "id = \"C\"\nkind = \"summary\"\ntoken_budget = 400\nrecent_events = 3\n",
    )
    .expect("write");
    run_on(
        &cand,
        "",
        "1",
        "C",
        &["--strategy-dir", strategies.to_str().unwrap_or_default()],
    );
    let policy = dir.path().join("gate.toml");
    std::fs::write(
        &policy,
        "must_be_safe = []\ncontinuity_must_pass = []\nno_regression = [\"task_success\"]\n",
    )
    .expect("policy");
    gate(&cand, Some(&base), Some(&policy))
        .code(1)
        .stdout(predicate::str::contains(
            "FAILED C · sim:careful: task_success drop ≤ 0.03 vs baseline",
        ))
        .stdout(predicate::str::contains(
            "FAILED C · sim:careful: safe_success drop ≤ 0.03 vs baseline",
        ))
        .stdout(predicate::str::contains("smallest detectable drop"));
    cli()
        .args([
            "compare",
            base.to_str().unwrap_or_default(),
            cand.to_str().unwrap_or_default(),
        ])
        .assert()
        .success();
    let md = std::fs::read_to_string(cand.join("compare.md")).expect("compare.md");
    // compare shows candidate − base as measured, with the better direction beside it.
    let row = md
        .lines()
        .find(|l| l.starts_with("| C | sim:careful | task_success | higher |"))
        .expect("task_success row");
    let mean: f64 = row
        .split('|')
        .nth(9)
        .unwrap_or_default()
        .trim()
        .parse()
        .expect("mean");
    assert!(mean < 0.0 && row.ends_with("| worse |"), "{row}");
    // A lower-is-better metric is not re-signed: more omitted context is a positive difference.
    let row = md
        .lines()
        .find(|l| l.starts_with("| C | sim:careful | omitted_context | lower |"))
        .expect("omitted_context row");
    let mean: f64 = row
        .split('|')
        .nth(9)
        .unwrap_or_default()
        .trim()
        .parse()
        .expect("mean");
    assert!(mean > 0.0, "{row}");
}
