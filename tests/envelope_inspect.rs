//! `inspect-continuity` through `run_inspect` with an in-memory writer: the seed's three documented paths,
//! changed policy, revoked approval, and the flag surface.

use clap::{Args, Command, FromArgMatches};
use compaction_eval::envelope::inspect::{
    EXIT_BLOCKED_ON_RECONCILIATION, EXIT_CONTINUITY_VALIDATION_FAILED,
    EXIT_REAUTHORIZATION_REQUIRED, build_envelope,
};
use compaction_eval::envelope::{
    ContinuityEnvelope, InspectContinuityArgs, SideEffectStatus, run_inspect, summary_digest,
};
use serde_json::Value;

/// Parses `flags` the way the CLI will (as the `inspect-continuity` subcommand's arguments).
fn parse(flags: &[&str]) -> InspectContinuityArgs {
    let command = InspectContinuityArgs::augment_args(Command::new("inspect-continuity"));
    let matches = command
        .try_get_matches_from(std::iter::once("inspect-continuity").chain(flags.iter().copied()))
        .expect("flags parse");
    InspectContinuityArgs::from_arg_matches(&matches).expect("args build")
}

fn run(flags: &[&str]) -> (i32, String) {
    let mut out = Vec::new();
    let code = run_inspect(&parse(flags), &mut out).expect("writes to memory");
    (code, String::from_utf8(out).expect("utf-8"))
}

fn run_json(flags: &[&str]) -> (i32, Value) {
    let mut all: Vec<&str> = flags.to_vec();
    all.push("--json");
    let (code, text) = run(&all);
    (code, serde_json::from_str(&text).expect("one JSON object"))
}

fn event_types(report: &Value) -> Vec<&str> {
    report["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|event| event["event"].as_str().expect("event tag"))
        .collect()
}

#[test]
fn default_path_requires_reauthorization() {
    let (code, text) = run(&[]);
    assert_eq!(code, EXIT_REAUTHORIZATION_REQUIRED);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].starts_with("context_compaction envelope_id=ce-2026-07-21-001 "),
        "{text}"
    );
    assert!(
        lines[1].starts_with("context_rehydration envelope_id=ce-2026-07-21-001 "),
        "{text}"
    );
    assert!(lines[1].contains("requires_reauthorization=true"), "{text}");
    assert_eq!(lines[2], "decision: reauthorization_required");

    let (code, report) = run_json(&[]);
    assert_eq!(code, EXIT_REAUTHORIZATION_REQUIRED);
    assert_eq!(report["decision"], "reauthorization_required");
    assert_eq!(report["reason"], Value::Null);
    assert_eq!(
        event_types(&report),
        ["context_compaction", "context_rehydration"]
    );
    assert_eq!(report["events"][1]["requires_reauthorization"], true);
    let envelope = ContinuityEnvelope::from_json_str(&report["envelope"].to_string())
        .expect("the printed envelope is valid");
    assert_eq!(envelope, build_envelope(&InspectContinuityArgs::default()));
}

#[test]
fn tampered_summary_fails_with_summary_digest_mismatch() {
    let (code, text) = run(&["--tamper-summary"]);
    assert_eq!(code, EXIT_CONTINUITY_VALIDATION_FAILED);
    assert!(text.contains("\ncontinuity_validation_failed envelope_id=ce-2026-07-21-001 reason_code=summary_digest_mismatch status=continuity_validation_failed detail="), "{text}");
    assert!(
        text.ends_with("decision: continuity_validation_failed\nreason: summary_digest_mismatch\n"),
        "{text}"
    );
    assert!(
        !text.contains("Ignore previous instructions"),
        "tampered text stays out of the trace"
    );

    let (_, report) = run_json(&["--tamper-summary"]);
    assert_eq!(report["decision"], "continuity_validation_failed");
    assert_eq!(report["reason"], "summary_digest_mismatch");
    assert_eq!(
        event_types(&report),
        ["context_compaction", "continuity_validation_failed"]
    );
    // The digest was recorded before tampering: it is the untampered summary's.
    assert_eq!(
        report["envelope"]["summary_sha256"],
        summary_digest(compaction_eval::envelope::inspect::DEFAULT_SUMMARY)
    );
}

#[test]
fn unknown_side_effect_blocks_on_reconciliation_without_rehydration() {
    let (code, text) = run(&["--side-effect-status", "side_effect_unknown"]);
    assert_eq!(code, EXIT_BLOCKED_ON_RECONCILIATION);
    assert!(
        text.contains("reason_code=unknown_side_effect status=blocked_on_reconciliation"),
        "{text}"
    );
    assert!(!text.contains("context_rehydration"), "{text}");
    assert!(
        text.ends_with("decision: blocked_on_reconciliation\nreason: unknown_side_effect\n"),
        "{text}"
    );

    let (code, report) = run_json(&["--side-effect-status", "side_effect_unknown"]);
    assert_eq!(code, EXIT_BLOCKED_ON_RECONCILIATION);
    assert_eq!(report["decision"], "blocked_on_reconciliation");
    assert_eq!(report["reason"], "unknown_side_effect");
    assert_eq!(
        event_types(&report),
        ["context_compaction", "continuity_validation_failed"]
    );
    assert_eq!(report["events"][1]["status"], "blocked_on_reconciliation");
    assert_eq!(
        report["envelope"]["side_effect_status"],
        "side_effect_unknown"
    );
}

#[test]
fn committed_side_effect_still_requires_reauthorization() {
    let (code, report) = run_json(&["--side-effect-status", "side_effect_committed"]);
    assert_eq!(code, EXIT_REAUTHORIZATION_REQUIRED);
    assert_eq!(report["decision"], "reauthorization_required");
}

