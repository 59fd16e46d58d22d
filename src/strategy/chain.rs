//! Compaction chains (`--cycles N`): a long run compacts more than once, and each compaction
//! sees only what the one before kept.
//!
//! Owns: the chain's interrupt points ([`points`]: the scenario's points up to the cell's, one
//! per cut, the last `N`), building a chain ([`build`]: the first compaction from the state,
//! each next one from the previous handoff as its destination received it plus the source
//! events since, through [`Strategy::build_after`]), and the chain's ids (`C×3`, [`id`] and
//! [`parse`]: a chain is an arm of a run as a strategy is, so every table, pairing and resume
//! key already tells them apart). Must not: give a compaction the events its previous one
//! replaced, or decide what a strategy keeps (each strategy's `build_after` does).

use std::sync::Arc;

use super::{Registry, Strategy, StrategyError};
use crate::handoff::Handoff;
use crate::scenario::Scenario;
use crate::state::{InterruptedState, RestorePoint, StateError};

/// What joins a strategy's id and its cycles in a chain's id (`C×3`).
pub const MARK: char = '×';

/// The most compactions a chain may have.
pub const MAX_CYCLES: u32 = 16;

/// The id of strategy `inner` chained over `cycles` compactions (`inner` itself at 1).
pub fn id(inner: &str, cycles: u32) -> String {
    if cycles <= 1 {
        inner.to_string()
    } else {
        format!("{inner}{MARK}{cycles}")
    }
}

/// The strategy and the cycles of a run's strategy id: `C×3` is C over 3 compactions, any id
/// without the mark is itself over 1. An id whose cycles are not a number from 2 to
/// [`MAX_CYCLES`] is an error that says so.
pub fn parse(run_id: &str) -> Result<(&str, u32), String> {
    let Some((inner, n)) = run_id.rsplit_once(MARK) else {
        return Ok((run_id, 1));
    };
    match n.parse::<u32>() {
        Ok(c) if (2..=MAX_CYCLES).contains(&c) && !inner.is_empty() => Ok((inner, c)),
        _ => Err(format!(
            "`{run_id}`: a chained strategy is STRATEGY{MARK}N with N from 2 to {MAX_CYCLES} (use --cycles N)"
        )),
    }
}

/// Every run id of `ids` over each number of `cycles` (`X` at 1, `X×N` above; the order is the
/// ids', each with its cycles in the order given). An empty `cycles` is `[1]`.
/// `--cycles N` as every command reads it: a number of compactions from 1 to [`MAX_CYCLES`].
pub fn check_cycles(cycles: u32) -> Result<(), String> {
    if (1..=MAX_CYCLES).contains(&cycles) {
        Ok(())
    } else {
        Err(format!(
            "--cycles {cycles}: the number of compactions is from 1 to {MAX_CYCLES}"
        ))
    }
}

pub fn expand(ids: &[String], cycles: &[u32]) -> Result<Vec<String>, String> {
    for &c in cycles {
        check_cycles(c)?;
    }
    let cycles = if cycles.is_empty() { &[1][..] } else { cycles };
    let mut out: Vec<String> = Vec::new();
    for i in ids {
        parse(i)?;
        for &c in cycles {
            let id = id(i, c);
            if !out.contains(&id) {
                out.push(id);
            }
        }
    }
    Ok(out)
}

/// The interrupt points a chain of `cycles` compactions ending at `point` compacts at, in
/// order: the scenario's points whose cut comes before `point`'s (one per cut, the first
/// written), the last `cycles - 1` of them, then `point`. Fewer when the scenario has fewer
/// earlier points: the chain has as many compactions as there are points to compact at.
pub fn points(scenario: &Scenario, point: &str, cycles: u32) -> Result<Vec<String>, StateError> {
    let cut_of = |name: &str| {
        scenario
            .interrupt(name)
            .and_then(|i| scenario.event_index(&i.after))
    };
    let Some(cut) = cut_of(point) else {
        return Err(StateError::unknown_interrupt(scenario, point));
    };
    let mut earlier: Vec<(usize, String)> = Vec::new();
    for i in &scenario.interrupts {
        if let Some(c) = cut_of(&i.point)
            && c < cut
            && !earlier.iter().any(|(x, _)| *x == c)
        {
            earlier.push((c, i.point.clone()));
        }
    }
    earlier.sort_by_key(|(c, _)| *c);
    let keep = (cycles.max(1) - 1) as usize;
    let from = earlier.len().saturating_sub(keep);
    let mut out: Vec<String> = earlier.drain(from..).map(|(_, p)| p).collect();
    out.push(point.to_string());
    Ok(out)
}

