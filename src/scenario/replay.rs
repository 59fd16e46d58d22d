//! Replaying the reference run into a fresh world.

use crate::spec::{Event, Fault, Scenario};
use crate::world::{CallResult, Phase, World, WorldBuildError, parse_time};

/// A world after replaying a prefix of the reference run, with what each call returned.
#[derive(Debug, Clone)]
pub struct Replay {
    pub world: World,
    /// One entry per replayed event: the call's result, `None` for non-call events.
    pub results: Vec<Option<CallResult>>,
    /// One entry per replayed event: the resource a call read or wrote, as it was right after.
    pub observed: Vec<Option<Observed>>,
}

/// A resource as a call saw it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Observed {
    pub key: String,
    pub revision: u64,
    pub digest: String,
    pub external: bool,
    pub source: Option<String>,
    /// Simulated time of the observation.
    pub observed_at: String,
    pub text: std::sync::Arc<str>,
}

/// Replays events `0..=through` of the reference run. Calls in `lose_response` get a
/// `timeout_after_commit` fault (a perturbation: the effect happened, the response was lost).
pub fn replay_prefix(
    scenario: &Scenario,
    through: usize,
    lose_response: &[&str],
) -> Result<Replay, WorldBuildError> {
    let mut world = World::new(scenario)?;
    let mut results = Vec::with_capacity(through + 1);
    let mut observed = Vec::with_capacity(through + 1);
    for (i, ev) in scenario.events.iter().enumerate().take(through + 1) {
        if let Some(tool) = &ev.call {
            let empty = serde_json::Map::new();
            let args = ev.args.as_ref().unwrap_or(&empty);
            let fault = if lose_response.contains(&ev.id.as_str()) {
                Some(Fault::TimeoutAfterCommit)
            } else {
                ev.fault
            };
            let mut r = if ev.volume {
                world.call_untimed(Phase::Source, tool, args, Some(&ev.id))
            } else {
                world.call(Phase::Source, tool, args, fault, Some(&ev.id))
            };
            // A rejected call answers with the service's own error text.
            if fault == Some(Fault::Rejected) && r.output.is_err() {
                r.output = Err(ev.error.clone().unwrap_or_default());
            }
            let seen = world
                .ledger()
                .last()
                .and_then(|e| e.touched.as_deref())
                .and_then(|t| t.rsplit_once('@'))
                .and_then(|(key, _)| {
                    world.resource(key).map(|res| Observed {
                        key: key.to_string(),
                        revision: res.revision,
                        digest: res.digest.clone(),
                        external: res.external,
                        source: res.source.clone(),
                        observed_at: world.clock().to_string(),
                        text: res.text.clone(),
                    })
                });
            observed.push(seen);
            results.push(Some(r));
        } else if let Some(a) = &ev.approval {
            world.set_approval_status(&a.id, a.status);
            if let Some(exp) = &a.expires_at {
                let t = parse_time(exp, &format!("events[{i}].approval.expires_at"))?;
                world.set_approval_expiry(&a.id, Some(t));
            }
            results.push(None);
            observed.push(None);
        } else {
            results.push(None);
            observed.push(None);
        }
    }
    Ok(Replay {
        world,
        results,
        observed,
    })
}

/// The text of an event, as detectors and handoffs see it. For calls this includes the result
/// the source agent saw (or the timeout it saw instead).
pub fn event_text(ev: &Event, result: Option<&CallResult>) -> String {
    if let Some(u) = &ev.user {
        return u.clone();
    }
    if let Some(t) = &ev.text {
        return t.clone();
    }
    if let Some(tool) = &ev.call {
        let args = ev
            .args
            .as_ref()
            .map(|a| serde_json::to_string(a).unwrap_or_default())
            .unwrap_or_else(|| "{}".into());
        let res = result.map(|r| r.text()).unwrap_or_default();
        return format!("{tool} {args}\n{res}");
    }
    if let Some(a) = &ev.approval {
        return format!(
            "approval {} {}{}",
            a.id,
            a.status.as_str(),
            a.expires_at
                .as_ref()
                .map(|e| format!(" until {e}"))
                .unwrap_or_default()
        );
    }
    String::new()
}
