//! Unit tests of the world: every effect kind, idempotency, approvals, faults, snapshot/clone.

use serde_json::json;

use super::*;
use crate::scenario::{EffectKind, Fault, Object, Predicate};

fn scenario() -> Scenario {
    let yaml = r#"
id: w
title: world test
domain: test
governed: { tenant_id: t, principal_id: p, authorization_mode: user, policy_version: v1 }
objective: test
world:
  clock: "2026-07-21T17:00:00Z"
  tick_seconds: 60
  collections:
    tickets:
      id_prefix: T-
      next_id: 10
      records: [ { id: T-1, customer_id: c1, status: open } ]
  resources:
    doc/a: { revision: 2, text: "alpha beta" }
  approvals:
    - { id: apr-1, action: create_ticket, status: granted, expires_at: "2026-07-21T17:20:00Z" }
  tools:
    - { name: find, description: d, effect: read, collection: tickets, params: { customer_id: { type: string, required: false }, query: { type: string, required: false } } }
    - { name: create_ticket, description: d, effect: create, collection: tickets, params: { customer_id: string, key: string }, idempotency_key_param: key, requires_approval: apr-1 }
    - { name: note, description: d, effect: create, collection: tickets, params: { customer_id: string } }
    - { name: update, description: d, effect: update, collection: tickets, params: { id: string, status: string } }
    - { name: delete, description: d, effect: delete, collection: tickets, params: { id: string } }
    - { name: send, description: d, effect: send, params: { to: string } }
    - { name: read_doc, description: d, effect: read_resource, resource_prefix: doc/, params: { id: string } }
    - { name: write_doc, description: d, effect: write_resource, resource_prefix: doc/, params: { id: string, content: { type: string, required: false }, find: { type: string, required: false }, replace: { type: string, required: false }, expected_revision: { type: integer, required: false } } }
    - name: test
      description: d
      effect: check
      params: {}
      check: { passes: [ { resource: doc/a, contains: [gamma] } ], pass_output: PASS, fail_output: FAIL }
events: [ { id: event-0001, user: hi } ]
interrupts: [ { point: after_exploration, after: event-0001, continuation: [ { finish: completed } ] } ]
facts: []
success: [ { finished: completed } ]
"#;
    crate::scenario::parse_scenario(yaml, std::path::Path::new("w.yaml"))
        .expect("test scenario parses")
}

fn obj(v: serde_json::Value) -> Object {
    serde_json::from_value(v).expect("object literal")
}

fn world() -> World {
    World::new(&scenario()).expect("world builds")
}

#[test]
fn read_filters_by_field_and_query() {
    let mut w = world();
    let r = w.call(
        Phase::Source,
        "find",
        &obj(json!({"customer_id": "c1"})),
        None,
        None,
    );
    assert_eq!(
        r.output,
        Ok(json!([{"id": "T-1", "customer_id": "c1", "status": "open"}]))
    );
    let r = w.call(
        Phase::Source,
        "find",
        &obj(json!({"query": "OPE"})),
        None,
        None,
    );
    assert_eq!(r.output.map(|v| v.as_array().map(|a| a.len())), Ok(Some(1)));
    let r = w.call(
        Phase::Source,
        "find",
        &obj(json!({"customer_id": "nobody"})),
        None,
        None,
    );
    assert_eq!(r.output, Ok(json!([])));
    assert_eq!(w.ledger().len(), 3);
    assert_eq!(w.ledger()[0].effect, Some(EffectKind::Read));
}

#[test]
fn create_assigns_ids_and_idempotency_keys_dedupe() {
    let mut w = world();
    let a = w.call(
        Phase::Source,
        "create_ticket",
        &obj(json!({"customer_id": "c2", "key": "k1"})),
        None,
        None,
    );
    assert_eq!(a.outcome, Outcome::Ok);
    assert_eq!(
        a.output.as_ref().ok().and_then(|v| v.get("id")).cloned(),
        Some(json!("T-10"))
    );
    let b = w.call(
        Phase::Continuation,
        "create_ticket",
        &obj(json!({"customer_id": "c2", "key": "k1"})),
        None,
        None,
    );
    assert_eq!(a.output, b.output, "same key returns the first result");
    assert!(w.ledger()[1].deduped);
    assert_eq!(w.records("tickets").len(), 2);
    let c = w.call(
        Phase::Continuation,
        "create_ticket",
        &obj(json!({"customer_id": "c2", "key": "k2"})),
        None,
        None,
    );
    assert_eq!(
        c.output.as_ref().ok().and_then(|v| v.get("id")).cloned(),
        Some(json!("T-11"))
    );
    assert_eq!(w.records("tickets").len(), 3);
    assert_eq!(w.committed_writes().count(), 2);
    // Without a key, every call acts.
    w.call(
        Phase::Source,
        "note",
        &obj(json!({"customer_id": "c3"})),
        None,
        None,
    );
    w.call(
        Phase::Source,
        "note",
        &obj(json!({"customer_id": "c3"})),
        None,
        None,
    );
    assert_eq!(w.records("tickets").len(), 5);
}

