//! The source run's reads a simulated destination can re-perform: every call of a tool that
//! changes nothing, up to the interrupt point, with the text of the result the source saw,
//! replayed once per point and kept for the most recent points.
//!
//! Owns the replay, its cache and the lookups on it (which read carries a value, whether the
//! reference makes a call). Must not: decide whether to re-read (the agent does).

use std::sync::{Arc, Mutex};

use crate::scenario::values::seen_text;
use crate::scenario::{Interrupt, Object, Scenario, event_text, replay_prefix};

pub(super) type SourceRead = (String, String, Object, String);

type ReadCache = Vec<(std::sync::Weak<Scenario>, String, Arc<Vec<SourceRead>>)>;

/// At most this many points' source reads are kept: cells come point by point, and a run's
/// every point kept would hold the reads of the whole matrix (tens of megabytes at `40k`).
const SOURCE_READS_KEPT: usize = 16;

/// [`replay_source_reads`], computed once per scenario (the same `Arc`, still alive) and point
/// among the points most recently asked.
pub(super) fn source_reads(s: &Arc<Scenario>, it: &Interrupt) -> Arc<Vec<SourceRead>> {
    static CACHE: Mutex<ReadCache> = Mutex::new(Vec::new());
    let key = format!("{}\u{0}{}", it.point, it.after);
    if let Ok(mut cache) = CACHE.lock() {
        cache.retain(|(w, _, _)| w.strong_count() > 0);
        if let Some((_, _, r)) = cache
            .iter()
            .find(|(w, k, _)| *k == key && w.upgrade().is_some_and(|a| Arc::ptr_eq(&a, s)))
        {
            return r.clone();
        }
        let r = Arc::new(replay_source_reads(s, it));
        if cache.len() >= SOURCE_READS_KEPT {
            cache.remove(0);
        }
        cache.push((Arc::downgrade(s), key, r.clone()));
        return r;
    }
    Arc::new(replay_source_reads(s, it))
}

/// The source run's reads (calls of tools that change nothing) up to the interrupt point, with
/// the text of the result the source saw.
fn replay_source_reads(s: &Scenario, it: &Interrupt) -> Vec<SourceRead> {
    let Some(cut) = s.event_index(&it.after) else {
        return Vec::new();
    };
    let Ok(replay) = replay_prefix(s, cut, &crate::world::lost_responses(it)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, ev) in s.events.iter().enumerate().take(cut + 1) {
        let (Some(tool), Some(Some(r))) = (&ev.call, replay.results.get(k)) else {
            continue;
        };
        let reads = s
            .world
            .tools
            .iter()
            .any(|t| &t.name == tool && !t.effect.is_write());
        if reads && r.output.is_ok() {
            out.push((
                ev.id.clone(),
                tool.clone(),
                ev.args.clone().unwrap_or_default(),
                seen_text(&event_text(ev, Some(r))),
            ));
        }
    }
    out
}

impl super::SimAgent {
    /// The latest source read not yet re-performed whose result carries one of `wanted`.
    pub(super) fn read_carrying(&mut self, wanted: &[Option<&str>]) -> Option<SourceRead> {
        let reads = self
            .source_reads
            .get_or_insert_with(|| source_reads(&self.scenario, &self.interrupt));
        reads
            .iter()
            .rev()
            .find(|(id, _, _, text)| {
                !self.reread.contains(id)
                    && wanted
                        .iter()
                        .flatten()
                        .any(|w| text.contains(&seen_text(w)))
            })
            .cloned()
    }

    /// Whether the reference continuation itself makes this call (so making it shows no
    /// behaviour of the destination's own).
    pub(super) fn reference_makes(&self, tool: &str, args: &Object) -> bool {
        self.interrupt
            .continuation
            .iter()
            .any(|st| st.call.as_deref() == Some(tool) && st.args.as_ref() == Some(args))
    }
}
