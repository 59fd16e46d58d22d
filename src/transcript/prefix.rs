//! A transcript prefix as an [`InterruptedState`], so that every strategy compacts a real history
//! unchanged: user turns become user statements, assistant text agent statements (kind
//! `report`), each tool call a `call` event with its arguments and the result the agent saw (the
//! tool as origin; a result over [`LARGE_RESULT_CHARS`] also as a resource the agent observed),
//! the tools seen in the run their definitions, write or read by the [`WriteRule`].
//!
//! The system prompt is not part of the state: it is the operator's instructions and travels
//! unchanged beside every handoff (the destination's system message), so no strategy compacts
//! it. Owns this mapping only; must not build a handoff or measure one.

use std::collections::BTreeMap;

use serde_json::json;

use super::cuts::{Cut, WriteRule};
use super::model::{TRole, Transcript};
use crate::scenario::{EffectKind, Governed, Object, Observed};
use crate::state::{
    InterruptedState, ObservedOutcome, Origin, SourceCall, SourceEvent, Task, ToolDef,
};

/// A tool result longer than this (characters) is also carried as an observed resource.
pub const LARGE_RESULT_CHARS: usize = 600;

/// The objective every transcript state carries: the log has no task statement apart from its
/// messages, so it names none (and no value a later call could need).
pub fn objective(run: &str) -> String {
    format!(
        "Continue the logged agent conversation `{run}` as the agent, from where it stopped: serve the user's requests under the operator's instructions."
    )
}

/// Whether a tool result reports an error (τ-bench and most tool runtimes start it with `Error`).
fn is_error(text: &str) -> bool {
    let t = text.trim_start().to_ascii_lowercase();
    t.starts_with("error")
}

/// The effect kind a write tool's first word suggests (reads are `read`).
fn effect_of(rule: &WriteRule, tool: &str) -> EffectKind {
    if !rule.is_write(tool) {
        return EffectKind::Read;
    }
    let t = tool.to_ascii_lowercase();
    if t.starts_with("cancel") || t.starts_with("delete") || t.starts_with("remove") {
        EffectKind::Delete
    } else if t.starts_with("send") || t.starts_with("post") || t.starts_with("pay") {
        EffectKind::Send
    } else if t.starts_with("book") || t.starts_with("create") || t.starts_with("add") {
        EffectKind::Create
    } else {
        EffectKind::Update
    }
}

/// The tools the run used, as definitions: no description or schema is in a log, so the
/// parameters are the argument names seen in any call of the run.
pub fn tool_defs(t: &Transcript, rule: &WriteRule) -> Vec<ToolDef> {
    let mut params: BTreeMap<&str, BTreeMap<&str, ()>> = BTreeMap::new();
    for (_, c) in t.calls() {
        let e = params.entry(c.name.as_str()).or_default();
        for k in c.arguments.keys() {
            e.insert(k.as_str(), ());
        }
    }
    params
        .into_iter()
        .map(|(name, ps)| {
            let props: serde_json::Map<String, serde_json::Value> =
                ps.keys().map(|k| (k.to_string(), json!({}))).collect();
            let effect = effect_of(rule, name);
            ToolDef {
                name: name.to_string(),
                description: String::new(),
                parameters: json!({"type": "object", "properties": props}),
                effect,
                read_only: !effect.is_write(),
                idempotency_key_param: None,
                requires_approval: None,
            }
        })
        .collect()
}

/// A resource key for a call's result: the tool and its argument values.
fn resource_key(tool: &str, args: &Object) -> String {
    let vals: Vec<String> = args
        .values()
        .map(|v| match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    if vals.is_empty() {
        tool.to_string()
    } else {
        format!("{tool}/{}", vals.join("/"))
    }
}

/// The state a strategy compacts at `cut`.
pub fn state_at(t: &Transcript, cut: &Cut, rule: &WriteRule) -> InterruptedState {
    let mut events: Vec<SourceEvent> = Vec::new();
    for m in &t.messages[..cut.at] {
        let id = format!("m{:03}", m.index);
        match m.role {
            TRole::User => events.push(SourceEvent {
                id,
                kind: "user",
                origin: Origin::User,
                text: m.content.clone(),
                call: None,
            }),
            TRole::Assistant => {
                if !m.content.trim().is_empty() {
                    events.push(SourceEvent {
                        id: id.clone(),
                        kind: "report",
                        origin: Origin::Agent,
                        text: m.content.clone(),
                        call: None,
                    });
                }
                for (j, c) in m.tool_calls.iter().enumerate() {
                    let result = t.messages[..cut.at].iter().find(|r| {
                        r.role == TRole::Tool && r.tool_call_id.as_deref() == Some(c.id.as_str())
                    });
                    let (outcome, text) = match result {
                        Some(r) if is_error(&r.content) => {
                            (ObservedOutcome::Error, r.content.clone())
                        }
                        Some(r) => (ObservedOutcome::Ok, r.content.clone()),
                        // The call was made and no answer came before the cut.
                        None => (ObservedOutcome::TimedOut, String::new()),
                    };
                    let observed = (outcome == ObservedOutcome::Ok
                        && text.chars().count() > LARGE_RESULT_CHARS)
                        .then(|| Observed {
                            key: resource_key(&c.name, &c.arguments),
                            revision: 1,
                            digest: crate::world::sha256_digest(text.as_bytes()),
                            external: false,
                            source: None,
                            observed_at: result
                                .map(|r| format!("message {}", r.index))
                                .unwrap_or_default(),
                            text: std::sync::Arc::from(text.as_str()),
                        });
                    let args = serde_json::to_string(&c.arguments).unwrap_or_default();
                    events.push(SourceEvent {
                        id: if m.tool_calls.len() > 1 {
                            format!("{id}-{}", j + 1)
                        } else {
                            id.clone()
                        },
                        kind: "call",
                        origin: Origin::Tool(c.name.clone()),
                        text: format!("{} {args}\n{text}", c.name),
                        call: Some(SourceCall {
                            tool: c.name.clone(),
                            args: c.arguments.clone(),
                            outcome,
                            idempotency_key: None,
                            result_text: text,
                            observed,
                        }),
                    });
                }
            }
            // Tool results travel with their calls.
            TRole::Tool => {}
        }
    }
    let after = events.last().map(|e| e.id.clone()).unwrap_or_default();
    let domain = std::path::Path::new(&t.origin.file)
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    InterruptedState {
        task: Task {
            id: t.id.clone(),
            title: t.id.clone(),
            domain: domain.clone(),
            objective: objective(&t.id),
            governed: Governed {
                tenant_id: domain,
                principal_id: "the logged run's user".into(),
                authorization_mode: "user".into(),
                delegated_principal_id: None,
                delegated_scope: None,
                policy_version: t
                    .system
                    .as_deref()
                    .map(|s| crate::world::sha256_digest(s.as_bytes()))
                    .unwrap_or_else(|| "none".into()),
                capabilities: Default::default(),
            },
            tools: tool_defs(t, rule),
        },
        point: cut.name.clone(),
        after,
        cut: events.len().saturating_sub(1),
        events,
        approvals: vec![],
    }
}
