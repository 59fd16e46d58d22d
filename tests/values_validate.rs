//! `changes:` on numbers, booleans and nested values (issue 25, item 7): a record change takes
//! effect in the world at restore, and a destination that holds only the older value acts on it
//! and fails; and the validation rules that reject a change that cannot take effect, a detector
//! that matches the objective, an unhedged hypothesis event and a `when_lost` value grounded
//! nowhere — each on a minimal failing scenario.

mod common;
use common::cli;

use std::path::Path;
use std::sync::Arc;

use compaction_eval::destination::{Continuation, SimAgent, SimKind};
use compaction_eval::handoff::Handoff;
use compaction_eval::scenario::{
    self, AssistantTag, Detector, Edit, FinishStatus, Perturbation, Scenario, ValueChange,
};
use compaction_eval::state::RestorePoint;
use compaction_eval::strategy::Registry;
use compaction_eval::world::{World, apply_perturbations};
use predicates::prelude::*;
use serde_json::json;

/// A room booking: the source read room R-1 (capacity 150, open, on floor 2); at restore the
/// room's capacity, its `open` flag and its nested `spec.floor` change. The reference
/// continuation re-reads the room and books with the new values; a destination that lost the
/// fact that the room may change skips the re-read.
const ROOMS: &str = r#"
id: rooms-record-change
title: Book a room with its current figures
domain: test
governed:
  tenant_id: tenant-test
  principal_id: user-1
  authorization_mode: user_delegated
  delegated_principal_id: user-1
  delegated_scope: rooms:book
  policy_version: policy-v1
objective: Book room R-1 for the seminar with the room's current seats, open flag and floor.
world:
  clock: "2026-07-21T09:00:00Z"
  collections:
    rooms:
      records:
        - { id: R-1, capacity: 150, open: true, spec: { floor: 2, wing: east } }
    bookings:
      id_prefix: B-
      records: []
  tools:
    - name: get_room
      description: Read a room record by id.
      effect: read
      collection: rooms
      params: { id: string }
    - name: book_room
      description: Book a room with its seats, open flag and floor.
      effect: create
      collection: bookings
      params: { room: string, seats: integer, open: boolean, floor: integer }
events:
  - id: event-0001
    user: Book room R-1 for the seminar with the room's current seats, open flag and floor.
  - id: event-0002
    call: get_room
    args: { id: R-1 }
  - id: event-0003
    assistant: report
    text: "Room R-1 as read: capacity 150, open true, floor 2 (the facilities feed may revise it)."
interrupts:
  - point: after_exploration
    after: event-0003
    perturb:
      - collection: rooms
        record: R-1
        changes:
          - { field: capacity, from: 150, to: 148 }
          - { field: open, from: true, to: false }
          - { field: spec, from: { floor: 2, wing: east }, to: { floor: 3, wing: east } }
    continuation:
      - call: get_room
        args: { id: R-1 }
      - call: book_room
        args: { room: R-1, seats: 148, open: false, floor: 3 }
      - { finish: completed, report: "Booked R-1 with its current figures." }
facts:
  - id: room-may-change
    kind: finding
    source: event-0003
    statement: The facilities feed may revise the room's figures; re-read before booking.
    detectors: ["facilities feed may revise"]
    when_lost:
      - { skip: get_room }
success:
  - { collection: bookings, where: { room: R-1, seats: 148, open: false, floor: 3 }, count: 1 }
  - { finished: completed }
"#;

fn rooms() -> Scenario {
    scenario::parse_scenario(ROOMS, Path::new("rooms.yaml")).expect("parses")
}

fn drive(agent: &mut SimAgent, state: &RestorePoint, h: &Handoff) -> (World, Option<FinishStatus>) {
    let mut c = Continuation::new(state, h);
    c.drive(agent, 40);
    let fin = c.finish();
    (c.into_world(), fin)
}

#[test]
fn a_record_change_on_a_number_a_boolean_and_a_nested_value_takes_effect_at_restore() {
    let s = rooms();
    let mut w = World::new(&s).expect("world");
    let before = w.records("rooms")[0].clone();
    assert_eq!(before["capacity"], json!(150));
    apply_perturbations(&mut w, &s.interrupts[0]).expect("applies");
    let r = &w.records("rooms")[0];
    assert_eq!(r["capacity"], json!(148));
    assert_eq!(r["open"], json!(false));
    assert_eq!(r["spec"], json!({"floor": 3, "wing": "east"}));
    // A path into a nested value works as well.
    w.set_record_field("rooms", "R-1", "spec.wing", json!("west"))
        .expect("nested path");
    assert_eq!(w.records("rooms")[0]["spec"]["wing"], json!("west"));
    assert!(
        w.set_record_field("rooms", "R-1", "spec.colour", json!("red"))
            .is_err()
    );
}

