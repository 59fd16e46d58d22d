//! What A, mask, B+A and D must carry and must not, as properties over every shipped scenario ×
//! interrupt point, beside the whole-text snapshots (which a careless snapshot update would
//! accept): a changed strategy that drops a user message, a tool output it must keep, a
//! timed-out write's key, or that outgrows its budget fails here by name.
//!
//! Runs on `common::scenario_sample()`: a fixed sample of 8 shipped scenarios drawn by a fixed
//! seed that covers every feature of the suite (so the test's time does not grow with the suite;
//! `scenarios_cli` validates every scenario).

mod common;

use std::path::Path;
use std::sync::Arc;

use compaction_eval::handoff::{Handoff, Role};
use compaction_eval::scenario::Scenario;
use compaction_eval::state::{InterruptedState, ObservedOutcome, RestorePoint};
use compaction_eval::strategy::{DEFAULT_CONTEXT_WINDOW, Registry, usable_context};

fn scenarios() -> Vec<Arc<Scenario>> {
    common::scenario_sample()
        .into_iter()
        .map(Arc::new)
        .collect()
}

/// Every shipped scenario × interrupt point with the handoffs of `ids`.
fn each_point(ids: &[&str], mut check: impl FnMut(&str, &InterruptedState, &[Handoff])) {
    let reg = Registry::load(Path::new("strategies")).expect("strategies load");
    let mut points = 0;
    for s in scenarios() {
        for it in &s.interrupts {
            let at = RestorePoint::build(s.clone(), &it.point).expect("state builds");
            let hs: Vec<Handoff> = ids
                .iter()
                .map(|id| reg.handoff(id, &at).expect("handoff builds"))
                .collect();
            check(&format!("{} {}", s.id, it.point), &at.state, &hs);
            points += 1;
        }
    }
    assert!(points >= 8, "the shipped suite has points to check");
}

fn contents(h: &Handoff, role: Role) -> Vec<&str> {
    h.messages
        .iter()
        .filter(|m| m.role == role)
        .map(|m| m.content.as_str())
        .collect()
}

/// The timed-out writes of the prefix with the key the source agent sent.
fn timed_out_keys(state: &InterruptedState) -> Vec<&str> {
    state
        .events
        .iter()
        .filter_map(|e| e.call.as_ref())
        .filter(|c| c.outcome == ObservedOutcome::TimedOut)
        .filter_map(|c| c.idempotency_key.as_deref())
        .collect()
}

#[test]
fn a_carries_every_source_event_verbatim_and_drops_nothing_at_base() {
    each_point(&["A"], |at, state, hs| {
        let a = &hs[0];
        assert!(
            a.dropped_events.is_empty(),
            "{at}: A dropped {:?}",
            a.dropped_events
        );
        let users = contents(a, Role::User);
        let tools = contents(a, Role::Tool);
        for e in &state.events {
            match (&e.call, e.kind) {
                (Some(c), _) => {
                    assert!(
                        tools.contains(&c.result_text.as_str()),
                        "{at}: A lacks the output of {} verbatim",
                        e.id
                    );
                    let call = a
                        .messages
                        .iter()
                        .filter_map(|m| m.tool_call.as_ref())
                        .any(|t| {
                            t.name == c.tool
                                && t.arguments
                                    .contains(&serde_json::to_string(&c.args).unwrap_or_default())
                        });
                    assert!(
                        call,
                        "{at}: A lacks the call of {} with its arguments",
                        e.id
                    );
                }
                (None, "user") => assert!(
                    users.contains(&e.text.as_str()),
                    "{at}: A lacks user message {} verbatim",
                    e.id
                ),
                (None, "approval") => assert!(
                    users.iter().any(|u| u.contains(&e.text)),
                    "{at}: A lacks approval event {}",
                    e.id
                ),
                (None, _) => assert!(
                    contents(a, Role::Assistant).contains(&e.text.as_str()),
                    "{at}: A lacks the agent's own {} ({})",
                    e.id,
                    e.kind
                ),
            }
        }
        // Nothing the source did not see: no checkpoint, no extra tool, no annotation.
        assert!(a.checkpoint.is_none() && a.extra_tools.is_empty(), "{at}");
    });
}

