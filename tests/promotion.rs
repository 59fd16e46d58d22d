//! Hypothesis promotion, scored: the same handoff with one hypothesis stated as a guess and as an
//! established fact. Two shipped scenarios mark a hypothesis whose loss mode is promotion; read as
//! established, the destination acts on it (edits the clock-skew leeway the logs ruled out; skips
//! the canary gates the pool-exhaustion idea must pass) and the outcome changes. The diagnostic
//! `provenance_upgrades` names the upgrade in any handoff text.

use std::path::Path;
use std::sync::Arc;

use compaction_eval::destination::{Continuation, SimAgent, SimKind};
use compaction_eval::handoff::{self, Message};
use compaction_eval::scenario;
use compaction_eval::score::{self, Run};
use compaction_eval::state::RestorePoint;
use compaction_eval::strategy::Registry;

/// Runs `sim:careful` on a handoff text; returns (task success, recovery quality).
fn outcome(at: &RestorePoint, text: &str) -> (bool, f64) {
    let h = handoff::finish("C", vec![Message::user(text)], None, vec![], vec![]);
    let mut agent = SimAgent::new(
        SimKind::Careful,
        at.scenario.clone(),
        &at.interrupt,
        &h,
        7,
        0.0,
    );
    let mut c = Continuation::new(at, &h);
    let steps = c.drive(&mut agent, 60);
    let (finish, world) = (c.finish(), c.into_world());
    let run = Run {
        scenario: &at.scenario,
        interrupt: &at.interrupt,
        world: &world,
        finish,
        degraded: false,
        restore_tokens: 0,
        total_tokens: 0,
        first_action_ms: 0.0,
        completion_ms: 0.0,
        steps,
        step_budget_exhausted: finish.is_none(),
    };
    let (m, _) = score::score(&run, vec![], vec![]);
    (m.task_success, m.recovery_quality)
}

/// C's handoff with the line carrying `phrase` restated as an established finding.
fn promoted(text: &str, phrase: &str, finding: &str) -> String {
    text.lines()
        .map(|l| {
            if l.to_lowercase().contains(&phrase.to_lowercase()) && l.contains("hypothesis") {
                format!("- [finding · agent · verified] {finding}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_promoted_hypothesis_changes_the_outcome_in_two_shipped_scenarios() {
    let reg = Registry::load(Path::new("strategies")).expect("strategies");
    for (id, point, phrase, finding) in [
        (
            "coding-session-expiry-fix",
            "after_exploration",
            "clock skew",
            "Clock skew in tokens.py is the cause: the leeway is too small.",
        ),
        (
            "ops-deploy-change-freeze",
            "after_exploration",
            "pool-exhaustion problem",
            "The saturation and the 502 bursts are the same pool-exhaustion problem; pool_max 180 fixes it.",
        ),
    ] {
        let s = Arc::new(
            scenario::load_file(Path::new(&format!("scenarios/{id}.yaml"))).expect("loads"),
        );
        let at = RestorePoint::build(s, point).expect("state");
        let h = reg.handoff("C", &at).expect("C builds");
        let hedged = outcome(&at, &h.text);
        assert_eq!(
            hedged,
            (true, 1.0),
            "{id}: C keeps the hypothesis a hypothesis"
        );
        let text = promoted(&h.text, phrase, finding);
        assert_ne!(text, h.text, "{id}: the hypothesis line was found");
        let upgraded = outcome(&at, &text);
        assert_ne!(upgraded, hedged, "{id}: promotion changes the outcome");
        let h2 = handoff::finish("C", vec![Message::user(text)], None, vec![], vec![]);
        let ups = compaction_eval::upgrades::provenance_upgrades(&at, &h2);
        assert!(
            ups.iter().any(|u| u.ends_with("hypothesis → finding")),
            "{id}: {ups:?}"
        );
        assert!(
            compaction_eval::upgrades::provenance_upgrades(&at, &h)
                .iter()
                .all(|u| !u.ends_with("hypothesis → finding")),
            "{id}: C itself upgrades nothing"
        );
    }
}
