//! Known-value tests of the scoring on hand-built worlds: one small scenario, a few world calls
//! per test, exact metric values.

use serde_json::json;

use super::*;
use crate::scenario::{Object, Scenario};
use crate::world::{Phase, World};

const YAML: &str = r#"
id: k
title: known values
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
      records: [ { id: T-1, customer_id: c1, status: open }, { id: T-2, customer_id: c2, status: open } ]
  resources:
    doc/a: { revision: 2, text: "alpha beta" }
  tools:
    - { name: find, description: d, effect: read, collection: tickets, params: { customer_id: { type: string, required: false } } }
    - { name: note, description: d, effect: create, collection: tickets, params: { customer_id: string } }
    - { name: update, description: d, effect: update, collection: tickets, params: { id: string, status: string } }
    - { name: read_doc, description: d, effect: read_resource, resource_prefix: doc/, params: { id: string } }
    - { name: write_doc, description: d, effect: write_resource, resource_prefix: doc/, params: { id: string, content: { type: string, required: false } } }
events: [ { id: event-0001, user: hi } ]
interrupts: [ { point: mid, after: event-0001, continuation: [ { finish: completed } ] } ]
facts: []
success: [ { finished: completed } ]
"#;

fn scenario(yaml: &str) -> Scenario {
    crate::scenario::parse_scenario(yaml, std::path::Path::new("k.yaml")).expect("parses")
}

fn obj(v: serde_json::Value) -> Object {
    serde_json::from_value(v).expect("object literal")
}

fn call(w: &mut World, phase: Phase, tool: &str, args: serde_json::Value) {
    let event = (phase == Phase::Source).then_some("event-0001");
    let r = w.call(phase, tool, &obj(args), None, event);
    assert!(r.output.is_ok(), "{tool}: {:?}", r.output);
}

fn repeated(s: &Scenario, w: &World) -> usize {
    repeated::repeated_reads(&s.interrupts[0], w).len()
}

#[test]
fn a_collection_read_on_unchanged_records_is_repeated_work() {
    let s = scenario(YAML);
    let mut w = World::new(&s).expect("world");
    call(&mut w, Phase::Source, "find", json!({"customer_id": "c1"}));
    // A change to a record the read does not return leaves its result unchanged.
    call(
        &mut w,
        Phase::Source,
        "update",
        json!({"id": "T-2", "status": "closed"}),
    );
    call(
        &mut w,
        Phase::Continuation,
        "find",
        json!({"customer_id": "c1"}),
    );
    assert_eq!(repeated(&s, &w), 1);
}

#[test]
fn a_collection_read_after_the_collection_changed_is_not_repeated_work() {
    let s = scenario(YAML);
    // A record created between the source read and the continuation read.
    let mut w = World::new(&s).expect("world");
    call(&mut w, Phase::Source, "find", json!({"customer_id": "c1"}));
    call(&mut w, Phase::Source, "note", json!({"customer_id": "c1"}));
    call(
        &mut w,
        Phase::Continuation,
        "find",
        json!({"customer_id": "c1"}),
    );
    assert_eq!(repeated(&s, &w), 0);
    // A record the read returns updated by the continuation itself.
    let mut w = World::new(&s).expect("world");
    call(&mut w, Phase::Source, "find", json!({"customer_id": "c1"}));
    call(
        &mut w,
        Phase::Continuation,
        "update",
        json!({"id": "T-1", "status": "pending"}),
    );
    call(
        &mut w,
        Phase::Continuation,
        "find",
        json!({"customer_id": "c1"}),
    );
    assert_eq!(repeated(&s, &w), 0);
}

#[test]
fn a_document_read_counts_only_at_the_same_revision() {
    let s = scenario(YAML);
    let mut w = World::new(&s).expect("world");
    call(&mut w, Phase::Source, "read_doc", json!({"id": "a"}));
    call(&mut w, Phase::Continuation, "read_doc", json!({"id": "a"}));
    assert_eq!(repeated(&s, &w), 1);
    let mut w = World::new(&s).expect("world");
    call(&mut w, Phase::Source, "read_doc", json!({"id": "a"}));
    call(
        &mut w,
        Phase::Source,
        "write_doc",
        json!({"id": "a", "content": "gamma"}),
    );
    call(&mut w, Phase::Continuation, "read_doc", json!({"id": "a"}));
    assert_eq!(repeated(&s, &w), 0);
}

#[test]
fn a_read_the_source_never_made_is_not_repeated_work() {
    let s = scenario(YAML);
    let mut w = World::new(&s).expect("world");
    call(&mut w, Phase::Source, "find", json!({"customer_id": "c2"}));
    call(
        &mut w,
        Phase::Continuation,
        "find",
        json!({"customer_id": "c1"}),
    );
    assert_eq!(repeated(&s, &w), 0);
}
