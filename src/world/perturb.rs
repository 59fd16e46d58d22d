//! Restore-time perturbations: what changes between the source run's stop and the destination's
//! start (an approval expires or is revoked, the policy or a capability version changes, a
//! resource gets a new revision, the clock moves, a committed write's response is lost).
//!
//! It applies a scenario's declared perturbations to a world; it never decides which apply.

use crate::spec::{ApprovalStatus, Interrupt};

use super::World;

/// Applies an interrupt point's perturbations to a world (also used when building interrupted
/// states). `Err` names what could not be applied.
pub fn apply_perturbations(world: &mut World, it: &Interrupt) -> Result<(), String> {
    for pt in &it.perturb {
        if let Some(a) = &pt.approval {
            let status = pt.status.unwrap_or(ApprovalStatus::Revoked);
            if !world.set_approval_status(a, status) {
                return Err(format!("no approval `{a}`"));
            }
        }
        if let Some(v) = &pt.policy_version {
            world.policy_version = v.clone();
        }
        if let (Some(cap), Some(v)) = (&pt.capability, &pt.version) {
            world.capabilities.insert(cap.clone(), v.clone());
        }
        if let Some(r) = &pt.resource {
            world.revise_resource(
                r,
                pt.text.as_deref(),
                pt.find.as_deref(),
                pt.replace.as_deref(),
            )?;
        }
        if let Some(m) = pt.advance_minutes {
            world.advance_clock(m);
        }
    }
    Ok(())
}

/// The events whose responses an interrupt point's perturbations lose.
pub fn lost_responses(it: &Interrupt) -> Vec<&str> {
    it.perturb
        .iter()
        .filter_map(|p| p.lose_response.as_deref())
        .collect()
}
