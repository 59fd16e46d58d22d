//! Scenario validation: cross-references, replay of the reference run, reachability of success
//! from every interrupt point, and detectors that match their source events.
//!
//! Every problem names the path inside the file (`interrupts[2].perturb[0].approval`). Validation
//! collects all problems rather than stopping at the first, so an author fixes a file in one pass.

use std::collections::BTreeSet;

use super::detect::normalize;
use super::replay::{Replay, event_text, replay_prefix};
use super::script::{Bindings, run_script};
use super::values::{needed_values, seen_text, tools_text, visible};
use crate::spec::*;
use crate::world::{
    Outcome, Phase, apply_perturbations, forbidden_matches, lost_responses, parse_time,
};

pub use super::problem::Problem;

/// Names reserved for the harness's own tools.
pub const HARNESS_TOOLS: [&str; 4] = ["ask_user", "request_approval", "retrieve", "finish"];

struct Checker<'a> {
    s: &'a Scenario,
    problems: Vec<Problem>,
}

impl Checker<'_> {
    fn err(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.problems.push(Problem {
            path: path.into(),
            message: message.into(),
        });
    }

    fn tool(&self, name: &str) -> Option<&ToolSpec> {
        self.s.world.tools.iter().find(|t| t.name == name)
    }

    fn known_tools(&self) -> String {
        self.s
            .world
            .tools
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn check_tool_ref(&mut self, path: String, name: &str) {
        if self.tool(name).is_none() {
            let known = self.known_tools();
            self.err(
                path,
                format!("unknown tool `{name}` (the world defines: {known})"),
            );
        }
    }

    fn check_args(&mut self, path: String, tool: &str, args: Option<&Object>) {
        let Some(t) = self.tool(tool) else { return };
        let params: Vec<(String, bool)> = t
            .params
            .iter()
            .map(|(k, p)| (k.clone(), p.required()))
            .collect();
        let empty = Object::new();
        let args = args.unwrap_or(&empty);
        for k in args.keys() {
            if !params.iter().any(|(p, _)| p == k) {
                self.err(
                    format!("{path}.{k}"),
                    format!("`{tool}` has no parameter `{k}`"),
                );
            }
        }
        for (p, required) in params {
            if required && !args.contains_key(&p) {
                self.err(
                    path.clone(),
                    format!("missing required argument `{p}` of `{tool}`"),
                );
            }
        }
    }

    fn check_event_ref(&mut self, path: String, id: &str) -> Option<usize> {
        let idx = self.s.event_index(id);
        if idx.is_none() {
            self.err(path, format!("no event with id `{id}`"));
        }
        idx
    }

    fn check_predicate(&mut self, path: String, p: &Predicate) {
        let set = [
            p.collection.is_some(),
            p.outbox.is_some(),
            p.resource.is_some(),
            p.finished.is_some(),
        ];
        if set.iter().filter(|b| **b).count() != 1 {
            self.err(
                path.clone(),
                "set exactly one of `collection`, `outbox`, `resource`, `finished`",
            );
        }
        if let Some(c) = &p.collection
            && !self.s.world.collections.contains_key(c)
        {
            self.err(format!("{path}.collection"), format!("no collection `{c}`"));
        }
        if let Some(r) = &p.resource
            && !self.s.world.resources.contains_key(r)
            && !self
                .s
                .world
                .tools
                .iter()
                .any(|t| t.effect == EffectKind::WriteResource)
        {
            self.err(format!("{path}.resource"), format!("no resource `{r}`"));
        }
        if (p.collection.is_some() || p.outbox.is_some())
            && p.count.is_none()
            && p.count_at_least.is_none()
            && p.count_at_most.is_none()
        {
            self.err(
                path,
                "a count predicate needs `count`, `count_at_least` or `count_at_most`",
            );
        }
    }
}