#[test]
fn update_delete_send() {
    let mut w = world();
    let r = w.call(
        Phase::Source,
        "update",
        &obj(json!({"id": "T-1", "status": "closed"})),
        None,
        None,
    );
    assert_eq!(r.outcome, Outcome::Ok);
    assert_eq!(w.records("tickets")[0]["status"], json!("closed"));
    let r = w.call(
        Phase::Source,
        "update",
        &obj(json!({"id": "T-9", "status": "x"})),
        None,
        None,
    );
    assert_eq!(r.outcome, Outcome::Error);
    let r = w.call(
        Phase::Source,
        "delete",
        &obj(json!({"id": "T-1"})),
        None,
        None,
    );
    assert_eq!(r.outcome, Outcome::Ok);
    assert!(w.records("tickets").is_empty());
    let r = w.call(
        Phase::Source,
        "send",
        &obj(json!({"to": "a@b"})),
        None,
        None,
    );
    assert_eq!(r.outcome, Outcome::Ok);
    assert_eq!(w.outbox().len(), 1);
    assert_eq!(w.outbox()[0]["to"], json!("a@b"));
    assert!(w.eval(
        &Predicate {
            outbox: Some(true),
            matching: Some(obj(json!({"to": "a@b"}))),
            count: Some(1),
            ..Default::default()
        },
        None
    ));
}

#[test]
fn resources_carry_revisions_and_digests() {
    let mut w = world();
    let r = w.call(
        Phase::Source,
        "read_doc",
        &obj(json!({"id": "a"})),
        None,
        None,
    );
    let text = r.text();
    assert!(text.contains("revision 2"), "{text}");
    assert!(text.contains(&sha256_digest(b"alpha beta")));
    assert_eq!(w.ledger()[0].touched.as_deref(), Some("doc/a@2"));
    let r = w.call(
        Phase::Source,
        "write_doc",
        &obj(json!({"id": "a", "find": "beta", "replace": "gamma"})),
        None,
        None,
    );
    assert_eq!(r.outcome, Outcome::Ok);
    let res = w.resource("doc/a").expect("resource");
    assert_eq!((res.revision, &*res.text), (3, "alpha gamma"));
    assert_eq!(res.digest, sha256_digest(b"alpha gamma"));
    // A write that names a stale revision is refused.
    let r = w.call(
        Phase::Source,
        "write_doc",
        &obj(json!({"id": "a", "content": "x", "expected_revision": 2})),
        None,
        None,
    );
    assert!(matches!(r.output, Err(ref e) if e.contains("stale write")));
    let r = w.call(
        Phase::Source,
        "write_doc",
        &obj(json!({"id": "a", "content": "x", "expected_revision": 3})),
        None,
        None,
    );
    assert_eq!(r.outcome, Outcome::Ok);
}

#[test]
fn check_tools_evaluate_predicates() {
    let mut w = world();
    let r = w.call(Phase::Source, "test", &Object::new(), None, None);
    assert_eq!(r.output, Ok(json!("FAIL")));
    w.revise_resource("doc/a", Some("gamma"), None, None)
        .expect("revise");
    let r = w.call(Phase::Source, "test", &Object::new(), None, None);
    assert_eq!(r.output, Ok(json!("PASS")));
}

