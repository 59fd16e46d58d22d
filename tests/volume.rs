//! Volume (history scales): generated padding is inert, only adds, is drawn from the seed, and a
//! wrong declaration is an error that names its field.
//!
//! Runs on `common::scenario_sample()`: a fixed sample of 8 shipped scenarios drawn by a fixed
//! seed that covers every feature of the suite (so the test's time does not grow with the suite;
//! `scenarios_cli` validates every scenario).

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use compaction_eval::scenario::volume::{self, Scale};
use compaction_eval::scenario::{self, Scenario};
use compaction_eval::state::RestorePoint;
use proptest::prelude::*;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

fn shipped() -> Vec<Scenario> {
    common::scenario_sample()
}

fn with_volume() -> Vec<Scenario> {
    shipped()
        .into_iter()
        .filter(|s| s.volume.is_some())
        .collect()
}

fn support() -> Scenario {
    scenario::load_file(&dir().join("support-ticket-timeout.yaml"))
        .expect("support-ticket-timeout ships")
}

fn json(s: &Scenario) -> String {
    serde_json::to_string(s).expect("serialises")
}

fn last_point(s: &Scenario) -> String {
    s.interrupts
        .iter()
        .max_by_key(|i| s.event_index(&i.after))
        .map(|i| i.point.clone())
        .expect("a point")
}

fn history(s: &Scenario, point: &str) -> u64 {
    let at = RestorePoint::build(Arc::new(s.clone()), point).expect("restore point");
    compaction_eval::strategy::full_history_tokens(&at.state)
}

#[test]
fn every_shipped_scenario_declares_volume() {
    let missing: Vec<String> = shipped()
        .into_iter()
        .filter(|s| s.volume.is_none())
        .map(|s| s.id)
        .collect();
    assert!(missing.is_empty(), "scenarios without volume: {missing:?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]
    /// Over seeds and scales: the volume is inert (no detector, no continuation value, every
    /// reference continuation still succeeds — `check_inert` runs the whole validation), it only
    /// adds read-only calls, and the history reaches the target.
    #[test]
    fn volume_is_inert_over_seeds_and_scales(
        seed in any::<u64>(),
        which in 0usize..16,
        target in prop_oneof![Just(12_000u64), Just(40_000u64)],
    ) {
        let all = with_volume();
        prop_assume!(!all.is_empty());
        let s = &all[which % all.len()];
        let x = volume::expand(s, Scale::Tokens(target), seed).expect("volume generates");
        let problems = volume::check_inert(&x, "proptest");
        prop_assert!(problems.is_empty(), "{}: {problems:?}", s.id);
        // Only adds: the original events in order, everything else marked volume.
        let kept: Vec<&str> = x.events.iter().filter(|e| !e.volume).map(|e| e.id.as_str()).collect();
        let orig: Vec<&str> = s.events.iter().map(|e| e.id.as_str()).collect();
        prop_assert_eq!(kept, orig);
        prop_assert!(x.events.len() > s.events.len());
        for e in x.events.iter().filter(|e| e.volume) {
            let tool = x.world.tools.iter().find(|t| Some(&t.name) == e.call.as_ref()).expect("tool");
            prop_assert!(!tool.effect.is_write());
        }
        // The world's own collections, resources, predicates and rules are untouched.
        for (k, c) in &s.world.collections {
            prop_assert_eq!(json_value(&x.world.collections[k]), json_value(c));
        }
        for (k, r) in &s.world.resources {
            prop_assert_eq!(&x.world.resources[k].text, &r.text);
        }
        prop_assert_eq!(json_value(&x.success), json_value(&s.success));
        prop_assert_eq!(json_value(&x.forbidden), json_value(&s.forbidden));
        // The history at the last interrupt point reaches the target, without overshooting wildly.
        let h = history(&x, &last_point(&x));
        prop_assert!(h as f64 >= target as f64 * 0.8 && h as f64 <= target as f64 * 1.6,
            "{}: {h} tokens for a target of {target}", s.id);
    }
}

fn json_value<T: serde::Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).expect("serialises")
}

#[test]
fn base_is_the_file_and_volume_is_drawn_from_the_seed() {
    let s = &support();
    assert_eq!(
        json(&volume::expand(s, Scale::Base, 1).expect("base")),
        json(s)
    );
    let a = volume::expand(s, Scale::Tokens(12_000), 7).expect("a");
    let b = volume::expand(s, Scale::Tokens(12_000), 7).expect("b");
    let c = volume::expand(s, Scale::Tokens(12_000), 8).expect("c");
    assert_eq!(json(&a), json(&b), "same seed, same volume");
    assert_ne!(json(&a), json(&c), "another seed, other volume");
    // A benign variant gets its scenario's volume.
    let seed = |id: &str| volume::volume_seed(5, id, Scale::Tokens(12_000));
    assert_eq!(seed("x"), seed("x@benign"));
    assert_ne!(seed("x"), seed("y"));
}

