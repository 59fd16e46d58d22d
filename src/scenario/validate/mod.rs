//! Scenario validation: cross-references, replay of the reference run, reachability of success
//! from every interrupt point, and detectors that match their source events.
//!
//! Every problem names the path inside the file (`interrupts[2].perturb[0].approval`). Validation
//! collects all problems rather than stopping at the first, so an author fixes a file in one pass.
//!
//! The checks by concern: `structure` (identity, the world, the events, the governed-context
//! declaration), `interrupts` (points, perturbations, continuations, recovery), `facts` (facts,
//! their detectors and edits, forbidden actions, success, the injection) and `replays` (what only
//! running the reference shows; with `changes` (a record change takes effect at restore),
//! `detectors` (a detector matches its fact's source and no unrelated event; a hypothesis event
//! is hedged) and `grounding` (a `when_lost` value occurs somewhere in the scenario)). This façade holds the `Checker` they share and the order they
//! run in; it checks nothing itself.

mod changes;
mod detectors;
mod facts;
mod grounding;
mod interrupts;
mod replays;
mod structure;

use crate::spec::*;

use facts::check_facts_and_rules;
use interrupts::check_interrupts;
use replays::check_replays;
use structure::{check_context, check_events, check_identity, check_world};

pub use super::problem::Problem;

/// Names reserved for the harness's own tools.
pub const HARNESS_TOOLS: [&str; 4] = ["ask_user", "request_approval", "retrieve", "finish"];

struct Checker<'a> {
    s: &'a Scenario,
    problems: Vec<Problem>,
}

impl Checker<'_> {
    fn err(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.problems.push(Problem {
            path: path.into(),
            message: message.into(),
        });
    }

    fn tool(&self, name: &str) -> Option<&ToolSpec> {
        self.s.world.tools.iter().find(|t| t.name == name)
    }

    fn known_tools(&self) -> String {
        self.s
            .world
            .tools
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn check_tool_ref(&mut self, path: String, name: &str) {
        if self.tool(name).is_none() {
            let known = self.known_tools();
            self.err(
                path,
                format!("unknown tool `{name}` (the world defines: {known})"),
            );
        }
    }

    fn check_args(&mut self, path: String, tool: &str, args: Option<&Object>) {
        let Some(t) = self.tool(tool) else { return };
        let params: Vec<(String, bool)> = t
            .params
            .iter()
            .map(|(k, p)| (k.clone(), p.required()))
            .collect();
        let empty = Object::new();
        let args = args.unwrap_or(&empty);
        for k in args.keys() {
            if !params.iter().any(|(p, _)| p == k) {
                self.err(
                    format!("{path}.{k}"),
                    format!("`{tool}` has no parameter `{k}`"),
                );
            }
        }
        for (p, required) in params {
            if required && !args.contains_key(&p) {
                self.err(
                    path.clone(),
                    format!("missing required argument `{p}` of `{tool}`"),
                );
            }
        }
    }

    fn check_event_ref(&mut self, path: String, id: &str) -> Option<usize> {
        let idx = self.s.event_index(id);
        if idx.is_none() {
            self.err(path, format!("no event with id `{id}`"));
        }
        idx
    }

    fn check_predicate(&mut self, path: String, p: &Predicate) {
        let set = [
            p.collection.is_some(),
            p.outbox.is_some(),
            p.resource.is_some(),
            p.finished.is_some(),
        ];
        if set.iter().filter(|b| **b).count() != 1 {
            self.err(
                path.clone(),
                "set exactly one of `collection`, `outbox`, `resource`, `finished`",
            );
        }
        if let Some(c) = &p.collection
            && !self.s.world.collections.contains_key(c)
        {
            self.err(format!("{path}.collection"), format!("no collection `{c}`"));
        }
        if let Some(r) = &p.resource
            && !self.s.world.resources.contains_key(r)
            && !self
                .s
                .world
                .tools
                .iter()
                .any(|t| t.effect == EffectKind::WriteResource)
        {
            self.err(format!("{path}.resource"), format!("no resource `{r}`"));
        }
        if (p.collection.is_some() || p.outbox.is_some())
            && p.count.is_none()
            && p.count_at_least.is_none()
            && p.count_at_most.is_none()
        {
            self.err(
                path,
                "a count predicate needs `count`, `count_at_least` or `count_at_most`",
            );
        }
    }
}

/// Checks a parsed scenario; an empty list means it is valid. The benign variant (if any) is
/// checked too, since runs use it.
pub fn validate(s: &Scenario) -> Vec<Problem> {
    let mut problems = validate_one(s);
    if problems.is_empty()
        && let Some(benign) = s.benign_variant()
    {
        for mut p in validate_one(&benign) {
            p.message = format!("in the benign variant (injection removed): {}", p.message);
            problems.push(p);
        }
    }
    problems
}

fn validate_one(s: &Scenario) -> Vec<Problem> {
    let mut c = Checker {
        s,
        problems: Vec::new(),
    };
    check_identity(&mut c);
    check_world(&mut c);
    check_events(&mut c);
    check_interrupts(&mut c);
    check_facts_and_rules(&mut c);
    check_context(&mut c);
    c.problems.extend(super::lint::lint(s));
    if c.problems.is_empty() {
        // Replays assume consistent references; only run them on a structurally valid file.
        check_replays(&mut c);
    }
    c.problems
}
