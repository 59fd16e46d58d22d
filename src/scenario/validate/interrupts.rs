//! The interrupt points: their names, the event each follows, their perturbations, the reference
//! continuation's steps, the recovery behaviours and the point's own success predicates. Checks
//! references and shapes only; whether the continuation succeeds is for the replays.

use std::collections::BTreeSet;

use super::Checker;
use crate::spec::*;

const STANDARD_POINTS: [&str; 4] = [
    "after_exploration",
    "mid_implementation",
    "pending_approval",
    "uncertain_side_effect",
];

fn check_step(c: &mut Checker, p: &str, step: &Step) {
    let set = [
        step.call.is_some(),
        step.ask.is_some(),
        step.request_approval.is_some(),
        step.retrieve.is_some(),
        step.finish.is_some(),
    ];
    if set.iter().filter(|b| **b).count() != 1 {
        c.err(
            p.to_string(),
            "set exactly one of `call`, `ask`, `request_approval`, `retrieve`, `finish`",
        );
    }
    if let Some(t) = &step.call {
        c.check_tool_ref(format!("{p}.call"), t);
        c.check_args(format!("{p}.args"), t, step.args.as_ref());
    }
    if let Some(a) = &step.request_approval
        && !c.s.world.approvals.iter().any(|x| &x.id == a)
    {
        c.err(
            format!("{p}.request_approval"),
            format!("no approval `{a}` in world.approvals"),
        );
    }
}

pub(super) fn check_interrupts(c: &mut Checker) {
    let s = c.s;
    if s.interrupts.is_empty() {
        c.err(
            "interrupts",
            "a scenario needs at least one interrupt point",
        );
    }
    let mut points = BTreeSet::new();
    for (i, it) in s.interrupts.iter().enumerate() {
        let p = format!("interrupts[{i}]");
        if !points.insert(it.point.as_str()) {
            c.err(
                format!("{p}.point"),
                format!("duplicate interrupt point `{}`", it.point),
            );
        }
        if !STANDARD_POINTS.contains(&it.point.as_str())
            && !it
                .point
                .chars()
                .all(|ch| ch.is_ascii_lowercase() || ch == '_' || ch.is_ascii_digit())
        {
            c.err(
                format!("{p}.point"),
                "a custom point name must be lowercase with underscores",
            );
        }
        let cut = c.check_event_ref(format!("{p}.after"), &it.after);
        for (j, pt) in it.perturb.iter().enumerate() {
            let pp = format!("{p}.perturb[{j}]");
            let groups = [
                pt.approval.is_some(),
                pt.policy_version.is_some(),
                pt.capability.is_some(),
                pt.resource.is_some(),
                pt.collection.is_some(),
                pt.advance_minutes.is_some(),
                pt.lose_response.is_some(),
            ];
            if groups.iter().filter(|b| **b).count() != 1 {
                c.err(
                    pp.clone(),
                    "set exactly one of `approval`, `policy_version`, `capability`, `resource`, `collection`, `advance_minutes`, `lose_response`",
                );
            }
            if let Some(a) = &pt.approval {
                if !s.world.approvals.iter().any(|x| &x.id == a) {
                    c.err(
                        format!("{pp}.approval"),
                        format!("no approval `{a}` in world.approvals"),
                    );
                }
                if pt.status.is_none() {
                    c.err(
                        format!("{pp}.status"),
                        "an approval perturbation needs `status`",
                    );
                }
            }
            if let Some(cap) = &pt.capability {
                if !s.governed.capabilities.contains_key(cap) {
                    c.err(
                        format!("{pp}.capability"),
                        format!("no capability `{cap}` in governed.capabilities"),
                    );
                }
                if pt.version.is_none() {
                    c.err(
                        format!("{pp}.version"),
                        "a capability perturbation needs `version`",
                    );
                }
            }
            if let Some(r) = &pt.resource {
                if !s.world.resources.contains_key(r) {
                    c.err(format!("{pp}.resource"), format!("no resource `{r}`"));
                }
                if pt.text.is_none() && (pt.find.is_none() || pt.replace.is_none()) {
                    c.err(
                        pp.clone(),
                        "a resource perturbation needs `text`, or `find` and `replace`",
                    );
                }
                let old_text = s.world.resources.get(r).map(|x| x.text.as_str());
                let new_text = pt.text.as_deref().or(pt.replace.as_deref()).unwrap_or("");
                for (k, ch) in pt.changes.iter().enumerate() {
                    let cp = format!("{pp}.changes[{k}]");
                    check_resource_change(c, &cp, ch, old_text, new_text);
                }
            } else if pt.collection.is_some() || pt.record.is_some() {
                check_record_perturbation(c, &pp, pt);
            } else if !pt.changes.is_empty() {
                c.err(
                    format!("{pp}.changes"),
                    "`changes` belongs to a resource or a record perturbation",
                );
            }
            if let Some(e) = &pt.lose_response
                && let Some(k) = c.check_event_ref(format!("{pp}.lose_response"), e)
            {
                if s.events[k].call.is_none() {
                    c.err(
                        format!("{pp}.lose_response"),
                        format!("`{e}` is not a call"),
                    );
                }
                if cut.is_some_and(|cut| k > cut) {
                    c.err(
                        format!("{pp}.lose_response"),
                        format!("`{e}` comes after the interrupt point"),
                    );
                }
            }
        }
        if it.continuation.is_empty() {
            c.err(
                format!("{p}.continuation"),
                "the reference continuation is empty",
            );
        }
        for (j, st) in it.continuation.iter().enumerate() {
            check_step(c, &format!("{p}.continuation[{j}]"), st);
        }
        if it.continuation.last().is_some_and(|st| st.finish.is_none()) {
            c.err(
                format!("{p}.continuation"),
                "the reference continuation must end with a `finish` step",
            );
        }
        for (j, r) in it.recovery.iter().enumerate() {
            let rp = format!("{p}.recovery[{j}]");
            if let Some(t) = &r.must_call {
                c.check_tool_ref(format!("{rp}.must_call"), t);
            }
            for (k, t) in r.before.iter().enumerate() {
                c.check_tool_ref(format!("{rp}.before[{k}]"), t);
            }
            if r.must_call.is_none()
                && r.must_request_approval.is_none()
                && !r.must_report_degraded
                && !r.must_ask
            {
                c.err(
                    rp,
                    "a recovery behaviour needs `must_call`, `must_request_approval`, `must_ask` or `must_report_degraded`",
                );
            }
        }
        if let Some(succ) = &it.success {
            for (j, pr) in succ.iter().enumerate() {
                c.check_predicate(format!("{p}.success[{j}]"), pr);
            }
        }
    }
}

