//! Whether a `when_lost` edit's values are grounded: every copied value of its call arguments
//! (the rule of `crate::scenario::values`) occurs somewhere in the scenario — the objective, the
//! tool definitions, an event (with its replayed result), a record, a resource or a resource's
//! new revision, a record change or added record, a user answer or an approval (resource keys and collection
//! names included). A value grounded nowhere is one a destination that lost the fact could not
//! have obtained. Composition is allowed where it is plain: a comma-separated list is grounded
//! when each item is, a negative number when its magnitude is (the sign is the write's
//! direction), and the path a `write_resource` call gives a document that does not exist yet is
//! the agent's own name for what it creates. Reads the scenario and its replay; changes nothing.

use super::Checker;
use crate::scenario::replay::{Replay, event_text};
use crate::scenario::values::{needed_values, seen_text, tools_text, visible};
use crate::spec::*;

/// Everything in the scenario a destination could have obtained a value from, as
/// [`visible`] searches it.
fn scenario_text(s: &Scenario, full: &Replay) -> String {
    let mut parts: Vec<String> = vec![s.objective.clone(), tools_text(&s.world.tools)];
    parts.extend(s.world.resources.keys().cloned());
    parts.extend(s.world.collections.keys().cloned());
    for (ev, r) in s.events.iter().zip(&full.results) {
        parts.push(event_text(ev, r.as_ref()));
    }
    for c in s.world.collections.values() {
        for rec in &c.records {
            parts.push(serde_json::to_string(rec).unwrap_or_default());
        }
    }
    for r in s.world.resources.values() {
        parts.push(r.text.clone());
    }
    for it in &s.interrupts {
        for p in &it.perturb {
            parts.extend(p.text.iter().chain(&p.replace).cloned());
            parts.extend(
                p.add
                    .iter()
                    .map(|r| serde_json::to_string(r).unwrap_or_default()),
            );
            for ch in &p.changes {
                parts.push(serde_json::to_string(&ch.to).unwrap_or_default());
                parts.extend(ValueChange::scalar_text(&ch.to));
            }
        }
    }
    for a in &s.user.answers {
        parts.push(a.answer.clone());
    }
    parts.push(s.user.default_answer.clone());
    for a in &s.world.approvals {
        parts.push(serde_json::to_string(a).unwrap_or_default());
    }
    let mut out = String::new();
    for p in parts {
        out.push(' ');
        out.push_str(&seen_text(&p));
    }
    out
}

/// Every copied value of a `when_lost` call must occur in [`scenario_text`].
pub(super) fn check_when_lost(c: &mut Checker, full: &Replay) {
    let s = c.s;
    let text = scenario_text(s, full);
    for (i, f) in s.facts.iter().enumerate() {
        for (j, e) in f.when_lost.iter().enumerate() {
            let (Some(tool), Some(args)) = (&e.call, &e.args) else {
                continue;
            };
            let spec = c.tool(tool);
            let created = spec
                .filter(|t| t.effect == EffectKind::WriteResource)
                .map(|t| format!("args.{}", t.id_param()));
            for n in needed_values(spec, args, &[]) {
                let new_document = created.as_deref() == Some(n.path.as_str())
                    && !s.world.resources.contains_key(&n.piece);
                if new_document || grounded(&text, &n.piece) {
                    continue;
                }
                c.err(
                    format!("facts[{i}].when_lost[{j}].{}", n.path),
                    format!(
                        "value `{}` is grounded nowhere in the scenario (no event, record, resource, user answer or approval, nor the objective or a tool definition): a destination that lost `{}` could not have obtained it",
                        n.piece, f.id
                    ),
                );
            }
        }
    }
}

/// Whether `piece` occurs in `text`, as a whole, as a list of items that each occur, or (a
/// negative number) by its magnitude.
fn grounded(text: &str, piece: &str) -> bool {
    if visible(text, piece) {
        return true;
    }
    if let Some(m) = piece.strip_prefix('-')
        && m.starts_with(|ch: char| ch.is_ascii_digit())
    {
        return visible(text, m);
    }
    piece.contains(',')
        && piece
            .split(',')
            .map(str::trim)
            .all(|p| !p.is_empty() && visible(text, p))
}
