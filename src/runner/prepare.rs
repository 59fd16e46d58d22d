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
    },
    /// The handoff could not be built (a failing plug-in or summariser): its cells are errored.
    Failed(CellError),
}

/// Builds one handoff (on the process's runtime), restores it, and checks its checkpoint.
/// A failing plug-in or summariser errors the handoff's cells; any other error stops the run.
/// A panic while judging a strategy's output (a harness bug on text nobody foresaw) errors that
/// handoff's cells (`error_class: harness`) instead of ending the run.
pub(super) fn prepare(
    registry: &Registry,
    strategy: &dyn Strategy,
    at: &RestorePoint,
) -> Result<Prepared, RunError> {
    let attempt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        prepare_unguarded(registry, strategy, at)
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
) -> Result<Prepared, RunError> {
    let built = crate::runtime::block_on(strategy.build(&at.state))
        .map_err(|e| RunError::Harness(format!("the async runtime: {e}")))?;
    let h = match built.and_then(|h| registry.restore(h, &at.world)) {
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
    if crate::secrets::any() && handoff_has_secret(&h) {
        return Ok(Prepared::Failed(CellError {
            class: ErrorClass::Plugin,
            message: format!(
                "strategy `{}`: output contains a secret of this run (the handoff was discarded)",
                strategy.id()
            ),
        }));
    }
    // Checkpoints get every seed-003 §9.2 rule; text handoffs the rules checkable on text.
    let checked = match &h.checkpoint {
        Some(cp) => crate::checkpoint::rules::check(cp, at),
        None => crate::checkpoint::rules::check_text(&h.text, at),
    };
    let rule_violations = Some(checked).map(|v| {
        v.into_iter()
            .map(|v| crate::record::RuleBreak {
                rule: v.rule.to_string(),
                at: v.at,
                detail: v.detail,
            })
            .collect()
    });
    Ok(Prepared::Ready {
        upgrades: crate::upgrades::provenance_upgrades(at, &h),
        handoff: Arc::new(h),
        rule_violations,
        governed: None,
    })
}

/// Whether any text of a handoff (its rendering, messages, checkpoint, extra tools) holds a
/// secret of the run.
fn handoff_has_secret(h: &Handoff) -> bool {
    serde_json::to_string(h).is_ok_and(|t| crate::secrets::contains(&t))
}
