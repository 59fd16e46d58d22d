//! A scenario tool call against the world: the ledger entry it makes, the approval it needs, the
//! scripted fault, idempotent repeats, and the effect by kind (read, create, update, delete, send,
//! read and write a resource, check). Harness operations and restore-time changes are the
//! façade's; this file never decides what a destination calls.

use std::sync::Arc;

use serde_json::{Value, json};

use super::args::{check_args, target_id};
use super::{ApprovalUse, CallResult, Collection, LedgerEntry, Outcome, Phase, Resource, World};
use super::{render_resource, sha256_digest};
use crate::spec::{ApprovalStatus, EffectKind, Fault, Object, ToolSpec};

impl World {
    /// [`World::call`] for a volume call of the source run: the simulated clock does not advance,
    /// so padding a run never changes whether an approval has lapsed.
    pub fn call_untimed(
        &mut self,
        phase: Phase,
        tool_name: &str,
        args: &Object,
        event: Option<&str>,
    ) -> CallResult {
        let at = self.clock;
        self.clock -= self.tick;
        let r = self.call(phase, tool_name, args, None, event);
        self.clock = at;
        r
    }

    /// Executes a scenario tool call and appends it to the ledger. `fault` is scripted by the
    /// reference run; destinations never get one.
    pub fn call(
        &mut self,
        phase: Phase,
        tool_name: &str,
        args: &Object,
        fault: Option<Fault>,
        event: Option<&str>,
    ) -> CallResult {
        self.clock += self.tick;
        let seq = self.ledger.len() as u64 + 1;
        let mut entry = LedgerEntry {
            seq,
            phase,
            event: event.map(str::to_string),
            tool: tool_name.to_string(),
            args: args.clone(),
            effect: None,
            idempotency_key: None,
            approval: None,
            outcome: Outcome::Error,
            touched: None,
            result_digest: None,
            deduped: false,
            at: self.clock.to_string(),
        };
        let tools = Arc::clone(&self.tools);
        let Some(tool) = tools.get(tool_name) else {
            let out = Err(format!("unknown tool `{tool_name}`"));
            self.ledger.push(entry);
            return CallResult {
                seq,
                outcome: Outcome::Error,
                output: out,
            };
        };
        entry.effect = Some(tool.effect);
        entry.idempotency_key = tool
            .idempotency_key_param
            .as_ref()
            .and_then(|p| args.get(p))
            .and_then(|v| v.as_str())
            .map(str::to_string);

        let output = self.execute(tool, args, fault, &mut entry);
        let outcome = match (fault, &output) {
            (Some(Fault::TimeoutAfterCommit), Ok(_)) => Outcome::TimeoutAfterCommit,
            (Some(Fault::TimeoutBeforeCommit), _) => Outcome::TimeoutBeforeCommit,
            (_, Ok(_)) => Outcome::Ok,
            (_, Err(_)) => Outcome::Error,
        };
        entry.outcome = outcome;
        if outcome == Outcome::Ok
            && !tool.effect.is_write()
            && let Ok(v) = &output
        {
            entry.result_digest = Some(sha256_digest(v.to_string().as_bytes()));
        }
        self.ledger.push(entry);
        let output = match outcome {
            Outcome::TimeoutAfterCommit | Outcome::TimeoutBeforeCommit => Err(format!(
                "request to `{tool_name}` timed out after 30 s; no response was received"
            )),
            _ => output,
        };
        CallResult {
            seq,
            outcome,
            output,
        }
    }

    fn execute(
        &mut self,
        tool: &ToolSpec,
        args: &Object,
        fault: Option<Fault>,
        entry: &mut LedgerEntry,
    ) -> Result<Value, String> {
        check_args(tool, args)?;
        if let Some(aid) = &tool.requires_approval {
            let state = self
                .approval_state(aid)
                .ok_or_else(|| format!("approval `{aid}` does not exist"))?;
            entry.approval = Some(ApprovalUse {
                id: aid.clone(),
                state,
            });
            if state != ApprovalStatus::Granted {
                return Err(format!(
                    "approval {aid} is {}; `{}` needs a granted, unexpired approval",
                    state.as_str(),
                    tool.name
                ));
            }
        }
        if fault == Some(Fault::TimeoutBeforeCommit) {
            return Err("timed out before commit".into());
        }
        // The replay puts the event's own error text in place of this one.
        if fault == Some(Fault::Rejected) {
            return Err(format!("`{}` was rejected by the service", tool.name));
        }
        // An idempotent repeat returns the first result and changes nothing.
        if let Some(key) = &entry.idempotency_key
            && let Some(prev) = self
                .idempotent_results
                .get(&(tool.name.clone(), key.clone()))
        {
            entry.deduped = true;
            entry.touched = prev.get("id").and_then(|v| v.as_str()).map(str::to_string);
            return Ok(prev.clone());
        }
        let result = self.apply(tool, args, entry)?;
        if let Some(key) = &entry.idempotency_key {
            self.idempotent_results
                .insert((tool.name.clone(), key.clone()), result.clone());
        }
        Ok(result)
    }

    fn collection_mut(&mut self, tool: &ToolSpec) -> Result<&mut Collection, String> {
        let name = tool
            .collection
            .as_deref()
            .ok_or_else(|| format!("tool `{}` names no collection", tool.name))?;
        self.collections
            .get_mut(name)
            .ok_or_else(|| format!("no collection `{name}`"))
    }

