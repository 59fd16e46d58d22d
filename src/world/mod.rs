//! The simulated world: the system of record that scoring trusts.
//!
//! It owns collections of records, versioned resources with SHA-256 digests, approvals checked
//! against a simulated clock, an outbox, and the **ledger** of every call made against it — by the
//! reference run (`source`) or by a destination (`continuation`). It is deterministic: faults are
//! scripted by the caller, never random, and the clock only moves when a call is made or a
//! perturbation moves it. It never trusts text: what happened is what the ledger says.
//!
//! It must not know about strategies, handoffs or destinations, and never prints.
//!
//! A scenario tool call, by effect kind, is `calls` (its arguments checked by `args`); the ledger's
//! entries are `ledger`, restore-time changes `perturb`, success predicates `predicate`. This file
//! holds the world's state, its building, what it shows and the harness's own operations.

mod args;
mod calls;
mod ledger;
mod perturb;
mod predicate;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

pub use ledger::{
    ApprovalUse, LedgerEntry, OPERATORS, Outcome, Phase, args_match, forbidden_matches, is_operator,
};
pub use perturb::{apply_perturbations, lost_responses};
pub use predicate::matches_where;

use crate::spec::{
    ApprovalStatus, EffectKind, FinishStatus, Object, Predicate, Scenario, ToolSpec,
};

/// `sha256:` followed by the lowercase hex digest of `bytes`.
pub fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// A versioned document.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Resource {
    pub revision: u64,
    pub digest: String,
    pub external: bool,
    pub source: Option<String>,
    /// Shared so that cloning a world for each cell does not copy documents.
    pub text: Arc<str>,
}

impl Resource {
    fn new(text: &str, revision: u64, external: bool, source: Option<String>) -> Self {
        Resource {
            revision,
            digest: sha256_digest(text.as_bytes()),
            external,
            source,
            text: Arc::from(text),
        }
    }
}

/// An approval as the approval system holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Approval {
    pub id: String,
    pub action: String,
    pub status: ApprovalStatus,
    pub expires_at: Option<jiff::Timestamp>,
    pub on_request: ApprovalStatus,
    pub grant_minutes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Collection {
    id_prefix: String,
    next_id: u64,
    /// Shared until a cell changes them: every cell starts from a clone of its point's world,
    /// and most cells touch few records of collections that can hold thousands (`40k`/`120k`
    /// volume). A change copies the list of pointers once and the one record it changes.
    records: Arc<Vec<Arc<Object>>>,
}

/// What a caller sees from one call.
#[derive(Debug, Clone, PartialEq)]
pub struct CallResult {
    /// The ledger sequence number of the call.
    pub seq: u64,
    pub outcome: Outcome,
    /// The result the caller sees (`Ok`) or the error text it sees (`Err`).
    pub output: Result<Value, String>,
}

impl CallResult {
    /// The result as text, as a tool message would carry it.
    pub fn text(&self) -> String {
        match &self.output {
            Ok(Value::String(s)) => s.clone(),
            Ok(v) => serde_json::to_string(v).unwrap_or_default(),
            Err(e) => format!("ERROR: {e}"),
        }
    }
}

/// A problem building a world from a scenario (reported by validation with its path).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct WorldBuildError {
    pub path: String,
    pub message: String,
}

/// The deterministic world.
#[derive(Debug, Clone)]
pub struct World {
    tools: Arc<BTreeMap<String, ToolSpec>>,
    collections: BTreeMap<String, Collection>,
    resources: BTreeMap<String, Resource>,
    approvals: BTreeMap<String, Approval>,
    clock: jiff::Timestamp,
    tick: jiff::SignedDuration,
    outbox: Vec<Object>,
    ledger: Vec<LedgerEntry>,
    /// First result per (tool, idempotency key): a repeated key returns it without acting again.
    idempotent_results: BTreeMap<(String, String), Value>,
    pub policy_version: String,
    pub capabilities: BTreeMap<String, String>,
}

pub(crate) fn parse_time(s: &str, path: &str) -> Result<jiff::Timestamp, WorldBuildError> {
    s.parse::<jiff::Timestamp>().map_err(|e| WorldBuildError {
        path: path.to_string(),
        message: format!("`{s}` is not an RFC 3339 timestamp with a zone ({e})"),
    })
}