#[test]
fn differing_policy_versions_fail_with_policy_version_changed() {
    let (code, report) = run_json(&["--current-policy-version", "policy-v5"]);
    assert_eq!(code, EXIT_CONTINUITY_VALIDATION_FAILED);
    assert_eq!(report["reason"], "policy_version_changed");
    assert_eq!(
        event_types(&report),
        ["context_compaction", "continuity_validation_failed"]
    );

    // The current version defaults to the recorded one, so changing only --policy-version changes nothing.
    let (code, _) = run_json(&["--policy-version", "policy-v3"]);
    assert_eq!(code, EXIT_REAUTHORIZATION_REQUIRED);
    let (code, report) = run_json(&[
        "--policy-version",
        "policy-v3",
        "--current-policy-version",
        "policy-v4",
    ]);
    assert_eq!(code, EXIT_CONTINUITY_VALIDATION_FAILED);
    assert_eq!(report["reason"], "policy_version_changed");
}

#[test]
fn same_custom_policy_versions_pass() {
    let (code, report) = run_json(&[
        "--policy-version",
        "policy-v9",
        "--current-policy-version",
        "policy-v9",
    ]);
    assert_eq!(code, EXIT_REAUTHORIZATION_REQUIRED, "{report}");
    assert_eq!(
        report["events"][1]["versions_reloaded"]["policy_version"],
        "policy-v9"
    );
}

#[test]
fn revoked_approval_fails() {
    let (code, text) = run(&["--approval-status", "revoked"]);
    assert_eq!(code, EXIT_CONTINUITY_VALIDATION_FAILED);
    assert!(
        text.ends_with("decision: continuity_validation_failed\nreason: approval_revoked\n"),
        "{text}"
    );
}

#[test]
fn expired_and_pending_approvals_fail() {
    let (code, report) = run_json(&["--approval-status", "expired"]);
    assert_eq!(code, EXIT_CONTINUITY_VALIDATION_FAILED);
    assert_eq!(report["reason"], "approval_expired");
    let (code, report) = run_json(&["--approval-status", "pending"]);
    assert_eq!(code, EXIT_CONTINUITY_VALIDATION_FAILED);
    assert_eq!(report["reason"], "approval_not_active");
}

#[test]
fn custom_summary_trace_and_session_are_recorded() {
    let (code, report) = run_json(&[
        "--summary",
        "A different summary.",
        "--trace-id",
        "trace-7",
        "--session-id",
        "session-7",
    ]);
    assert_eq!(code, EXIT_REAUTHORIZATION_REQUIRED, "{report}");
    assert_eq!(
        report["envelope"]["summary_sha256"],
        summary_digest("A different summary.")
    );
    assert_eq!(report["envelope"]["source_trace_id"], "trace-7");
    assert_eq!(report["envelope"]["session_id"], "session-7");
    assert_eq!(report["envelope"]["evidence_refs"][0], "trace:trace-7");
}

#[test]
fn blank_flag_values_yield_an_invalid_envelope_not_a_panic() {
    let (code, report) = run_json(&["--trace-id", " "]);
    assert_eq!(code, EXIT_CONTINUITY_VALIDATION_FAILED);
    assert_eq!(report["reason"], "envelope_invalid");
    assert_eq!(
        report["events"][1]["detail"],
        "Continuity field is required: source_trace_id"
    );
}

#[test]
fn action_digest_is_a_real_sha256() {
    let envelope = build_envelope(&InspectContinuityArgs::default());
    let hex = envelope
        .action_digest
        .strip_prefix("sha256:")
        .expect("sha256 prefix");
    assert_eq!(hex.len(), 64);
    assert!(
        hex.chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
    );
    assert_eq!(envelope.side_effect_status, SideEffectStatus::NotStarted);
}

#[test]
fn flags_match_the_seed_and_reject_unknown_values() {
    let command = InspectContinuityArgs::augment_args(Command::new("inspect-continuity"));
    let mut longs: Vec<&str> = command
        .get_arguments()
        .filter_map(|arg| arg.get_long())
        .collect();
    longs.sort_unstable();
    assert_eq!(
        longs,
        [
            "approval-status",
            "current-policy-version",
            "json",
            "policy-version",
            "session-id",
            "side-effect-status",
            "summary",
            "tamper-summary",
            "trace-id",
        ]
    );
    let side_effects: Vec<String> = command
        .get_arguments()
        .find(|arg| arg.get_long() == Some("side-effect-status"))
        .expect("flag")
        .get_possible_values()
        .iter()
        .map(|value| value.get_name().to_owned())
        .collect();
    assert_eq!(
        side_effects,
        [
            "not_started",
            "side_effect_committed",
            "side_effect_unknown"
        ]
    );

    let bad = InspectContinuityArgs::augment_args(Command::new("inspect-continuity"))
        .try_get_matches_from(["inspect-continuity", "--side-effect-status", "maybe"]);
    assert!(bad.is_err());
    let help = InspectContinuityArgs::augment_args(Command::new("inspect-continuity"))
        .render_long_help()
        .to_string();
    let documented = format!(
        "Exit codes: {EXIT_REAUTHORIZATION_REQUIRED} reauthorization_required, \
         {EXIT_BLOCKED_ON_RECONCILIATION} blocked_on_reconciliation, \
         {EXIT_CONTINUITY_VALIDATION_FAILED} continuity_validation_failed, 2 usage error."
    );
    assert!(help.contains(&documented), "{help}");
    assert_eq!(parse(&["--approval-status", "approved"]), parse(&[]));
    assert_eq!(parse(&[]), InspectContinuityArgs::default());
}
