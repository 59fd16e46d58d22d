//! A destination uses only values it can see (issue 11, item 3): losing a stale resource's new
//! revision changes a call's arguments and fails the task; an invisible value is re-read and
//! counted as repeated work.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use compaction_eval::destination::{Continuation, SimAgent, SimKind};
use compaction_eval::handoff::Handoff;
use compaction_eval::runner::{self, RunConfig, Silent};
use compaction_eval::scenario::values::needed_values;
use compaction_eval::scenario::{self, FactKind, FinishStatus, Scenario, normalize};
use compaction_eval::state::RestorePoint;
use compaction_eval::strategy::Registry;
use compaction_eval::world::World;

/// Drives a simulated destination to its finish (the runner's own dispatch of actions); returns
/// the world and the finish status.
fn drive(agent: &mut SimAgent, state: &RestorePoint, h: &Handoff) -> (World, Option<FinishStatus>) {
    let mut c = Continuation::new(state, h);
    c.drive(agent, 80);
    let fin = c.finish();
    (c.into_world(), fin)
}

fn succeeds(s: &Scenario, state: &RestorePoint, world: &World, fin: Option<FinishStatus>) -> bool {
    s.success_at(&state.interrupt)
        .iter()
        .all(|p| world.eval(p, fin))
}

/// For every shipped scenario with a stale resource and every interrupt point after its revision
/// where removing the revision words removes the stale mark (at least 7 such points):
/// the full transcript (which shows the older excerpt) with the revision marks removed — a handoff
/// that holds the old excerpt but does not mark it stale. The destination then acts on the older
/// value (a call's arguments change) and the task fails; with the marks it never does.
#[test]
fn losing_a_stale_revision_changes_arguments_and_fails_the_task() {
    let reg = Registry::builtin();
    let mut checked = 0;
    for s in scenario::load_dir(Path::new("scenarios")).expect("loads") {
        let s = Arc::new(s);
        let stale: Vec<_> = s
            .facts
            .iter()
            .filter(|f| f.kind == FactKind::StaleResource)
            .collect();
        if stale.is_empty() {
            continue;
        }
        for it in &s.interrupts {
            let Some(fact) = stale
                .iter()
                .find(|f| f.only_at.is_empty() || f.only_at.contains(&it.point))
            else {
                continue;
            };
            // A stale record (a field a `changes:` edits on a record, read by a call) names no
            // resource; this case is about a revised resource.
            let Some(key) = s.source_resource(&fact.source) else {
                continue;
            };
            if !it
                .perturb
                .iter()
                .any(|p| p.resource.as_deref() == Some(key.as_str()))
            {
                continue;
            }
            // The premise needs a call whose argument uses the revised value; a revision that
            // changes a decision rather than an argument (some outsider scenarios) is not this case.
            let uses_revision = it.continuation.iter().any(|st| {
                let (Some(tool), Some(args)) = (&st.call, &st.args) else {
                    return false;
                };
                let spec = s.world.tools.iter().find(|t| &t.name == tool);
                needed_values(spec, args, &it.perturb)
                    .iter()
                    .any(|n| n.older.is_some())
            });
            if !uses_revision {
                continue;
            }
            let state = RestorePoint::build(s.clone(), &it.point).expect("state");
            let full = reg.handoff("A", &state).expect("handoff");
            // The older excerpt, as the source read it (a budgeted transcript may have cut it).
            let older = state
                .source_world
                .resource(&key)
                .map(|r| r.text.to_string())
                .unwrap_or_default();
            let mut lost: Handoff = full.clone();
            lost.text = format!("{}\n\nExcerpt of {key} as read:\n{older}", full.text)
                .replace("revision", "version")
                .replace("rev ", "v ")
                .replace("py@", "py at ");
            // The rewrite removes the revision words the shipped stale marks use; a scenario
            // whose stale fact is detected by other words (an outsider's) keeps its mark, so the
            // premise — the old excerpt without the mark — is not built there: skip that point.
            if fact
                .detectors
                .iter()
                .any(|d| d.matches(&normalize(&lost.text)))
            {
                continue;
            }
            let mut marked =
                SimAgent::new(SimKind::Careful, s.clone(), &state.interrupt, &full, 7, 0.0);
            drive(&mut marked, &state, &full);
            assert!(
                !marked.invisible.iter().any(|v| v.contains("older value")),
                "{} {}: with the stale mark it re-reads and acts on the new revision: {:?}",
                s.id,
                it.point,
                marked.invisible
            );
            let mut agent =
                SimAgent::new(SimKind::Careful, s.clone(), &state.interrupt, &lost, 7, 0.0);
            let (w, fin) = drive(&mut agent, &state, &lost);
            // A revised small number (`copied: true`) the old excerpt does not show as such is
            // re-read, not taken from the old text: the premise is not built there either.
            if !agent.invisible.is_empty()
                && agent.invisible.iter().all(|v| v.contains("→ re-read"))
            {
                continue;
            }
            assert!(
                agent.invisible.iter().any(|v| v.contains("older value")),
                "{} {}: no argument took the older value: {:?}",
                s.id,
                it.point,
                agent.invisible
            );
            assert!(
                !succeeds(&s, &state, &w, fin),
                "{} {}: acting on the older revision still succeeds",
                s.id,
                it.point
            );
            checked += 1;
        }
    }
    assert!(checked >= 7, "only {checked} points checked");
}

fn tmp(name: &str) -> PathBuf {
    tempfile::Builder::new()
        .prefix(name)
        .tempdir()
        .expect("tempdir")
        .keep()
}

/// C's checkpoint does not carry the team's addresses the invitations need: the destination
/// re-performs the source reads that showed them, and the scorer counts them as repeated work
/// (before the rule it sent the invitations with addresses it had never seen, and no read).
#[test]
fn an_invisible_value_is_reread_and_counted_as_repeated_work() {
    let out = tmp("values-reread");
    let cfg = RunConfig {
        scenarios: Some(vec!["calendar-offsite-planning".into()]),
        interrupts: Some(vec!["after_exploration".into()]),
        strategies: vec!["C".into()],
        models: vec!["sim:careful".into()],
        reps: 1,
        out: out.clone(),
        scales: vec![compaction_eval::scenario::volume::Scale::Base],
        attention: 0.0,
        ..RunConfig::default()
    };
    let plan = runner::plan(&cfg).expect("plan");
    runner::execute(&cfg, &plan, &mut Silent).expect("run");
    let recs = runner::read_records(&out.join("results.jsonl")).expect("records");
    let r = recs
        .iter()
        .find(|r| r.interrupt == "after_exploration")
        .expect("the cell ran");
    assert!(r.metrics.task_success, "{:?}", r.diagnostics);
    assert!(r.metrics.repeated_work >= 1, "{:?}", r.diagnostics);
}
