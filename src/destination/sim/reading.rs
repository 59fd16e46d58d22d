//! A simulated destination's reading of its handoff: the canonical layout it reads, its
//! normalised copy, the parts (authoritative or advisory) with their digests, the values the
//! handoff shows, the overrides its authoritative parts state, and what it shows of each fact
//! asked about. All of it depends on the handoff alone (a fact's view on the fact's detectors),
//! so a run reads each handoff once, when the handoff is built ([`Reading::prepare`]), and
//! hands the reading to every cell that continues it. A destination built without one (a
//! governed delivery whose text differs, a caller outside a run) reads its handoff here: the
//! last reading is kept per thread, and a run gives a handoff's cells to one worker together
//! (`runner::execute`), so every reader after the first copies it.
//!
//! Owns: [`Reading`], [`FactView`] and the per-thread memo. Must not: read anything of the
//! scenario beyond the facts' detectors (what a destination knows beside the handoff is
//! `SimAgent`'s), or draw anything.

use std::cell::RefCell;
use std::sync::{Arc, Mutex, OnceLock};

use crate::destination::layout::{canonical, canonical_offset};
use crate::handoff::Handoff;
use crate::provenance::{Override, Presentation};
use crate::scenario::values::seen_text;
use crate::scenario::{Detector, Fact, normalize};

/// What reading a handoff gives, before any step.
#[derive(Debug)]
pub struct Reading {
    /// What the reading depends on (see [`key`]).
    key: Key,
    /// The canonical layout of the whole text.
    pub(super) text: String,
    /// Its normalised copy.
    pub(super) knowledge: String,
    /// (text, its offset in the canonical handoff, authoritative) of each part.
    pub(super) parts: Vec<(String, usize, bool)>,
    /// [`crate::text::digest`] of each part's text.
    part_digests: Vec<u64>,
    /// The values the handoff's text shows (`seen_text`).
    pub(super) seen: String,
    /// The override statements of its authoritative parts, in part order.
    pub(super) overrides: Vec<Override>,
    /// The normalised authoritative parts, when they are not the whole text (a governed
    /// delivery's originals and evidence, without its advisory summary).
    authoritative: Option<String>,
    /// What it shows of each fact asked about, by the fact's detectors.
    facts: Mutex<Vec<(Vec<Detector>, Arc<FactView>)>>,
}

/// What a handoff shows of one fact: a function of the handoff and the fact's detectors. The
/// presentations and places are judged when a cell first asks for them: judging every fact of
/// a point up front cost more than all the cells' asking (measured: 12.1 s against 5.7 s of
/// building at base, `bench --reps 1`), as a cell asks how a fact is presented only of the
/// facts it knows, follows or is probed on.
#[derive(Debug)]
pub(super) struct FactView {
    /// Whether its normalised text matches the detectors.
    pub shown: bool,
    /// Whether its authoritative parts, normalised, match them.
    pub shown_authoritative: bool,
    /// The detectors' phrases.
    phrases: Vec<String>,
    /// How each place carrying one of the fact's phrases presents it: every part's, and the
    /// authoritative parts' alone.
    presentations: OnceLock<(Vec<Presentation>, Vec<Presentation>)>,
    /// Every place carrying one of its phrases, `(part, position in it)`, and whether some
    /// place carries it and none hedges it.
    places: OnceLock<(Vec<(usize, usize)>, bool)>,
}

impl FactView {
    /// How each place carrying the fact presents it (`r` is the reading this view is of).
    pub fn presentations(&self, r: &Reading) -> &[Presentation] {
        &self.judged(r).0
    }

    /// [`FactView::presentations`] of the authoritative parts alone.
    pub fn presentations_authoritative(&self, r: &Reading) -> &[Presentation] {
        &self.judged(r).1
    }

    /// Every place carrying one of the fact's phrases: `(part, position in it)`.
    pub fn places(&self, r: &Reading) -> &[(usize, usize)] {
        &self.placed(r).0
    }

    /// Whether some place carries the fact and none hedges it.
    pub fn unhedged(&self, r: &Reading) -> bool {
        self.placed(r).1
    }

    fn judged(&self, r: &Reading) -> &(Vec<Presentation>, Vec<Presentation>) {
        self.presentations.get_or_init(|| {
            let mut all = Vec::new();
            let mut authoritative = Vec::new();
            for ((text, _, auth), &digest) in r.parts.iter().zip(&r.part_digests) {
                for p in &self.phrases {
                    let v = crate::provenance::judge_all_digested(text, digest, p);
                    if *auth {
                        authoritative.extend_from_slice(&v);
                    }
                    all.extend(v);
                }
            }
            (all, authoritative)
        })
    }

    fn placed(&self, r: &Reading) -> &(Vec<(usize, usize)>, bool) {
        self.places.get_or_init(|| {
            let mut places = Vec::new();
            for (k, (text, _, _)) in r.parts.iter().enumerate() {
                for p in &self.phrases {
                    places.extend(
                        crate::provenance::find(text, p)
                            .into_iter()
                            .map(|pos| (k, pos)),
                    );
                }
            }
            let unhedged = !places.is_empty()
                && places
                    .iter()
                    .all(|&(k, p)| !crate::provenance::is_hedged(&r.parts[k].0, p));
            (places, unhedged)
        })
    }
}