impl World {
    /// Builds the initial world of a scenario.
    pub fn new(scenario: &Scenario) -> Result<World, WorldBuildError> {
        let spec = &scenario.world;
        let clock = parse_time(&spec.clock, "world.clock")?;
        let mut tools = BTreeMap::new();
        for t in &spec.tools {
            tools.insert(t.name.clone(), t.clone());
        }
        let mut collections = BTreeMap::new();
        for (name, c) in &spec.collections {
            for (i, r) in c.records.iter().enumerate() {
                if !matches!(r.get("id"), Some(Value::String(_))) {
                    return Err(WorldBuildError {
                        path: format!("world.collections.{name}.records[{i}].id"),
                        message: "every record needs a string `id`".into(),
                    });
                }
            }
            collections.insert(
                name.clone(),
                Collection {
                    id_prefix: c.id_prefix.clone().unwrap_or_else(|| format!("{name}-")),
                    next_id: c.next_id,
                    records: Arc::new(c.records.iter().cloned().map(Arc::new).collect()),
                },
            );
        }
        let resources = spec
            .resources
            .iter()
            .map(|(k, r)| {
                (
                    k.clone(),
                    Resource::new(&r.text, r.revision, r.external, r.source.clone()),
                )
            })
            .collect();
        let mut approvals = BTreeMap::new();
        for (i, a) in spec.approvals.iter().enumerate() {
            let expires_at = match &a.expires_at {
                Some(s) => Some(parse_time(s, &format!("world.approvals[{i}].expires_at"))?),
                None => None,
            };
            approvals.insert(
                a.id.clone(),
                Approval {
                    id: a.id.clone(),
                    action: a.action.clone(),
                    status: a.status,
                    expires_at,
                    on_request: a.on_request,
                    grant_minutes: a.grant_minutes,
                },
            );
        }
        Ok(World {
            tools: Arc::new(tools),
            collections,
            resources,
            approvals,
            clock,
            tick: jiff::SignedDuration::from_secs(spec.tick_seconds as i64),
            outbox: Vec::new(),
            ledger: Vec::new(),
            idempotent_results: BTreeMap::new(),
            policy_version: scenario.governed.policy_version.clone(),
            capabilities: scenario.governed.capabilities.clone(),
        })
    }

    pub fn tool(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.get(name)
    }
    pub fn tools(&self) -> impl Iterator<Item = &ToolSpec> {
        self.tools.values()
    }
    pub fn ledger(&self) -> &[LedgerEntry] {
        &self.ledger
    }
    pub fn outbox(&self) -> &[Object] {
        &self.outbox
    }
    pub fn clock(&self) -> jiff::Timestamp {
        self.clock
    }
    pub fn resource(&self, key: &str) -> Option<&Resource> {
        self.resources.get(key)
    }
    pub fn resources(&self) -> &BTreeMap<String, Resource> {
        &self.resources
    }
    pub fn approval(&self, id: &str) -> Option<&Approval> {
        self.approvals.get(id)
    }
    pub fn approvals(&self) -> impl Iterator<Item = &Approval> {
        self.approvals.values()
    }
    pub fn records(&self, collection: &str) -> &[Arc<Object>] {
        self.collections
            .get(collection)
            .map(|c| c.records.as_slice())
            .unwrap_or(&[])
    }

    /// The approval's status at this moment: a granted approval past its expiry is `expired`.
    pub fn approval_state(&self, id: &str) -> Option<ApprovalStatus> {
        let a = self.approvals.get(id)?;
        Some(match (a.status, a.expires_at) {
            (ApprovalStatus::Granted, Some(exp)) if exp <= self.clock => ApprovalStatus::Expired,
            (s, _) => s,
        })
    }

    // ---- perturbations (applied at restore, not recorded in the ledger: nobody called anything)

    pub fn advance_clock(&mut self, minutes: u64) {
        self.clock += jiff::SignedDuration::from_mins(minutes as i64);
    }

    pub fn set_approval_status(&mut self, id: &str, status: ApprovalStatus) -> bool {
        match self.approvals.get_mut(id) {
            Some(a) => {
                a.status = status;
                true
            }
            None => false,
        }
    }

    pub fn set_approval_expiry(&mut self, id: &str, expires_at: Option<jiff::Timestamp>) -> bool {
        match self.approvals.get_mut(id) {
            Some(a) => {
                a.expires_at = expires_at;
                true
            }
            None => false,
        }
    }

    /// Gives a resource a new revision. `Err` names what is wrong.
    pub fn revise_resource(
        &mut self,
        key: &str,
        text: Option<&str>,
        find: Option<&str>,
        replace: Option<&str>,
    ) -> Result<(), String> {
        let r = self
            .resources
            .get_mut(key)
            .ok_or_else(|| format!("no resource `{key}`"))?;
        let new_text = match (text, find, replace) {
            (Some(t), None, None) => t.to_string(),
            (None, Some(f), Some(rep)) => {
                if !r.text.contains(f) {
                    return Err(format!("`find` text does not occur in resource `{key}`"));
                }
                r.text.replacen(f, rep, 1)
            }
            _ => return Err("give either `text`, or `find` and `replace`".into()),
        };
        *r = Resource::new(&new_text, r.revision + 1, r.external, r.source.clone());
        Ok(())
    }

    // ---- harness operations (recorded in the ledger without an effect kind)

