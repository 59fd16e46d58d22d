//! What a handoff carries of what the continuation needs, and of what it never needs: the
//! handoff's retention and its forgetting precision, counted in items.
//!
//! - **Needed** items: the interrupt point's critical facts (injected directives aside: carrying
//!   one is never needed), carried when one of the fact's detectors matches the handoff text; and
//!   every value the reference continuation's calls copy (`scenario::values::needed_values`: ids,
//!   amounts, dates), carried when the handoff text shows it by the visible-values rule.
//! - **Inert** items: the identifiers (a token with a letter and a digit, five characters or
//!   more: `LOG-0042`, `inv_8812`) that the source run saw only in its distraction volume before
//!   the cut — in no other event, not in the objective — carried when the handoff holds the token.
//!
//! `retention = needed_carried ÷ needed`; `forgetting_precision = needed_carried ÷
//! (needed_carried + inert_carried)`: a transcript that keeps the whole volume carries hundreds of
//! identifiers nobody needs, a checkpoint none. Limits: without volume (the `base` scale) nothing is
//! inert, and a handoff's precision is 1 whatever it keeps; a superseded value (a resource changed
//! after the cut) is not inert here — it is the only value the source saw, and the destination's
//! reconciliation is scored elsewhere; a volume item the handoff paraphrases without its
//! identifier is not counted.
//!
//! Read from the handoff text of any strategy, never from its id. Owns [`measure`]. Must not
//! change a score.

use std::collections::BTreeSet;

use crate::handoff::Handoff;
use crate::record::Carried;
use crate::scenario::values::{continuation_needs, seen_text, visible};
use crate::scenario::{FactKind, normalize};
use crate::state::RestorePoint;

/// The shortest identifier counted as an inert item.
const MIN_ID_CHARS: usize = 5;

/// The identifier-like tokens of `text`: runs of letters, digits, `-` and `_` with at least one
/// letter and one digit, `MIN_ID_CHARS` long or more.
pub fn ids(text: &str) -> BTreeSet<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
        .map(|t| t.trim_matches(|c| c == '-' || c == '_'))
        .filter(|t| {
            t.chars().count() >= MIN_ID_CHARS
                && t.chars().any(|c| c.is_ascii_digit())
                && t.chars().any(char::is_alphabetic)
        })
        .collect()
}

/// The identifiers only the distraction volume showed before the cut: the same for every
/// handoff of a point (the builder computes them once per point).
pub fn inert_ids(at: &RestorePoint) -> BTreeSet<String> {
    let s = &at.scenario;
    let volume: BTreeSet<&str> = s
        .events
        .iter()
        .filter(|e| e.volume)
        .map(|e| e.id.as_str())
        .collect();
    let mut from_volume = BTreeSet::new();
    let mut elsewhere: BTreeSet<&str> = ids(&s.objective);
    for e in &at.state.events {
        if volume.contains(e.id.as_str()) {
            from_volume.extend(ids(&e.text));
        } else {
            elsewhere.extend(ids(&e.text));
        }
    }
    from_volume
        .into_iter()
        .filter(|t| !elsewhere.contains(t))
        .map(str::to_string)
        .collect()
}

/// What `h` carries at its restore point.
pub fn measure(at: &RestorePoint, h: &Handoff) -> Carried {
    measure_with(at, h, &inert_ids(at))
}

/// [`measure`] with the point's [`inert_ids`] already known.
pub fn measure_with(at: &RestorePoint, h: &Handoff, inert: &BTreeSet<String>) -> Carried {
    let s = &at.scenario;
    let it = &at.interrupt;
    let norm = normalize(&h.text);
    let facts: Vec<_> = s
        .facts_at(it)
        .filter(|f| f.kind != FactKind::InjectedDirective)
        .collect();
    let facts_carried = facts
        .iter()
        .filter(|f| f.detectors.iter().any(|d| d.matches(&norm)))
        .count();
    let pieces: BTreeSet<String> = continuation_needs(&s.world.tools, it)
        .into_iter()
        .map(|(_, n)| n.piece)
        .collect();
    let seen = seen_text(&h.text);
    let values_carried = pieces.iter().filter(|p| visible(&seen, p)).count();
    let held = ids(&h.text);
    let inert_carried = inert.iter().filter(|t| held.contains(t.as_str())).count();
    let n = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
    Carried::of(
        n(facts.len() + pieces.len()),
        n(facts_carried + values_carried),
        n(inert.len()),
        n(inert_carried),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_have_a_letter_a_digit_and_five_characters() {
        let got: Vec<&str> = ids("LOG-0042, inv_8812 and v2 at 2026 (A1B2C) -x9yz-")
            .into_iter()
            .collect();
        assert_eq!(
            got,
            ["A1B2C", "LOG-0042", "inv_8812", "x9yz"]
                .iter()
                .filter(|t| t.len() >= 5)
                .copied()
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn the_ratios_follow_the_counts() {
        let c = Carried::of(10, 8, 300, 120);
        assert_eq!(c.retention, Some(0.8));
        assert_eq!(c.forgetting_precision, Some(8.0 / 128.0));
        let none = Carried::of(0, 0, 0, 0);
        assert_eq!((none.retention, none.forgetting_precision), (None, None));
    }
}
