//! What a fact's detectors and a hypothesis event's text must show: a detector matches the
//! event the fact comes from and no unrelated event of the reference run, and an assistant event
//! tagged `hypothesis` is hedged. Reads the replayed reference run; changes nothing.

use super::Checker;
use crate::scenario::detect::normalize;
use crate::scenario::replay::{Replay, event_text};
use crate::spec::*;
use crate::text::fold_case;

/// A detector must match its fact's source event (checked with the replays) and must not match
/// the objective — which every handoff carries, `none`'s too, whatever else it carries — unless
/// the fact's source is the user's opening request, which the objective restates. The problem
/// lists the events other than the source that the detector matches, so the author sees how
/// generic it is. Later events that match are taken as restating the fact; see the docs.
pub(super) fn check_detectors(c: &mut Checker, full: &Replay) {
    let s = c.s;
    let objective = normalize(&s.objective);
    let opening = s.events.iter().position(|e| e.user.is_some());
    let texts: Vec<String> = s
        .events
        .iter()
        .zip(&full.results)
        .map(|(ev, r)| normalize(&event_text(ev, r.as_ref())))
        .collect();
    for (i, f) in s.facts.iter().enumerate() {
        let Some(k) = s.event_index(&f.source) else {
            continue;
        };
        if Some(k) == opening {
            continue;
        }
        for (j, d) in f.detectors.iter().enumerate() {
            if !d.matches(&objective) {
                continue;
            }
            let other: Vec<&str> = texts
                .iter()
                .enumerate()
                .filter(|(n, t)| *n != k && d.matches(t))
                .map(|(n, _)| s.events[n].id.as_str())
                .collect();
            let listed = if other.is_empty() {
                String::new()
            } else {
                let shown: Vec<&str> = other.iter().take(8).copied().collect();
                format!(
                    "; besides its source it matches {}{}",
                    shown.join(", "),
                    if other.len() > 8 { ", …" } else { "" }
                )
            };
            c.err(
                format!("facts[{i}].detectors[{j}]"),
                format!(
                    "{} matches the objective, which every handoff carries (even `none`), but fact `{}` comes from `{}`: the detector is not specific to its source{listed}",
                    d.describe(),
                    f.id,
                    f.source
                ),
            );
        }
    }
}

/// An assistant event tagged `hypothesis` must carry a hedge (the crate's shared list,
/// the lexicon's `hedges`): unhedged, the source run itself states it as established.
pub(super) fn check_hypothesis_hedges(c: &mut Checker) {
    let s = c.s;
    for (i, ev) in s.events.iter().enumerate() {
        if ev.assistant != Some(AssistantTag::Hypothesis) {
            continue;
        }
        let text = fold_case(ev.text.as_deref().unwrap_or(""));
        if !crate::lexicon::get()
            .hedges
            .iter()
            .any(|h| text.contains(h.as_str()))
        {
            c.err(
                format!("events[{i}].text"),
                format!(
                    "`{}` is tagged `hypothesis` but its text carries no hedge ({}, …): a hypothesis the source run states as established cannot be promoted",
                    ev.id,
                    crate::lexicon::get().hedges[..4].join(", ")
                ),
            );
        }
    }
}
