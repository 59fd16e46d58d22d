//! One handoff as the plan prepares it: built by its strategy, restored against the interrupted
//! world, screened for the run's secrets and checked against seed 003 §9.2's rules.
//!
//! Owns: [`Prepared`] and what makes a handoff's cells errored before they start (a failing
//! plug-in or summariser, a leaked secret). Must not: choose which handoffs a run needs (the
//! plan) or deliver one (the cell).

use std::sync::Arc;

use super::RunError;
use crate::handoff::Handoff;
use crate::record::{CellError, ErrorClass};
use crate::state::RestorePoint;
use crate::strategy::{Registry, Strategy};

/// A handoff as the plan prepared it.
#[derive(Debug, Clone)]
pub enum Prepared {
    Ready {
        handoff: Arc<Handoff>,
        /// Provenance upgrades in the handoff's text (`upgrades`).
        upgrades: Vec<String>,
        /// Seed 003 §9.2 rule violations (`rule at where: detail`), for checkpoint handoffs.
        rule_violations: Option<Vec<crate::record::RuleBreak>>,
        /// A governed strategy's (`gov:X`) delivery: `handoff` is then what a destination reads
        /// when the context is `READY` (upgrades and rule violations are X's).
        governed: Option<Arc<crate::delivery::Governed>>,
        /// What `handoff` (as delivered) carries of what is needed and of the inert volume
        /// (`crate::carried`; set by the builder once the delivery is known).
        carried: Option<crate::record::Carried>,
        /// A chained handoff's chain (`--cycles` above 1): each compaction's handoff, judged.
        chain: Option<Arc<crate::record::Chain>>,
        /// `handoff` as a simulated destination reads it, read once for all its cells (set by
        /// the builder when the run has a simulated destination).
        reading: Option<Arc<crate::destination::Reading>>,
    },
    /// The handoff could not be built (a failing plug-in or summariser): its cells are errored.
    Failed(CellError),
}

/// Builds one handoff (on the process's runtime), restores it, and checks its checkpoint.
/// A failing plug-in or summariser errors the handoff's cells; any other error stops the run.
/// A panic while judging a strategy's output (a harness bug on text nobody foresaw) errors that
/// handoff's cells (`error_class: harness`) instead of ending the run.
///
/// With `chain` (`cycles` compactions over these points, `at` the last), the handoff is the
/// chain's last ([`crate::strategy::chain::build`]); every handoff of the chain is screened for
/// secrets and gets the continuity eval at its own point.
pub(super) fn prepare(
    registry: &Registry,
    strategy: &dyn Strategy,
    at: &RestorePoint,
    chain: Option<(u32, &[Arc<RestorePoint>])>,
) -> Result<Prepared, RunError> {
    let attempt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        prepare_unguarded(registry, strategy, at, chain)
    }));
    attempt.unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into());
        Ok(Prepared::Failed(CellError {
            class: ErrorClass::Harness,
            message: format!(
                "strategy `{}`: the harness failed while preparing this handoff (a bug; please report it): {what}",
                strategy.id()
            ),
        }))
    })
}

fn prepare_unguarded(
    registry: &Registry,
    strategy: &dyn Strategy,
    at: &RestorePoint,
    chain: Option<(u32, &[Arc<RestorePoint>])>,
) -> Result<Prepared, RunError> {
    let built = match chain {
        None => crate::runtime::block_on(strategy.build(&at.state)).map(|b| {
            b.and_then(|h| registry.restore(h, &at.world))
                .map(|h| vec![h])
        }),
        Some((_, points)) => {
            crate::runtime::block_on(crate::strategy::chain::build(registry, strategy, points))
        }
    }
    .map_err(|e| RunError::Harness(format!("the async runtime: {e}")))?;
    let mut handoffs = match built {
        Ok(h) => h,
        Err(crate::strategy::StrategyError::Plugin(e)) => {
            return Ok(Prepared::Failed(CellError {
                class: ErrorClass::Plugin,
                message: crate::secrets::redact(&e.to_string()).into_owned(),
            }));
        }
        Err(crate::strategy::StrategyError::Summariser(e)) => {
            return Ok(Prepared::Failed(CellError {
                class: e.class,
                message: crate::secrets::redact(&e.message).into_owned(),
            }));
        }
        Err(e) => return Err(e.into()),
    };
    // A handoff that carries a secret of this run is never sent anywhere: its cells are errored.
    if crate::secrets::any() && handoffs.iter().any(handoff_has_secret) {
        return Ok(Prepared::Failed(CellError {
            class: ErrorClass::Plugin,
            message: format!(
                "strategy `{}`: output contains a secret of this run (the handoff was discarded)",
                strategy.id()
            ),
        }));
    }
    let chain = chain.map(|(cycles, points)| {
        Arc::new(crate::record::Chain {
            cycles,
            compactions: crate::strategy::chain::compactions(&handoffs),
            steps: points
                .iter()
                .zip(&handoffs)
                .enumerate()
                .map(|(k, (p, h))| {
                    let judged = crate::strategy::chain::judged_at(p, k, points.len());
                    crate::record::ChainStep {
                        interrupt: p.interrupt.point.clone(),
                        restore_tokens: h.tokens_at_restore,
                        compacted: h.compacted != Some(false),
                        continuity_passed: Some(
                            crate::continuity::evaluate(&judged, h, &full_history_text(p)).passed,
                        ),
                    }
                })
                .collect(),
        })
    });
    let Some(h) = handoffs.pop() else {
        return Err(RunError::Harness("a chain without a handoff".into()));
    };
    // Checkpoints get every seed-003 §9.2 rule; text handoffs the rules checkable on text.
    let rule_violations = Some(rule_breaks(crate::audit::rule_check(&h, &h, at)));
    Ok(Prepared::Ready {
        upgrades: crate::upgrades::provenance_upgrades(at, &h),
        handoff: Arc::new(h),
        rule_violations,
        governed: None,
        carried: None,
        chain,
        reading: None,
    })
}

