//! Repeated work: reads the source already made, on unchanged state, that the reference
//! continuation does not make.
//!
//! "Unchanged state" is judged for every read, as README defines it: a continuation read repeats
//! the latest source read with the same tool and arguments only if that source read succeeded and
//! saw the same state — for a document (`read_resource`) the same `resource@revision`, for a
//! collection read or a check the same result (the ledger's `result_digest`). A read of a
//! collection that changed since the source read it (a record created, updated or deleted, by
//! the source, a perturbation or the continuation) is not repeated work.
//!
//! Owns the matching of continuation reads against the reference and the source. Never reads the
//! handoff or the destination's claims, and never counts writes (those are duplicates).

use super::{args_include, continuation};
use crate::record::RepeatedRead;
use crate::scenario::{EffectKind, Interrupt, Object};
use crate::world::{LedgerEntry, Phase, World};

pub(super) fn repeated_reads(it: &Interrupt, w: &World) -> Vec<RepeatedRead> {
    // Each reference read excuses one matching continuation read.
    let mut reference: Vec<(String, Object)> = it
        .continuation
        .iter()
        .filter_map(|st| Some((st.call.clone()?, st.args.clone().unwrap_or_default())))
        .collect();
    let source: Vec<&LedgerEntry> = w
        .ledger()
        .iter()
        .filter(|e| e.phase == Phase::Source)
        .collect();
    let mut out = Vec::new();
    for e in continuation(w) {
        if e.effect.is_none_or(|k| k.is_write()) {
            continue;
        }
        if let Some(pos) = reference
            .iter()
            .position(|(t, a)| *t == e.tool && args_include(&e.args, Some(a)))
        {
            reference.remove(pos);
            continue;
        }
        let same = source
            .iter()
            .rev()
            .find(|x| x.tool == e.tool && x.args == e.args);
        if let Some(prev) = same
            && same_state(prev, e)
        {
            out.push(RepeatedRead {
                seq: e.seq,
                tool: e.tool.clone(),
                as_event: prev.event.clone().unwrap_or_default(),
            });
        }
    }
    out
}

/// Whether a continuation read saw the state the source read saw (both succeeded).
fn same_state(source: &LedgerEntry, cont: &LedgerEntry) -> bool {
    if cont.effect == Some(EffectKind::ReadResource) {
        source.touched.is_some() && source.touched == cont.touched
    } else {
        source.result_digest.is_some() && source.result_digest == cont.result_digest
    }
}
