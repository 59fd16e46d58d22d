//! Checks for a scenario author's silent mistakes: things that parse and replay but make a rule
//! vacuous or an oracle imperfect — a misspelt field in a predicate or a `forbidden` rule, an edit
//! or predicate naming a tool that does not exist, a fact that can never apply, a reference
//! continuation that skips a required recovery behaviour or retries an uncertain write blindly.
//!
//! Static only: it reads the scenario and never runs a world (that is `validate`'s replay).

use std::collections::BTreeSet;

use super::problem::Problem;
use crate::spec::*;

fn problem(path: String, message: String) -> Problem {
    Problem { path, message }
}

/// The fields a `where` may name on a collection: the fields of its initial records and the
/// parameters of the tools that write to it, plus `id`.
fn collection_fields(s: &Scenario, collection: &str) -> BTreeSet<String> {
    let mut f: BTreeSet<String> = ["id".to_string()].into();
    if let Some(c) = s.world.collections.get(collection) {
        for r in &c.records {
            f.extend(r.keys().cloned());
        }
    }
    for t in &s.world.tools {
        if t.collection.as_deref() == Some(collection) && t.effect.is_write() {
            f.extend(t.params.keys().cloned());
        }
    }
    f
}

/// The fields a `where` may name on the outbox: the send tools' parameters, `tool` and
/// `message_id`.
fn outbox_fields(s: &Scenario) -> BTreeSet<String> {
    let mut f: BTreeSet<String> = ["tool".to_string(), "message_id".to_string()].into();
    for t in s
        .world
        .tools
        .iter()
        .filter(|t| t.effect == EffectKind::Send)
    {
        f.extend(t.params.keys().cloned());
    }
    f
}

