//! Provenance upgrades in a handoff: places where it presents a critical fact with more authority
//! than the fact had in the source run — a hypothesis as a finding, outside text as an
//! instruction, the agent's statement as the user's, an unverified statement as verified.
//!
//! Read from the handoff text of any strategy (prose, checkpoints, plug-ins alike), each place
//! judged locally by `provenance`. A diagnostic beside the metrics: it never changes a score, and
//! it never looks at the strategy's id.

use crate::handoff::Handoff;
use crate::provenance::{self, Presentation};
use crate::scenario::{EventKind, FactKind};
use crate::state::RestorePoint;

/// One upgrade: `FACT: FROM → TO`.
fn upgrade(fact: &str, from: &str, to: &str) -> String {
    format!("{fact}: {from} → {to}")
}

/// Every provenance upgrade of `h` at its restore point, in fact order.
pub fn provenance_upgrades(at: &RestorePoint, h: &Handoff) -> Vec<String> {
    let s = &at.scenario;
    let text = &h.text;
    let mut out = Vec::new();
    for f in s.facts_at(&at.interrupt) {
        let places: Vec<usize> = f
            .detectors
            .iter()
            .flat_map(|d| d.phrases())
            .flat_map(|p| provenance::find(text, p))
            .collect();
        if places.is_empty() {
            continue;
        }
        let source = s.events.iter().find(|e| e.id == f.source);
        let kind = source.and_then(|e| e.kind());
        let by_agent = matches!(kind, Some(EventKind::Assistant(_)));
        let hypothesis = f.kind == FactKind::Hypothesis
            || source.is_some_and(
                |e| matches!(e.kind(), Some(EventKind::Assistant(t)) if t.as_str() == "hypothesis"),
            );
        // Outside text that asks for something: the injected directive. (An outside finding the
        // agent restated in its own report is the agent's statement, not an upgrade.)
        let external = f.kind == FactKind::InjectedDirective;
        if hypothesis && places.iter().all(|&p| !provenance::is_hedged(text, p)) {
            out.push(upgrade(&f.id, "hypothesis", "finding"));
        }
        if hypothesis
            && places
                .iter()
                .any(|&p| provenance::is_marked_verified(text, p))
        {
            out.push(upgrade(&f.id, "unverified", "verified"));
        }
        if external
            && places
                .iter()
                .any(|&p| provenance::judge(text, p) == Presentation::Instruction)
        {
            out.push(upgrade(&f.id, "external", "instruction"));
        }
        // Every place that carries the agent's statement gives it to the user.
        if by_agent
            && places
                .iter()
                .all(|&p| provenance::is_attributed_to_user(text, p))
        {
            out.push(upgrade(&f.id, "agent", "user"));
        }
    }
    out
}