/// Checks a parsed scenario; an empty list means it is valid. The benign variant (if any) is
/// checked too, since runs use it.
pub fn validate(s: &Scenario) -> Vec<Problem> {
    let mut problems = validate_one(s);
    if problems.is_empty()
        && let Some(benign) = s.benign_variant()
    {
        for mut p in validate_one(&benign) {
            p.message = format!("in the benign variant (injection removed): {}", p.message);
            problems.push(p);
        }
    }
    problems
}

fn validate_one(s: &Scenario) -> Vec<Problem> {
    let mut c = Checker {
        s,
        problems: Vec::new(),
    };
    check_identity(&mut c);
    check_world(&mut c);
    check_events(&mut c);
    check_interrupts(&mut c);
    check_facts_and_rules(&mut c);
    check_context(&mut c);
    c.problems.extend(super::lint::lint(s));
    if c.problems.is_empty() {
        // Replays assume consistent references; only run them on a structurally valid file.
        check_replays(&mut c);
    }
    c.problems
}

fn check_identity(c: &mut Checker) {
    let s = c.s;
    let base_id = s.id.strip_suffix(super::BENIGN_SUFFIX).unwrap_or(&s.id);
    if base_id.is_empty()
        || !base_id
            .chars()
            .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-')
    {
        c.err(
            "id",
            format!("`{}` must be lowercase letters, digits and dashes", s.id),
        );
    }
    for (field, v) in [
        ("title", &s.title),
        ("domain", &s.domain),
        ("objective", &s.objective),
        ("governed.tenant_id", &s.governed.tenant_id),
        ("governed.principal_id", &s.governed.principal_id),
        ("governed.policy_version", &s.governed.policy_version),
    ] {
        if v.trim().is_empty() {
            c.err(field, "must not be empty");
        }
    }
    match s.governed.authorization_mode.as_str() {
        "user_delegated" => {
            if s.governed.delegated_principal_id.is_none() {
                c.err(
                    "governed.delegated_principal_id",
                    "required when authorization_mode is user_delegated",
                );
            }
            if s.governed.delegated_scope.is_none() {
                c.err(
                    "governed.delegated_scope",
                    "required when authorization_mode is user_delegated",
                );
            }
        }
        "user" | "service" => {}
        other => c.err(
            "governed.authorization_mode",
            format!("`{other}` is not one of user_delegated, user, service"),
        ),
    }
    for name in s.governed.capabilities.keys() {
        if !s.world.tools.iter().any(|t| &t.name == name) {
            c.err(
                format!("governed.capabilities.{name}"),
                format!("no tool `{name}` in world.tools"),
            );
        }
    }
}