fn check_where(s: &Scenario, path: &str, p: &Predicate, out: &mut Vec<Problem>) {
    let Some(m) = &p.matching else { return };
    let (fields, what) = if let Some(c) = &p.collection {
        (collection_fields(s, c), format!("collection `{c}`"))
    } else if p.outbox.is_some() {
        (outbox_fields(s), "the outbox".to_string())
    } else {
        return;
    };
    for (k, v) in m {
        let field = k.strip_suffix("_contains").unwrap_or(k);
        if !fields.contains(field) {
            out.push(problem(
                format!("{path}.where.{k}"),
                format!(
                    "{what} has no field `{field}` (its fields: {}); a misspelt field never matches, so a `count: 0` predicate would always hold",
                    fields.iter().cloned().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        if p.outbox.is_some()
            && field == "tool"
            && let Some(t) = v.as_str()
            && !s.world.tools.iter().any(|x| x.name == t)
        {
            out.push(problem(
                format!("{path}.where.{k}"),
                format!("no tool `{t}`: fix the name (the outbox records the send tool's name)"),
            ));
        }
    }
}

/// Every authoring check; an empty list means none fired.
pub fn lint(s: &Scenario) -> Vec<Problem> {
    let mut out = Vec::new();
    for (i, p) in s.success.iter().enumerate() {
        check_where(s, &format!("success[{i}]"), p, &mut out);
    }
    for (k, it) in s.interrupts.iter().enumerate() {
        for (i, p) in it.success.iter().flatten().enumerate() {
            check_where(s, &format!("interrupts[{k}].success[{i}]"), p, &mut out);
        }
    }
    // A `forbidden` argument the tool does not take disables the rule silently (and an `until`
    // call's, the order it waits for).
    let patterns = s.forbidden.iter().enumerate().flat_map(|(i, fb)| {
        std::iter::once((format!("forbidden[{i}]"), &fb.call, &fb.args)).chain(
            fb.until
                .iter()
                .enumerate()
                .map(move |(j, u)| (format!("forbidden[{i}].until[{j}]"), &u.call, &u.args)),
        )
    });
    for (path, call, args) in patterns {
        let Some(tool) = s.world.tools.iter().find(|t| &t.name == call) else {
            continue;
        };
        for k in args.iter().flat_map(|a| a.keys()) {
            if !tool.params.contains_key(k) {
                out.push(problem(
                    format!("{path}.args.{k}"),
                    format!(
                        "`{}` takes no argument `{k}` (its parameters: {}); the rule would never match",
                        tool.name,
                        tool.params.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
        }
    }
    // `skip:` names a tool, an approval or a resource the continuation requests or retrieves.
    let approvals: BTreeSet<&str> = s.world.approvals.iter().map(|a| a.id.as_str()).collect();
    for (i, f) in s.facts.iter().enumerate() {
        let edits = f
            .when_lost
            .iter()
            .map(|e| ("when_lost", e))
            .chain(f.when_obeyed.iter().map(|e| ("when_obeyed", e)))
            .chain(f.when_promoted.iter().map(|e| ("when_promoted", e)));
        for (j, (list, e)) in edits.enumerate() {
            let Some(target) = &e.skip else { continue };
            let known = s.world.tools.iter().any(|t| &t.name == target)
                || approvals.contains(target.as_str())
                || s.world.resources.contains_key(target);
            if !known {
                out.push(problem(
                    format!("facts[{i}].{list}[{j}].skip"),
                    format!(
                        "`{target}` is neither a tool, an approval nor a resource: the skip removes nothing"
                    ),
                ));
            }
        }
        // A fact restricted to interrupt points that all come before its source event never
        // applies.
        if let Some(src) = s.event_index(&f.source)
            && !f.only_at.is_empty()
            && f.only_at.iter().all(|p| {
                s.interrupt(p)
                    .and_then(|it| s.event_index(&it.after))
                    .is_some_and(|cut| cut < src)
            })
        {
            out.push(problem(
                format!("facts[{i}].only_at"),
                format!(
                    "every listed interrupt point comes before the fact's source event `{}`: the fact never applies",
                    f.source
                ),
            ));
        }
    }
    for (k, it) in s.interrupts.iter().enumerate() {
        check_continuation(s, k, it, &mut out);
    }
    out
}

/// The reference continuation performs every required recovery behaviour in order, and never
/// retries a write left uncertain at the cut before reconciling it.
fn check_continuation(s: &Scenario, k: usize, it: &Interrupt, out: &mut Vec<Problem>) {
    let steps = &it.continuation;
    let first_of = |tools: &[String]| {
        steps
            .iter()
            .position(|st| {
                st.call.as_ref().is_some_and(|c| tools.contains(c))
                    || st
                        .request_approval
                        .as_ref()
                        .is_some_and(|a| tools.contains(a))
            })
            .unwrap_or(usize::MAX)
    };
    for (r_i, r) in it.recovery.iter().enumerate() {
        let before = first_of(&r.before);
        let done_at = if let Some(t) = &r.must_call {
            steps.iter().position(|st| {
                st.call.as_ref() == Some(t)
                    && r.with.as_ref().is_none_or(|w| {
                        let args = st.args.clone().unwrap_or_default();
                        w.iter().all(|(key, v)| args.get(key) == Some(v))
                    })
            })
        } else if let Some(a) = &r.must_request_approval {
            steps
                .iter()
                .position(|st| st.request_approval.as_ref() == Some(a))
        } else if r.must_ask {
            steps.iter().position(|st| st.ask.is_some())
        } else if r.must_report_degraded {
            steps
                .iter()
                .position(|st| st.finish.is_some() && st.degraded)
        } else {
            None
        };
        let ok = match done_at {
            Some(p) => r.must_report_degraded || p < before,
            None => false,
        };
        if !ok {
            out.push(problem(
                format!("interrupts[{k}].recovery[{r_i}]"),
                format!(
                    "the reference continuation from `{}` does not perform `{}` (in order): the oracle would score recovery below 1",
                    it.point, r.id
                ),
            ));
        }
    }
    // Writes left uncertain at the cut: timed out in the source prefix, not reconciled after.
    let Some(cut) = s.event_index(&it.after) else {
        return;
    };
    for (i, e) in s.events.iter().enumerate().take(cut + 1) {
        let (Some(tool), Some(f)) = (&e.call, e.fault) else {
            continue;
        };
        if f == crate::spec::Fault::Rejected {
            continue;
        }
        let Some(spec) = s.world.tools.iter().find(|t| &t.name == tool) else {
            continue;
        };
        let Some(reconcile) = &spec.reconciled_by else {
            continue;
        };
        let reconciled_in_source = s.events[i + 1..=cut]
            .iter()
            .any(|x| x.call.as_ref() == Some(reconcile));
        if reconciled_in_source {
            continue;
        }
        let retry = steps.iter().position(|st| st.call.as_ref() == Some(tool));
        let lookup = steps
            .iter()
            .position(|st| st.call.as_ref() == Some(reconcile));
        if let Some(r) = retry
            && lookup.is_none_or(|l| l > r)
        {
            out.push(problem(
                format!("interrupts[{k}].continuation[{r}]"),
                format!(
                    "retries `{tool}`, left uncertain by `{}`, without first reconciling it through `{reconcile}`",
                    e.id
                ),
            ));
        }
    }
}