#[test]
fn mask_keeps_every_message_and_the_last_three_outputs_and_masks_the_rest() {
    each_point(&["A", "mask"], |at, state, hs| {
        let (a, mask) = (&hs[0], &hs[1]);
        assert!(mask.tokens_at_restore <= a.tokens_at_restore, "{at}");
        let users = contents(mask, Role::User);
        for e in state
            .events
            .iter()
            .filter(|e| e.call.is_none() && e.kind == "user")
        {
            assert!(
                users.contains(&e.text.as_str()),
                "{at}: mask lacks {}",
                e.id
            );
        }
        let calls: Vec<_> = state
            .events
            .iter()
            .filter_map(|e| e.call.as_ref())
            .collect();
        let tools = contents(mask, Role::Tool);
        assert_eq!(tools.len(), calls.len(), "{at}: one tool message per call");
        let keep = calls.len().saturating_sub(3);
        for (i, (c, shown)) in calls.iter().zip(&tools).enumerate() {
            if i >= keep {
                assert_eq!(
                    *shown, c.result_text,
                    "{at}: recent output {i} is kept whole"
                );
            } else {
                assert!(
                    shown.contains("omitted to save context") && shown.contains(&c.tool),
                    "{at}: old output {i} of {} is masked, naming its tool",
                    c.tool
                );
                if c.result_text.len() > 80 {
                    assert!(
                        !shown.contains(&c.result_text),
                        "{at}: masked output {i} leaks"
                    );
                }
            }
        }
    });
}

#[test]
fn b_plus_a_carries_a_summary_then_the_most_recent_history_within_the_window() {
    each_point(&["B", "B+A", "A"], |at, state, hs| {
        let (b, ba, a) = (&hs[0], &hs[1], &hs[2]);
        // B+A's summary is B's kind of summary (its own seeded draw), first, in one message.
        let summary = &ba.messages[0].content;
        let header = |t: &str| t.lines().next().unwrap_or("").to_owned();
        assert_eq!(
            header(summary),
            header(&b.messages[0].content),
            "{at}: B+A opens with B's summary"
        );
        assert!(
            ba.tokens_at_restore <= usable_context(DEFAULT_CONTEXT_WINDOW),
            "{at}: B+A over the usable context"
        );
        assert!(ba.tokens_at_restore >= b.tokens_at_restore, "{at}");
        // The most recent event is carried as A carries it.
        let last = state.events.last().expect("a prefix has events");
        let carried = match &last.call {
            Some(c) => contents(ba, Role::Tool).contains(&c.result_text.as_str()),
            None => ba.messages.iter().any(|m| m.content.contains(&last.text)),
        };
        assert!(carried, "{at}: B+A lacks the most recent event {}", last.id);
        // The transcript half is a suffix of A's messages, never a reordering.
        let tail: Vec<_> = ba.messages.iter().skip(1).collect();
        let a_tail: Vec<_> = a
            .messages
            .iter()
            .skip(a.messages.len() - tail.len())
            .collect();
        assert_eq!(
            tail, a_tail,
            "{at}: B+A's transcript is A's most recent messages"
        );
    });
}

#[test]
fn d_names_every_resource_it_leaves_out_and_keeps_every_uncertain_write() {
    each_point(&["C", "D"], |at, state, hs| {
        let (c, d) = (&hs[0], &hs[1]);
        let cp = d.checkpoint.as_ref().expect("D writes a checkpoint");
        assert_eq!(d.extra_tools.len(), 1, "{at}");
        assert_eq!(d.extra_tools[0].name, "retrieve");
        for o in state.latest_observations() {
            assert!(
                cp.resources.iter().any(|r| r.key == o.key),
                "{at}: D does not name resource {} as retrievable",
                o.key
            );
            assert!(d.text.contains(&o.key), "{at}: D's text lacks {}", o.key);
        }
        for key in timed_out_keys(state) {
            assert!(
                d.text.contains(key),
                "{at}: D lacks the timed-out write's key {key}"
            );
            assert!(
                c.text.contains(key),
                "{at}: C lacks the timed-out write's key {key}"
            );
        }
        // What C states as the user's constraints, D states too: retrieval replaces excerpts,
        // never obligations.
        let c_cp = c.checkpoint.as_ref().expect("C writes a checkpoint");
        assert_eq!(
            c_cp.statements.len(),
            cp.statements.len(),
            "{at}: D and C carry the same statements"
        );
    });
}
