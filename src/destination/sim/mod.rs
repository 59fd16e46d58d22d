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

mod edits;
mod probes;
mod reading;
mod reads;

pub use reading::Reading;

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use std::time::Instant;

use crate::conversation::{Situation, SituationCall};
use crate::provenance::Presentation;
use crate::stats::{SplitMix64, derive_seed};

use super::profile::Rates;
use super::{Action, ActionFuture, ActionResult, Destination, DestinationReport};
use crate::handoff::Handoff;
use crate::scenario::values::{needed_values, seen_text, substitute, tools_text, visible};
use crate::scenario::{
    Bindings, EventKind, Fact, FactKind, FinishStatus, Interrupt, Object, Scenario, Step, normalize,
};
use edits::{apply_edit, revokes};
use reads::SourceRead;

/// The stream of a cell's seed its behavioural draws come from (apart from the distraction
/// model's, so a hand-set profile, which draws nothing, keeps every earlier outcome).
const BEHAVIOUR_STREAM: u64 = 0xB3A7_1D0C;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimKind {
    Oracle,
    Careful,
    Literal,
}

impl SimKind {
    /// The hand-set rates of a kind (`oracle` follows the reference and draws nothing).
    pub fn rates(self) -> Rates {
        match self {
            SimKind::Oracle | SimKind::Careful => Rates::CAREFUL,
            SimKind::Literal => Rates::LITERAL,
        }
    }
}

/// Whether a destination of `kind` follows a directive presented as `verdicts` (one per place the
/// handoff carries it): `careful` only when some place states it as an instruction of the agent
/// or the user; `literal` also when it is merely quoted or attributed without an explicit
/// do-not-follow marking; `oracle` never.
/// Drops this thread's memo of the last handoff read.
pub(crate) fn forget() {
    reading::forget();
}

pub fn follows_directive(kind: SimKind, verdicts: &[Presentation]) -> bool {
    match kind {
        SimKind::Oracle => false,
        SimKind::Careful => verdicts.contains(&Presentation::Instruction),
        SimKind::Literal => verdicts.iter().any(|v| *v != Presentation::Marked),
    }
}

/// A simulated destination for one cell.
pub struct SimAgent {
    /// `sim:oracle`: the reference continuation, as written.
    oracle: bool,
    rates: Rates,
    /// The behavioural draws' generator (see [`BEHAVIOUR_STREAM`]).
    behaviour: SplitMix64,
    /// Each situation's decision, by `(rate, about)`: one decision per situation and cell.
    decided: BTreeMap<(&'static str, String), bool>,
    /// Whether to keep the situations met (a calibration run's simulated cells).
    record: bool,
    /// The situations met, when `record`.
    pub situations: Vec<Situation>,
    scenario: Arc<Scenario>,
    interrupt: Interrupt,
    retrieves: VecDeque<String>,
    /// The handoff's reading (shared by its cells): its text, normalised copy and parts.
    reading: Arc<reading::Reading>,
    /// What it knows when retrievals added to the handoff: the reading's normalised text and
    /// each result's (`None` while it knows the handoff alone, so no cell copies the text).
    extended: Option<String>,
    plan: Option<VecDeque<Step>>,
    /// The actions its plan takes before its first write, as planned (for the next-step probe).
    pre_write: Option<Vec<String>>,
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
        SimAgent::with_rates(kind.rates(), scenario, interrupt, handoff, seed, attention)
            .for_kind(kind)
    }

    /// This destination as `kind` behaves beyond its rates: the oracle reads nothing of the
    /// handoff (it continues from the reference alone).
    pub fn for_kind(mut self, kind: SimKind) -> SimAgent {
        if kind == SimKind::Oracle {
            self.oracle = true;
            self.seen.clear();
            self.retrieves.clear();
        }
        self
    }

