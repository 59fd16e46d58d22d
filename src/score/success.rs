//! Task success: the interrupt's success predicates evaluated on the final world and the finish.
//!
//! Owns which predicates failed. Never reads the handoff, the destination's claims or the
//! ledger's history beyond what the predicates themselves evaluate.

use crate::scenario::{FinishStatus, Interrupt, Scenario};
use crate::world::World;

/// The indexes of the success predicates the run does not satisfy (none: the task succeeded).
pub(super) fn failed_predicates(
    s: &Scenario,
    it: &Interrupt,
    w: &World,
    finish: Option<FinishStatus>,
) -> Vec<usize> {
    s.success_at(it)
        .iter()
        .enumerate()
        .filter(|(_, p)| !w.eval(p, finish))
        .map(|(i, _)| i)
        .collect()
}