#[test]
fn the_rooms_scenario_validates() {
    let problems = scenario::validate(&rooms());
    assert!(problems.is_empty(), "{problems:?}");
}

/// The number, the boolean and the nested value each reach the call: a destination that holds
/// only the older figures (the source's read) books with them and fails; one that re-reads the
/// room succeeds.
#[test]
fn a_destination_that_did_not_see_the_new_values_acts_on_the_older_ones_and_fails() {
    let s = Arc::new(rooms());
    let state = RestorePoint::build(s.clone(), "after_exploration").expect("state");
    let reg = Registry::builtin();
    let full = reg.handoff("A", &state).expect("handoff");
    let mut marked = SimAgent::new(SimKind::Careful, s.clone(), &state.interrupt, &full, 7, 0.0);
    let (w, fin) = drive(&mut marked, &state, &full);
    assert!(
        s.success.iter().all(|p| w.eval(p, fin)),
        "with the fact it re-reads and books the new figures: {:?}",
        marked.invisible
    );
    let mut lost = full.clone();
    lost.text = "Room R-1 as read: {\"id\":\"R-1\",\"capacity\":150,\"open\":true,\"spec\":{\"floor\":2,\"wing\":\"east\"}}"
        .to_string();
    let mut agent = SimAgent::new(SimKind::Careful, s.clone(), &state.interrupt, &lost, 7, 0.0);
    let (w, fin) = drive(&mut agent, &state, &lost);
    for field in ["args.seats", "args.open", "args.floor"] {
        assert!(
            agent
                .invisible
                .iter()
                .any(|v| v.contains(field) && v.contains("older value")),
            "{field} did not take the older value: {:?}",
            agent.invisible
        );
    }
    let booked = &w.records("bookings")[0];
    assert_eq!(booked["seats"], json!(150));
    assert_eq!(booked["open"], json!(true));
    assert_eq!(booked["floor"], json!(2));
    assert!(!s.success.iter().all(|p| w.eval(p, fin)));
}

// ---- the validation rules, each on a minimal failing scenario

fn support() -> Scenario {
    scenario::load_file(Path::new("scenarios/support-ticket-timeout.yaml")).expect("loads")
}

fn problems(s: &Scenario) -> Vec<String> {
    scenario::validate(s)
        .into_iter()
        .map(|p| format!("{}: {}", p.path, p.message))
        .collect()
}

fn has(ps: &[String], path: &str, text: &str) {
    assert!(
        ps.iter().any(|p| p.starts_with(path) && p.contains(text)),
        "no `{path}` problem with `{text}` in {ps:#?}"
    );
}

fn record_change(
    record: &str,
    field: &str,
    from: serde_json::Value,
    to: serde_json::Value,
) -> Scenario {
    let mut s = support();
    s.interrupts[0].perturb.push(Perturbation {
        collection: Some("customers".into()),
        record: Some(record.into()),
        changes: vec![ValueChange {
            field: Some(field.into()),
            from,
            to,
        }],
        ..Perturbation::default()
    });
    s
}

