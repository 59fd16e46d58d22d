//! Every cell's conversation, saved in the run folder: for a live cell each exchange with the
//! endpoint (the request as sent, the answer, its tool calls and their verdicts, timings, token
//! usage and `finish_reason`), for every cell the actions it took and what the world answered,
//! and how it ended. One gzip-compressed JSON-lines file per run folder (or shard),
//! [`FILE`], one gzip member per cell ([`log`]); the handoffs, which many cells share, once each
//! in [`HANDOFFS`], named by their digest.
//!
//! A record points at its entry with `conversation: "conversations.jsonl.gz"`; the entry is the
//! last one in that file whose `cell` is the record's cell (a rerun cell's newer entry wins).
//! Entries are keyed by the cell, never by a byte offset, so `results.jsonl` stays the same
//! whatever `--concurrency` (the order of entries in the file follows scheduling).
//!
//! Requests are stored compactly: a request of a cell starts with most of the one before it (the
//! agent only appends messages, but a model's `prefill` ends each request with a turn the next
//! one replaces), so an exchange keeps how many leading messages it shares with the previous
//! request and the messages that follow; [`Entry::request`] rebuilds a request whole. The
//! function definitions are kept once per entry.
//!
//! A leaf: data and its file format only. Must not: import anything of the pipeline (only the
//! leaves `record` and `secrets`), or decide anything about a cell.

pub mod log;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use log::{FILE, HANDOFFS, Log, LogError, each, find, handoffs, read};

/// The cell an entry belongs to: the record's identity ([`crate::record::CellId`]), as JSON.
pub type Cell = crate::record::CellId;

/// Which kind of destination the cell ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Live,
    Simulated,
}

/// One cell's conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub cell: Cell,
    pub kind: Kind,
    /// The digest of the handoff the destination was given ([`Handoff`], in [`HANDOFFS`]; kept
    /// once per run folder, as many cells share one); none when the cell never got one (its
    /// handoff could not be built, or was not delivered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff: Option<String>,
    /// The handoff's tokens at restore.
    #[serde(default)]
    pub handoff_tokens: u64,
    /// Live cells: the function definitions every request carried.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Value>,
    /// Live cells: every exchange with the endpoint, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exchanges: Vec<Exchange>,
    /// The actions the destination took and what the world answered.
    #[serde(default)]
    pub steps: Vec<Step>,
    pub outcome: Outcome,
    /// Simulated cells of a calibration run (a sim and a live destination on the same cells):
    /// the situations the handoff put the destination in, for `calibrate --fit`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub situations: Vec<Situation>,
}

/// A situation in which a simulated destination draws one of its behavioural rates
/// (`crate::destination::profile`), and how to tell whether another destination on the same
/// handoff behaved so: the call that shows it, or the fact its record names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Situation {
    /// The rate's name (`follows_attributed`, `notices_missing`, …).
    pub parameter: String,
    /// The injected directive, hypothesis or fact (its id), or the source event whose read it is.
    pub about: String,
    /// The call that shows the behaviour (a re-read, the hypothesis's consequence), when a call
    /// does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<SituationCall>,
}

/// A call that shows a behaviour: the tool, and arguments the call must include.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SituationCall {
    pub tool: String,
    #[serde(default)]
    pub args: Map<String, Value>,
}

/// A handoff as the destinations were given it, kept once per run folder and named by its
/// digest (SHA-256 of its messages' JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Handoff {
    pub digest: String,
    /// The handoff as chat messages.
    pub messages: Vec<Value>,
}

impl Handoff {
    /// The handoff of these messages, with its digest.
    pub fn new(messages: Vec<Value>) -> Handoff {
        use sha2::Digest;
        let text = serde_json::to_string(&messages).unwrap_or_default();
        Handoff {
            digest: hex::encode(sha2::Sha256::digest(text.as_bytes())),
            messages,
        }
    }
}

/// One model turn of a live cell: a request, and the completion or the error that ended it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exchange {
    /// 1 for the cell's first request.
    pub turn: u32,
    /// When the request was first sent, ms after the cell's destination started.
    pub started_ms: f64,
    /// Wall time until the answer (retries and their backoff included), ms.
    pub latency_ms: f64,
    /// HTTP requests this turn took (retries included; 0 when the cache answered).
    pub requests: u32,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub from_cache: bool,
    pub request: Request,
    /// The completion as the endpoint returned it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
    /// The first choice's `finish_reason` (`stop`, `length`, `tool_calls`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// The endpoint's `usage`, when it reported one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
    /// The answer's text content.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Why the turn failed (the cell's error): the request got no usable completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Exchange {
    /// A turn whose request got no answer (yet): what was sent, when, and why nothing came back.
    pub fn unanswered(
        turn: u32,
        started_ms: f64,
        request: Request,
        error: Option<String>,
    ) -> Exchange {
        Exchange {
            turn,
            started_ms,
            latency_ms: 0.0,
            requests: 0,
            from_cache: false,
            request,
            response: None,
            finish_reason: None,
            usage: None,
            text: String::new(),
            tool_calls: Vec::new(),
            error,
        }
    }
}