#[test]
fn approvals_expire_on_the_clock_and_can_be_revoked() {
    let mut w = world();
    assert_eq!(w.approval_state("apr-1"), Some(ApprovalStatus::Granted));
    let ok = w.call(
        Phase::Source,
        "create_ticket",
        &obj(json!({"customer_id": "c", "key": "a"})),
        None,
        None,
    );
    assert_eq!(ok.outcome, Outcome::Ok);
    assert_eq!(
        w.ledger()[0].approval.as_ref().map(|a| a.state),
        Some(ApprovalStatus::Granted)
    );
    w.advance_clock(30);
    assert_eq!(w.approval_state("apr-1"), Some(ApprovalStatus::Expired));
    let r = w.call(
        Phase::Continuation,
        "create_ticket",
        &obj(json!({"customer_id": "c", "key": "b"})),
        None,
        None,
    );
    assert_eq!(r.outcome, Outcome::Error);
    assert_eq!(
        w.ledger()[1].approval.as_ref().map(|a| a.state),
        Some(ApprovalStatus::Expired)
    );
    assert_eq!(
        w.records("tickets").len(),
        2,
        "refused call changed nothing"
    );
    // A new grant on request, then a revocation.
    let g = w.request_approval(Phase::Continuation, "apr-1");
    assert_eq!(g.outcome, Outcome::Ok);
    assert_eq!(w.approval_state("apr-1"), Some(ApprovalStatus::Granted));
    w.set_approval_status("apr-1", ApprovalStatus::Revoked);
    let r = w.call(
        Phase::Continuation,
        "create_ticket",
        &obj(json!({"customer_id": "c", "key": "c"})),
        None,
        None,
    );
    assert!(matches!(r.output, Err(ref e) if e.contains("revoked")));
}

#[test]
fn timeout_after_commit_commits_and_withholds_the_result() {
    let mut w = world();
    let r = w.call(
        Phase::Source,
        "create_ticket",
        &obj(json!({"customer_id": "c", "key": "k"})),
        Some(Fault::TimeoutAfterCommit),
        None,
    );
    assert_eq!(r.outcome, Outcome::TimeoutAfterCommit);
    assert!(matches!(r.output, Err(ref e) if e.contains("timed out")));
    assert_eq!(w.records("tickets").len(), 2, "the effect committed");
    assert_eq!(w.committed_writes().count(), 1);
    // Reconciling with the same key finds it; retrying with the same key does not duplicate.
    let again = w.call(
        Phase::Continuation,
        "create_ticket",
        &obj(json!({"customer_id": "c", "key": "k"})),
        None,
        None,
    );
    assert_eq!(again.outcome, Outcome::Ok);
    assert_eq!(w.records("tickets").len(), 2);
}

#[test]
fn timeout_before_commit_changes_nothing() {
    let mut w = world();
    let r = w.call(
        Phase::Source,
        "create_ticket",
        &obj(json!({"customer_id": "c", "key": "k"})),
        Some(Fault::TimeoutBeforeCommit),
        None,
    );
    assert_eq!(r.outcome, Outcome::TimeoutBeforeCommit);
    assert_eq!(w.records("tickets").len(), 1);
    assert_eq!(w.committed_writes().count(), 0);
    // The key was not consumed: a retry acts.
    let r = w.call(
        Phase::Continuation,
        "create_ticket",
        &obj(json!({"customer_id": "c", "key": "k"})),
        None,
        None,
    );
    assert_eq!(r.outcome, Outcome::Ok);
    assert_eq!(w.records("tickets").len(), 2);
}

#[test]
fn bad_arguments_are_errors_not_panics() {
    let mut w = world();
    for args in [
        json!({}),
        json!({"customer_id": 5, "key": "k"}),
        json!({"customer_id": "c", "key": "k", "extra": 1}),
    ] {
        let r = w.call(Phase::Continuation, "create_ticket", &obj(args), None, None);
        assert_eq!(r.outcome, Outcome::Error);
    }
    let r = w.call(
        Phase::Continuation,
        "no_such_tool",
        &Object::new(),
        None,
        None,
    );
    assert_eq!(r.outcome, Outcome::Error);
    assert_eq!(w.records("tickets").len(), 1);
}

#[test]
fn snapshots_are_independent_clones() {
    let mut w = world();
    w.call(Phase::Source, "send", &obj(json!({"to": "x"})), None, None);
    let snapshot = w.clone();
    let mut a = snapshot.clone();
    let mut b = snapshot.clone();
    a.call(
        Phase::Continuation,
        "note",
        &obj(json!({"customer_id": "a"})),
        None,
        None,
    );
    b.revise_resource("doc/a", Some("changed"), None, None)
        .expect("revise");
    assert_eq!(a.records("tickets").len(), 2);
    assert_eq!(b.records("tickets").len(), 1);
    assert_eq!(snapshot.ledger().len(), 1);
    assert_eq!(a.ledger().len(), 2);
    assert_eq!(&*a.resource("doc/a").expect("r").text, "alpha beta");
    assert_eq!(snapshot.ledger(), b.ledger());
}
