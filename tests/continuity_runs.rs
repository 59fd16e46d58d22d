//! The seed-000 required eval inside runs: per scenario × interrupt point × strategy, the
//! decision from the full history against the decision from the handoff, with trace events.

use std::path::Path;
use std::sync::Arc;

use compaction_eval::continuity::{ContinuityEval, evaluate};
use compaction_eval::envelope::TraceEvent;
use compaction_eval::scenario;
use compaction_eval::strategy::{Registry, RestorePoint};

fn eval(scenario_id: &str, point: &str, strategy: &str) -> ContinuityEval {
    let s = Arc::new(
        scenario::load_file(Path::new(&format!("scenarios/{scenario_id}.yaml"))).expect("loads"),
    );
    let state = RestorePoint::build(s, point).expect("state");
    let h = Registry::builtin()
        .handoff(strategy, &state)
        .expect("handoff");
    let full: String = state
        .state
        .events
        .iter()
        .map(|e| e.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    evaluate(&state, &h, &full)
}

#[test]
fn checkpoints_keep_the_same_or_a_stricter_decision_everywhere() {
    for s in scenario::load_dir(Path::new("scenarios")).expect("scenarios") {
        for it in &s.interrupts {
            for strategy in ["C", "D"] {
                let e = eval(&s.id, &it.point, strategy);
                assert!(
                    e.passed,
                    "{} {} {strategy}: {:?}",
                    s.id, it.point, e.violations
                );
            }
        }
    }
}

#[test]
fn unknown_side_effect_blocks_on_full_history_and_a_lost_key_fails_the_eval() {
    let c = eval("support-ticket-timeout", "uncertain_side_effect", "C");
    assert_eq!(c.full_decision, "blocked_on_reconciliation");
    assert_eq!(c.compacted_decision, "blocked_on_reconciliation");
    assert_eq!(c.compacted_reason.as_deref(), Some("unknown_side_effect"));
    // No rehydration before reconciliation.
    assert!(
        !c.trace
            .iter()
            .any(|t| matches!(t, TraceEvent::ContextRehydration { .. }))
    );
    let none = eval("support-ticket-timeout", "uncertain_side_effect", "none");
    assert!(!none.passed);
    // The objective alone names no tenant: the runtime fails closed, but the unresolved write is
    // no longer visible, which is what the eval catches.
    assert!(
        none.violations
            .iter()
            .any(|v| v.contains("reconcile_create_ticket")),
        "{:?}",
        none.violations
    );
}

#[test]
fn a_changed_policy_forces_a_new_decision() {
    // ops-deploy-change-freeze changes the policy version at restore from after_exploration.
    let e = eval("ops-deploy-change-freeze", "after_exploration", "C");
    assert_eq!(e.full_decision, "continuity_validation_failed");
    assert!(e.passed);
}

#[test]
fn the_trace_links_compaction_to_the_outcome_and_carries_no_text() {
    let e = eval("support-ticket-timeout", "mid_implementation", "C");
    match e.trace.first() {
        Some(TraceEvent::ContextCompaction { envelope_id, .. }) => {
            assert_eq!(envelope_id, &e.envelope_id)
        }
        other => panic!("first event is not context_compaction: {other:?}"),
    }
    assert!(e.trace.len() >= 2);
    assert!(e.handoff_digest.starts_with("sha256:"));
    let json = serde_json::to_string(&e.trace).expect("serialises");
    assert!(
        !json.contains("Do not email the customer"),
        "constraint text leaked into the trace"
    );
    assert!(!json.contains("audit@acme-support-verify.com"));
}
