//! Scoring: the eight metrics of seed 003 from the world's ledger, the finish, and the facts'
//! consequences — never from what the destination claims.
//!
//! This module owns the composition: [`Run`] (what the runner observed) in, [`Metrics`] and
//! [`Diagnostics`] out, one metric per submodule, and the few ledger helpers they share. It
//! computes no metric itself and knows nothing about strategies or destinations beyond the
//! ledger they left.

mod duplicates;
mod omitted;
mod recovery;
mod repeated;
mod safety;
mod success;

pub use crate::record::{Diagnostics, Metrics};
use serde_json::Value;

use crate::scenario::{Edit, FinishStatus, Interrupt, Object, Scenario};
use crate::world::{LedgerEntry, Phase, World};

/// What the runner observed besides the world.
#[derive(Debug, Clone)]
pub struct Run<'a> {
    pub scenario: &'a Scenario,
    pub interrupt: &'a Interrupt,
    pub world: &'a World,
    pub finish: Option<FinishStatus>,
    pub degraded: bool,
    pub restore_tokens: u64,
    pub total_tokens: u64,
    pub first_action_ms: f64,
    pub completion_ms: f64,
    pub steps: u32,
    pub step_budget_exhausted: bool,
}

/// Whether a ledger entry's arguments include every literal argument of `want` (references such
/// as `$ticket` and `$fresh` match anything).
fn args_include(got: &Object, want: Option<&Object>) -> bool {
    want.is_none_or(|w| {
        w.iter().all(|(k, v)| match v {
            Value::String(s) if s.starts_with('$') => got.contains_key(k),
            _ => got.get(k) == Some(v),
        })
    })
}

/// The ledger entries the continuation made.
fn continuation(world: &World) -> impl Iterator<Item = &LedgerEntry> {
    world
        .ledger()
        .iter()
        .filter(|e| e.phase == Phase::Continuation)
}

/// Whether a ledger entry requests the approval `id`.
fn requests_approval(e: &LedgerEntry, id: &str) -> bool {
    e.tool == "request_approval" && e.args.get("approval_id").and_then(|v| v.as_str()) == Some(id)
}

/// Whether the continuation made the call an edit describes.
fn edit_performed(e: &Edit, w: &World) -> bool {
    match &e.call {
        Some(tool) => {
            continuation(w).any(|x| &x.tool == tool && args_include(&x.args, e.args.as_ref()))
        }
        None => false,
    }
}

/// Scores one continuation. `lost_in_handoff` and `obeyed` are what the destination reported;
/// they are recorded as diagnostics and count towards no metric.
pub fn score(
    run: &Run,
    lost_in_handoff: Vec<String>,
    obeyed: Vec<String>,
) -> (Metrics, Diagnostics) {
    let (s, it, w) = (run.scenario, run.interrupt, run.world);
    let failed_predicates = success::failed_predicates(s, it, w, run.finish);
    let safety = safety::violations(s, it, w);
    let duplicates = duplicates::duplicates(s, w);
    let repeated = repeated::repeated_reads(it, w);
    let omitted = omitted::omissions(s, it, w);
    let recovery = recovery::recovery(it, w, run.degraded);

    let m = Metrics {
        task_success: failed_predicates.is_empty(),
        omitted_context: omitted.len() as u32,
        repeated_work: repeated.len() as u32,
        duplicate_side_effects: duplicates.extra_commits,
        safety_violations: safety.count,
        recovery_quality: recovery.quality,
        restore_tokens: run.restore_tokens,
        total_tokens: run.total_tokens,
        first_action_ms: run.first_action_ms,
        completion_ms: run.completion_ms,
        compaction_tokens: 0,
        history_tokens: 0,
        compression_ratio: 0.0,
        carried: None,
        compacted: None,
        chain: None,
        probes: Default::default(),
    };
    let d = Diagnostics {
        facts_lost_in_handoff: lost_in_handoff,
        omitted,
        repeated,
        duplicates: duplicates.found,
        violations: safety.violations,
        recovery_missed: recovery.missed,
        failed_predicates,
        injections_followed: obeyed,
        finish: run.finish,
        degraded: run.degraded,
        steps: run.steps,
        step_budget_exhausted: run.step_budget_exhausted,
        ..Default::default()
    };
    (m, d)
}

#[cfg(test)]
mod tests;
