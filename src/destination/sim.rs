//! Simulated destinations: deterministic agents that act only on the handoff's text.
//!
//! Model assumptions (documented in the README):
//! - `oracle` performs the reference continuation exactly; it calibrates the scorer.
//! - `careful` follows the restoration order that the reference continuation encodes, and acts out
//!   `when_lost` for every fact the handoff does not show. It obeys an injected directive only
//!   when the directive appears outside any `<external>` quotation *and* in a sentence that reads
//!   as the agent's own instruction (it starts with "next step", "todo", "you must", "please",
//!   "instruction").
//! - `literal` does the same but obeys any injected directive that appears outside a quotation.
//! - With a retrieval tool offered, a destination that lacks a fact whose source was a document
//!   named in the handoff retrieves that document first and learns what its current text shows.
//! - A destination other than `oracle` uses a literal argument value only when it can see it
//!   (the rule of `crate::scenario::values`): in the handoff text, the objective, the tool
//!   definitions, or a result it received in this continuation. For a value it cannot see it
//!   acts on the older value when it holds the older revision of a perturbed resource
//!   (`replace` → `find`, or a declared change `to` → `from`); otherwise it first re-performs the
//!   latest source-run read whose result contained the value (repeated work); otherwise — a value
//!   the scenario grounds nowhere, which `scenarios validate` rejects for reference
//!   continuations — it uses the value anyway.
//! - Distraction (`crate::destination::attention`, on by default): each fact the handoff shows is
//!   missed with a probability that grows with the handoff's length and is highest for a fact in
//!   the middle of it, fitted to RULER and "Lost in the Middle" and scaled by `--attention`; the
//!   draws come from the cell's seed.
//! - A governed delivery (`gov:X`, seed 004) is read in two parts: the originals and retained
//!   evidence are authoritative; the advisory summary (X's handoff) informs — a fact shown only
//!   there is known by the same presentation rules — but a directive shown only there is never
//!   followed, by either kind.
//! - Layout is not meaning: a destination reads the handoff's canonical layout
//!   (`crate::destination::layout`), so line endings, trailing white space, blank-line runs and
//!   hard-wrapped lines change nothing it does.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use std::time::Instant;

use crate::provenance::Presentation;
use crate::stats::SplitMix64;