    fn resource_key(tool: &ToolSpec, args: &Object) -> Result<String, String> {
        let id = args
            .get(tool.id_param())
            .and_then(|v| v.as_str())
            .ok_or_else(|| format!("missing string argument `{}`", tool.id_param()))?;
        let prefix = tool.resource_prefix.as_deref().unwrap_or("");
        Ok(if id.starts_with(prefix) {
            id.to_string()
        } else {
            format!("{prefix}{id}")
        })
    }

    fn apply(
        &mut self,
        tool: &ToolSpec,
        args: &Object,
        entry: &mut LedgerEntry,
    ) -> Result<Value, String> {
        match tool.effect {
            EffectKind::Read => {
                let c = self.collection_mut(tool)?;
                let hits: Vec<Value> = c
                    .records
                    .iter()
                    .filter(|r| record_matches_filters(r, args))
                    .map(|r| Value::Object(Object::clone(r)))
                    .collect();
                Ok(Value::Array(hits))
            }
            EffectKind::Create => {
                let c = self.collection_mut(tool)?;
                let id = format!("{}{}", c.id_prefix, c.next_id);
                c.next_id += 1;
                let mut rec = Object::new();
                rec.insert("id".into(), Value::String(id.clone()));
                for (k, v) in args {
                    if k != "id" {
                        rec.insert(k.clone(), v.clone());
                    }
                }
                Arc::make_mut(&mut c.records).push(Arc::new(rec.clone()));
                entry.touched = Some(id);
                Ok(Value::Object(rec))
            }
            EffectKind::Update => {
                let (id_param, id) = target_id(tool, args)?;
                let c = self.collection_mut(tool)?;
                let rec = Arc::make_mut(&mut c.records)
                    .iter_mut()
                    .find(|r| r.get("id").and_then(|v| v.as_str()) == Some(id.as_str()))
                    .map(Arc::make_mut)
                    .ok_or_else(|| format!("no record `{id}`"))?;
                for (k, v) in args {
                    if *k != id_param {
                        rec.insert(k.clone(), v.clone());
                    }
                }
                let out = Value::Object(rec.clone());
                entry.touched = Some(id);
                Ok(out)
            }
            EffectKind::Delete => {
                let (_, id) = target_id(tool, args)?;
                let c = self.collection_mut(tool)?;
                let before = c.records.len();
                if c.records
                    .iter()
                    .any(|r| r.get("id").and_then(|v| v.as_str()) == Some(id.as_str()))
                {
                    Arc::make_mut(&mut c.records)
                        .retain(|r| r.get("id").and_then(|v| v.as_str()) != Some(id.as_str()));
                }
                if c.records.len() == before {
                    return Err(format!("no record `{id}`"));
                }
                entry.touched = Some(id.clone());
                Ok(json!({"deleted": id}))
            }
            EffectKind::Send => {
                let n = self.outbox.len() + 1;
                let mut rec = Object::new();
                rec.insert("message_id".into(), json!(format!("out-{n:04}")));
                rec.insert("tool".into(), json!(tool.name));
                for (k, v) in args {
                    rec.insert(k.clone(), v.clone());
                }
                self.outbox.push(rec);
                entry.touched = Some(format!("out-{n:04}"));
                Ok(json!({"status": "sent", "message_id": format!("out-{n:04}")}))
            }
            EffectKind::ReadResource => {
                let key = Self::resource_key(tool, args)?;
                let r = self
                    .resources
                    .get(&key)
                    .ok_or_else(|| format!("no resource `{key}`"))?;
                entry.touched = Some(format!("{key}@{}", r.revision));
                Ok(Value::String(render_resource(&key, r)))
            }
            EffectKind::WriteResource => {
                let key = Self::resource_key(tool, args)?;
                let content = args.get("content").and_then(|v| v.as_str());
                let find = args.get("find").and_then(|v| v.as_str());
                let replace = args.get("replace").and_then(|v| v.as_str());
                if let Some(expected) = args.get("expected_revision").and_then(|v| v.as_u64()) {
                    let current = self.resources.get(&key).map(|r| r.revision);
                    if current != Some(expected) {
                        return Err(format!(
                            "stale write: `{key}` is at revision {}, not {expected}; re-read it first",
                            current
                                .map(|r| r.to_string())
                                .unwrap_or_else(|| "none".into())
                        ));
                    }
                }
                if !self.resources.contains_key(&key) {
                    // Creating a new file is a write like any other.
                    let text = content.ok_or_else(|| format!("no resource `{key}`"))?;
                    self.resources
                        .insert(key.clone(), Resource::new(text, 1, false, None));
                } else {
                    self.revise_resource(&key, content, find, replace)?;
                }
                let r = &self.resources[&key];
                entry.touched = Some(format!("{key}@{}", r.revision));
                Ok(json!({"resource": key, "revision": r.revision, "digest": r.digest}))
            }
            EffectKind::Check => {
                let check = tool
                    .check
                    .as_ref()
                    .ok_or_else(|| format!("check tool `{}` has no `check`", tool.name))?;
                let passed = check.passes.iter().all(|p| self.eval(p, None));
                Ok(Value::String(if passed {
                    check.pass_output.clone()
                } else {
                    check.fail_output.clone()
                }))
            }
        }
    }
}

fn record_matches_filters(r: &Object, args: &Object) -> bool {
    args.iter().all(|(k, v)| {
        if k == "query" {
            let q = v.as_str().unwrap_or_default().to_lowercase();
            r.values().any(|f| match f {
                Value::String(s) => s.to_lowercase().contains(&q),
                other => other.to_string().to_lowercase().contains(&q),
            })
        } else {
            r.get(k) == Some(v)
        }
    })
}