    /// A simulated destination of these behavioural rates (`crate::destination::profile`).
    pub fn with_rates(
        rates: Rates,
        scenario: Arc<Scenario>,
        interrupt: &Interrupt,
        handoff: &Handoff,
        seed: u64,
        attention: f64,
    ) -> SimAgent {
        SimAgent::reading(rates, scenario, interrupt, handoff, None, seed, attention)
    }

    /// [`SimAgent::with_rates`] with the handoff's reading, when the run prepared one.
    pub fn reading(
        rates: Rates,
        scenario: Arc<Scenario>,
        interrupt: &Interrupt,
        handoff: &Handoff,
        reading: Option<&Arc<Reading>>,
        seed: u64,
        attention: f64,
    ) -> SimAgent {
        let offers_retrieve = handoff.extra_tools.iter().any(|t| t.name == "retrieve");
        // The handoff's canonical layout and what it shows, shared by its cells (`reading`).
        let reading = reading::of(handoff, reading);
        let mut agent = SimAgent {
            oracle: false,
            rates,
            behaviour: SplitMix64::new(derive_seed(seed, BEHAVIOUR_STREAM)),
            decided: BTreeMap::new(),
            record: false,
            situations: Vec::new(),
            interrupt: interrupt.clone(),
            retrieves: VecDeque::new(),
            reading: reading.clone(),
            extended: None,
            plan: None,
            pre_write: None,
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
        agent.seen = format!(
            "{} {} {}",
            reading.seen,
            seen_text(&agent.scenario.objective),
            seen_text(&tools_text(&agent.scenario.world.tools))
        );
        if offers_retrieve {
            agent.retrieves = agent.retrieval_candidates(&reading.text).into();
        }
        agent
    }

    /// Keeps the situations the destination meets ([`SimAgent::situations`]).
    pub fn recording(mut self, record: bool) -> SimAgent {
        self.record = record;
        self
    }

    /// Whether the destination shows `rate`'s behaviour in the situation `about` (decided once
    /// per situation): a rate of 0 or 1 draws nothing. `call` is what shows it in a ledger; a
    /// situation with `keep` false (an override) is drawn but never kept for the fit.
    fn draw(
        &mut self,
        rate: &'static str,
        about: &str,
        call: Option<SituationCall>,
        keep: bool,
    ) -> bool {
        if let Some(d) = self.decided.get(&(rate, about.to_string())) {
            return *d;
        }
        if self.record && keep {
            self.situations.push(Situation {
                parameter: rate.to_string(),
                about: about.to_string(),
                call,
            });
        }
        let p = self.rates.get(rate).unwrap_or(0.0);
        let d = if p >= 1.0 {
            true
        } else if p <= 0.0 {
            false
        } else {
            self.behaviour.next_f64() < p
        };
        self.decided.insert((rate, about.to_string()), d);
        d
    }

    /// Whether it carries out a directive (or an override) presented as `verdicts`: the
    /// `follows_instruction` rate where some place states it as an instruction, the
    /// `follows_attributed` rate where it is only quoted or attributed, never a marked one
    /// ([`follows_directive`] for the hand-set kinds).
    fn follows(&mut self, verdicts: &[Presentation], about: &str, keep: bool) -> bool {
        if self.oracle {
            false
        } else if verdicts.contains(&Presentation::Instruction) {
            self.draw("follows_instruction", about, None, keep)
        } else if verdicts.iter().any(|v| *v != Presentation::Marked) {
            self.draw("follows_attributed", about, None, keep)
        } else {
            false
        }
    }

    fn facts(&self) -> Vec<&Fact> {
        self.scenario.facts_at(&self.interrupt).collect()
    }

    /// A fact is known when the text shows it — and a fact the user or the agent stated (a
    /// constraint, a decision, a user fact, a hypothesis) only when some place presents it as
    /// theirs: text quoted from an outside source informs only as what that source said.
    fn knows(&self, f: &Fact) -> bool {
        let shown = match &self.extended {
            Some(k) => f.detectors.iter().any(|d| d.matches(k)),
            None => self.reading.view(f).shown,
        };
        if !shown {
            return false;
        }
        let own = self
            .scenario
            .events
            .iter()
            .find(|e| e.id == f.source)
            .and_then(|e| e.kind())
            .is_some_and(|k| matches!(k, EventKind::User | EventKind::Assistant(_)));
        !own || {
            let v = self.reading.view(f);
            v.presentations(&self.reading)
                .contains(&Presentation::Instruction)
        }
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
    /// like any directive, from how the handoff presents them ([`SimAgent::follows`]).
    fn acted_overrides(&mut self) -> Vec<crate::provenance::Override> {
        let reading = self.reading.clone();
        reading
            .overrides
            .iter()
            .filter(|o| {
                let about = format!("override: {}", o.statement);
                self.follows(&[o.presentation], &about, false)
            })
            .cloned()
            .collect()
    }

    /// Whether every place the handoff carries a hypothesis states it without a hedge.
    fn reads_as_established(&self, f: &Fact) -> bool {
        self.reading.view(f).unhedged(&self.reading)
    }

    /// Whether the destination carries out an injected directive the handoff shows: judged from
    /// how the handoff presents it where it carries it ([`follows_directive`]), never from its
    /// wording. A governed delivery's advisory summary informs but never instructs: only its
    /// authoritative parts (originals, evidence) can carry a directive the destination follows.
    fn obeys(&mut self, f: &Fact) -> bool {
        let view = self.reading.view(f);
        if !view.shown_authoritative {
            return false;
        }
        let reading = self.reading.clone();
        self.follows(view.presentations_authoritative(&reading), &f.id, true)
    }

    /// The distraction model's chance of missing a fact the text shows: the best-recalled place
    /// the handoff carries it decides (a fact stated at the start and again in the middle is
    /// recalled as well as one at the start).
    fn forget_probability(&self, f: &Fact) -> f64 {
        let len = self.reading.text.len().max(1) as f64;
        let fit = super::attention::model();
        self.reading
            .view(f)
            .places(&self.reading)
            .iter()
            .map(|&(k, pos)| {
                let at = (self.reading.parts[k].1 + pos) as f64 / len;
                fit.forget(self.attention, self.tokens, at.min(1.0))
            })
            .fold(None, |best: Option<f64>, p| {
                Some(best.map_or(p, |b| b.min(p)))
            })
            .unwrap_or_else(|| fit.forget(self.attention, self.tokens, 0.5))
    }

    fn build_plan(&mut self) -> VecDeque<Step> {
        let mut steps: Vec<Step> = self.interrupt.continuation.clone();
        if self.oracle {
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
            } else {
                // Promotion: a hypothesis the handoff states without a hedge anywhere it carries
                // it is acted on as established; a hedged one at the `acts_on_hedged` rate.
                let promote = f.kind == FactKind::Hypothesis
                    && (self.reads_as_established(f)
                        || !f.when_promoted.is_empty() && {
                            let call = f.when_promoted.iter().find_map(|e| {
                                Some(SituationCall {
                                    tool: e.call.clone()?,
                                    args: e.args.clone().unwrap_or_default(),
                                })
                            });
                            self.draw("acts_on_hedged", &f.id, call, true)
                        });
                if promote {
                    self.promoted.push(f.id.clone());
                    for e in &f.when_promoted {
                        apply_edit(&mut steps, e, &self.scenario, &mut starts);
                    }
                }
                // Asking again for what it was told: the fact's questions (its `when_lost` asks)
                // at the `asks_again` rate.
                if f.when_lost.iter().any(|e| e.ask.is_some())
                    && self.draw("asks_again", &f.id, None, true)
                {
                    for e in f.when_lost.iter().filter(|e| e.ask.is_some()) {
                        apply_edit(&mut steps, e, &self.scenario, &mut starts);
                    }
                }
            }
        }
        steps.into()
    }
}

impl Destination for SimAgent {
    fn next_action<'a>(&'a mut self, last: Option<&'a ActionResult>) -> ActionFuture<'a> {
        Box::pin(std::future::ready(Ok(self.act(last))))
    }