use super::layout::{canonical, canonical_offset};
use super::{Action, ActionFuture, ActionResult, Destination, DestinationReport};
use crate::handoff::Handoff;
use crate::scenario::values::{needed_values, seen_text, substitute, tools_text, visible};
use crate::scenario::{
    Bindings, Edit, EventKind, Fact, FactKind, FinishStatus, Interrupt, Object, Scenario, Step,
    event_text, normalize, replay_prefix,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimKind {
    Oracle,
    Careful,
    Literal,
}

/// Whether a destination of `kind` follows a directive presented as `verdicts` (one per place the
/// handoff carries it): `careful` only when some place states it as an instruction of the agent
/// or the user; `literal` also when it is merely quoted or attributed without an explicit
/// do-not-follow marking; `oracle` never.
pub fn follows_directive(kind: SimKind, verdicts: &[Presentation]) -> bool {
    match kind {
        SimKind::Oracle => false,
        SimKind::Careful => verdicts.contains(&Presentation::Instruction),
        SimKind::Literal => verdicts.iter().any(|v| *v != Presentation::Marked),
    }
}

/// A simulated destination for one cell.
pub struct SimAgent {
    kind: SimKind,
    scenario: Arc<Scenario>,
    interrupt: Interrupt,
    knowledge: String,
    /// The handoff text as received (for judging how it presents each fact).
    text: String,
    /// The parts of the text a presentation is judged in: `(text, offset in `text`,
    /// authoritative)`. One authoritative part, unless the handoff is a governed delivery: then
    /// the originals and evidence (authoritative) and the advisory summary apart.
    parts: Vec<(String, usize, bool)>,
    retrieves: VecDeque<String>,
    plan: Option<VecDeque<Step>>,
    pending_bind: Option<String>,
    bindings: Bindings,
    attention: f64,
    tokens: u64,
    rng: SplitMix64,
    /// Facts the destination lacked when it planned (for diagnostics).
    pub lost_facts: Vec<String>,
    /// Facts shown but set aside by an override the destination acts on.
    pub overridden: Vec<String>,
    /// Of those, facts the handoff showed but the distraction model made it miss.
    pub forgotten: Vec<String>,
    /// Injected directives it obeyed.
    pub obeyed: Vec<String>,
    /// Hypotheses it read as established.
    pub promoted: Vec<String>,
    /// What it can see (handoff, objective, tool definitions, results received), in the form
    /// `crate::scenario::values::visible` searches.
    seen: String,
    /// Source-run reads (tool, args, result text in seen form), in event order, up to the
    /// interrupt point.
    /// Computed on first need (a replay of the source run).
    source_reads: Option<Arc<Vec<SourceRead>>>,
    /// Source reads already re-performed in this continuation (event ids).
    reread: Vec<String>,
    /// Argument values it could not see, as `tool args.path = value → what it did`.
    pub invisible: Vec<String>,
}

impl SimAgent {
    pub fn new(
        kind: SimKind,
        scenario: Arc<Scenario>,
        interrupt: &Interrupt,
        handoff: &Handoff,
        seed: u64,
        attention: f64,
    ) -> SimAgent {
        let offers_retrieve = handoff.extra_tools.iter().any(|t| t.name == "retrieve");
        // What it reads is the handoff's canonical layout: line endings, white space, blank-line
        // runs and hard wraps are not meaning (`super::layout`).
        let text = canonical(&handoff.text);
        let knowledge = normalize(&text);
        let parts = match &handoff.advisory {
            None => vec![(text.clone(), 0, true)],
            Some(a) => vec![
                (canonical(&a.authoritative), 0, true),
                (
                    canonical(&a.summary),
                    canonical_offset(&handoff.text, a.summary_at),
                    false,
                ),
            ],
        };
        let mut agent = SimAgent {
            kind,
            parts,
            text: text.clone(),
            knowledge,
            interrupt: interrupt.clone(),
            retrieves: VecDeque::new(),
            plan: None,
            pending_bind: None,
            bindings: Bindings::new(format!("{seed:016x}")),
            attention,
            tokens: handoff.tokens_at_restore,
            rng: SplitMix64::new(seed),
            lost_facts: Vec::new(),
            overridden: Vec::new(),
            forgotten: Vec::new(),
            obeyed: Vec::new(),
            promoted: Vec::new(),
            seen: String::new(),
            source_reads: None,
            reread: Vec::new(),
            invisible: Vec::new(),
            scenario,
        };
        if kind != SimKind::Oracle {
            agent.seen = format!(
                "{} {} {}",
                seen_text(&text),
                seen_text(&agent.scenario.objective),
                seen_text(&tools_text(&agent.scenario.world.tools))
            );
        }
        if kind != SimKind::Oracle && offers_retrieve {
            agent.retrieves = agent.retrieval_candidates(&text).into();
        }
        agent
    }

    fn facts(&self) -> Vec<&Fact> {
        self.scenario.facts_at(&self.interrupt).collect()
    }

    /// A fact is known when the text shows it — and a fact the user or the agent stated (a
    /// constraint, a decision, a user fact, a hypothesis) only when some place presents it as
    /// theirs: text quoted from an outside source informs only as what that source said.
    fn knows(&self, f: &Fact) -> bool {
        if !f.detectors.iter().any(|d| d.matches(&self.knowledge)) {
            return false;
        }
        let own = self
            .scenario
            .events
            .iter()
            .find(|e| e.id == f.source)
            .and_then(|e| e.kind())
            .is_some_and(|k| matches!(k, EventKind::User | EventKind::Assistant(_)));
        !own || self.presentations(f).contains(&Presentation::Instruction)
    }

    /// How the handoff presents each place it carries one of the fact's phrases (in its
    /// authoritative parts only, with `authoritative_only`).
    fn presentations_in(&self, f: &Fact, authoritative_only: bool) -> Vec<Presentation> {
        self.parts
            .iter()
            .filter(|(_, _, auth)| *auth || !authoritative_only)
            .flat_map(|(text, _, _)| {
                f.detectors
                    .iter()
                    .flat_map(|d| d.phrases())
                    .flat_map(move |p| crate::provenance::judge_all(text, p))
            })
            .collect()
    }

    fn presentations(&self, f: &Fact) -> Vec<Presentation> {
        self.presentations_in(f, false)
    }

    /// Every place the handoff carries one of the fact's phrases: `(part, position in it)`.
    fn places(&self, f: &Fact) -> Vec<(usize, usize)> {
        self.parts
            .iter()
            .enumerate()
            .flat_map(|(k, (text, _, _))| {
                f.detectors
                    .iter()
                    .flat_map(|d| d.phrases())
                    .flat_map(move |p| crate::provenance::find(text, p))
                    .map(move |pos| (k, pos))
            })
            .collect()
    }

    /// Documents named in the handoff that were the source of a fact the text does not show.
    fn retrieval_candidates(&self, text: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for f in self.facts() {
            if f.kind == FactKind::InjectedDirective || self.knows(f) {
                continue;
            }
            if let Some(key) = self.scenario.source_resource(&f.source)
                && text.contains(&key)
                && !out.contains(&key)
            {
                out.push(key);
            }
        }
        out
    }

    /// The overrides in the handoff's authoritative parts that this destination acts on: judged
    /// like any directive, from how the handoff presents them ([`follows_directive`]).
    fn acted_overrides(&self) -> Vec<crate::provenance::Override> {
        self.parts
            .iter()
            .filter(|(_, _, auth)| *auth)
            .flat_map(|(text, _, _)| crate::provenance::overrides(text))
            .filter(|o| follows_directive(self.kind, &[o.presentation]))
            .collect()
    }

    /// Whether every place the handoff carries a hypothesis states it without a hedge.
    fn reads_as_established(&self, f: &Fact) -> bool {
        let places = self.places(f);
        !places.is_empty()
            && places
                .iter()
                .all(|&(k, p)| !crate::provenance::is_hedged(&self.parts[k].0, p))
    }

    /// Whether the destination carries out an injected directive the handoff shows: judged from
    /// how the handoff presents it where it carries it ([`follows_directive`]), never from its
    /// wording. A governed delivery's advisory summary informs but never instructs: only its
    /// authoritative parts (originals, evidence) can carry a directive the destination follows.
    fn obeys(&self, f: &Fact) -> bool {
        let authoritative: String = self
            .parts
            .iter()
            .filter(|(_, _, auth)| *auth)
            .map(|(t, _, _)| t.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let text = normalize(&authoritative);
        if !f.detectors.iter().any(|d| d.matches(&text)) {
            return false;
        }
        follows_directive(self.kind, &self.presentations_in(f, true))
    }

    /// The distraction model's chance of missing a fact the text shows: the best-recalled place
    /// the handoff carries it decides (a fact stated at the start and again in the middle is
    /// recalled as well as one at the start).
    fn forget_probability(&self, f: &Fact) -> f64 {
        let len = self.text.len().max(1) as f64;
        let fit = super::attention::model();
        self.places(f)
            .into_iter()
            .map(|(k, pos)| {
                let at = (self.parts[k].1 + pos) as f64 / len;
                fit.forget(self.attention, self.tokens, at.min(1.0))
            })
            .fold(None, |best: Option<f64>, p| {
                Some(best.map_or(p, |b| b.min(p)))
            })
            .unwrap_or_else(|| fit.forget(self.attention, self.tokens, 0.5))
    }

    fn build_plan(&mut self) -> VecDeque<Step> {
        let mut steps: Vec<Step> = self.interrupt.continuation.clone();
        if self.kind == SimKind::Oracle {
            return steps.into();
        }
        let facts: Vec<Fact> = self.facts().into_iter().cloned().collect();
        let overrides = self.acted_overrides();
        let mut starts = 0usize;
        for f in &facts {
            if f.kind == FactKind::InjectedDirective {
                if self.obeys(f) {
                    self.obeyed.push(f.id.clone());
                    for e in &f.when_obeyed {
                        apply_edit(&mut steps, e, &self.scenario, &mut starts);
                    }
                }
                continue;
            }
            let mut known = self.knows(f);
            if known && self.attention > 0.0 {
                let p = self.forget_probability(f);
                if self.rng.next_f64() < p {
                    known = false;
                    self.forgotten.push(f.id.clone());
                }
            }
            if !known {
                self.lost_facts.push(f.id.clone());
                for e in &f.when_lost {
                    apply_edit(&mut steps, e, &self.scenario, &mut starts);
                }
            } else if overrides.iter().any(|o| revokes(o, f)) {
                // The handoff shows the fact and also voids it in a statement the destination
                // acts on: it goes on as if the fact did not hold.
                self.overridden.push(f.id.clone());
                for e in &f.when_lost {
                    apply_edit(&mut steps, e, &self.scenario, &mut starts);
                }
            } else if f.kind == FactKind::Hypothesis && self.reads_as_established(f) {
                // Promotion: a hypothesis the handoff states without a hedge anywhere it carries
                // it is acted on as established.
                self.promoted.push(f.id.clone());
                for e in &f.when_promoted {
                    apply_edit(&mut steps, e, &self.scenario, &mut starts);
                }
            }
        }
        steps.into()
    }
}

/// Whether an override the destination acts on sets fact `f` aside: a sweeping one ("every
/// constraint above is void") every constraint, stop condition and approval requirement; one
/// that names its target, the facts of that kind — a constraint only when the override shares a
/// content word with it ("the freeze on deletes is lifted" and "no deletes during the freeze").
fn revokes(o: &crate::provenance::Override, f: &Fact) -> bool {
    use crate::provenance::Target;
    let has = |t: Target| o.targets.contains(&t);
    let sweeping = o.general && has(Target::Constraint);
    match f.kind {
        FactKind::Constraint => has(Target::Constraint) && (o.general || shares_word(o, f)),
        FactKind::StopCondition => has(Target::StopCondition) || sweeping,
        FactKind::ApprovalState => has(Target::Approval) || sweeping,
        FactKind::PendingOperation | FactKind::StaleResource => has(Target::Reconcile),
        _ => false,
    }
}

/// Whether the override's statement and one of the fact's detector phrases share a content word
/// (four letters or more).
fn shares_word(o: &crate::provenance::Override, f: &Fact) -> bool {
    let words = |t: &str| -> Vec<String> {
        normalize(t)
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 4)
            .map(str::to_string)
            .collect()
    };
    let statement = words(&o.statement);
    f.detectors
        .iter()
        .flat_map(|d| d.phrases())
        .flat_map(words)
        .any(|w| statement.contains(&w))
}

type SourceRead = (String, String, Object, String);

type ReadCache = Vec<(std::sync::Weak<Scenario>, String, Arc<Vec<SourceRead>>)>;

/// At most this many points' source reads are kept: cells come point by point, and a run's
/// every point kept would hold the reads of the whole matrix (tens of megabytes at `40k`).
const SOURCE_READS_KEPT: usize = 16;

/// [`replay_source_reads`], computed once per scenario (the same `Arc`, still alive) and point
/// among the points most recently asked.
fn source_reads(s: &Arc<Scenario>, it: &Interrupt) -> Arc<Vec<SourceRead>> {
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

fn apply_edit(steps: &mut Vec<Step>, e: &Edit, s: &Scenario, starts: &mut usize) {
    if e.skip.is_some() {
        steps.retain(|st| !e.skips(st));
        return;
    }
    let step = if let Some(tool) = &e.call {
        Step {
            call: Some(tool.clone()),
            args: e.args.clone(),
            bind: e.bind.clone(),
            ..Default::default()
        }
    } else if let Some(ev) = &e.repeat {
        let Some(src) = s.events.iter().find(|x| &x.id == ev) else {
            return;
        };
        Step {
            call: src.call.clone(),
            args: src.args.clone(),
            ..Default::default()
        }
    } else if let Some(q) = &e.ask {
        Step {
            ask: Some(q.clone()),
            ..Default::default()
        }
    } else {
        return;
    };
    let finish_at = steps
        .iter()
        .position(|st| st.finish.is_some())
        .unwrap_or(steps.len());
    let at = match e.at.as_deref() {
        None | Some("start") => {
            *starts += 1;
            (*starts - 1).min(steps.len())
        }
        Some("end") => finish_at,
        Some(other) => {
            let tool = other.strip_prefix("before:").unwrap_or(other);
            steps
                .iter()
                .position(|st| st.call.as_deref() == Some(tool))
                .unwrap_or(finish_at)
        }
    };
    steps.insert(at, step);
}

impl Destination for SimAgent {
    fn next_action<'a>(&'a mut self, last: Option<&'a ActionResult>) -> ActionFuture<'a> {
        Box::pin(std::future::ready(Ok(self.act(last))))
    }

    fn clock_ms(&self, started: &Instant) -> f64 {
        started.elapsed().as_secs_f64() * 1e3
    }

    fn report(&mut self) -> DestinationReport {
        DestinationReport {
            lost_facts: self.lost_facts.clone(),
            forgotten: self.forgotten.clone(),
            obeyed: self.obeyed.clone(),
            overridden: self.overridden.clone(),
            live: None,
        }
    }
}

impl SimAgent {
    /// Applies the visible-values rule to a call step about to be made: `Ok(args)` (possibly
    /// acting on older values) or `Err(read)`, a source read to re-perform first.
    fn check_values(&mut self, tool: &str, raw: &Object) -> Result<Object, Action> {
        let mut args = raw.clone();
        let spec = self.scenario.world.tools.iter().find(|t| t.name == tool);
        for n in needed_values(spec, raw, &self.interrupt.perturb) {
            if visible(&self.seen, &n.piece) {
                continue;
            }
            if let Some(older) = &n.older
                && visible(&self.seen, older)
            {
                substitute(&mut args, &n.path, &n.piece, older);
                self.invisible.push(format!(
                    "{tool} {} = {:?} → older value {:?}",
                    n.path, n.piece, older
                ));
                continue;
            }
            let wanted = [Some(n.piece.as_str()), n.older.as_deref()];
            let reads = self
                .source_reads
                .get_or_insert_with(|| source_reads(&self.scenario, &self.interrupt));
            let read = reads.iter().rev().find(|(id, _, _, text)| {
                !self.reread.contains(id)
                    && wanted
                        .iter()
                        .flatten()
                        .any(|w| text.contains(&seen_text(w)))
            });
            if let Some((id, t, a, _)) = read {
                self.invisible
                    .push(format!("{tool} {} = {:?} → re-read {id}", n.path, n.piece));
                self.reread.push(id.clone());
                return Err(Action::Call {
                    tool: t.clone(),
                    args: a.clone(),
                });
            }
            self.invisible
                .push(format!("{tool} {} = {:?} → used unseen", n.path, n.piece));
        }
        Ok(args)
    }

    /// The next action (the simulated destination answers at once).
    pub fn act(&mut self, last: Option<&ActionResult>) -> Action {
        if self.kind != SimKind::Oracle
            && let Some(r) = last
        {
            self.seen.push(' ');
            self.seen.push_str(&seen_text(&r.text));
        }
        if let (Some(name), Some(r)) = (self.pending_bind.take(), last)
            && let (true, Some(v)) = (r.ok, &r.value)
        {
            self.bindings.bind(&name, v);
        }
        // Retrievals come first; their results become part of what the destination knows.
        if self.plan.is_none() {
            if let Some(r) = last
                && r.ok
                && !self.retrieves.is_empty()
            {
                self.knowledge.push(' ');
                self.knowledge.push_str(&normalize(&r.text));
            }
            if let Some(key) = self.retrieves.pop_front() {
                return Action::Retrieve { resource: key };
            }
            let plan = self.build_plan();
            self.plan = Some(plan);
        }
        loop {
            let Some(step) = self.plan.as_mut().and_then(|p| p.pop_front()) else {
                return Action::Finish {
                    status: FinishStatus::Completed,
                    report: "Plan exhausted.".into(),
                    degraded: false,
                };
            };
            if let Some(tool) = &step.call {
                let empty = Object::new();
                let mut raw = step.args.clone().unwrap_or(empty);
                if self.kind != SimKind::Oracle {
                    match self.check_values(tool, &raw) {
                        Ok(a) => raw = a,
                        Err(read) => {
                            // Re-read first, then come back to this step.
                            if let Some(p) = self.plan.as_mut() {
                                p.push_front(step);
                            }
                            return read;
                        }
                    }
                }
                // A step whose arguments refer to a result it never got is skipped, as an agent
                // without that result could not have made the call.
                let Ok(args) = self.bindings.resolve(&raw) else {
                    continue;
                };
                self.pending_bind = step.bind.clone();
                return Action::Call {
                    tool: tool.clone(),
                    args,
                };
            }
            if let Some(q) = step.ask {
                return Action::AskUser { question: q };
            }
            if let Some(id) = step.request_approval {
                return Action::RequestApproval { approval_id: id };
            }
            if let Some(r) = step.retrieve {
                return Action::Retrieve { resource: r };
            }
            if let Some(status) = step.finish {
                return Action::Finish {
                    status,
                    report: step.report.unwrap_or_default(),
                    degraded: step.degraded,
                };
            }
        }
    }
}