fn check_world(c: &mut Checker) {
    let s = c.s;
    if let Err(e) = parse_time(&s.world.clock, "world.clock") {
        c.err(e.path, e.message);
    }
    let mut names = BTreeSet::new();
    for (i, t) in s.world.tools.iter().enumerate() {
        let p = format!("world.tools[{i}]");
        if !names.insert(t.name.as_str()) {
            c.err(format!("{p}.name"), format!("duplicate tool `{}`", t.name));
        }
        if HARNESS_TOOLS.contains(&t.name.as_str()) {
            c.err(
                format!("{p}.name"),
                format!("`{}` is reserved for the harness", t.name),
            );
        }
        match t.effect {
            EffectKind::Read | EffectKind::Create | EffectKind::Update | EffectKind::Delete => {
                match &t.collection {
                    None => c.err(
                        format!("{p}.collection"),
                        format!("a `{}` tool needs a collection", t.effect.as_str()),
                    ),
                    Some(col) if !s.world.collections.contains_key(col) => c.err(
                        format!("{p}.collection"),
                        format!("no collection `{col}` in world.collections"),
                    ),
                    _ => {}
                }
            }
            EffectKind::ReadResource | EffectKind::WriteResource => {
                if !t.params.contains_key(t.id_param()) {
                    c.err(
                        format!("{p}.params"),
                        format!(
                            "a `{}` tool needs a `{}` parameter",
                            t.effect.as_str(),
                            t.id_param()
                        ),
                    );
                }
            }
            EffectKind::Check => match &t.check {
                None => c.err(format!("{p}.check"), "a `check` tool needs `check`"),
                Some(chk) => {
                    for (j, pr) in chk.passes.iter().enumerate() {
                        c.check_predicate(format!("{p}.check.passes[{j}]"), pr);
                    }
                }
            },
            EffectKind::Send => {}
        }
        if let Some(k) = &t.idempotency_key_param
            && !t.params.contains_key(k)
        {
            c.err(
                format!("{p}.idempotency_key_param"),
                format!("`{k}` is not one of the tool's params"),
            );
        }
        if let Some(a) = &t.requires_approval
            && !s.world.approvals.iter().any(|x| &x.id == a)
        {
            c.err(
                format!("{p}.requires_approval"),
                format!("no approval `{a}` in world.approvals"),
            );
        }
        if let Some(r) = &t.reconciled_by {
            match s.world.tools.iter().find(|x| &x.name == r) {
                None => c.err(format!("{p}.reconciled_by"), format!("no tool `{r}`")),
                Some(x) if x.effect.is_write() => c.err(
                    format!("{p}.reconciled_by"),
                    format!("`{r}` changes the world; reconciliation must be a read"),
                ),
                _ => {}
            }
        }
        for (k, prm) in &t.params {
            if !["string", "integer", "number", "boolean", "object", "array"].contains(&prm.ty()) {
                c.err(
                    format!("{p}.params.{k}"),
                    format!("`{}` is not a JSON type", prm.ty()),
                );
            }
        }
    }
    let mut ids = BTreeSet::new();
    for (i, a) in s.world.approvals.iter().enumerate() {
        let p = format!("world.approvals[{i}]");
        if !ids.insert(a.id.as_str()) {
            c.err(format!("{p}.id"), format!("duplicate approval `{}`", a.id));
        }
        c.check_tool_ref(format!("{p}.action"), &a.action);
        if let Some(e) = &a.expires_at
            && let Err(e) = parse_time(e, &format!("{p}.expires_at"))
        {
            c.err(e.path, e.message);
        }
    }
    for (name, col) in &s.world.collections {
        for (i, r) in col.records.iter().enumerate() {
            if !matches!(r.get("id"), Some(serde_json::Value::String(_))) {
                c.err(
                    format!("world.collections.{name}.records[{i}].id"),
                    "every record needs a string `id`",
                );
            }
        }
    }
}

fn check_events(c: &mut Checker) {
    let s = c.s;
    if s.events.is_empty() {
        c.err("events", "the reference run has no events");
    }
    let mut ids = BTreeSet::new();
    for (i, ev) in s.events.iter().enumerate() {
        let p = format!("events[{i}]");
        if !ids.insert(ev.id.as_str()) {
            c.err(format!("{p}.id"), format!("duplicate event id `{}`", ev.id));
        }
        match ev.kind() {
            None => c.err(
                p.clone(),
                "set exactly one of `user`, `assistant` (with `text`), `call`, `approval`",
            ),
            Some(EventKind::Assistant(_)) => {
                if ev.text.is_none() {
                    c.err(format!("{p}.text"), "an assistant event needs `text`");
                }
            }
            Some(EventKind::Call) => {
                let tool = ev.call.clone().unwrap_or_default();
                c.check_tool_ref(format!("{p}.call"), &tool);
                c.check_args(format!("{p}.args"), &tool, ev.args.as_ref());
            }
            Some(EventKind::Approval) => {
                if let Some(a) = &ev.approval
                    && !s.world.approvals.iter().any(|x| x.id == a.id)
                {
                    c.err(
                        format!("{p}.approval.id"),
                        format!("no approval `{}` in world.approvals", a.id),
                    );
                }
            }
            Some(EventKind::User) => {}
        }
        if ev.kind() != Some(EventKind::Call)
            && (ev.args.is_some() || ev.result.is_some() || ev.fault.is_some())
        {
            c.err(
                p.clone(),
                "`args`, `result` and `fault` belong to `call` events",
            );
        }
        if ev.text.is_some() && ev.assistant.is_none() {
            c.err(format!("{p}.text"), "`text` belongs to `assistant` events");
        }
    }
}