/// A request as sent, relative to the previous one of the cell.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// How many messages of the previous request this one starts with (0: the first, or a
    /// request that does not extend the previous one).
    #[serde(default)]
    pub extends: usize,
    /// The messages after those.
    pub messages: Vec<Value>,
    /// Every other field of the body but `tools` (model, tool_choice, max_tokens, …).
    pub params: Map<String, Value>,
}

/// A tool call of a completion and what the harness made of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
    pub verdict: Verdict,
}

/// Whether a tool call could be acted on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// A known tool with a JSON-object argument: the cell acted on it.
    Valid,
    /// Arguments that are not a JSON object.
    Malformed,
    /// A tool the request did not define.
    UnknownTool,
}

/// One action of the destination and the world's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// 1 for the first action.
    pub step: u32,
    /// When the action was given, ms after the cell started.
    pub at_ms: f64,
    /// The action as the harness records it (`{"kind": "call", "tool", "args"}`, …).
    pub action: Value,
    /// What the world answered (none for the action that ended the cell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
}

/// How the cell ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// `ok` or `errored`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why nothing was continued (the handoff did not fit, the context was not delivered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Entry {
    /// A new entry for `cell`.
    pub fn new(cell: Cell, kind: Kind) -> Entry {
        Entry {
            cell,
            kind,
            handoff: None,
            handoff_tokens: 0,
            tools: Vec::new(),
            exchanges: Vec::new(),
            steps: Vec::new(),
            outcome: Outcome::default(),
            situations: Vec::new(),
        }
    }

    /// The request of exchange `i` whole, as it was sent (`tools` included).
    pub fn request(&self, i: usize) -> Option<Value> {
        let ex = self.exchanges.get(i)?;
        let mut messages: Vec<Value> = Vec::new();
        if ex.request.extends > 0 {
            let previous = self.request(i.checked_sub(1)?)?;
            let prev = previous["messages"].as_array()?;
            messages.extend(prev.iter().take(ex.request.extends).cloned());
        }
        messages.extend(ex.request.messages.iter().cloned());
        let mut body = ex.request.params.clone();
        body.insert("messages".into(), Value::Array(messages));
        if !self.tools.is_empty() {
            body.insert("tools".into(), Value::Array(self.tools.clone()));
        }
        Some(Value::Object(body))
    }
}

/// Builds the compact form of a request body: `previous` is the message list of the cell's
/// previous request. Returns the request and this body's messages (the next call's `previous`).
pub fn compact(body: &Value, previous: &[Value]) -> (Request, Vec<Value>) {
    let messages: Vec<Value> = body["messages"].as_array().cloned().unwrap_or_default();
    let shared = messages
        .iter()
        .zip(previous)
        .take_while(|(a, b)| a == b)
        .count();
    let mut params = body.as_object().cloned().unwrap_or_default();
    params.remove("messages");
    params.remove("tools");
    (
        Request {
            extends: shared,
            messages: messages[shared..].to_vec(),
            params,
        },
        messages,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compact_requests_rebuild_exactly() {
        let tools = vec![json!({"type": "function", "function": {"name": "t"}})];
        let b1 = json!({"model": "m", "messages": [{"role": "user", "content": "a"}], "tools": tools, "max_tokens": 5});
        let b2 = json!({"model": "m", "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}], "tools": tools, "max_tokens": 5});
        // Shares no leading message: kept whole.
        let b3 = json!({"model": "m", "messages": [{"role": "user", "content": "z"}], "tools": tools, "max_tokens": 5});
        // A prefilled turn ends each request and the next one replaces it: the leading messages
        // before it are still shared.
        let b4 = json!({"model": "m", "messages": [{"role": "user", "content": "z"}, {"role": "assistant", "content": "<p>"}], "tools": tools, "max_tokens": 5});
        let b5 = json!({"model": "m", "messages": [{"role": "user", "content": "z"}, {"role": "assistant", "content": "y"}, {"role": "user", "content": "x"}, {"role": "assistant", "content": "<p>"}], "tools": tools, "max_tokens": 5});
        let mut e = Entry::new(
            Cell {
                scenario: "s".into(),
                scale: "base".into(),
                interrupt: "p".into(),
                strategy: "C".into(),
                model: "m".into(),
                rep: 0,
            },
            Kind::Live,
        );
        e.tools = tools.clone();
        let mut prev = Vec::new();
        for (turn, b) in [&b1, &b2, &b3, &b4, &b5].into_iter().enumerate() {
            let (request, messages) = compact(b, &prev);
            prev = messages;
            e.exchanges
                .push(Exchange::unanswered(turn as u32 + 1, 0.0, request, None));
        }
        assert_eq!(e.exchanges[1].request.extends, 1);
        assert_eq!(e.exchanges[1].request.messages.len(), 2);
        assert_eq!(e.exchanges[2].request.extends, 0);
        assert_eq!(e.request(0), Some(b1));
        assert_eq!(e.request(1), Some(b2));
        assert_eq!(e.request(2), Some(b3));
        assert_eq!(e.exchanges[3].request.extends, 1);
        assert_eq!(e.exchanges[4].request.extends, 1);
        assert_eq!(e.exchanges[4].request.messages.len(), 3);
        assert_eq!(e.request(3), Some(b4));
        assert_eq!(e.request(4), Some(b5));
        assert_eq!(e.request(5), None);
    }
}
