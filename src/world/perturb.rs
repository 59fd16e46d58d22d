//! Restore-time perturbations: what changes between the source run's stop and the destination's
//! start (an approval expires or is revoked, the policy or a capability version changes, a
//! resource gets a new revision, a record's fields get new values, the clock moves, a committed
//! write's response is lost).
//!
//! It applies a scenario's declared perturbations to a world; it never decides which apply.

use std::sync::Arc;

use serde_json::Value;

use crate::spec::{ApprovalStatus, Interrupt, PathSeg, parse_field_path};

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
        if let (Some(col), Some(rec)) = (&pt.collection, &pt.add) {
            world.add_record(col, rec.clone())?;
        }
        if let (Some(col), Some(id)) = (&pt.collection, &pt.record) {
            for ch in &pt.changes {
                let field = ch.field.as_deref().unwrap_or("");
                world.set_record_field(col, id, field, ch.to.clone())?;
            }
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

impl World {
    /// The value at `field` (a path: `capacity`, `remit_to.postal_code`, `lines[0].qty`) of the
    /// record `id` of `collection`. `Err` names what does not exist.
    pub fn record_field(&self, collection: &str, id: &str, field: &str) -> Result<&Value, String> {
        let segs =
            parse_field_path(field).ok_or_else(|| format!("`{field}` is not a field path"))?;
        let rec = self
            .collections
            .get(collection)
            .ok_or_else(|| format!("no collection `{collection}`"))?
            .records
            .iter()
            .find(|r| r.get("id").and_then(Value::as_str) == Some(id))
            .ok_or_else(|| format!("no record `{id}` in `{collection}`"))?;
        let mut cur: Option<&Value> = None;
        for (n, seg) in segs.iter().enumerate() {
            cur = match (n, cur, seg) {
                (0, _, PathSeg::Key(k)) => rec.get(k),
                (_, Some(Value::Object(o)), PathSeg::Key(k)) => o.get(k),
                (_, Some(Value::Array(a)), PathSeg::Index(i)) => a.get(*i),
                _ => None,
            };
            if cur.is_none() {
                break;
            }
        }
        cur.ok_or_else(|| format!("record `{id}` of `{collection}` has no field `{field}`"))
    }

    /// Adds a record to a collection (a restore-time change; not recorded in the ledger). `Err`
    /// when the collection does not exist, or the record has no string `id` or one already taken.
    pub fn add_record(
        &mut self,
        collection: &str,
        record: crate::spec::Object,
    ) -> Result<(), String> {
        let c = self
            .collections
            .get_mut(collection)
            .ok_or_else(|| format!("no collection `{collection}`"))?;
        let id = record
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("a record added to `{collection}` needs a string `id`"))?;
        if c.records
            .iter()
            .any(|r| r.get("id").and_then(Value::as_str) == Some(id))
        {
            return Err(format!("`{collection}` already has a record `{id}`"));
        }
        Arc::make_mut(&mut c.records).push(Arc::new(record));
        Ok(())
    }

    /// Sets an existing field of a record (a restore-time change; not recorded in the ledger).
    pub fn set_record_field(
        &mut self,
        collection: &str,
        id: &str,
        field: &str,
        value: Value,
    ) -> Result<(), String> {
        self.record_field(collection, id, field)?;
        let segs = parse_field_path(field).unwrap_or_default();
        let rec = self
            .collections
            .get_mut(collection)
            .and_then(|c| {
                Arc::make_mut(&mut c.records)
                    .iter_mut()
                    .find(|r| r.get("id").and_then(Value::as_str) == Some(id))
                    .map(Arc::make_mut)
            })
            .ok_or_else(|| format!("no record `{id}` in `{collection}`"))?;
        let mut cur: Option<&mut Value> = None;
        for (n, seg) in segs.iter().enumerate() {
            cur = match (n, cur, seg) {
                (0, _, PathSeg::Key(k)) => rec.get_mut(k),
                (_, Some(Value::Object(o)), PathSeg::Key(k)) => o.get_mut(k),
                (_, Some(Value::Array(a)), PathSeg::Index(i)) => a.get_mut(*i),
                _ => None,
            };
        }
        match cur {
            Some(slot) => {
                *slot = value;
                Ok(())
            }
            None => Err(format!(
                "record `{id}` of `{collection}` has no field `{field}`"
            )),
        }
    }
}
