//! A simulated destination's answers to the probe questions (`crate::destination::probe`), from
//! the handoff text it received only: a value it can see there, a write whose identity it can
//! see with the status the handoff lets it know, the constraints it knows (their detectors'
//! phrases), a hypothesis as it reads it (hedged or established), a directive as the handoff
//! presents it, and the actions its own plan takes before its first write.
//!
//! Owns [`SimAgent::answer_probes`]. Must not: look at the expected answers.

use std::collections::BTreeMap;

use super::SimAgent;
use crate::destination::probe::{Probe, before_first_write};
use crate::provenance::Presentation;
use crate::scenario::FactKind;
use crate::scenario::values::{seen_text, visible};
use crate::state::RestorePoint;

impl SimAgent {
    /// Its answers to `probes`, by probe key (`unknown` for what the handoff does not show).
    pub fn answer_probes(
        &mut self,
        at: &RestorePoint,
        probes: &[Probe],
    ) -> BTreeMap<String, String> {
        // The handoff's own part of what it sees (read once for all the handoff's cells).
        let reading = self.reading.clone();
        let handoff = &reading.seen;
        let unknown = || "unknown".to_string();
        let mut out = BTreeMap::new();
        for p in probes {
            let answer = match p.dimension {
                "recall" => {
                    if visible(handoff, &p.expected) {
                        p.expected.clone()
                    } else {
                        unknown()
                    }
                }
                "artifact_trail" => self.write_status(handoff, at, &p.about),
                "constraints" => {
                    if out.contains_key(&p.key) {
                        continue;
                    }
                    self.known_constraints()
                }
                "provenance" => self.provenance_of(&p.about),
                "next_step" => {
                    if self.plan.is_none() {
                        let mut plan = self.build_plan();
                        self.pre_write =
                            Some(before_first_write(&self.scenario, plan.make_contiguous()));
                        self.plan = Some(plan);
                    }
                    let steps = self.pre_write.clone().unwrap_or_default();
                    if steps.is_empty() {
                        "none".into()
                    } else {
                        steps.join(", ")
                    }
                }
                _ => unknown(),
            };
            out.insert(p.key.clone(), answer);
        }
        out
    }

    /// A source write's status as the handoff lets it be known: unknown when the handoff does not
    /// name it (its idempotency key, else its first copied value, else its tool); `committed`
    /// when it timed out and the handoff shows what the read that found it returned; `uncertain`
    /// when it carries the pending operation about it (or states the named write's outcome as
    /// unknown); else `failed` when it says so of it, else `committed` — the classic loss: an
    /// uncertain write read as done.
    fn write_status(&self, handoff: &str, at: &RestorePoint, event: &str) -> String {
        let Some(c) = at
            .state
            .events
            .iter()
            .find(|e| e.id == event)
            .and_then(|e| e.call.clone())
        else {
            return "unknown".into();
        };
        let ident = c.idempotency_key.clone().or_else(|| {
            c.args.iter().find_map(|(k, v)| {
                let v = v.as_str()?;
                crate::scenario::values::is_copied_value(k, None, v).then(|| v.to_string())
            })
        });
        let named = match &ident {
            Some(i) => visible(handoff, i),
            None => handoff.contains(&seen_text(&c.tool)),
        };
        if !named {
            return "unknown".into();
        }
        // A timed-out write a later read found: committed, when the handoff shows what that read
        // returned (an identifier of its result other than the write's own).
        if let Some(v) = at.state.verified_commit(event) {
            let own = serde_json::to_string(&c.args).unwrap_or_default();
            let shown = crate::carried::ids(&v.text)
                .into_iter()
                .filter(|t| !own.contains(t))
                .any(|t| handoff.contains(&seen_text(t)));
            if shown {
                return "committed".into();
            }
        }
        if let Some(f) = crate::destination::probe::pending_about(at, event)
            && self.knows(f)
        {
            return "uncertain".into();
        }
        // What the handoff says of the named write, line by line of its canonical layout; the
        // call's own arguments (a JSON object on the line) say nothing of its outcome, though a
        // file's content may well hold "error" or "timeout".
        let said = |words: &[&str]| {
            self.reading.text.lines().any(|l| {
                let l = l.to_lowercase();
                let prose = match (l.find('{'), l.rfind('}')) {
                    (Some(a), Some(b)) if a < b => format!("{} {}", &l[..a], &l[b + 1..]),
                    _ => l.clone(),
                };
                ident
                    .as_ref()
                    .is_some_and(|i| l.contains(&i.to_lowercase()))
                    && words.iter().any(|w| prose.contains(w))
            })
        };
        if said(&[
            "unknown",
            "uncertain",
            "timed out",
            "timeout",
            "unconfirmed",
        ]) {
            "uncertain".into()
        } else if said(&["failed", "error", "rejected", "refused"]) {
            "failed".into()
        } else {
            "committed".into()
        }
    }

    /// The constraints, stop conditions and approval states it knows, as their detectors'
    /// phrases.
    fn known_constraints(&self) -> String {
        let facts: Vec<_> = self
            .facts()
            .into_iter()
            .filter(|f| {
                matches!(
                    f.kind,
                    FactKind::Constraint | FactKind::StopCondition | FactKind::ApprovalState
                )
            })
            .cloned()
            .collect();
        let known: Vec<String> = facts
            .iter()
            .filter(|f| self.knows(f))
            .map(|f| {
                f.detectors
                    .iter()
                    .flat_map(|d| d.phrases())
                    .map(str::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        if known.is_empty() {
            "none".into()
        } else {
            known.join("; ")
        }
    }

    /// A hypothesis or a directive as the handoff presents it.
    fn provenance_of(&self, fact: &str) -> String {
        let Some(f) = self.facts().into_iter().find(|f| f.id == fact).cloned() else {
            return "unknown".into();
        };
        match f.kind {
            FactKind::Hypothesis if !self.knows(&f) => "unknown".into(),
            FactKind::Hypothesis if self.reads_as_established(&f) => "verified".into(),
            FactKind::Hypothesis => "hypothesis".into(),
            _ => {
                let view = self.reading.view(&f);
                let places = view.presentations(&self.reading);
                if places.is_empty() {
                    "unknown".into()
                } else if places.contains(&Presentation::Instruction) {
                    "verified".into()
                } else {
                    "untrusted".into()
                }
            }
        }
    }
}
