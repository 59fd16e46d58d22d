//! `scenarios validate|list|show|schema` from the command line, on the shipped set and on broken
//! fixtures: each class of error gets a non-zero exit and a message naming the file and the field.

mod common;
use common::cli;

use predicates::prelude::*;

#[test]
fn shipped_scenarios_validate() {
    cli()
        .args(["scenarios", "validate"])
        .assert()
        .success()
        .stdout(predicate::str::contains("0 invalid"));
}

#[test]
fn every_shipped_scenario_loads_through_the_library() {
    let all = compaction_eval::scenario::load_dir(std::path::Path::new("scenarios"))
        .expect("shipped scenarios are valid");
    assert!(!all.is_empty());
    for s in &all {
        assert!(
            compaction_eval::scenario::validate(s).is_empty(),
            "{}",
            s.id
        );
    }
}

fn broken(file: &str, expected: &[&str]) {
    let path = format!("tests/fixtures/broken/{file}");
    let mut pred = predicate::str::contains(path.clone()).boxed();
    for e in expected {
        pred = pred.and(predicate::str::contains(*e)).boxed();
    }
    cli()
        .args(["scenarios", "validate", &path])
        .assert()
        .code(1)
        .stderr(pred)
        .stdout(predicate::str::contains("0 valid, 1 invalid"));
}

#[test]
fn truncated_file_names_the_missing_field() {
    broken("truncated.yaml", &["interrupts: is missing", "line "]);
}

#[test]
fn unknown_top_level_key_is_rejected() {
    broken(
        "unknown-top-level-key.yaml",
        &["colour: is not a field here", "line 8"],
    );
}

#[test]
fn renamed_tool_names_every_dangling_reference() {
    broken(
        "renamed-tool.yaml",
        &[
            "events[19].call: unknown tool `find_ticket_by_key`",
            "interrupts[2].continuation[0].call",
            "world.tools[6].reconciled_by",
        ],
    );
}

#[test]
fn unreachable_success_is_reported_with_its_predicate() {
    broken(
        "success-unreachable.yaml",
        &[
            "success[1]: does not hold",
            "`uncertain_side_effect`",
            "expected exactly 1 record(s) of `tickets`",
            "observed 0",
        ],
    );
}

#[test]
fn perturbation_naming_a_missing_approval() {
    broken(
        "unknown-approval-in-perturbation.yaml",
        &["interrupts[2].perturb[0].approval: no approval `apr-99`"],
    );
}

#[test]
fn detector_that_does_not_match_its_source_event() {
    broken(
        "detector-not-in-source.yaml",
        &["facts[3].detectors[1]", "`event-0009`"],
    );
}

#[test]
fn recorded_result_that_replay_does_not_reproduce() {
    broken("recorded-result-mismatch.yaml", &["events[3].result"]);
}

#[test]
fn a_bad_file_does_not_stop_the_others_from_being_checked() {
    cli()
        .args([
            "scenarios",
            "validate",
            "tests/fixtures/broken/renamed-tool.yaml",
            "scenarios/support-ticket-timeout.yaml",
        ])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "ok    scenarios/support-ticket-timeout.yaml",
        ))
        .stdout(predicate::str::contains("1 valid, 1 invalid"));
}

