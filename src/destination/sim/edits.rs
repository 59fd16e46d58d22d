//! How a simulated destination's plan changes: a fact's edits applied to the reference
//! continuation, and which facts an override it acts on sets aside.
//!
//! Owns [`apply_edit`] and [`revokes`]. Must not: decide which edits apply (the agent does).

use crate::scenario::{Edit, Fact, FactKind, Scenario, Step, normalize};

/// Whether an override the destination acts on sets fact `f` aside: a sweeping one ("every
/// constraint above is void") every constraint, stop condition and approval requirement; one
/// that names its target, the facts of that kind — a constraint only when the override shares a
/// content word with it ("the freeze on deletes is lifted" and "no deletes during the freeze").
pub(super) fn revokes(o: &crate::provenance::Override, f: &Fact) -> bool {
    use crate::provenance::Target;
    let has = |t: Target| o.targets.contains(&t);
    let sweeping = o.general && has(Target::Constraint);
    match f.kind {
        FactKind::Constraint => has(Target::Constraint) && (o.general || shares_word(o, f)),
        FactKind::StopCondition => has(Target::StopCondition) || sweeping,
        FactKind::ApprovalState => has(Target::Approval) || sweeping,
        FactKind::PendingOperation | FactKind::StaleResource => has(Target::Reconcile),
        _ => false,
    }
}

/// Whether the override's statement and one of the fact's detector phrases share a content word
/// (four letters or more).
fn shares_word(o: &crate::provenance::Override, f: &Fact) -> bool {
    let words = |t: &str| -> Vec<String> {
        normalize(t)
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 4)
            .map(str::to_string)
            .collect()
    };
    let statement = words(&o.statement);
    f.detectors
        .iter()
        .flat_map(|d| d.phrases())
        .flat_map(words)
        .any(|w| statement.contains(&w))
}

pub(super) fn apply_edit(steps: &mut Vec<Step>, e: &Edit, s: &Scenario, starts: &mut usize) {
    if e.skip.is_some() {
        steps.retain(|st| !e.skips(st));
        return;
    }
    let step = if let Some(tool) = &e.call {
        Step {
            call: Some(tool.clone()),
            args: e.args.clone(),
            bind: e.bind.clone(),
            ..Default::default()
        }
    } else if let Some(ev) = &e.repeat {
        let Some(src) = s.events.iter().find(|x| &x.id == ev) else {
            return;
        };
        Step {
            call: src.call.clone(),
            args: src.args.clone(),
            ..Default::default()
        }
    } else if let Some(q) = &e.ask {
        Step {
            ask: Some(q.clone()),
            ..Default::default()
        }
    } else {
        return;
    };
    let finish_at = steps
        .iter()
        .position(|st| st.finish.is_some())
        .unwrap_or(steps.len());
    let at = match e.at.as_deref() {
        None | Some("start") => {
            *starts += 1;
            (*starts - 1).min(steps.len())
        }
        Some("end") => finish_at,
        Some(other) => {
            let tool = other.strip_prefix("before:").unwrap_or(other);
            steps
                .iter()
                .position(|st| st.call.as_deref() == Some(tool))
                .unwrap_or(finish_at)
        }
    };
    steps.insert(at, step);
}
