//! Duplicate side effects: the same non-idempotent intent (create or send) committed more than
//! once, counting the source run's commits, where a continuation call is among them.
//!
//! Owns intents and their grouping. Never reads the handoff or the destination's claims, and
//! never counts a group the continuation took no part in.

use std::collections::BTreeMap;

use crate::record::{Duplicate, Intent};
use crate::scenario::{EffectKind, Scenario};
use crate::world::{LedgerEntry, Phase, World};

/// The duplicated intents and the commits beyond the first of each.
pub(super) struct Duplicates {
    pub found: Vec<Duplicate>,
    pub extra_commits: u32,
}

/// The intent of a non-idempotent effect: the tool and its arguments without the idempotency key
/// (a blind retry under a fresh key is the same intent).
fn intent(e: &LedgerEntry, scenario: &Scenario) -> Intent {
    let key_param = scenario
        .world
        .tools
        .iter()
        .find(|t| t.name == e.tool)
        .and_then(|t| t.idempotency_key_param.as_ref());
    let mut args = e.args.clone();
    if let Some(k) = key_param {
        args.remove(k);
    }
    Intent {
        tool: e.tool.clone(),
        args,
    }
}

/// `<tool> <arguments as JSON>`: what groups intents, and the order of the diagnostics (the form
/// version-1 records wrote them in).
fn key(i: &Intent) -> String {
    let args = serde_json::to_string(&i.args).unwrap_or_default();
    format!("{} {args}", i.tool)
}

pub(super) fn duplicates(s: &Scenario, w: &World) -> Duplicates {
    // Grouped by the intent's text key, so the diagnostics keep their order.
    let mut groups: BTreeMap<String, (Intent, u32, bool)> = BTreeMap::new();
    for e in w.committed_writes() {
        if matches!(e.effect, Some(EffectKind::Create | EffectKind::Send)) {
            let i = intent(e, s);
            let g = groups.entry(key(&i)).or_insert((i, 0, false));
            g.1 += 1;
            g.2 |= e.phase == Phase::Continuation;
        }
    }
    let found: Vec<Duplicate> = groups
        .into_values()
        .filter(|(_, n, cont)| *n > 1 && *cont)
        .map(|(intent, count, _)| Duplicate { intent, count })
        .collect();
    let extra_commits = found.iter().map(|d| d.count - 1).sum();
    Duplicates {
        found,
        extra_commits,
    }
}