#[test]
fn missing_path_is_a_clear_error() {
    cli()
        .args(["scenarios", "validate", "no/such/dir"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no/such/dir"));
}

#[test]
fn list_shows_domain_points_and_fact_counts() {
    cli()
        .args(["scenarios", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("support-ticket-timeout"))
        .stdout(predicate::str::contains("uncertain_side_effect"))
        .stdout(predicate::str::contains("pending_operation=1"));
}

#[test]
fn show_unknown_scenario_lists_the_known_ones() {
    cli()
        .args(["scenarios", "show", "nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown scenario `nope`"))
        .stderr(predicate::str::contains("support-ticket-timeout"));
}

#[test]
fn show_benign_variant_removes_the_payload() {
    let out = cli()
        .args(["scenarios", "show", "support-ticket-timeout@benign"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8_lossy(&out);
    assert!(!text.contains("forward the full account export"));
    assert!(text.contains("support-ticket-timeout@benign"));
}

#[test]
fn shipped_schema_is_current() {
    let shipped = std::fs::read_to_string("scenarios/scenario.schema.json")
        .expect("scenarios/scenario.schema.json ships with the scenarios");
    assert_eq!(
        shipped,
        compaction_eval::scenario::json_schema(),
        "regenerate with `cargo run -- scenarios schema --out scenarios/scenario.schema.json`"
    );
}

#[test]
fn run_reads_a_config_file_and_flags_win() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let cfg = dir.path().join("run.toml");
    std::fs::write(
        &cfg,
        format!(
            "scenarios = [\"support-ticket-timeout\"]\nstrategies = [\"C\"]\nmodels = [\"sim:literal\"]\nreps = 5\nscale = [\"base\", \"12k\"]\nout = {:?}\n",
            out.display().to_string()
        ),
    )
    .expect("write config");
    cli()
        .args([
            "run",
            "--config",
            cfg.to_str().unwrap_or_default(),
            "--reps",
            "1",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("8 cells run"));
    assert!(out.join("report.md").is_file());
    std::fs::write(&cfg, "colour = 1\n").expect("write config");
    cli()
        .args(["run", "--config", cfg.to_str().unwrap_or_default()])
        .assert()
        .code(compaction_eval::exit::CONFIG)
        .stderr(predicate::str::contains("unknown field `colour`"));
}

#[test]
fn an_authors_silent_mistakes_are_errors_naming_file_path_and_fix() {
    // A misspelt field in a `count: 0` predicate would make it always true.
    broken(
        "misspelt-predicate-field.yaml",
        &["where.recipient", "the outbox has no field `recipient`"],
    );
    // A misspelt `forbidden` argument would disable the violation.
    broken(
        "misspelt-forbidden-arg.yaml",
        &["forbidden[0].args.too", "takes no argument `too`"],
    );
    broken(
        "skip-unknown-tool.yaml",
        &["when_lost[0].skip", "`find_tiket_by_key` is neither a tool"],
    );
    broken("dead-fact.yaml", &["only_at", "the fact never applies"]);
    broken(
        "continuation-retries-blindly.yaml",
        &[
            "does not perform `reconcile-before-retry`",
            "retries `create_ticket`",
            "without first reconciling it through `find_ticket_by_key`",
        ],
    );
}

#[test]
fn a_continuation_value_no_event_shows_is_named_with_its_origin() {
    broken(
        "value-not-derivable.yaml",
        &[
            "interrupts[0].continuation[3].args.id: value `T-1877` is not derivable",
            "occurs only in the world at restore (record `T-1877` of `tickets`)",
        ],
    );
}

#[test]
fn a_reference_continuation_that_scores_a_duplicate_is_refused() {
    // Its author keyed one release per lot (`idempotency_key_param: lot`), so two lots released
    // with the same deviation are the same intent to the duplicate metric: the reference
    // continuation would score unsafe on every destination, the oracle included.
    let path =
        "tests/fixtures/outsider-scenarios/held-back/manufacturing-quality-deviation-rescoped.yaml";
    cli()
        .args(["scenarios", "validate", path])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "interrupts[0].continuation: the reference continuation from `after_exploration` commits `release_lot` 2 times",
        ))
        .stderr(predicate::str::contains("scores as a duplicate side effect"));
}

#[test]
fn list_stats_counts_the_suites_family_resemblance() {
    let out = cli()
        .args(["scenarios", "list", "--stats"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).expect("utf-8");
    for line in [
        "faults: timeout_after_commit ",
        "approvals: granted ",
        "injections: ",
        "stop and ask is the continuation: ",
        "event orders: ",
        "shared sentences: ",
    ] {
        assert!(text.contains(line), "missing `{line}` in:\n{text}");
    }
    // The suite-2 scenarios are what make these non-zero.
    let figures = &text[text.find("\nfaults: ").expect("the figures")..];
    let count = |label: &str| -> usize {
        let at = figures.find(label).expect("label") + label.len();
        figures[at..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|n| n.parse().ok())
            .expect("a count after the label")
    };
    assert!(count("timeout_before_commit ") >= 10, "{text}");
    assert!(count("denied or revoked ") >= 5, "{text}");
    assert!(count("· quiet ") >= 10, "{text}");
    assert!(count("stop and ask is the continuation: ") >= 5, "{text}");
}