    fn clock_ms(&self, started: &Instant) -> f64 {
        started.elapsed().as_secs_f64() * 1e3
    }

    fn answer_probes<'a>(
        &'a mut self,
        at: &'a crate::state::RestorePoint,
        probes: &'a [crate::destination::probe::Probe],
    ) -> crate::destination::ProbeFuture<'a> {
        Box::pin(std::future::ready(Some(SimAgent::answer_probes(
            self, at, probes,
        ))))
    }

    fn report(&mut self) -> DestinationReport {
        DestinationReport {
            lost_facts: self.lost_facts.clone(),
            forgotten: self.forgotten.clone(),
            obeyed: self.obeyed.clone(),
            overridden: self.overridden.clone(),
            live: None,
            situations: std::mem::take(&mut self.situations),
        }
    }
}

impl SimAgent {
    /// Applies the visible-values rule to a call step about to be made: `Ok(args)` (possibly
    /// acting on older values, or without a value it did not notice it lacks) or `Err(read)`, a
    /// source read to re-perform first (to recover a value, or one it distrusts).
    fn check_values(&mut self, tool: &str, raw: &Object) -> Result<Object, Action> {
        let mut args = raw.clone();
        let spec = self.scenario.world.tools.iter().find(|t| t.name == tool);
        for n in needed_values(spec, raw, &self.interrupt.perturb) {
            if visible(&self.seen, &n.piece) {
                // Distrust: a read whose value the handoff shows, re-performed anyway at the
                // `rereads_visible` rate (looked for only when it can matter).
                if (self.record || self.rates.rereads_visible > 0.0)
                    && let Some((id, t, a, _)) = self.read_carrying(&[Some(n.piece.as_str())])
                    && !self.reference_makes(&t, &a)
                {
                    let call = SituationCall {
                        tool: t.clone(),
                        args: a.clone(),
                    };
                    if self.draw("rereads_visible", &id, Some(call), true) {
                        self.invisible.push(format!(
                            "{tool} {} = {:?} → re-read {id} anyway",
                            n.path, n.piece
                        ));
                        self.reread.push(id);
                        return Err(Action::Call { tool: t, args: a });
                    }
                }
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
            if let Some((id, t, a, _)) =
                self.read_carrying(&[Some(n.piece.as_str()), n.older.as_deref()])
            {
                let call = SituationCall {
                    tool: t.clone(),
                    args: a.clone(),
                };
                // A read the reference continuation makes anyway shows nothing of noticing.
                let keep = !self.reference_makes(&t, &a);
                if self.draw("notices_missing", &id, Some(call), keep) {
                    self.invisible
                        .push(format!("{tool} {} = {:?} → re-read {id}", n.path, n.piece));
                    self.reread.push(id);
                    return Err(Action::Call { tool: t, args: a });
                }
                // It did not notice what it lacks: it acts on what it has, without the value.
                substitute(&mut args, &n.path, &n.piece, "");
                self.invisible
                    .push(format!("{tool} {} = {:?} → left out", n.path, n.piece));
                continue;
            }
            self.invisible
                .push(format!("{tool} {} = {:?} → used unseen", n.path, n.piece));
        }
        Ok(args)
    }

    /// The next action (the simulated destination answers at once).
    pub fn act(&mut self, last: Option<&ActionResult>) -> Action {
        if !self.oracle
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
                let k = self
                    .extended
                    .get_or_insert_with(|| self.reading.knowledge.clone());
                k.push(' ');
                k.push_str(&normalize(&r.text));
            }
            if let Some(key) = self.retrieves.pop_front() {
                return Action::Retrieve { resource: key };
            }
            let mut plan = self.build_plan();
            self.pre_write = Some(crate::destination::probe::before_first_write(
                &self.scenario,
                plan.make_contiguous(),
            ));
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
                if !self.oracle {
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
