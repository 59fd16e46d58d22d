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
                pt.advance_minutes.is_some(),
                pt.lose_response.is_some(),
            ];
            if groups.iter().filter(|b| **b).count() != 1 {
                c.err(
                    pp.clone(),
                    "set exactly one of `approval`, `policy_version`, `capability`, `resource`, `advance_minutes`, `lose_response`",
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
                    if ch.from.trim().is_empty() || !old_text.is_some_and(|t| t.contains(&ch.from))
                    {
                        c.err(
                            format!("{pp}.changes[{k}].from"),
                            format!(
                                "`{}` does not occur in the resource's initial text",
                                ch.from
                            ),
                        );
                    }
                    if ch.to.trim().is_empty() || !new_text.contains(&ch.to) {
                        c.err(
                            format!("{pp}.changes[{k}].to"),
                            format!("`{}` does not occur in the new text", ch.to),
                        );
                    }
                }
            } else if !pt.changes.is_empty() {
                c.err(
                    format!("{pp}.changes"),
                    "`changes` belongs to a resource perturbation",
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
            if r.must_call.is_none() && r.must_request_approval.is_none() && !r.must_report_degraded
            {
                c.err(
                    rp,
                    "a recovery behaviour needs `must_call`, `must_request_approval` or `must_report_degraded`",
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
