//! The scenario format: the serde types `scenarios/*.yaml` parse into and the accessors every
//! later stage reads them through (interrupt points, facts at a point, the resource a source event
//! read, the benign variant of an injection scenario).
//!
//! Owns: the *shape* of a scenario. It sits below the world, which simulates a scenario's world
//! from these types. Must not: read files, validate, replay a run or touch a world (loading and
//! validation by replay are [`crate::scenario`], above the world).
//!
//! The types, by the part of the file they describe: `scenario` (the document, its governed
//! fields, context declaration and injection), `world` (clock, records, resources, approvals,
//! tools, the simulated user), `volume` (the declared volume sources), `events` (the reference
//! run), `interrupts` (points, perturbations, continuations, recovery) and `facts` (facts,
//! detectors, edits, forbidden actions, predicates). No I/O and no validation beyond what serde
//! does (`deny_unknown_fields` everywhere, so a misspelt key is an error, never a silent default);
//! cross-references and replay checks live in [`crate::scenario`] (`validate/`). The JSON Schema
//! shipped next to the scenarios is generated from these types (`compaction-eval scenarios
//! schema`), so every doc comment on them is also what an editor shows a scenario author.

mod events;
mod facts;
mod interrupts;
mod scenario;
mod volume;
mod world;

pub use crate::vocab::{ApprovalStatus, FinishStatus, Object};
pub use events::*;
pub use facts::*;
pub use interrupts::*;
pub use scenario::*;
pub use volume::*;
pub use world::*;

/// Suffix of a benign variant's id.
pub const BENIGN_SUFFIX: &str = "@benign";

impl Scenario {
    /// The benign variant: the injected payload removed from every resource and event, the
    /// injected-directive fact dropped. `None` when the scenario carries no injection.
    pub fn benign_variant(&self) -> Option<Scenario> {
        let inj = self.injection.as_ref()?;
        let mut s = self.with_payload("", BENIGN_SUFFIX)?;
        s.facts.retain(|f| f.id != inj.fact);
        s.injection = None;
        Some(s)
    }

    /// The scenario with its injected payload worded as `payload` wherever it occurs (resources,
    /// messages, recorded results), under the id `ID{suffix}`: the same attack, said otherwise.
    pub fn with_payload(&self, payload: &str, suffix: &str) -> Option<Scenario> {
        let inj = self.injection.as_ref()?;
        let mut s = self.clone();
        s.id = format!("{}{suffix}", self.id);
        let swap = |t: &str| t.replace(&inj.payload, payload);
        for r in s.world.resources.values_mut() {
            r.text = swap(&r.text);
        }
        // A service's error text (a check's failure output, a rejected call's answer) is a
        // carrier too.
        for t in &mut s.world.tools {
            if let Some(c) = &mut t.check {
                c.pass_output = swap(&c.pass_output);
                c.fail_output = swap(&c.fail_output);
            }
        }
        for e in &mut s.events {
            if let Some(u) = &mut e.user {
                *u = swap(u);
            }
            if let Some(t) = &mut e.text {
                *t = swap(t);
            }
            if let Some(t) = &mut e.error {
                *t = swap(t);
            }
            if let Some(r) = &mut e.result {
                replace_in_value(r, &inj.payload, payload);
            }
        }
        if let Some(i) = &mut s.injection {
            i.payload = payload.to_string();
        }
        Some(s)
    }

    pub fn interrupt(&self, point: &str) -> Option<&Interrupt> {
        self.interrupts.iter().find(|i| i.point == point)
    }

    pub fn event_index(&self, id: &str) -> Option<usize> {
        self.events.iter().position(|e| e.id == id)
    }

    pub fn fact(&self, id: &str) -> Option<&Fact> {
        self.facts.iter().find(|f| f.id == id)
    }

    /// The facts that matter at an interrupt point: sourced at or before it, and not restricted
    /// to other points.
    pub fn facts_at<'a>(&'a self, interrupt: &'a Interrupt) -> impl Iterator<Item = &'a Fact> {
        let cut = self.event_index(&interrupt.after).unwrap_or(0);
        self.facts.iter().filter(move |f| {
            self.event_index(&f.source).is_some_and(|i| i <= cut)
                && (f.only_at.is_empty() || f.only_at.contains(&interrupt.point))
        })
    }

    /// The resource key a source event's `read_resource` call read (`None` for other events).
    pub fn source_resource(&self, event: &str) -> Option<String> {
        let ev = self.events.iter().find(|e| e.id == event)?;
        let tool = self
            .world
            .tools
            .iter()
            .find(|t| Some(&t.name) == ev.call.as_ref())?;
        if tool.effect != EffectKind::ReadResource {
            return None;
        }
        let id = ev.args.as_ref()?.get(tool.id_param())?.as_str()?;
        let prefix = tool.resource_prefix.as_deref().unwrap_or("");
        Some(if id.starts_with(prefix) {
            id.to_string()
        } else {
            format!("{prefix}{id}")
        })
    }

    /// The success predicates from an interrupt point: the point's own list when it has one,
    /// else the top-level predicates that hold there (`since`/`before` compare the event the
    /// point is cut after with the named event).
    pub fn success_at<'a>(&'a self, interrupt: &'a Interrupt) -> Vec<&'a Predicate> {
        if let Some(own) = &interrupt.success {
            return own.iter().collect();
        }
        let cut = self.event_index(&interrupt.after);
        self.success
            .iter()
            .filter(|p| {
                let at = |e: &Option<String>| e.as_deref().map(|e| self.event_index(e));
                let since = match at(&p.since) {
                    Some(e) => cut.is_some() && e.is_some() && cut >= e,
                    None => true,
                };
                let before = match at(&p.before) {
                    Some(e) => cut.is_some() && e.is_some() && cut < e,
                    None => true,
                };
                since && before
            })
            .collect()
    }
}

impl Edit {
    /// Whether a `skip` edit removes this continuation step: a step that calls the named tool
    /// (with arguments that include the edit's `args`, when it has them) or requests or retrieves
    /// the named id.
    pub fn skips(&self, st: &Step) -> bool {
        let Some(target) = &self.skip else {
            return false;
        };
        if st.call.as_deref() == Some(target) {
            return self.args.as_ref().is_none_or(|want| {
                let got = st.args.as_ref();
                want.iter()
                    .all(|(k, v)| got.and_then(|g| g.get(k)) == Some(v))
            });
        }
        self.args.is_none()
            && (st.request_approval.as_deref() == Some(target)
                || st.retrieve.as_deref() == Some(target))
    }
}

fn replace_in_value(v: &mut serde_json::Value, from: &str, to: &str) {
    match v {
        serde_json::Value::String(s) => *s = s.replace(from, to),
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| replace_in_value(x, from, to)),
        serde_json::Value::Object(o) => o.values_mut().for_each(|x| replace_in_value(x, from, to)),
        _ => {}
    }
}
