//! The shipped suite as a whole (issue 27, item 4): no pseudo-replication — no two scenarios
//! share a structural fingerprint (event kinds in order, each point's cut, perturbation, step and
//! recovery kinds, fact kinds with their edits, tool effects, forbidden-rule shapes), so none
//! differs from another only in names or values — and the fingerprint is blind to names and
//! values but not to structure. Also the feature reading `scenarios list` shows. Parses the files
//! only (no validation, no volume): seconds.

use std::path::Path;

use compaction_eval::scenario::coverage::{coverage, fingerprint, replicated_pairs};
use compaction_eval::scenario::{self, Scenario};

fn shipped() -> Vec<Scenario> {
    scenario::scenario_files(Path::new("scenarios"))
        .expect("scenario files")
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).expect("reads");
            scenario::parse_scenario(&text, f).expect("parses")
        })
        .collect()
}

fn support() -> Scenario {
    shipped()
        .into_iter()
        .find(|s| s.id == "support-ticket-timeout")
        .expect("the commented example ships")
}

#[test]
fn no_two_shipped_scenarios_differ_only_in_names_or_values() {
    let all = shipped();
    assert!(all.len() >= 30, "{} scenarios", all.len());
    let pairs = replicated_pairs(&all);
    assert!(pairs.is_empty(), "pseudo-replicated: {pairs:?}");
}

/// Renaming every tool, id and value keeps the fingerprint (so a renamed copy is caught); one
/// event fewer, or one perturbation of another kind, changes it.
#[test]
fn the_fingerprint_ignores_names_and_values_and_sees_structure() {
    let s = support();
    let json = serde_json::to_string(&s).expect("json");
    let renamed_text = json
        .replace("ticket", "case")
        .replace("customer", "client")
        .replace("search_kb", "find_article")
        .replace("dana", "robin");
    let renamed: Scenario = serde_json::from_str(&renamed_text).expect("still a scenario");
    assert_ne!(json, renamed_text, "the rename changed the text");
    assert_eq!(fingerprint(&s), fingerprint(&renamed));
    assert_eq!(
        replicated_pairs(&[s.clone(), renamed]).len(),
        1,
        "a renamed copy is flagged"
    );

    let mut shorter = s.clone();
    let last = shorter.events.len() - 1;
    shorter.events.remove(last);
    assert_ne!(fingerprint(&s), fingerprint(&shorter));
    let mut other = s.clone();
    other.interrupts[0].perturb.push(scenario::Perturbation {
        advance_minutes: Some(30),
        ..Default::default()
    });
    assert_ne!(fingerprint(&s), fingerprint(&other));
}

/// The features `scenarios list` shows follow the scenario's structure: an injection and where
/// its payload sits, a stale resource, a promotable hypothesis, an uncertain write, an approval
/// that can lapse, a stop that arrives after the first point.
#[test]
fn coverage_reads_the_features_off_the_structure() {
    let s = support();
    let c = coverage(&s);
    assert_eq!(c.injection.as_deref(), Some("email"));
    assert!(c.uncertain_write);
    let mut plain = s.clone();
    plain.injection = None;
    for e in &mut plain.events {
        e.fault = None;
    }
    for it in &mut plain.interrupts {
        it.perturb.retain(|p| p.lose_response.is_none());
    }
    let c = coverage(&plain);
    assert!(c.injection.is_none());
    assert!(!c.uncertain_write);

    // Every feature the issue asks for is present somewhere in the suite.
    let all: Vec<_> = shipped().iter().map(coverage).collect();
    let count = |f: &dyn Fn(&compaction_eval::scenario::coverage::Coverage) -> bool| {
        all.iter().filter(|c| f(c)).count()
    };
    for (name, n) in [
        ("injection", count(&|c| c.injection.is_some())),
        ("stale", count(&|c| c.stale_resource)),
        ("hypothesis", count(&|c| c.hypothesis)),
        ("uncertain write", count(&|c| c.uncertain_write)),
        ("approval", count(&|c| c.approval)),
        ("mid-run stop", count(&|c| c.mid_run_stop)),
    ] {
        assert!(n >= 8, "{name}: only {n} scenarios");
    }
}