    /// An agent asks the approver for an approval; the scenario scripts the answer.
    pub fn request_approval(&mut self, phase: Phase, id: &str) -> CallResult {
        let mut args = Object::new();
        args.insert("approval_id".into(), json!(id));
        let output = match self.approvals.get_mut(id) {
            None => Err(format!("no approval `{id}`")),
            Some(a) => {
                a.status = a.on_request;
                if a.on_request == ApprovalStatus::Granted {
                    a.expires_at =
                        Some(self.clock + jiff::SignedDuration::from_mins(a.grant_minutes as i64));
                }
                Ok(json!({"approval_id": id, "status": a.status.as_str(),
                    "expires_at": a.expires_at.map(|t| t.to_string())}))
            }
        };
        let approval = self.approval_state(id).map(|state| ApprovalUse {
            id: id.to_string(),
            state,
        });
        self.record_harness(phase, "request_approval", args, approval, output)
    }

    /// Strategy D's `retrieve`: the resource's *current* revision.
    pub fn retrieve(&mut self, phase: Phase, key: &str) -> CallResult {
        let mut args = Object::new();
        args.insert("resource".into(), json!(key));
        let output = match self.resources.get(key) {
            None => Err(format!("no resource `{key}`")),
            Some(r) => Ok(Value::String(render_resource(key, r))),
        };
        self.record_harness(phase, "retrieve", args, None, output)
    }

    /// Records a harness tool (`ask_user`, `finish`, …) so the ledger shows the whole order.
    pub fn record_harness(
        &mut self,
        phase: Phase,
        tool: &str,
        args: Object,
        approval: Option<ApprovalUse>,
        output: Result<Value, String>,
    ) -> CallResult {
        self.clock += self.tick;
        let outcome = if output.is_ok() {
            Outcome::Ok
        } else {
            Outcome::Error
        };
        let seq = self.ledger.len() as u64 + 1;
        self.ledger.push(LedgerEntry {
            seq,
            phase,
            event: None,
            tool: tool.to_string(),
            args,
            effect: None,
            idempotency_key: None,
            approval,
            outcome,
            touched: None,
            result_digest: None,
            deduped: false,
            at: self.clock.to_string(),
        });
        CallResult {
            seq,
            outcome,
            output,
        }
    }

    /// Evaluates a success predicate; `finished` is the continuation's finish status, if any.
    pub fn eval(&self, p: &Predicate, finished: Option<FinishStatus>) -> bool {
        predicate::eval(self, p, finished)
    }

    /// What a predicate expects and what this world shows (for a predicate that does not hold).
    pub fn explain(&self, p: &Predicate, finished: Option<FinishStatus>) -> String {
        predicate::explain(self, p, finished)
    }

    /// Commits of the same non-idempotent intent: the create and send effects committed, grouped
    /// by tool and arguments without the tool's idempotency key (a blind retry under a fresh key
    /// is the same intent), in the order of `<tool> <arguments as JSON>`. Scoring counts the
    /// groups of more than one commit a continuation took part in; validation refuses a reference
    /// continuation that makes one.
    pub fn intent_groups(&self, tools: &[ToolSpec]) -> Vec<IntentGroup> {
        let mut groups: BTreeMap<String, IntentGroup> = BTreeMap::new();
        for e in self.committed_writes() {
            if !matches!(e.effect, Some(EffectKind::Create | EffectKind::Send)) {
                continue;
            }
            let mut args = e.args.clone();
            if let Some(k) = tools
                .iter()
                .find(|t| t.name == e.tool)
                .and_then(|t| t.idempotency_key_param.as_ref())
            {
                args.remove(k);
            }
            let key = format!(
                "{} {}",
                e.tool,
                serde_json::to_string(&args).unwrap_or_default()
            );
            let g = groups.entry(key).or_insert_with(|| IntentGroup {
                tool: e.tool.clone(),
                args,
                commits: 0,
                in_continuation: false,
            });
            g.commits += 1;
            g.in_continuation |= e.phase == Phase::Continuation;
        }
        groups.into_values().collect()
    }

    /// Committed, non-deduplicated write effects in the ledger.
    pub fn committed_writes(&self) -> impl Iterator<Item = &LedgerEntry> {
        self.ledger.iter().filter(|e| {
            e.effect.is_some_and(|k| k.is_write())
                && matches!(e.outcome, Outcome::Ok | Outcome::TimeoutAfterCommit)
                && !e.deduped
        })
    }
}

/// One intent's commits (see [`World::intent_groups`]).
#[derive(Debug, Clone)]
pub struct IntentGroup {
    pub tool: String,
    pub args: Object,
    pub commits: u32,
    pub in_continuation: bool,
}

/// How a resource looks to an agent that reads it.
pub fn render_resource(key: &str, r: &Resource) -> String {
    let source = r
        .source
        .as_deref()
        .map(|s| format!(" · from {s}"))
        .unwrap_or_default();
    format!(
        "[{key} · revision {} · {}{source}]\n{}",
        r.revision, r.digest, r.text
    )
}

#[cfg(test)]
mod tests;
