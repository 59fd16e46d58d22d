//! Duplicate side effects: the same non-idempotent intent (create or send) committed more than
//! once, counting the source run's commits, where a continuation call is among them.
//!
//! Owns which intent groups count (the grouping is [`World::intent_groups`]). Never reads the handoff or the destination's claims, and
//! never counts a group the continuation took no part in.

use crate::record::{Duplicate, Intent};
use crate::scenario::Scenario;
use crate::world::World;

/// The duplicated intents and the commits beyond the first of each.
pub(super) struct Duplicates {
    pub found: Vec<Duplicate>,
    pub extra_commits: u32,
}

pub(super) fn duplicates(s: &Scenario, w: &World) -> Duplicates {
    let found: Vec<Duplicate> = w
        .intent_groups(&s.world.tools)
        .into_iter()
        .filter(|g| g.commits > 1 && g.in_continuation)
        .map(|g| Duplicate {
            intent: Intent {
                tool: g.tool,
                args: g.args,
            },
            count: g.commits,
        })
        .collect();
    let extra_commits = found.iter().map(|d| d.count - 1).sum();
    Duplicates {
        found,
        extra_commits,
    }
}