/// The restore points of a chain of `cycles` ending at `at` ([`points`]): the earlier ones
/// replayed from `at`'s scenario, `at` itself last.
pub fn restore_points(
    at: &Arc<RestorePoint>,
    cycles: u32,
) -> Result<Vec<Arc<RestorePoint>>, StateError> {
    let names = points(&at.scenario, &at.interrupt.point, cycles)?;
    let mut out = Vec::with_capacity(names.len());
    for name in &names[..names.len() - 1] {
        out.push(Arc::new(RestorePoint::build(at.scenario.clone(), name)?));
    }
    out.push(at.clone());
    Ok(out)
}

/// Every handoff of the chain over `points` (in order; the last is the cell's), each as its
/// destination receives it: restored against the world at its point — the world the source
/// left for the earlier ones (the events replayed after them are the source's), the cell's
/// world, perturbations applied, for the last.
///
/// The first compaction builds from the state; each next one is given the previous handoff and
/// only the events after the previous point ([`crate::state::InterruptedState::since`]). While
/// a strategy with a trigger has not compacted yet, its context is still the raw history (less
/// what the window dropped), and it is built from that.
pub async fn build(
    registry: &Registry,
    strategy: &dyn Strategy,
    points: &[Arc<RestorePoint>],
) -> Result<Vec<Handoff>, StrategyError> {
    let states: Vec<&InterruptedState> = points.iter().map(|p| p.state.as_ref()).collect();
    build_over(strategy, &states, |k, h| {
        let world = if k + 1 == points.len() {
            &points[k].world
        } else {
            &points[k].source_world
        };
        registry.restore(h, world)
    })
    .await
}

/// The chain over `states` (each a prefix of the next, the last the cell's), each handoff
/// passed through `restore(k, handoff)` before the next compaction reads it: [`build`]'s
/// restoration against a scenario's world, or nothing for a recorded run (a τ-bench cut, whose
/// handoff no world changes).
pub async fn build_over(
    strategy: &dyn Strategy,
    states: &[&InterruptedState],
    mut restore: impl FnMut(usize, Handoff) -> Result<Handoff, StrategyError>,
) -> Result<Vec<Handoff>, StrategyError> {
    let mut out: Vec<Handoff> = Vec::with_capacity(states.len());
    for (k, state) in states.iter().enumerate() {
        let h = match out.last() {
            None => strategy.build(state).await?,
            Some(prev) if prev.compacted == Some(false) => {
                let mut raw = (*state).clone();
                raw.events.retain(|e| !prev.dropped_events.contains(&e.id));
                strategy.build(&raw).await?
            }
            Some(prev) => {
                let since = state.since(states[k - 1].cut);
                strategy.build_after(prev, &since).await?
            }
        };
        let mut h = restore(k, h)?;
        h.covers = Some(state.after.clone());
        // A live summariser's cost is the chain's: every compaction it made (charged to the
        // cells of the last handoff, as a single compaction's is).
        if let Some(prev) = out.last().and_then(|p: &Handoff| p.compaction.clone()) {
            match &mut h.compaction {
                Some(c) => c.add(&prev),
                None => h.compaction = Some(prev),
            }
        }
        out.push(h);
    }
    Ok(out)
}

/// Point `k` of a chain of `n` as its handoff is judged: the last as the cell's restore point,
/// an earlier one in the world the source left there (its handoff was restored against that
/// world, and the events replayed after it are the source's, perturbation-free).
pub fn judged_at(at: &RestorePoint, k: usize, n: usize) -> std::borrow::Cow<'_, RestorePoint> {
    if k + 1 == n {
        std::borrow::Cow::Borrowed(at)
    } else {
        let mut left = at.clone();
        left.world = at.source_world.clone();
        std::borrow::Cow::Owned(left)
    }
}

/// [`build`] on the process's runtime, for commands and tests.
pub fn build_blocking(
    registry: &Registry,
    strategy: &dyn Strategy,
    points: &[Arc<RestorePoint>],
) -> Result<Vec<Handoff>, StrategyError> {
    crate::runtime::block_on(build(registry, strategy, points)).map_err(|e| {
        StrategyError::Template {
            name: strategy.id().to_string(),
            message: format!("cannot start the async runtime: {e}"),
        }
    })?
}

/// How many of a chain's handoffs were compactions (a strategy below its trigger hands the
/// transcript over uncompacted).
pub fn compactions(chain: &[Handoff]) -> u32 {
    chain.iter().filter(|h| h.compacted != Some(false)).count() as u32
}

impl Registry {
    /// The handoffs strategy `id` gives over a chain of `cycles` ending at `at`, each as a
    /// destination receives it ([`build`]); `cycles` 1 is [`Registry::handoff`]'s alone.
    pub fn chain(
        &self,
        id: &str,
        at: &Arc<RestorePoint>,
        cycles: u32,
    ) -> Result<Vec<Handoff>, StrategyError> {
        let points = restore_points(at, cycles)?;
        let strategy = self.get(id)?;
        build_blocking(self, strategy.as_ref(), &points)
    }
}
