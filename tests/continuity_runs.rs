//! The seed-000 required eval inside runs: per scenario × interrupt point × strategy, the
//! decision from the full history against the decision from the handoff, with trace events.

use std::path::Path;
use std::sync::Arc;

use compaction_eval::continuity::{ContinuityEval, evaluate};
use compaction_eval::envelope::TraceEvent;
use compaction_eval::scenario;
use compaction_eval::state::RestorePoint;
use compaction_eval::strategy::Registry;

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

/// The eval of a hand-written handoff text at a scenario's interrupt point.
fn eval_text(scenario_id: &str, point: &str, text: &str) -> ContinuityEval {
    let s = Arc::new(
        scenario::load_file(Path::new(&format!("scenarios/{scenario_id}.yaml"))).expect("loads"),
    );
    eval_text_on(s, point, text)
}

fn eval_text_on(s: Arc<scenario::Scenario>, point: &str, text: &str) -> ContinuityEval {
    let at = RestorePoint::build(s, point).expect("state");
    let h = compaction_eval::handoff::finish(
        "hand-written",
        vec![compaction_eval::handoff::Message::user(text)],
        None,
        vec![],
        vec![],
    );
    let full: String = at
        .state
        .events
        .iter()
        .map(|e| e.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    evaluate(&at, &h, &full)
}

#[test]
fn one_kept_sentence_of_a_message_does_not_carry_its_other_constraints() {
    // Without annotations (an imported transcript's case), constraints are the user's sentences
    // the cue list finds, one reference per sentence. Find a user message with two or more.
    for mut s in scenario::load_dir(Path::new("scenarios")).expect("scenarios") {
        s.facts.retain(|f| {
            !matches!(
                f.kind,
                scenario::FactKind::Constraint | scenario::FactKind::StopCondition
            )
        });
        let s = Arc::new(s);
        let Some(it) = s.interrupts.first() else {
            continue;
        };
        let at = RestorePoint::build(s.clone(), &it.point).expect("state");
        let cs = at.graded_constraints();
        let Some((event, _)) = cs
            .iter()
            .find(|(e, _)| cs.iter().filter(|(x, _)| x == e).count() >= 2)
        else {
            continue;
        };
        let mine: Vec<&String> = cs
            .iter()
            .filter(|(e, _)| e == event)
            .map(|(_, t)| t)
            .collect();
        // The objective is part of the text below: a scenario whose objective already states the
        // message's second constraint has nothing to drop, so it says nothing about the rule.
        let objective = compaction_eval::text::normalize(&s.objective);
        if objective.contains(&compaction_eval::text::normalize(mine[1])) {
            continue;
        }
        let text = format!("{}\n\nConstraint from the user: {}", s.objective, mine[0]);
        let e = eval_text_on(s.clone(), &it.point, &text);
        let dropped = e
            .violations
            .iter()
            .any(|v| v.contains(&format!("event:{event}#2")));
        assert!(dropped, "{} {}: {:?}", s.id, it.point, e.violations);
        assert!(
            !e.violations
                .iter()
                .any(|v| v.contains(&format!("event:{event}#1,"))
                    || v.ends_with(&format!("event:{event}#1"))),
            "the kept sentence counts: {:?}",
            e.violations
        );
        return;
    }
    panic!("no shipped scenario has a user message with two constraint sentences");
}

#[test]
fn the_reconcile_obligation_needs_the_uncertain_write_with_its_key_and_a_reconcile_first_rule() {
    let (id, point) = ("support-ticket-timeout", "uncertain_side_effect");
    let key_only =
        "Resolve the customer's login problem. We used idempotency key ticket-intent-017 earlier.";
    let e = eval_text(id, point, key_only);
    assert!(
        e.violations
            .iter()
            .any(|v| v.contains("reconcile_create_ticket")),
        "a key that merely appears carries nothing: {:?}",
        e.violations
    );
    let stated = "Resolve the customer's login problem.\n- create_ticket with idempotency key ticket-intent-017 timed out; its outcome is unknown: reconcile it with find_ticket_by_key before any retry.";
    let e = eval_text(id, point, stated);
    assert!(
        !e.violations
            .iter()
            .any(|v| v.contains("reconcile_create_ticket")),
        "{:?}",
        e.violations
    );
}

#[test]
fn an_approval_that_lapses_before_restore_is_an_obligation() {
    // ops-deploy-change-freeze: apr-pgw-0930 is revoked while the session is down.
    let e = eval_text(
        "ops-deploy-change-freeze",
        "uncertain_side_effect",
        "Deploy payments-gateway 4.18.2 with config r318.",
    );
    assert!(
        e.violations
            .iter()
            .any(|v| v.contains("obtain_approval_apr-pgw-0930")),
        "{:?}",
        e.violations
    );
}
