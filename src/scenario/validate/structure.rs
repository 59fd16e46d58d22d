//! The structural checks: the scenario's identity and governed fields, the world (tools,
//! approvals, records), the reference run's events, and the governed-context declaration — each
//! a check of fields and the references between them. Nothing here replays the run.

use std::collections::BTreeSet;

use super::{Checker, HARNESS_TOOLS};
use crate::spec::*;
use crate::world::parse_time;

pub(super) fn check_identity(c: &mut Checker) {
    let s = c.s;
    let base_id = s.id.strip_suffix(BENIGN_SUFFIX).unwrap_or(&s.id);
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

pub(super) fn check_world(c: &mut Checker) {
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

pub(super) fn check_events(c: &mut Checker) {
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
        match (ev.fault, &ev.error) {
            (Some(Fault::Rejected), None) => c.err(
                format!("{p}.error"),
                "a `fault: rejected` call needs the `error` text the service answers with",
            ),
            (Some(Fault::Rejected), Some(e)) if e.trim().is_empty() => {
                c.err(format!("{p}.error"), "the error text is empty")
            }
            (Some(Fault::Rejected), Some(_)) if ev.result.is_some() => c.err(
                format!("{p}.result"),
                "a rejected call has no result (the caller sees `error`)",
            ),
            (Some(Fault::Rejected), Some(_)) => {}
            (_, Some(_)) => c.err(
                format!("{p}.error"),
                "`error` belongs to a call with `fault: rejected`",
            ),
            _ => {}
        }
    }
}

/// The governed-context declaration: the references a `coding-context-policy/1` can hold (seed
/// 004: 1–16 instructions, 0–16 evidence, names unique and at most 128 characters).
pub(super) fn check_context(c: &mut Checker) {
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
