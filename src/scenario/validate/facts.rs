//! The facts and the rules: each fact's source, detectors, points and edits (lost, obeyed,
//! promoted), the forbidden actions, the success predicates and the injection's fact and payload.
//! Checks references and shapes only; whether a detector matches its source event is for the
//! replays.

use std::collections::BTreeSet;

use super::Checker;
use crate::spec::*;
use crate::world::OPERATORS;

fn check_edit(c: &mut Checker, p: &str, e: &Edit) {
    let set = [
        e.call.is_some(),
        e.repeat.is_some(),
        e.ask.is_some(),
        e.skip.is_some(),
    ];
    if set.iter().filter(|b| **b).count() != 1 {
        c.err(
            p.to_string(),
            "set exactly one of `call`, `repeat`, `ask`, `skip`",
        );
    }
    if let Some(t) = &e.call {
        c.check_tool_ref(format!("{p}.call"), t);
    }
    if let Some(ev) = &e.repeat
        && let Some(k) = c.check_event_ref(format!("{p}.repeat"), ev)
        && c.s.events[k].call.is_none()
    {
        c.err(format!("{p}.repeat"), format!("`{ev}` is not a call"));
    }
    if let (Some(t), Some(_)) = (&e.skip, &e.args)
        && !c.s.world.tools.iter().any(|x| &x.name == t)
    {
        c.err(
            format!("{p}.args"),
            format!("`skip` with `args` removes calls of a tool; `{t}` is not a tool"),
        );
    }
    if let Some(at) = &e.at {
        if let Some(t) = at.strip_prefix("before:") {
            c.check_tool_ref(format!("{p}.at"), t);
        } else if at != "start" && at != "end" {
            c.err(
                format!("{p}.at"),
                format!("`{at}` is not `start`, `end` or `before:TOOL`"),
            );
        }
    }
}

