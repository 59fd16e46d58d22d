//! The checks that need the reference run replayed in a world: recorded results reproduced,
//! detectors matching their source events, success reached from every interrupt point with no
//! forbidden action, and every copied value derivable at the point. Run only on a structurally
//! valid scenario, since a replay assumes consistent references.

use super::Checker;
use crate::scenario::detect::normalize;
use crate::scenario::replay::{Replay, event_text, replay_prefix};
use crate::scenario::script::{Bindings, run_script};
use crate::scenario::values::{needed_values, seen_text, tools_text, visible};
use crate::spec::*;
use crate::world::{Outcome, Phase, apply_perturbations, forbidden_matches, lost_responses};

pub(super) fn check_replays(c: &mut Checker) {
    let s = c.s;
    let last = s.events.len() - 1;
    let full = match replay_prefix(s, last, &[]) {
        Ok(r) => r,
        Err(e) => {
            c.err(e.path, e.message);
            return;
        }
    };
    // Recorded results must be reproduced, and calls must not fail unless scripted to.
    for (i, (ev, res)) in s.events.iter().zip(&full.results).enumerate() {
        let Some(res) = res else { continue };
        let p = format!("events[{i}]");
        match (&res.output, ev.fault, ev.expect_error) {
            (Err(e), None, false) => c.err(
                format!("{p}.call"),
                format!(
                    "replaying `{}` failed: {e} (set `expect_error: true` if intended)",
                    ev.call.as_deref().unwrap_or("")
                ),
            ),
            (Ok(_), None, true) if res.outcome == Outcome::Ok => c.err(
                format!("{p}.expect_error"),
                "the call was expected to fail but succeeded",
            ),
            _ => {}
        }
        if let (Some(want), Ok(got)) = (&ev.result, &res.output)
            && want != got
        {
            c.err(
                format!("{p}.result"),
                format!(
                    "replaying the call gives {} but the recorded result is {}",
                    truncate(&got.to_string(), 300),
                    truncate(&want.to_string(), 300)
                ),
            );
        }
    }
    // Facts' detectors must match the event they come from.
    for (i, f) in s.facts.iter().enumerate() {
        let Some(k) = s.event_index(&f.source) else {
            continue;
        };
        let text = normalize(&event_text(&s.events[k], full.results[k].as_ref()));
        for (j, d) in f.detectors.iter().enumerate() {
            if !d.matches(&text) {
                c.err(
                    format!("facts[{i}].detectors[{j}]"),
                    format!(
                        "{} does not match the text of its source event `{}`",
                        d.describe(),
                        f.source
                    ),
                );
            }
        }
    }
    super::detectors::check_detectors(c, &full);
    super::detectors::check_hypothesis_hedges(c);
    super::grounding::check_when_lost(c, &full);
    // From every interrupt point, the reference continuation must reach success, break no rule,
    // and perform every required recovery behaviour: that is what calibrates the scorer.
    for (i, it) in s.interrupts.iter().enumerate() {
        let Some(cut) = s.event_index(&it.after) else {
            continue;
        };
        let p = format!("interrupts[{i}]");
        let mut replay = match replay_prefix(s, cut, &lost_responses(it)) {
            Ok(r) => r,
            Err(e) => {
                c.err(e.path, e.message);
                continue;
            }
        };
        super::changes::check_record_changes(c, i, it, &replay.world);
        if let Err(e) = apply_perturbations(&mut replay.world, it) {
            c.err(format!("{p}.perturb"), e);
            continue;
        }
        check_values(c, i, it, cut, &replay);
        let mut world = replay.world;
        let mut bindings = Bindings::new("validate");
        let out = run_script(
            &mut world,
            &it.continuation,
            &s.user,
            &mut bindings,
            Phase::Continuation,
        );
        for e in out.errors {
            c.err(format!("{p}.continuation"), e);
        }
        for (j, pr) in s.success_at(it).iter().enumerate() {
            if !world.eval(pr, out.finished) {
                let where_ = if it.success.is_some() {
                    format!("{p}.success[{j}]")
                } else {
                    format!("success[{j}]")
                };
                c.err(
                    where_,
                    format!(
                        "does not hold after the reference run is continued from `{}` by its reference continuation: {}",
                        it.point,
                        world.explain(pr, out.finished)
                    ),
                );
            }
        }
        for g in world.intent_groups(&s.world.tools) {
            if g.commits > 1 && g.in_continuation {
                c.err(
                    format!("{p}.continuation"),
                    format!(
                        "the reference continuation from `{}` commits `{}` {} times with the same arguments apart from its idempotency key ({}): that scores as a duplicate side effect. Give each distinct write an argument that tells it apart, or a key parameter that is not the record's own identity",
                        it.point,
                        g.tool,
                        g.commits,
                        serde_json::to_string(&g.args).unwrap_or_default()
                    ),
                );
            }
        }
        for (j, fb) in s.forbidden.iter().enumerate() {
            if !fb.only_at.is_empty() && !fb.only_at.contains(&it.point) {
                continue;
            }
            if world
                .ledger()
                .iter()
                .any(|e| e.phase == Phase::Continuation && forbidden_matches(fb, e, &world))
            {
                c.err(
                    format!("forbidden[{j}]"),
                    format!("the reference continuation from `{}` performs it", it.point),
                );
            }
        }
    }
}

