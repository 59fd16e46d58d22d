//! C and D in a compaction chain (`--cycles`): the next checkpoint is the previous checkpoint's
//! document with the events since added, never a reading of the history the previous one
//! replaced.
//!
//! Owns [`merge`]: what of the previous document is kept as it was (statements with their kind,
//! origin and verification, operations with status and resume rule, excerpts and references,
//! omissions and transformations), what the new events settle (an uncertain write the source
//! run looked up since, an approval the approval system now shows differently, the focus) and
//! how the two are put together. Must not: read the events before the previous compaction, or
//! change what C builds from events (that is `checkpoint::build`, applied to the new ones).

use super::fields::returned_fields;
use crate::checkpoint::{Checkpoint, OperationStatus, ResumeRule, Transformation};
use crate::state::InterruptedState;

/// The note opening every next-step list ([`super::checkpoint::build`]'s last step).
const FOCUS_STEP: &str = "Continue from the focus: ";

/// `previous` (as its destination received it) carried forward, with `new` — the checkpoint
/// `checkpoint::build` makes of `since`, the events after the previous compaction — added.
pub fn merge(previous: &Checkpoint, new: Checkpoint, since: &InterruptedState) -> Checkpoint {
    let mut cp = previous.clone();
    let (first, last) = previous.envelope.source_event_range.clone();
    cp.objective = new.objective;
    cp.envelope = new.envelope;
    let new_last = cp.envelope.source_event_range.1.clone();
    cp.envelope.source_event_range = (
        first.clone(),
        if new_last.is_empty() {
            last.clone()
        } else {
            new_last
        },
    );

    // An approval the new checkpoint states again replaces what the previous one said of it.
    let renewed: Vec<&str> = since
        .approvals
        .iter()
        .map(|a| a.id.as_str())
        .filter(|id| {
            new.statements
                .iter()
                .any(|s| s.origin == "approver" && s.origin_ref == *id)
                || new
                    .stop_conditions
                    .iter()
                    .any(|c| c.starts_with(&format!("Approval {id} for ")))
        })
        .collect();
    cp.statements
        .retain(|s| !(s.origin == "approver" && renewed.contains(&s.origin_ref.as_str())));
    cp.stop_conditions.retain(|c| {
        !renewed
            .iter()
            .any(|id| c.starts_with(&format!("Approval {id} for ")))
    });
    cp.next_steps.retain(|n| {
        !n.starts_with(FOCUS_STEP)
            && !renewed
                .iter()
                .any(|id| n.starts_with(&format!("Request approval {id} ")))
    });

    // An uncertain write the source run has looked up since is settled: committed.
    for op in cp
        .operations
        .iter_mut()
        .filter(|o| o.status == OperationStatus::Unknown)
    {
        let Some(key) = op.idempotency_key.clone() else {
            continue;
        };
        let Some(found) = since.lookup_of_key(&key, 0).and_then(|e| e.call.as_ref()) else {
            continue;
        };
        op.status = OperationStatus::Committed;
        op.resume = ResumeRule::DoNotRepeat;
        op.returned = returned_fields(&found.result_text, &op.args);
        let said = format!("{} with idempotency key {key}", op.tool);
        cp.stop_conditions
            .retain(|c| !c.starts_with(&format!("{said} timed out")));
        cp.next_steps
            .retain(|n| !n.starts_with(&format!("Reconcile {said}")));
    }

    for c in new.stop_conditions {
        if !cp.stop_conditions.contains(&c) {
            cp.stop_conditions.push(c);
        }
    }
    cp.open_questions.extend(new.open_questions);
    cp.statements.extend(new.statements);
    cp.operations.extend(new.operations);
    for r in new.resources {
        match cp.resources.iter_mut().find(|x| x.key == r.key) {
            Some(x) => *x = r,
            None => cp.resources.push(r),
        }
    }
    cp.success_criteria = new.success_criteria;
    // The focus moves only with a new decision.
    if since.events.iter().any(|e| e.kind == "decision") {
        cp.focus = new.focus;
    }
    cp.next_steps.extend(
        new.next_steps
            .into_iter()
            .filter(|n| !n.starts_with(FOCUS_STEP)),
    );
    cp.next_steps.push(format!("{FOCUS_STEP}{}", cp.focus));
    cp.derivation.transformations.push(Transformation {
        kind: "rebuilt_from_checkpoint".into(),
        from: vec![first, last],
        note: format!(
            "the previous checkpoint (events {} to {}) carried forward as it was, with the {} events since added",
            previous.envelope.source_event_range.0,
            previous.envelope.source_event_range.1,
            since.events.len()
        ),
    });
    cp.derivation
        .transformations
        .extend(new.derivation.transformations);
    cp.derivation.omissions.extend(new.derivation.omissions);
    cp
}