pub(super) fn check_facts_and_rules(c: &mut Checker) {
    let s = c.s;
    let mut ids = BTreeSet::new();
    let points: BTreeSet<&str> = s.interrupts.iter().map(|i| i.point.as_str()).collect();
    for (i, f) in s.facts.iter().enumerate() {
        let p = format!("facts[{i}]");
        if !ids.insert(f.id.as_str()) {
            c.err(format!("{p}.id"), format!("duplicate fact id `{}`", f.id));
        }
        c.check_event_ref(format!("{p}.source"), &f.source);
        if f.detectors.is_empty() {
            c.err(
                format!("{p}.detectors"),
                "a fact needs at least one detector",
            );
        }
        for (j, pt) in f.only_at.iter().enumerate() {
            if !points.contains(pt.as_str()) {
                c.err(
                    format!("{p}.only_at[{j}]"),
                    format!("no interrupt point `{pt}`"),
                );
            }
        }
        for (j, e) in f.when_lost.iter().enumerate() {
            check_edit(c, &format!("{p}.when_lost[{j}]"), e);
        }
        for (j, e) in f.when_obeyed.iter().enumerate() {
            check_edit(c, &format!("{p}.when_obeyed[{j}]"), e);
        }
        if !f.when_obeyed.is_empty() && f.kind != FactKind::InjectedDirective {
            c.err(
                format!("{p}.when_obeyed"),
                "only an `injected_directive` fact can be obeyed",
            );
        }
        for (j, e) in f.when_promoted.iter().enumerate() {
            check_edit(c, &format!("{p}.when_promoted[{j}]"), e);
        }
        if !f.when_promoted.is_empty() && f.kind != FactKind::Hypothesis {
            c.err(
                format!("{p}.when_promoted"),
                "only a `hypothesis` fact can be promoted; use kind: hypothesis",
            );
        }
    }
    for (i, fb) in s.forbidden.iter().enumerate() {
        let p = format!("forbidden[{i}]");
        c.check_tool_ref(format!("{p}.call"), &fb.call);
        if ![
            "constraint",
            "injected_directive",
            "stop_condition",
            "identity",
        ]
        .contains(&fb.reason.as_str())
        {
            c.err(
                format!("{p}.reason"),
                format!(
                    "`{}` is not one of constraint, injected_directive, stop_condition, identity",
                    fb.reason
                ),
            );
        }
        for (j, pt) in fb.only_at.iter().enumerate() {
            if !points.contains(pt.as_str()) {
                c.err(
                    format!("{p}.only_at[{j}]"),
                    format!("no interrupt point `{pt}`"),
                );
            }
        }
        check_rule_args(c, &format!("{p}.args"), fb.args.as_ref());
        for (j, u) in fb.until.iter().enumerate() {
            c.check_tool_ref(format!("{p}.until[{j}].call"), &u.call);
            check_rule_args(c, &format!("{p}.until[{j}].args"), u.args.as_ref());
            if u.call == fb.call && u.args == fb.args {
                c.err(
                    format!("{p}.until[{j}]"),
                    "the rule's own call cannot be what it waits for",
                );
            }
        }
    }
    if s.success.is_empty() {
        c.err("success", "a scenario needs at least one success predicate");
    }
    for (i, pr) in s.success.iter().enumerate() {
        c.check_predicate(format!("success[{i}]"), pr);
        for (key, ev) in [("since", &pr.since), ("before", &pr.before)] {
            if let Some(ev) = ev {
                c.check_event_ref(format!("success[{i}].{key}"), ev);
            }
        }
    }
    let scoped = |pr: &Predicate| pr.since.is_some() || pr.before.is_some();
    for (i, it) in s.interrupts.iter().enumerate() {
        for (j, pr) in it.success.iter().flatten().enumerate() {
            if scoped(pr) {
                c.err(
                    format!("interrupts[{i}].success[{j}]"),
                    "`since`/`before` belong to the top-level `success`: a point's own list already applies to that point only",
                );
            }
        }
        if it.success.is_none() && s.success_at(it).is_empty() && !s.success.is_empty() {
            c.err(
                format!("interrupts[{i}]"),
                format!(
                    "no success predicate applies at `{}` (every one is scoped away by `since`/`before`)",
                    it.point
                ),
            );
        }
    }
    for t in &s.world.tools {
        if t.check.iter().flat_map(|ch| &ch.passes).any(scoped) {
            c.err(
                format!("world.tools.{}.check.passes", t.name),
                "`since`/`before` belong to the top-level `success`",
            );
        }
    }
    if let Some(inj) = &s.injection {
        match s.fact(&inj.fact) {
            None => c.err("injection.fact", format!("no fact `{}`", inj.fact)),
            Some(f) if f.kind != FactKind::InjectedDirective => c.err(
                "injection.fact",
                format!(
                    "fact `{}` is a {}, not an injected_directive",
                    f.id,
                    f.kind.as_str()
                ),
            ),
            _ => {}
        }
        let in_resources = s
            .world
            .resources
            .values()
            .any(|r| r.text.contains(&inj.payload));
        let in_events = s.events.iter().any(|e| {
            e.result
                .as_ref()
                .is_some_and(|r| r.to_string().contains(&inj.payload))
                || e.error.as_ref().is_some_and(|r| r.contains(&inj.payload))
        });
        let in_checks = s.world.tools.iter().flat_map(|t| &t.check).any(|ch| {
            ch.fail_output.contains(&inj.payload) || ch.pass_output.contains(&inj.payload)
        });
        if inj.payload.trim().is_empty() || !(in_resources || in_events || in_checks) {
            c.err(
                "injection.payload",
                "the payload must occur verbatim in a resource, a recorded call result, a rejected call's `error` or a check's output",
            );
        }
    }
}

/// A rule's `args`: an object that uses an operator uses only operators (`gt`, `gte`, `lt`, `lte`
/// with a number or numeric string; `contains` with a scalar).
fn check_rule_args(c: &mut Checker, p: &str, args: Option<&Object>) {
    for (k, v) in args.into_iter().flatten() {
        let Some(o) = v.as_object() else { continue };
        let ops = o.keys().filter(|x| OPERATORS.contains(&x.as_str())).count();
        if ops == 0 {
            continue;
        }
        if ops != o.len() {
            c.err(
                format!("{p}.{k}"),
                format!(
                    "mixes operators ({}) with fields: use operators only, or an object to compare whole",
                    OPERATORS.join(", ")
                ),
            );
            continue;
        }
        for (op, w) in o {
            let ok = if op == "contains" {
                ValueChange::scalar_text(w).is_some()
            } else {
                w.as_f64().is_some()
                    || w.as_str()
                        .is_some_and(|t| t.trim().replace(',', "").parse::<f64>().is_ok())
            };
            if !ok {
                c.err(
                    format!("{p}.{k}.{op}"),
                    format!(
                        "`{w}` is not a number (or, for `contains`, a string, number or boolean)"
                    ),
                );
            }
        }
    }
}