#[test]
fn a_change_that_cannot_take_effect_is_rejected() {
    let p = "interrupts[0].perturb[0].changes[0]";
    has(
        &problems(&record_change(
            "cust-99",
            "plan",
            json!("enterprise"),
            json!("team"),
        )),
        &format!("{p}.field"),
        "no record `cust-99` in `customers` at `after_exploration`: the change cannot take effect",
    );
    has(
        &problems(&record_change(
            "cust-9",
            "tier",
            json!("gold"),
            json!("silver"),
        )),
        &format!("{p}.field"),
        "record `cust-9` of `customers` has no field `tier`",
    );
    has(
        &problems(&record_change(
            "cust-9",
            "plan",
            json!("enterprise"),
            json!("enterprise"),
        )),
        &format!("{p}.to"),
        "is already the value of `plan` at `after_exploration`: the change changes nothing",
    );
    has(
        &problems(&record_change(
            "cust-9",
            "plan",
            json!("enterprise"),
            json!(5),
        )),
        &format!("{p}.to"),
        "`plan` holds a string at `after_exploration`; `5` is a number",
    );
    has(
        &problems(&record_change(
            "cust-9",
            "plan",
            json!("team"),
            json!("business"),
        )),
        &format!("{p}.from"),
        "`\"team\"` is not the value of `plan` at `after_exploration` (it is `\"enterprise\"`)",
    );
    // A resource change: equal values, and an object a document cannot hold.
    let mut s = support();
    s.interrupts[0].perturb.push(Perturbation {
        resource: Some("kb/KB-311".into()),
        find: Some("AUTH-419".into()),
        replace: Some("AUTH-420".into()),
        changes: vec![
            ValueChange {
                field: None,
                from: json!("AUTH-419"),
                to: json!("AUTH-419"),
            },
            ValueChange {
                field: None,
                from: json!({"code": 419}),
                to: json!({"code": 420}),
            },
        ],
        ..Perturbation::default()
    });
    let ps = problems(&s);
    has(
        &ps,
        "interrupts[0].perturb[0].changes[0].to",
        "`to` equals `from`",
    );
    has(
        &ps,
        "interrupts[0].perturb[0].changes[1].from",
        "a resource holds text: `from` must be a string, number or boolean",
    );
}

#[test]
fn a_detector_that_matches_the_objective_is_rejected_with_the_other_events_it_matches() {
    let mut s = support();
    let i = s
        .facts
        .iter()
        .position(|f| f.id == "legacy-issuer-failures")
        .expect("fact");
    s.facts[i].detectors = vec![Detector::Any {
        any: vec![
            Detector::Phrase("legacy-idp".into()),
            Detector::Phrase("login".into()),
        ],
    }];
    let ps = problems(&s);
    has(
        &ps,
        &format!("facts[{i}].detectors[0]"),
        "any(\"legacy-idp\", \"login\") matches the objective, which every handoff carries (even `none`), but fact `legacy-issuer-failures` comes from `event-0009`: the detector is not specific to its source; besides its source it matches event-0008",
    );
    assert!(
        !ps.iter()
            .any(|p| p.contains("does not match the text of its source")),
        "{ps:?}"
    );
}

#[test]
fn a_hypothesis_event_without_a_hedge_is_rejected() {
    let mut s = support();
    let k = s
        .events
        .iter()
        .position(|e| e.assistant == Some(AssistantTag::Hypothesis))
        .expect("a hypothesis event");
    s.events[k].text = Some("The legacy identity provider causes the AUTH-419 failures.".into());
    has(
        &problems(&s),
        &format!("events[{k}].text"),
        "is tagged `hypothesis` but its text carries no hedge",
    );
}

#[test]
fn a_when_lost_value_grounded_nowhere_is_rejected() {
    let mut s = support();
    s.facts[0].when_lost = vec![Edit {
        call: Some("get_customer".into()),
        args: serde_json::from_value(json!({"id": "cust-4242"})).ok(),
        ..Edit::default()
    }];
    has(
        &problems(&s),
        "facts[0].when_lost[0].args.id",
        "value `cust-4242` is grounded nowhere in the scenario",
    );
    // A list of grounded items is grounded, and so is a negative of a grounded number.
    let mut s = support();
    s.facts[0].when_lost = vec![Edit {
        call: Some("get_customer".into()),
        args: serde_json::from_value(json!({"id": "cust-9,cust-7"})).ok(),
        ..Edit::default()
    }];
    assert!(
        !problems(&s).iter().any(|p| p.contains("grounded nowhere")),
        "{:?}",
        problems(&s)
    );
}

#[test]
fn the_cli_names_the_file_and_the_path_of_a_change_that_cannot_take_effect() {
    let text = std::fs::read_to_string("scenarios/support-ticket-timeout.yaml").expect("reads");
    let anchor = "  - point: after_exploration\n    after: event-0017\n";
    assert!(text.contains(anchor));
    let bad = text.replacen(
        anchor,
        &format!(
            "{anchor}    perturb:\n      - {{ collection: customers, record: cust-9, changes: [{{ field: plan, from: enterprise, to: enterprise }}] }}\n"
        ),
        1,
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("bad-change.yaml");
    std::fs::write(&file, bad).expect("writes");
    cli()
        .args(["scenarios", "validate", file.to_str().expect("utf-8")])
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("bad-change.yaml").and(predicate::str::contains(
                "interrupts[0].perturb[0].changes[0].to: `\"enterprise\"` is already the value of `plan`",
            )),
        );
}
