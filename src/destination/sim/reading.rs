//! A simulated destination's first reading of its handoff: the canonical layout it reads, its
//! normalised copy, the parts (authoritative or advisory) with their digests, and the values the
//! handoff shows. It depends on the handoff alone, so the cells that continue one handoff share
//! it: the last reading is kept per thread, and a run gives a handoff's cells to one worker
//! together (`runner::execute`), so every reader after the first copies it instead of reading
//! again.
//!
//! Owns: [`Reading`] and its per-thread memo. Must not: read the scenario (what a destination
//! knows beside the handoff is `SimAgent`'s), or draw anything.

use std::cell::RefCell;
use std::rc::Rc;

use crate::destination::layout::{canonical, canonical_offset};
use crate::handoff::Handoff;
use crate::scenario::normalize;
use crate::scenario::values::seen_text;

/// What reading a handoff gives, before any step.
#[derive(Debug)]
pub(super) struct Reading {
    /// The canonical layout of the whole text.
    pub text: String,
    /// Its normalised copy.
    pub knowledge: String,
    /// (text, its offset in the canonical handoff, authoritative) of each part.
    pub parts: Vec<(String, usize, bool)>,
    /// [`crate::text::digest`] of each part's text.
    pub part_digests: Vec<u64>,
    /// The values the handoff's text shows (`seen_text`).
    pub seen: String,
}

thread_local! {
    /// The last handoff read on this thread, by the digests of what the reading depends on.
    static LAST: RefCell<Option<(Key, Rc<Reading>)>> = const { RefCell::new(None) };
}

/// What a reading depends on: the handoff's text and, when it has one, its advisory split.
type Key = (u64, usize, Option<(u64, u64, usize)>);

fn key(h: &Handoff) -> Key {
    (
        crate::text::digest(&h.text),
        h.text.len(),
        h.advisory.as_ref().map(|a| {
            (
                crate::text::digest(&a.authoritative),
                crate::text::digest(&a.summary),
                a.summary_at,
            )
        }),
    )
}

/// Drops this thread's last reading.
pub(crate) fn forget() {
    LAST.with(|l| *l.borrow_mut() = None);
}

/// The reading of `h`: the thread's last one if it is of the same handoff, else a new one.
pub(super) fn of(h: &Handoff) -> Rc<Reading> {
    let k = key(h);
    if let Some(r) = LAST.with(|l| {
        l.borrow()
            .as_ref()
            .filter(|(lk, _)| *lk == k)
            .map(|(_, r)| r.clone())
    }) {
        return r;
    }
    let r = Rc::new(read(h));
    LAST.with(|l| *l.borrow_mut() = Some((k, r.clone())));
    r
}

/// Reads `h` afresh. What it reads is the handoff's canonical layout: line endings, white
/// space, blank-line runs and hard wraps are not meaning (`crate::destination::layout`).
fn read(h: &Handoff) -> Reading {
    let text = canonical(&h.text);
    let knowledge = normalize(&text);
    let parts = match &h.advisory {
        None => vec![(text.clone(), 0, true)],
        Some(a) => vec![
            (canonical(&a.authoritative), 0, true),
            (
                canonical(&a.summary),
                canonical_offset(&h.text, a.summary_at),
                false,
            ),
        ],
    };
    let part_digests = parts
        .iter()
        .map(|(t, _, _)| crate::text::digest(t))
        .collect();
    let seen = seen_text(&text);
    Reading {
        text,
        knowledge,
        parts,
        part_digests,
        seen,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handoff::Message;

    #[test]
    fn a_handoff_read_again_gives_what_a_fresh_reading_gives() {
        let mut h = crate::handoff::finish(
            "test",
            vec![Message::user("Ticket  TCK-1042\r\nis open.")],
            None,
            Vec::new(),
            Vec::new(),
        );
        let first = of(&h);
        let again = of(&h);
        assert!(
            Rc::ptr_eq(&first, &again),
            "the second reader copies the first"
        );
        h.text.push_str(" Refund EUR 1,200.");
        let changed = of(&h);
        let fresh = read(&h);
        assert!(!Rc::ptr_eq(&first, &changed), "another text is read afresh");
        assert_eq!(changed.text, fresh.text);
        assert_eq!(changed.knowledge, fresh.knowledge);
        assert_eq!(changed.parts, fresh.parts);
        assert_eq!(changed.part_digests, fresh.part_digests);
        assert_eq!(changed.seen, fresh.seen);
    }
}