thread_local! {
    /// The last handoff read on this thread, by the digests of what the reading depends on.
    static LAST: RefCell<Option<Arc<Reading>>> = const { RefCell::new(None) };
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

/// The reading of `h`: `given` when it is of `h`, else the thread's last one if it is of the
/// same handoff, else a new one.
pub(super) fn of(h: &Handoff, given: Option<&Arc<Reading>>) -> Arc<Reading> {
    let k = key(h);
    if let Some(r) = given.filter(|r| r.key == k) {
        return r.clone();
    }
    if let Some(r) = LAST.with(|l| l.borrow().as_ref().filter(|r| r.key == k).cloned()) {
        return r;
    }
    let r = Arc::new(read(h, k));
    LAST.with(|l| *l.borrow_mut() = Some(r.clone()));
    r
}

impl Reading {
    /// Reads `h` for the cells that will continue it, with whether it shows each of `facts`
    /// (the facts of its point), so that no cell reads it again.
    pub fn prepare<'a>(h: &Handoff, facts: impl IntoIterator<Item = &'a Fact>) -> Arc<Reading> {
        let r = Arc::new(read(h, key(h)));
        for f in facts {
            r.view(f);
        }
        r
    }

    /// What the handoff shows of `f` (its view made on first need, then shared).
    pub(super) fn view(&self, f: &Fact) -> Arc<FactView> {
        let found = |facts: &[(Vec<Detector>, Arc<FactView>)]| {
            facts
                .iter()
                .find(|(d, _)| *d == f.detectors)
                .map(|(_, v)| v.clone())
        };
        if let Some(v) = self.facts.lock().ok().and_then(|m| found(&m)) {
            return v;
        }
        let v = Arc::new(self.read_fact(&f.detectors));
        if let Ok(mut m) = self.facts.lock() {
            if let Some(first) = found(&m) {
                return first;
            }
            m.push((f.detectors.clone(), v.clone()));
        }
        v
    }

    fn read_fact(&self, detectors: &[Detector]) -> FactView {
        let shown = detectors.iter().any(|d| d.matches(&self.knowledge));
        let shown_authoritative = match &self.authoritative {
            None => shown,
            Some(a) => detectors.iter().any(|d| d.matches(a)),
        };
        FactView {
            shown,
            shown_authoritative,
            phrases: detectors
                .iter()
                .flat_map(|d| d.phrases())
                .map(str::to_string)
                .collect(),
            presentations: OnceLock::new(),
            places: OnceLock::new(),
        }
    }
}

/// Reads `h` afresh. What it reads is the handoff's canonical layout: line endings, white
/// space, blank-line runs and hard wraps are not meaning (`crate::destination::layout`).
fn read(h: &Handoff, key: Key) -> Reading {
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
    let overrides = parts
        .iter()
        .filter(|(_, _, auth)| *auth)
        .flat_map(|(t, _, _)| crate::provenance::overrides(t))
        .collect();
    let authoritative = h.advisory.as_ref().map(|_| {
        let joined: Vec<&str> = parts
            .iter()
            .filter(|(_, _, auth)| *auth)
            .map(|(t, _, _)| t.as_str())
            .collect();
        normalize(&joined.join("\n"))
    });
    Reading {
        key,
        text,
        knowledge,
        parts,
        part_digests,
        seen,
        overrides,
        authoritative,
        facts: Mutex::new(Vec::new()),
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
        let first = of(&h, None);
        let again = of(&h, None);
        assert!(
            Arc::ptr_eq(&first, &again),
            "the second reader copies the first"
        );
        h.text.push_str(" Refund EUR 1,200.");
        let changed = of(&h, Some(&first));
        let fresh = read(&h, key(&h));
        assert!(
            !Arc::ptr_eq(&first, &changed),
            "another text is read afresh"
        );
        assert_eq!(changed.text, fresh.text);
        assert_eq!(changed.knowledge, fresh.knowledge);
        assert_eq!(changed.parts, fresh.parts);
        assert_eq!(changed.part_digests, fresh.part_digests);
        assert_eq!(changed.seen, fresh.seen);
        let prepared = Reading::prepare(&h, []);
        assert!(
            Arc::ptr_eq(&of(&h, Some(&prepared)), &prepared),
            "a reading prepared for the handoff is the one its cells use"
        );
    }

    #[test]
    fn a_fact_view_is_the_same_asked_first_or_prepared() {
        let h = crate::handoff::finish(
            "test",
            vec![Message::user(
                "Constraint: the refund must not exceed EUR 1,200. It may be that TCK-1042 is a duplicate.",
            )],
            None,
            Vec::new(),
            Vec::new(),
        );
        let fact: Fact = serde_json::from_value(serde_json::json!({
            "id": "cap", "kind": "constraint", "source": "e1", "statement": "the refund cap",
            "detectors": [{"all": ["must not exceed", "1,200"]}],
        }))
        .expect("a fact");
        let (fresh, prepared) = (read(&h, key(&h)), Reading::prepare(&h, [&fact]));
        let (asked, given) = (fresh.view(&fact), prepared.view(&fact));
        assert_eq!(
            (asked.shown, asked.shown_authoritative),
            (given.shown, given.shown_authoritative)
        );
        assert_eq!(asked.presentations(&fresh), given.presentations(&prepared));
        assert_eq!(
            asked.presentations_authoritative(&fresh),
            given.presentations_authoritative(&prepared)
        );
        assert_eq!(asked.places(&fresh), given.places(&prepared));
        assert_eq!(asked.unhedged(&fresh), given.unhedged(&prepared));
        assert!(asked.shown && asked.shown_authoritative);
        assert!(!asked.places(&fresh).is_empty());
        assert!(
            Arc::ptr_eq(&prepared.view(&fact), &given),
            "a fact asked again is viewed once"
        );
    }
}
