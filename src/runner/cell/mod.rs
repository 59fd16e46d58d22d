//! One cell: a destination continues from a handoff in a fresh copy of the interrupted world,
//! within its step budget (every model turn counts) and, for live destinations, its wall-clock
//! budget; a cell that fails keeps what it spent (`diagnostics.live`).
//!
//! Owns: the cell's identity, what cells share of the plan, and the step loop with its token and
//! time accounting (the actions themselves are `crate::destination::Continuation`'s). Must not:
//! write records (`execute` does) or build handoffs (the plan did).

mod governed;
mod records;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use std::collections::BTreeSet;

use governed::{Admitted, admit};
use records::{CellRecord, Uncontinued, ratio};

use super::build::Built;
use super::matrix::{CellSpec, PointKey};
use super::plan::ReceiptFault;
use super::stream::Stream;
use super::{Plan, Prepared, RunConfig, RunRecord};
use crate::conversation;
use crate::destination::live::{CallContext, LiveAgent, LiveClient, wire_message};
use crate::destination::{
    Action, ActionResult, Continuation, Destination, SimAgent, is_simulated, sim_kind,
};
use crate::record::ErrorClass;
use crate::scenario::Scenario;
use crate::score::{self, Run};
use crate::tokens;

/// The harness's system prompt for destinations: the same for every strategy.
pub const SYSTEM_PROMPT: &str = "You are continuing a task that another agent session started and could not finish. \
The user message that follows is the handoff from that session. Use the tools to finish the task. \
Call ask_user to ask the user, request_approval to ask for an approval, and finish(status, report, degraded) \
when you are done or must stop.";

/// What all cells share: the plan's read-only parts, and the points built so far
/// ([`Stream`]).
pub struct Shared {
    scenarios: Vec<Arc<Scenario>>,
    windows: BTreeMap<String, u64>,
    pub(in crate::runner) stream: Arc<Stream>,
    windowed: BTreeSet<Arc<str>>,
    step_budget: u32,
    attention: f64,
    /// Live models by name.
    pub live: BTreeMap<String, Arc<LiveClient>>,
    /// `sim:fitted:PATH` destinations' rates by id.
    profiles: BTreeMap<String, crate::destination::profile::Rates>,
    /// Whether simulated cells keep the situations they meet (the run continues its cells on a
    /// simulated and a live destination: a calibration, which `calibrate --fit` fits from).
    situations: bool,
    /// Whether live destinations are asked the probe questions (`--live-probe-questions`).
    live_probes: bool,
    panic_cell: Option<usize>,
    receipt_fault: Option<(usize, ReceiptFault)>,
    source_model: Option<String>,
    conversations: Arc<conversation::Log>,
}

impl Shared {
    /// What the cells of `plan` share; `todo` is each point's number of cells still to run
    /// (a point is dropped after its last).
    pub fn new(plan: &Plan, cfg: &RunConfig, todo: BTreeMap<PointKey, usize>) -> Shared {
        // The plan's built handoffs by point, in one pass.
        let mut by_point: BTreeMap<PointKey, Vec<(super::HandoffKey, Prepared)>> = BTreeMap::new();
        for (h, p) in &plan.handoffs {
            let pk = PointKey {
                scenario: h.scenario,
                point: h.point.clone(),
            };
            by_point.entry(pk).or_default().push((h.clone(), p.clone()));
        }
        let built: Vec<Built> = plan
            .order
            .iter()
            .filter_map(|k| {
                Some(Built {
                    key: k.clone(),
                    at: plan.points.get(k)?.clone(),
                    history: plan.history.get(k).copied().unwrap_or(0),
                    handoffs: by_point.remove(k).unwrap_or_default(),
                    continuity: Vec::new(),
                })
            })
            .collect();
        let cap = cfg.concurrency.max(1) + 1;
        Shared {
            scenarios: plan.scenarios.clone(),
            windows: plan.windows.clone(),
            stream: Arc::new(Stream::new(
                &plan.order,
                built,
                todo,
                cap,
                tokens::count(SYSTEM_PROMPT),
            )),
            windowed: plan.windowed.clone(),
            step_budget: cfg.step_budget,
            attention: cfg.attention,
            live: plan.live.clone(),
            profiles: plan.profiles.clone(),
            situations: cfg.models.iter().any(|m| is_simulated(m))
                && cfg.models.iter().any(|m| !is_simulated(m)),
            live_probes: cfg.live_probe_questions,
            panic_cell: plan.panic_cell,
            receipt_fault: plan.receipt_fault,
            source_model: cfg.source_model.clone(),
            conversations: plan.conversations.clone(),
        }
    }
}