#[test]
fn volume_does_not_move_the_simulated_clock() {
    for s in with_volume() {
        let x = volume::expand(&s, Scale::Tokens(12_000), 3).expect("volume");
        for it in &s.interrupts {
            let a = RestorePoint::build(Arc::new(s.clone()), &it.point).expect("base point");
            let b = RestorePoint::build(Arc::new(x.clone()), &it.point).expect("scaled point");
            assert_eq!(a.world.clock(), b.world.clock(), "{} {}", s.id, it.point);
            for ap in a.world.approvals() {
                assert_eq!(
                    a.world.approval_state(&ap.id),
                    b.world.approval_state(&ap.id),
                    "{} {}: approval {}",
                    s.id,
                    it.point,
                    ap.id
                );
            }
        }
    }
}

#[test]
fn scales_parse_and_print() {
    assert_eq!("base".parse::<Scale>(), Ok(Scale::Base));
    assert_eq!("40k".parse::<Scale>(), Ok(Scale::Tokens(40_000)));
    assert_eq!("120000".parse::<Scale>(), Ok(Scale::Tokens(120_000)));
    assert_eq!(Scale::Tokens(40_000).to_string(), "40k");
    assert_eq!(Scale::Tokens(12_345).to_string(), "12345");
    let e = "huge".parse::<Scale>().expect_err("not a scale");
    assert!(e.contains("`huge` is not a scale"), "{e}");
    assert!("10".parse::<Scale>().is_err(), "below 1k");
}

/// A scenario with one edit to its volume section.
fn broken(edit: impl Fn(&mut serde_json::Value)) -> Scenario {
    let s = &support();
    let mut v = serde_json::to_value(s).expect("value");
    edit(&mut v["volume"]);
    serde_json::from_value(v).expect("still a scenario")
}

#[test]
fn a_wrong_volume_declaration_names_its_field() {
    // A volume collection that is one of the world's.
    let s = &support();
    let existing = s
        .world
        .collections
        .keys()
        .next()
        .expect("a collection")
        .clone();
    let b = broken(|v| {
        let c = v["collections"]
            .as_object()
            .and_then(|m| m.values().next().cloned())
            .expect("a volume collection");
        v["collections"][existing.as_str()] = c;
    });
    let e = volume::expand(&b, Scale::Tokens(12_000), 1).expect_err("refused");
    assert!(
        e.iter()
            .any(|p| p.path == format!("volume.collections.{existing}")),
        "{e:?}"
    );
    // A write tool among the calls.
    let write = s
        .world
        .tools
        .iter()
        .find(|t| t.effect.is_write())
        .expect("a write tool")
        .name
        .clone();
    let b = broken(|v| v["calls"][0]["tool"] = serde_json::json!(write));
    let e = volume::expand(&b, Scale::Tokens(12_000), 1).expect_err("refused");
    assert!(
        e.iter()
            .any(|p| p.path == "volume.calls[0].tool" && p.message.contains("read-only")),
        "{e:?}"
    );
    // An unknown placeholder.
    let b = broken(|v| v["calls"][0]["args"] = serde_json::json!({"x": "{nosuchlist}"}));
    let e = volume::expand(&b, Scale::Tokens(12_000), 1).expect_err("refused");
    assert!(
        e.iter()
            .any(|p| p.path == "volume.calls[0].args.x" && p.message.contains("`{nosuchlist}`")),
        "{e:?}"
    );
}

#[test]
fn volume_that_carries_a_fact_is_not_inert() {
    // Every vocabulary entry replaced by a phrase of a fact's detector: the check must name the
    // fact.
    let s = &support();
    let fact = s
        .facts
        .iter()
        .find_map(|f| {
            f.detectors
                .first()
                .and_then(|d| d.phrases().first().map(|p| (f.id.clone(), p.to_string())))
                .filter(|(_, p)| !p.contains('{'))
        })
        .expect("a fact with a phrase");
    let b = broken(|v| {
        if let Some(m) = v["vocab"].as_object_mut() {
            for list in m.values_mut() {
                *list = serde_json::json!([fact.1.clone()]);
            }
        }
    });
    let x = volume::expand(&b, Scale::Tokens(12_000), 1).expect("generates");
    let problems = volume::check_inert(&x, "test");
    assert!(
        problems
            .iter()
            .any(|p| p.message.contains(&format!("fact `{}`", fact.0))),
        "{problems:?}"
    );
}