/// A point's source history as one text (what the continuity eval's full path reads).
pub(super) fn full_history_text(at: &RestorePoint) -> String {
    at.state
        .events
        .iter()
        .map(|e| e.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Rule violations as a record holds them.
pub(super) fn rule_breaks(
    v: Vec<crate::checkpoint::rules::RuleViolation>,
) -> Vec<crate::record::RuleBreak> {
    v.into_iter()
        .map(|v| crate::record::RuleBreak {
            rule: v.rule.to_string(),
            at: v.at,
            detail: v.detail,
        })
        .collect()
}

/// Whether any text of a handoff (its rendering, messages, checkpoint, extra tools) holds a
/// secret of the run.
fn handoff_has_secret(h: &Handoff) -> bool {
    serde_json::to_string(h).is_ok_and(|t| crate::secrets::contains(&t))
}

/// How many of a plug-in's first handoffs must all fail for the run to stop before its first
/// cell (`run --no-fail-fast` keeps going and records its cells as errored).
pub const FAIL_FAST_AFTER: usize = 3;

/// The error that stops a run whose plug-in strategy `id` failed on each of its first handoffs
/// (`failures`, in job order), with what to change: the input format it was given, and the
/// `reads` key when its stderr shows it looked for format 2's keys.
pub(super) fn plugin_failing(
    registry: &Registry,
    id: &str,
    failures: &[&CellError],
    first_at: &RestorePoint,
) -> RunError {
    use crate::plugin::protocol::{InputFormat, STATE_FORMAT_2};
    let reads = registry.config(id).and_then(|c| c.reads.clone());
    let format = reads
        .as_deref()
        .and_then(InputFormat::parse)
        .unwrap_or_default();
    let first = failures
        .first()
        .map(|e| e.message.clone())
        .unwrap_or_default();
    // A program written for format 2 looks up `scenario` or `interrupt` (a KeyError in Python,
    // `undefined` in JavaScript, a nil in jq…): the words in its error say so.
    let v2_keys = failures.iter().any(|e| {
        let m = &e.message;
        [
            "'scenario'",
            "\"scenario\"",
            "'interrupt'",
            "\"interrupt\"",
            ".scenario",
            ".interrupt",
        ]
        .iter()
        .any(|k| m.contains(k))
    });
    let mut advice = match reads {
        None => format!(
            "Its strategy file sets no `reads`, so it got the current input format {}.",
            format.name()
        ),
        Some(r) => format!("Its strategy file sets `reads = {r:?}`."),
    };
    if v2_keys && format != InputFormat::State2 {
        advice.push_str(&format!(
            " Its error names `scenario` or `interrupt`, keys of {STATE_FORMAT_2}: add `reads = {STATE_FORMAT_2:?}` to its strategy file to be served that format, or read `task` and `after` (see docs/plugins.md, \"Input formats\")."
        ));
    }
    // The embedded strategies need no flag: `plugin-input` from the same folder reads them too.
    let strategy_dir = registry
        .source()
        .folder()
        .map(|d| format!(" --strategy-dir {}", d.display()))
        .unwrap_or_default();
    advice.push_str(&format!(
        " Its first input: `compaction-eval plugin-input --strategy {id}{strategy_dir} --scenario {} --interrupt {}`, piped to the program. Or pass --no-fail-fast to run on and record its cells as errored.",
        first_at.scenario.id,
        first_at.interrupt.point
    ));
    RunError::PluginFailing {
        id: id.to_string(),
        failed: failures.len(),
        format: format.name().to_string(),
        first,
        advice,
    }
}