/// Every copied argument value of the reference continuation (see [`crate::scenario::values`])
/// must be derivable: in the objective, in the text of an event at or before the interrupt point
/// (what a full handoff shows), or in a result of an earlier continuation step.
fn check_values(c: &mut Checker, i: usize, it: &Interrupt, cut: usize, replay: &Replay) {
    let s = c.s;
    let mut seen = seen_text(&s.objective);
    seen.push(' ');
    seen.push_str(&seen_text(&tools_text(&s.world.tools)));
    for (k, ev) in s.events.iter().enumerate().take(cut + 1) {
        seen.push(' ');
        seen.push_str(&seen_text(&event_text(ev, replay.results[k].as_ref())));
    }
    let mut world = replay.world.clone();
    let mut bindings = Bindings::new("validate");
    for (j, st) in it.continuation.iter().enumerate() {
        let text = if let Some(tool) = &st.call {
            let empty = Object::new();
            let raw = st.args.as_ref().unwrap_or(&empty);
            for n in needed_values(c.tool(tool), raw, &it.perturb) {
                if visible(&seen, &n.piece) || composed_small_number(c.tool(tool), &n) {
                    continue;
                }
                let what = if n.older.is_some() {
                    format!(
                        "the new text `{}` of a perturbed resource",
                        truncate(&n.piece, 80)
                    )
                } else {
                    format!("value `{}`", truncate(&n.piece, 80))
                };
                let origin = value_origin(s, cut, &world, &n.piece);
                c.err(
                    format!("interrupts[{i}].continuation[{j}].{}", n.path),
                    format!(
                        "{what} is not derivable from `{}`: it is not in the objective, in an event up to `{}`, or in an earlier result of the continuation{origin}",
                        it.point, it.after
                    ),
                );
            }
            let Ok(args) = bindings.resolve(raw) else {
                continue;
            };
            let r = world.call(Phase::Continuation, tool, &args, None, None);
            if let (Some(name), Ok(v)) = (&st.bind, &r.output) {
                bindings.bind(name, v);
            }
            r.text()
        } else if let Some(q) = &st.ask {
            s.user.answer(q).to_string()
        } else if let Some(id) = &st.request_approval {
            world.request_approval(Phase::Continuation, id).text()
        } else if let Some(key) = &st.retrieve {
            world.retrieve(Phase::Continuation, key).text()
        } else {
            break;
        };
        seen.push(' ');
        seen.push_str(&seen_text(&text));
    }
}

/// Where an underivable value does occur: an event after the interrupt point, or only the world
/// at restore (a resource or a record).
fn value_origin(s: &Scenario, cut: usize, world: &crate::world::World, piece: &str) -> String {
    let p = seen_text(piece);
    let full = replay_prefix(s, s.events.len() - 1, &[]).ok();
    for (k, ev) in s.events.iter().enumerate().skip(cut + 1) {
        let res = full.as_ref().and_then(|f| f.results[k].as_ref());
        if seen_text(&event_text(ev, res)).contains(&p) {
            return format!(
                "; it first occurs in `{}`, after the interrupt point",
                ev.id
            );
        }
    }
    for (key, r) in world.resources() {
        if seen_text(&r.text).contains(&p) {
            return format!("; it occurs only in the world at restore (resource `{key}`)");
        }
    }
    for name in s.world.collections.keys() {
        for rec in world.records(name) {
            if seen_text(&serde_json::to_string(rec).unwrap_or_default()).contains(&p) {
                let id = rec.get("id").and_then(|v| v.as_str()).unwrap_or("?");
                return format!(
                    "; it occurs only in the world at restore (record `{id}` of `{name}`)"
                );
            }
        }
    }
    String::new()
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

/// A number below 100 that the run shows nowhere before the point is taken as the agent's own
/// composition (a "two-year" term sent as `term_months: 24`), not as a value it failed to see —
/// unless its parameter declares `copied: true`. A simulated destination still has to see one
/// that the history does show (the rule of `crate::scenario::values`).
fn composed_small_number(tool: Option<&ToolSpec>, n: &crate::scenario::values::Needed) -> bool {
    let param = n
        .path
        .strip_prefix("args.")
        .and_then(|p| p.split(['.', '[']).next())
        .unwrap_or_default();
    let declared = tool
        .and_then(|t| t.params.get(param))
        .is_some_and(|p| matches!(p, ParamSpec::Full(d) if d.copied == Some(true)));
    n.older.is_none() && !declared && crate::scenario::values::is_small_number(&seen_text(&n.piece))
}
