//! Probe questions (`compaction_eval::destination::probe`): generated for every shipped scenario
//! (outsider-written ones included) and point from annotations alone; a simulated destination
//! answers from the handoff text only — `none` answers no recall probe and the transcript all of
//! them at base; a handoff that drops the pending operation fails the artifact-trail and the
//! next-step probes; a handoff that promotes a hypothesis fails the provenance probe.

mod common;

use std::path::Path;
use std::sync::Arc;

use compaction_eval::destination::probe::{Probe, probes, score};
use compaction_eval::destination::{SimAgent, SimKind};
use compaction_eval::handoff::Handoff;
use compaction_eval::record::Probes;
use compaction_eval::scenario;
use compaction_eval::state::RestorePoint;
use compaction_eval::strategy::Registry;

fn restore_point(id: &str, point: &str) -> RestorePoint {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(format!("{id}.yaml"));
    let s = scenario::load_file(&file).expect("loads");
    RestorePoint::build(Arc::new(s), point).expect("restore point")
}

fn handoff(at: &RestorePoint, strategy: &str) -> Handoff {
    Registry::load(Path::new("strategies"))
        .expect("strategies load")
        .handoff(strategy, at)
        .expect("handoff builds")
}

fn answer(at: &RestorePoint, h: &Handoff) -> (Vec<Probe>, Probes) {
    let ps = probes(at);
    let mut agent = SimAgent::new(
        SimKind::Careful,
        at.scenario.clone(),
        &at.interrupt,
        h,
        7,
        0.0,
    );
    let answers = agent.answer_probes(at, &ps);
    let scored = score(at, &ps, &answers);
    (ps, scored)
}

fn got(s: &Probes, d: &str) -> (u32, u32) {
    s.get(d).map_or((0, 0), |p| (p.correct, p.asked))
}

#[test]
fn every_shipped_scenario_and_point_has_probes() {
    // The shipped suite holds the outsider authors' files (suite 2 shipped unedited); those held
    // back in tests/fixtures do not load (each fails validation, which is why it is held back).
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut points = 0;
    for f in scenario::scenario_files(&dir).expect("files") {
        let s = Arc::new(scenario::load_file(&f).expect("a shipped scenario loads"));
        for it in &s.interrupts {
            let at = RestorePoint::build(s.clone(), &it.point).expect("restore point");
            let ps = probes(&at);
            assert!(
                ps.iter().any(|p| p.dimension == "next_step"),
                "{} {}",
                s.id,
                it.point
            );
            let dims: std::collections::BTreeSet<&str> = ps.iter().map(|p| p.dimension).collect();
            assert!(dims.len() >= 2, "{} {}: {dims:?}", s.id, it.point);
            points += 1;
        }
    }
    assert!(points >= 150, "{points} points");
}

#[test]
fn none_answers_no_recall_probe_and_the_transcript_all_of_them_at_base() {
    for s in common::scenario_sample() {
        let s = Arc::new(s);
        for it in &s.interrupts {
            let at = RestorePoint::build(s.clone(), &it.point).expect("restore point");
            let (_, none) = answer(&at, &handoff(&at, "none"));
            let (_, a) = answer(&at, &handoff(&at, "A"));
            let (c, n) = got(&none, "recall");
            assert_eq!(c, 0, "{} {}: none recalled {c} of {n}", s.id, it.point);
            let (c, n) = got(&a, "recall");
            assert_eq!(c, n, "{} {}: A recalled {c} of {n}", s.id, it.point);
        }
    }
}

#[test]
fn dropping_the_pending_operation_fails_the_artifact_trail_and_next_step_probes() {
    let at = restore_point("support-ticket-timeout", "uncertain_side_effect");
    let c = handoff(&at, "C");
    let (_, whole) = answer(&at, &c);
    let (ca, na) = got(&whole, "artifact_trail");
    assert!(na > 0 && ca == na, "C answers the trail: {whole:?}");
    assert_eq!(got(&whole, "next_step"), (1, 1), "{whole:?}");
    // The same checkpoint without the lines that say a write's outcome is unknown: the write's
    // key is still there, its uncertainty is not.
    let mut dropped = c.clone();
    dropped.text = c
        .text
        .lines()
        .filter(|l| {
            let l = l.to_lowercase();
            !["unknown", "timed out", "timeout", "uncertain"]
                .iter()
                .any(|w| l.contains(w))
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert!(dropped.text.contains("ticket-intent-017"));
    assert_ne!(dropped.text, c.text, "the pending operation was carried");
    let (_, less) = answer(&at, &dropped);
    let (ca, na) = got(&less, "artifact_trail");
    assert!(
        ca < na,
        "the uncertain write is not known as uncertain: {less:?}"
    );
    assert_eq!(got(&less, "next_step"), (0, 1), "{less:?}");
}

#[test]
fn promoting_a_hypothesis_fails_the_provenance_probe() {
    // Every point of a shipped scenario with a hypothesis: the transcript carries it hedged; the
    // same transcript with every hedge word of the lexicon taken out states it as established
    // (as B's offline summary does, tests/strategies.rs).
    let lexicon: toml::Value = toml::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/lexicon.toml"))
            .expect("lexicon"),
    )
    .expect("parses");
    let mut hedges: Vec<String> = lexicon["hedges"]
        .as_array()
        .expect("hedges")
        .iter()
        .filter_map(|h| h.as_str().map(str::to_lowercase))
        .collect();
    hedges.sort_by_key(|h| std::cmp::Reverse(h.len()));
    let s = Arc::new(
        scenario::load_file(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("scenarios/cloud-cost-rightsizing-freeze.yaml"),
        )
        .expect("loads"),
    );
    let mut checked = 0;
    for it in &s.interrupts {
        let at = RestorePoint::build(s.clone(), &it.point).expect("restore point");
        let ps = probes(&at);
        let hypotheses: Vec<&Probe> = ps
            .iter()
            .filter(|p| p.dimension == "provenance" && p.expected == "hypothesis")
            .collect();
        if hypotheses.is_empty() {
            continue;
        }
        let a = handoff(&at, "A");
        let mut promoted = a.clone();
        let mut text = a.text.to_lowercase();
        for h in &hedges {
            text = text.replace(h.as_str(), "");
        }
        promoted.text = text;
        for (h, want) in [(&a, "hypothesis"), (&promoted, "verified")] {
            let mut agent = SimAgent::new(
                SimKind::Careful,
                at.scenario.clone(),
                &at.interrupt,
                h,
                7,
                0.0,
            );
            let answers = agent.answer_probes(&at, &ps);
            for p in &hypotheses {
                assert_eq!(answers[&p.key], want, "{}", it.point);
            }
            let (c, n) = got(&score(&at, &ps, &answers), "provenance");
            assert_eq!(c < n, want == "verified", "{}", it.point);
        }
        checked += 1;
    }
    assert!(checked > 0, "a point carries the hypothesis");
}