impl Shared {
    /// The record of a cell whose run panicked: an errored cell (`error_class: harness`), never a
    /// lost one.
    pub fn panicked(&self, c: &CellSpec, payload: Box<dyn std::any::Any + Send>) -> RunRecord {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into());
        let scenario = self
            .scenarios
            .get(c.scenario)
            .map(|s| s.id.clone())
            .unwrap_or_else(|| format!("<scenario #{}>", c.scenario));
        CellRecord {
            scenario: &scenario,
            cell: c,
        }
        .errored(
            ErrorClass::Harness,
            format!("the harness failed in this cell (a bug; please report it): {what}"),
        )
    }
}

/// Runs one cell to its record, and saves its conversation (`OUT/conversations.jsonl.gz`)
/// before the record is returned, so a record that reaches the journal has its entry on disk.
/// Never panics on scenario content: anything that goes wrong is an errored record. `index` is
/// the cell's place in the run (for progress events).
pub async fn run_cell(shared: &Shared, c: &CellSpec, index: usize) -> RunRecord {
    if shared.panic_cell == Some(index) {
        panic!("test hook: cell {index} panics");
    }
    let kind = match is_simulated(&c.model) {
        true => conversation::Kind::Simulated,
        false => conversation::Kind::Live,
    };
    let mut entry = conversation::Entry::new(conversation::Cell::default(), kind);
    let mut given = None;
    let mut r = continue_cell(shared, c, index, &mut entry, &mut given).await;
    entry.cell = r.id();
    entry.outcome = conversation::Outcome {
        status: match r.status {
            crate::record::Status::Ok => "ok".into(),
            crate::record::Status::Errored => "errored".into(),
        },
        error_class: r.error_class.map(|e| e.as_str().to_string()),
        error: r.error.clone(),
        note: entry.outcome.note.take(),
    };
    // A failed write is kept by the log (the run then ends with an I/O error); the record says
    // nothing it cannot back.
    if shared.conversations.append(&entry, given.as_ref()).is_ok() {
        r.conversation = Some(conversation::FILE.into());
    }
    r
}

