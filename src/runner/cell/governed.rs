//! Governed delivery at a cell (seed 004): lineage, the context report, the envelope delivered
//! to the destination's adapter and the receipt checked against the envelope's digest.
//!
//! Owns: what a governed cell is delivered, or why it is stopped or held. Must not: build the
//! governed context (the plan's `crate::delivery::prepare` did) or run the continuation.

use std::sync::Arc;

use super::{CellSpec, Shared};
use crate::record::GovernedCell;
use crate::runner::plan::ReceiptFault;
use crate::scenario::Scenario;
use crate::state::RestorePoint;

/// What governed admission decided for a cell.
pub(super) enum Admitted {
    /// Deliver this handoff (rendered by the adapter from the envelope, or X's handoff as is
    /// when the scenario declares no governed context).
    Deliver(Arc<crate::handoff::Handoff>, GovernedCell),
    /// Nothing is delivered: the context is `BLOCKED`, or the adapter could not take it (held).
    Stop(GovernedCell),
}

/// The cell's `run` in its lineage records: the cell's identity as one line.
fn task_of(s: &Scenario, c: &CellSpec) -> String {
    format!(
        "{}{}/{}/{}/{}/{}",
        s.id,
        if c.scale == crate::scenario::volume::Scale::Base {
            String::new()
        } else {
            format!("@{}", c.scale)
        },
        c.point,
        c.strategy,
        c.model,
        c.rep
    )
}

/// Seed 004 at a cell: FRESH at the source run's start, COLD_RESUME (and REPLACED for another
/// agent) at the restore, the context report, and — when `READY` — the envelope delivered to the
/// destination's adapter, whose receipt is checked against the envelope's digest.
pub(super) fn admit(
    shared: &Shared,
    g: &crate::delivery::Governed,
    c: &CellSpec,
    s: &Scenario,
    at: &RestorePoint,
    index: usize,
    compactions: u32,
) -> Result<Admitted, String> {
    use crate::governed::{ContextStatus, Responsibility};
    let source = shared.source_model.as_deref().unwrap_or(&c.model);
    let a = crate::delivery::admit(
        g,
        &task_of(s, c),
        source,
        &c.model,
        &s.world.clock,
        &at.world.clock().to_string(),
        compactions,
    )
    .map_err(|e| format!("governed lineage: {e}"))?;
    let mut cell = GovernedCell {
        inner: g.spec.inner.clone(),
        max_bytes: g.spec.max_bytes,
        status: a.report.status,
        reasons: a.report.reasons.clone(),
        policy_digest: g.policy_digest.clone(),
        bytes: g.bytes,
        lineage: a.lineage.records().to_vec(),
        envelope_digest: None,
        receipt: None,
        responsibility: None,
        held: false,
    };
    match a.report.status {
        ContextStatus::NotConfigured => {
            cell.lineage.clear();
            return Ok(Admitted::Deliver(g.inner.clone(), cell));
        }
        ContextStatus::Blocked => return Ok(Admitted::Stop(cell)),
        ContextStatus::Ready => {}
    }
    let Some(env) = a.envelope else {
        return Err("the context report is READY but the envelope could not be assembled".into());
    };
    let expected = crate::governed::envelope_digest(&env);
    cell.envelope_digest = Some(expected.clone());
    let fault = shared
        .receipt_fault
        .filter(|(i, _)| *i == index)
        .map(|f| f.1);
    let mut sent = env.clone();
    if fault == Some(ReceiptFault::Altered) {
        // Tests only: the adapter receives an envelope that differs from the committed one.
        sent.handoff.definition.push_str(" (altered in transit)");
    }
    let bytes = serde_json::to_vec(&sent).map_err(|e| e.to_string())?;
    let received = crate::delivery::receive(&bytes, &g.spec.inner, &g.spec.id());
    let receipt = match (&received, fault) {
        (_, Some(ReceiptFault::Missing)) | (Err(_), _) => None,
        (Ok(r), _) => Some(r.receipt.clone()),
    };
    cell.responsibility = Some(crate::governed::check_receipt(
        &expected,
        receipt.as_deref(),
    ));
    cell.receipt = receipt;
    cell.held = cell.responsibility == Some(Responsibility::Unknown);
    match received {
        Ok(r) => {
            let mut h = r.handoff;
            h.compaction = g.inner.compaction.clone();
            Ok(Admitted::Deliver(Arc::new(h), cell))
        }
        // Delivery committed but the adapter could not take the context: held, not run.
        Err(_) => Ok(Admitted::Stop(cell)),
    }
}