/// The governed-context declaration: the references a `coding-context-policy/1` can hold (seed
/// 004: 1–16 instructions, 0–16 evidence, names unique and at most 128 characters).
fn check_context(c: &mut Checker) {
    let s = c.s;
    let Some(d) = &s.context else {
        return;
    };
    let mut names = BTreeSet::new();
    if d.instructions.is_empty() || d.instructions.len() > 16 {
        c.err(
            "context.instructions",
            format!(
                "a policy holds 1 to 16 instructions, not {}",
                d.instructions.len()
            ),
        );
    }
    if d.evidence.len() > 16 {
        c.err(
            "context.evidence",
            format!(
                "a policy holds at most 16 retained evidence references, not {}",
                d.evidence.len()
            ),
        );
    }
    for (i, id) in d.instructions.iter().enumerate() {
        let p = format!("context.instructions[{i}]");
        match s.events.iter().find(|e| &e.id == id) {
            None => c.err(p.clone(), format!("no event `{id}`")),
            Some(e) if e.kind() != Some(EventKind::User) => c.err(
                p.clone(),
                format!("event `{id}` is not a `user` event: only what the user said is an original instruction"),
            ),
            Some(_) => {}
        }
        if id.chars().count() > 128 {
            c.err(p.clone(), "a reference name is at most 128 characters");
        }
        if !names.insert(id.as_str()) {
            c.err(p, format!("`{id}` is declared twice"));
        }
    }
    for (i, key) in d.evidence.iter().enumerate() {
        let p = format!("context.evidence[{i}]");
        if !s.world.resources.contains_key(key) {
            c.err(p.clone(), format!("no resource `{key}` in world.resources"));
        } else if !s
            .events
            .iter()
            .any(|e| s.source_resource(&e.id).as_deref() == Some(key))
        {
            c.err(
                p.clone(),
                format!(
                    "the reference run never reads `{key}` (with a read_resource tool), so it is never retained"
                ),
            );
        }
        if key.chars().count() > 128 {
            c.err(p.clone(), "a reference name is at most 128 characters");
        }
        if !names.insert(key.as_str()) {
            c.err(
                p,
                format!(
                    "`{key}` is declared twice (names are unique across instructions and evidence)"
                ),
            );
        }
    }
    // Every interrupt point's policy needs one instruction: the earliest point must follow one.
    let earliest = s
        .interrupts
        .iter()
        .filter_map(|it| s.event_index(&it.after))
        .min();
    if let Some(cut) = earliest
        && !d.instructions.is_empty()
        && !d
            .instructions
            .iter()
            .filter_map(|id| s.event_index(id))
            .any(|k| k <= cut)
    {
        c.err(
            "context.instructions",
            "no declared instruction comes before the earliest interrupt point, so its policy would have none",
        );
    }
}

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

fn check_interrupts(c: &mut Checker) {
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

fn check_facts_and_rules(c: &mut Checker) {
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

fn check_replays(c: &mut Checker) {
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
        for (j, fb) in s.forbidden.iter().enumerate() {
            if !fb.only_at.is_empty() && !fb.only_at.contains(&it.point) {
                continue;
            }
            if world
                .ledger()
                .iter()
                .any(|e| e.phase == Phase::Continuation && forbidden_matches(fb, e))
            {
                c.err(
                    format!("forbidden[{j}]"),
                    format!("the reference continuation from `{}` performs it", it.point),
                );
            }
        }
    }
}

/// Every copied argument value of the reference continuation (see [`super::values`]) must be
/// derivable: in the objective, in the text of an event at or before the interrupt point (what a
/// full handoff shows), or in a result of an earlier continuation step.
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
                if visible(&seen, &n.piece) {
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