/// A resource's `changes` entry: text that occurs in the older revision and text of the new one.
fn check_resource_change(
    c: &mut Checker,
    cp: &str,
    ch: &ValueChange,
    old_text: Option<&str>,
    new_text: &str,
) {
    if ch.field.is_some() {
        c.err(
            format!("{cp}.field"),
            "`field` belongs to a record change (`collection` + `record`); a resource change names text",
        );
    }
    let from = ValueChange::scalar_text(&ch.from);
    let to = ValueChange::scalar_text(&ch.to);
    for (which, v, t) in [("from", &ch.from, &from), ("to", &ch.to, &to)] {
        if t.is_none() {
            c.err(
                format!("{cp}.{which}"),
                format!(
                    "a resource holds text: `{which}` must be a string, number or boolean, not `{v}` (an object or array belongs to a record change)"
                ),
            );
        }
    }
    if let Some(f) = &from
        && (f.trim().is_empty() || !old_text.is_some_and(|t| t.contains(f.as_str())))
    {
        c.err(
            format!("{cp}.from"),
            format!("`{f}` does not occur in the resource's initial text"),
        );
    }
    if let Some(t) = &to
        && (t.trim().is_empty() || !new_text.contains(t.as_str()))
    {
        c.err(
            format!("{cp}.to"),
            format!("`{t}` does not occur in the new text"),
        );
    }
    if from.is_some() && from == to {
        c.err(
            format!("{cp}.to"),
            "`to` equals `from`: the change changes nothing",
        );
    }
}

/// A record perturbation's shape: an existing collection, a record id, and `changes` that each
/// name a field. Whether the field exists and holds `from` at restore is for the replays.
fn check_record_perturbation(c: &mut Checker, pp: &str, pt: &Perturbation) {
    match &pt.collection {
        None => c.err(
            format!("{pp}.collection"),
            "a record perturbation needs `collection` (with `record`)",
        ),
        Some(col) if !c.s.world.collections.contains_key(col) => c.err(
            format!("{pp}.collection"),
            format!("no collection `{col}` in world.collections"),
        ),
        Some(_) => {}
    }
    if let Some(rec) = &pt.add {
        if pt.record.is_some() || !pt.changes.is_empty() {
            c.err(
                pp.to_string(),
                "`add` brings a new record; `record` + `changes` change an existing one: use two perturbations",
            );
        }
        if !rec.get("id").is_some_and(|v| v.is_string()) {
            c.err(
                format!("{pp}.add.id"),
                "an added record needs a string `id`",
            );
        }
    } else if pt.record.is_none() {
        c.err(
            format!("{pp}.record"),
            "a record perturbation needs `record` (the record's id) with `changes`, or `add` (a new record)",
        );
    } else if pt.changes.is_empty() {
        c.err(
            format!("{pp}.changes"),
            "a record perturbation needs `changes: [{field, from, to}]`",
        );
    }
    if pt.text.is_some() || pt.find.is_some() || pt.replace.is_some() {
        c.err(
            pp.to_string(),
            "`text`, `find` and `replace` belong to a resource perturbation; a record changes by `changes`",
        );
    }
    for (k, ch) in pt.changes.iter().enumerate() {
        match ch.field.as_deref() {
            None => c.err(
                format!("{pp}.changes[{k}].field"),
                "a record change needs `field` (a path into the record, e.g. `capacity` or `remit_to.postal_code`)",
            ),
            Some(f) if parse_field_path(f).is_none() => c.err(
                format!("{pp}.changes[{k}].field"),
                format!("`{f}` is not a field path (`name`, `a.b`, `items[0].qty`)"),
            ),
            Some(_) => {}
        }
    }
}