/// The cell's continuation, recording what the conversation entry shows.
async fn continue_cell(
    shared: &Shared,
    c: &CellSpec,
    index: usize,
    entry: &mut conversation::Entry,
    given: &mut Option<conversation::Handoff>,
) -> RunRecord {
    let started = Instant::now();
    let s = &shared.scenarios[c.scenario];
    let rec = CellRecord {
        scenario: &s.id,
        cell: c,
    };
    let window = shared
        .windows
        .get(&*c.model)
        .copied()
        .unwrap_or(crate::strategy::DEFAULT_CONTEXT_WINDOW);
    let usable = crate::strategy::usable_context(window);
    let key = super::matrix::handoff_key(&shared.windowed, &shared.windows, c);
    let pk = PointKey {
        scenario: c.scenario,
        point: c.point.clone(),
    };
    let start = match shared.stream.start(&pk, &key) {
        Some(Ok(start)) => start,
        Some(Err(p)) => match &*p {
            Prepared::Failed(e) => {
                return rec.errored(e.class, format!("building the handoff: {}", e.message));
            }
            Prepared::Ready { .. } => {
                return rec.errored(
                    ErrorClass::Harness,
                    "no prepared state for this cell".into(),
                );
            }
        },
        None => {
            return rec.errored(
                ErrorClass::Harness,
                "no prepared state for this cell".into(),
            );
        }
    };
    let history_tokens = start.history;
    let at = &start.at;
    // The scenario at the cell's scale (the plan's is as written, without its volume).
    let s = &at.scenario;
    let (handoff, (rule_violations, upgrades), governed, carried, chain, reading) =
        match &*start.prepared {
            Prepared::Ready {
                handoff,
                rule_violations,
                upgrades,
                governed,
                carried,
                chain,
                reading,
            } => (
                handoff.clone(),
                (rule_violations, upgrades),
                governed,
                *carried,
                chain.as_deref().cloned(),
                reading.as_ref(),
            ),
            Prepared::Failed(e) => {
                return rec.errored(e.class, format!("building the handoff: {}", e.message));
            }
        };
    // Whether X compacted (a trigger's decision): the governed wrapper's inner handoff says.
    let compacted = governed
        .as_ref()
        .map_or(handoff.compacted, |g| g.inner.compacted);
    // Governed delivery: lineage, the context report, the envelope and the adapter's receipt.
    let mut gov_cell = None;
    let handoff = match governed {
        None => handoff,
        Some(g) => match admit(
            shared,
            g,
            c,
            s,
            at,
            index,
            chain.as_ref().map_or(1, |ch| ch.compactions),
        ) {
            Ok(Admitted::Deliver(h, cell)) => {
                gov_cell = Some(cell);
                h
            }
            Ok(Admitted::Stop(cell)) => {
                entry.outcome.note = Some(format!(
                    "not continued: the governed context was {:?}",
                    cell.status
                ));
                let why = Uncontinued::NotDelivered;
                let mut r = rec.uncontinued(s, at, 0, history_tokens, started, why);
                r.governed = Some(Box::new(cell));
                r.metrics.chain = chain;
                return r;
            }
            Err(message) => return rec.errored(ErrorClass::Harness, message),
        },
    };
    let handoff = &handoff;
    let h = conversation::Handoff::new(handoff.messages.iter().map(wire_message).collect());
    entry.handoff = Some(h.digest.clone());
    *given = Some(h);
    entry.handoff_tokens = handoff.tokens_at_restore;
    if handoff.tokens_at_restore > usable {
        entry.outcome.note = Some(format!(
            "not continued: the handoff ({} tokens) does not fit the destination's usable context ({usable} of {window} tokens)",
            handoff.tokens_at_restore
        ));
        // The handoff cannot be delivered at all: a failed continuation, recorded as such —
        // never cut to fit behind the strategy's back.
        let why = Uncontinued::Overflow {
            context_window: window,
        };
        let restore = handoff.tokens_at_restore;
        let mut r = rec.uncontinued(s, at, restore, history_tokens, started, why);
        r.governed = gov_cell.map(Box::new);
        r.metrics.chain = chain;
        return r;
    }
    // A live cell's wall-clock budget: (deadline, seconds).
    let mut deadline: Option<(tokio::time::Instant, f64)> = None;
    // A simulated destination: a kind's rates, or a calibrated profile's.
    let simulated = match sim_kind(&c.model) {
        Some(kind) => Some((kind.rates(), Some(kind))),
        None => shared.profiles.get(&*c.model).map(|r| (*r, None)),
    };
    let mut dest: Box<dyn Destination> = if let Some((rates, kind)) = simulated {
        let agent = SimAgent::reading(
            rates,
            s.clone(),
            &at.interrupt,
            handoff,
            reading,
            c.seed,
            shared.attention,
        );
        let agent = match kind {
            Some(k) => agent.for_kind(k),
            None => agent,
        };
        Box::new(agent.recording(shared.situations))
    } else if let Some(client) = shared.live.get(&*c.model) {
        deadline = Some((
            tokio::time::Instant::now()
                + std::time::Duration::from_secs_f64(
                    client.config.cell_timeout_s.clamp(0.001, 1e7),
                ),
            client.config.cell_timeout_s,
        ));
        Box::new(LiveAgent::new(
            client.clone(),
            SYSTEM_PROMPT,
            s,
            handoff,
            CallContext {
                identity: c.identity(&s.id),
                seed: c.seed,
                cell: Some(index),
            },
            shared.step_budget,
        ))
    } else {
        let message = format!("unknown destination `{}`", c.model);
        return rec.errored(ErrorClass::Harness, message);
    };
    let mut cont = Continuation::new(at, handoff);

    // Token accounting of a chat loop: every turn re-reads the whole context.
    let mut context = start.context + handoff.tokens_at_restore;
    let mut total_tokens = 0u64;
    let mut first_action_ms = None;
    let mut last: Option<ActionResult> = None;
    let mut steps = 0u32;
    let mut actions = 0u32;
    let spent = |first_action_ms: Option<f64>| records::Spent {
        restore_tokens: handoff.tokens_at_restore,
        history_tokens,
        first_action_ms,
    };
    while steps < shared.step_budget {
        let next = match deadline {
            Some((at, _)) => tokio::time::timeout_at(at, dest.next_action(last.as_ref()))
                .await
                .ok(),
            None => Some(dest.next_action(last.as_ref()).await),
        };
        let action = match next {
            Some(Ok(Action::OutOfSteps)) => {
                steps = actions + dest.steps_without_action();
                break;
            }
            Some(Ok(a)) => a,
            Some(Err(e)) => {
                let steps = actions + dest.steps_without_action();
                take_exchanges(entry, dest.as_mut());
                let spent = spent(first_action_ms);
                return rec.errored_after(
                    e.class,
                    e.message,
                    dest.as_mut(),
                    &started,
                    steps,
                    spent,
                );
            }
            None => {
                let steps = actions + dest.steps_without_action();
                let secs = deadline.map(|d| d.1).unwrap_or_default();
                let message = format!(
                    "model `{}`: the cell's wall-clock budget of {secs} s (cell_timeout_s) ran out after {steps} steps; the request in flight was abandoned",
                    c.model
                );
                let class = ErrorClass::Budget;
                take_exchanges(entry, dest.as_mut());
                let spent = spent(first_action_ms);
                return rec.errored_after(class, message, dest.as_mut(), &started, steps, spent);
            }
        };
        actions += 1;
        steps = actions + dest.steps_without_action();
        let action_tokens =
            tokens::count_cached(&serde_json::to_string(&action).unwrap_or_default());
        total_tokens += context + action_tokens;
        if action.acts_on_world() {
            first_action_ms.get_or_insert_with(|| dest.clock_ms(&started));
        }
        let applied = cont.apply(&action);
        entry.steps.push(conversation::Step {
            step: actions,
            at_ms: dest.clock_ms(&started),
            action: serde_json::to_value(&action).unwrap_or_default(),
            result: applied.as_ref().map(|r| r.text.clone()),
        });
        let Some(result) = applied else {
            break;
        };
        context += action_tokens + tokens::count_cached(&result.text);
        last = Some(result);
    }
    let completion_ms = dest.clock_ms(&started);
    // The probe questions, once the continuation has ended (a live destination's only when
    // asked for, within the cell's wall-clock budget; its answers or none).
    let probes = crate::destination::probe::probes_of(at);
    let answers = match deadline {
        Some(_) if !shared.live_probes => None,
        Some((until, _)) => tokio::time::timeout_at(until, dest.answer_probes(at, &probes))
            .await
            .ok()
            .flatten(),
        None => dest.answer_probes(at, &probes).await,
    };
    let finish = cont.finish();
    let run = Run {
        scenario: s,
        interrupt: &at.interrupt,
        world: cont.world(),
        finish,
        degraded: cont.degraded(),
        restore_tokens: handoff.tokens_at_restore,
        total_tokens,
        first_action_ms: first_action_ms.unwrap_or(completion_ms),
        completion_ms,
        steps,
        step_budget_exhausted: finish.is_none(),
    };
    take_exchanges(entry, dest.as_mut());
    let mut report = dest.report();
    entry.situations = std::mem::take(&mut report.situations);
    let live = report.live;
    let mut run = run;
    if let Some(l) = &live {
        // A live cell's cost is what the provider reported (or tiktoken counted).
        run.total_tokens = l.input_tokens + l.output_tokens;
    }
    // Facts the handoff did not show, apart from those it showed and the distraction model made
    // the destination miss: the first are the handoff's, the second the destination's.
    let forgotten = report.forgotten.clone();
    let not_shown: Vec<String> = report
        .lost_facts
        .into_iter()
        .filter(|f| !forgotten.contains(f))
        .collect();
    let (metrics, mut diagnostics) = score::score(&run, not_shown, report.obeyed);
    diagnostics.facts_forgotten = forgotten;
    diagnostics.facts_overridden = report.overridden;
    diagnostics.live = live.map(Box::new);
    let compaction = handoff.compaction.as_ref();
    let mut metrics = metrics;
    metrics.compaction_tokens = compaction
        .map(|l| l.input_tokens + l.output_tokens)
        .unwrap_or(0);
    diagnostics.compaction = compaction.cloned().map(Box::new);
    diagnostics.provenance_upgrades = upgrades.clone();
    diagnostics.checkpoint_checked = rule_violations.is_some();
    diagnostics.checkpoint_rule_violations = rule_violations.clone().unwrap_or_default();
    metrics.history_tokens = history_tokens;
    metrics.compression_ratio = ratio(handoff.tokens_at_restore, history_tokens);
    metrics.carried = carried;
    metrics.compacted = compacted;
    metrics.chain = chain;
    if let Some(a) = &answers {
        metrics.probes = crate::destination::probe::score(at, &probes, a);
    }
    if gov_cell.as_ref().is_some_and(|g| g.held) {
        // A held run's outcome cannot be accepted: responsibility for it is unknown.
        metrics.task_success = false;
    }
    let mut r = rec.scored(metrics, diagnostics);
    r.governed = gov_cell.map(Box::new);
    r
}

/// Moves a live destination's exchanges into the cell's conversation entry.
fn take_exchanges(entry: &mut conversation::Entry, dest: &mut dyn Destination) {
    if let Some((tools, exchanges)) = dest.conversation() {
        entry.tools = tools;
        entry.exchanges = exchanges;
    }
}
