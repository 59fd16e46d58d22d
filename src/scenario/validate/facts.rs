//! The facts and the rules: each fact's source, detectors, points and edits (lost, obeyed,
//! promoted), the forbidden actions, the success predicates and the injection's fact and payload.
//! Checks references and shapes only; whether a detector matches its source event is for the
//! replays.

use std::collections::BTreeSet;

use super::Checker;
use crate::spec::*;

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
    }
    if s.success.is_empty() {
        c.err("success", "a scenario needs at least one success predicate");
    }
    for (i, pr) in s.success.iter().enumerate() {
        c.check_predicate(format!("success[{i}]"), pr);
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
        });
        if inj.payload.trim().is_empty() || !(in_resources || in_events) {
            c.err(
                "injection.payload",
                "the payload must occur verbatim in a resource or a recorded call result",
            );
        }
    }
}
