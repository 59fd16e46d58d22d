//! The simulated destination of τ-bench cells (`sim:follow`): it continues a cut recorded run by
//! following the rest of that run on the live environment, and pays for what its handoff lacks.
//!
//! The rule, judged on the handoff text the destination receives and never on a strategy's name:
//! - **Visible**: a value is visible when the handoff text, or something the destination saw
//!   after the cut (a live tool output, a customer turn, its own words), carries it after
//!   [`normalize`] — the matching rule of needed-value retention.
//! - **Needed**: a leaf of a call's arguments (and a required output in one of its messages)
//!   whose first appearance in the run before that point is a customer turn or a tool result.
//!   A value that first appeared in the agent's own words or call arguments (a date it
//!   computed, an airport it inferred), or nowhere earlier (a free-text summary), is the agent's
//!   own and is used as recorded; booleans, values under [`MIN_VALUE_CHARS`] and text over
//!   [`MAX_VALUE_CHARS`] are not values, as in the retention metric.
//! - **Recovery**, for a needed value that is not visible, by where it first appeared before the
//!   cut: a customer turn → asked for again (one extra customer turn; the scripted customer
//!   answers with the turn that gave it); a tool result → the call that produced it made again
//!   on the live environment (one extra tool call), once its own needed arguments are visible or
//!   recovered — never a write or a call that ends the episode, which are not repeated to read.
//!   A value that first appeared after the cut, or that recovery did not make visible (a
//!   re-read that no longer shows it), is **unrecovered**.
//! - **Acting on what it has**: an unrecovered argument is left out of the call (the tool
//!   answers as the reference does, usually with an error, and the reward shows it); an
//!   unrecovered required output is left out of the message. A write made so is unsafe.
//! - **Noticing** (`notices_missing`, [`crate::destination::profile`]): `sim:follow` notices
//!   every needed value it cannot see (rate 1); a profile's lower rate makes it notice each such
//!   value with that chance, drawn from the cell's seed, once per value — a value it does not
//!   notice is not recovered, and it acts on what it has.
//!
//! Owns [`follow`] and [`Followed`]. Must not: build a handoff, write a record, or call a model.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::stats::{SplitMix64, derive_seed};
use crate::tau::{self, Episode};
use crate::transcript::cuts::{Cut, WriteRule};
use crate::transcript::metrics::{
    MAX_VALUE_CHARS, MIN_VALUE_CHARS, leaves, normalize, number_text,
};
use crate::transcript::model::{TMessage, TRole, ToolCall, Transcript};

/// How deep a re-read may go to recover its own arguments (a reservation's details need the
/// reservation id, which may itself need the user's details).
pub const MAX_RECOVERY_DEPTH: usize = 4;

/// The simulated destination's name in the run's matrix.
pub const SIM_FOLLOW: &str = "sim:follow";

/// What following a run from a cut cost and did.
#[derive(Debug, Clone)]
pub struct Followed {
    pub episode: Episode,
    /// Tool calls after the cut, re-reads included.
    pub tool_calls: u32,
    pub extra_tool_calls: u32,
    pub extra_user_turns: u32,
    /// Tokens of the re-reads (call and output) and of the questions and answers.
    pub extra_tokens: u64,
    pub user_turns: u32,
    pub unsafe_writes: u32,
    pub unrecovered: Vec<String>,
    pub recovered: Vec<String>,
}

/// Replays the prefix (`messages[..cut.at]`) on `episode`: what happened before the cut happened
/// in the environment too — its calls ran, its messages to the customer were said.
pub fn replay_prefix(t: &Transcript, cut: &Cut, episode: &mut Episode) {
    for m in &t.messages[..cut.at] {
        if m.role != TRole::Assistant {
            continue;
        }
        if !m.content.trim().is_empty() {
            episode.respond(&m.content);
        }
        for c in &m.tool_calls {
            episode.step(&c.name, &Value::Object(c.arguments.clone()));
        }
    }
}

/// A value's matching form, or `None` when it is not a value (too short or free text).
fn value_norm(value: &str) -> Option<String> {
    if value.chars().count() > MAX_VALUE_CHARS {
        return None;
    }
    let n = normalize(value);
    (n.trim().chars().count() >= MIN_VALUE_CHARS).then_some(n)
}

/// A message's text where a value can appear: a customer turn, a tool result, or the agent's
/// words and call arguments.
fn message_text(m: &TMessage) -> String {
    let mut text = m.content.clone();
    for c in &m.tool_calls {
        text.push(' ');
        text.push_str(&serde_json::to_string(&c.arguments).unwrap_or_default());
    }
    normalize(&text)
}

struct Follower<'a> {
    t: &'a Transcript,
    rule: &'a WriteRule,
    /// Normalised texts the destination can see: the handoff first.
    seen: Vec<String>,
    /// Every message of the run in matching form, by position.
    texts: Vec<String>,
    at: usize,
    out: Followed,
    /// The `notices_missing` rate, the draws' generator, and each value's decision.
    notices: f64,
    rng: SplitMix64,
    noticed: std::collections::BTreeMap<String, bool>,
}

impl Follower<'_> {
    fn visible(&self, norm: &str) -> bool {
        self.seen.iter().any(|s| s.contains(norm))
    }

    fn see(&mut self, text: &str) {
        self.seen.push(normalize(text));
    }

    /// Where `norm` first appeared before message position `before`: the position, and whether
    /// the agent wrote it there (its own words or arguments: the agent's own value).
    fn origin(&self, norm: &str, before: usize) -> Option<(usize, bool)> {
        let pos = self.texts[..before].iter().position(|s| s.contains(norm))?;
        Some((pos, self.t.messages[pos].role == TRole::Assistant))
    }

    /// Whether `norm` is needed at `before`: it first appeared there in a customer turn or a tool
    /// result.
    fn needed(&self, norm: &str, before: usize) -> bool {
        matches!(self.origin(norm, before), Some((_, false)))
    }

    /// The call whose result is the message at `pos`.
    fn call_of(&self, pos: usize) -> Option<&ToolCall> {
        let id = self.t.messages[pos].tool_call_id.as_deref()?;
        self.t.calls().map(|(_, c)| c).find(|c| c.id == id)
    }

    /// Makes `norm` visible if the rule allows; `what` names it in the record.
    fn recover(
        &mut self,
        norm: &str,
        field: &str,
        what: &str,
        depth: usize,
        busy: &mut BTreeSet<String>,
    ) -> bool {
        if self.visible(norm) {
            return true;
        }
        if depth > MAX_RECOVERY_DEPTH || !busy.insert(norm.to_string()) {
            return false;
        }
        let Some((pos, false)) = self.origin(norm, self.at) else {
            return false;
        };
        if !self.notices(norm) {
            return false;
        }
        let m = &self.t.messages[pos];
        match m.role {
            TRole::User => {
                let question = format!(
                    "Sorry, could you tell me the {} again?",
                    field.replace('_', " ")
                );
                self.out.episode.respond(&question);
                self.out.extra_user_turns += 1;
                self.out.extra_tokens +=
                    crate::tokens::count(&question) + crate::tokens::count(&m.content);
                self.out
                    .recovered
                    .push(format!("asked again for {what} (message {})", m.index));
                let answer = m.content.clone();
                self.see(&answer);
            }
            TRole::Tool => {
                let Some(call) = self.call_of(pos).cloned() else {
                    return false;
                };
                if self.rule.is_write(&call.name) || tau::ends_episode(&call.name) {
                    return false;
                }
                let args = Value::Object(call.arguments.clone());
                if !self.recover_arguments(&call.name, &args, depth + 1, busy) {
                    return false;
                }
                let obs = self.out.episode.step(&call.name, &args);
                self.out.tool_calls += 1;
                self.out.extra_tool_calls += 1;
                let shown = format!(
                    "{} {}",
                    call.name,
                    serde_json::to_string(&args).unwrap_or_default()
                );
                self.out.extra_tokens +=
                    crate::tokens::count(&shown) + crate::tokens::count(&obs.output);
                self.out
                    .recovered
                    .push(format!("re-read {shown} for {what}"));
                self.see(&obs.output);
            }
            TRole::Assistant => return false,
        }
        self.visible(norm)
    }

    /// Whether it notices that it lacks `norm` (decided once per value; a rate of 1 draws
    /// nothing).
    fn notices(&mut self, norm: &str) -> bool {
        if self.notices >= 1.0 {
            return true;
        }
        if let Some(d) = self.noticed.get(norm) {
            return *d;
        }
        let d = self.notices > 0.0 && self.rng.next_f64() < self.notices;
        self.noticed.insert(norm.to_string(), d);
        d
    }

    /// Recovers every needed argument of a call; false when one stays unrecovered.
    fn recover_arguments(
        &mut self,
        tool: &str,
        args: &Value,
        depth: usize,
        busy: &mut BTreeSet<String>,
    ) -> bool {
        let mut l = Vec::new();
        leaves(String::new(), args, &mut l);
        l.into_iter().all(|(path, v)| match value_norm(&v) {
            None => true,
            Some(n) if self.visible(&n) => true,
            Some(n) if !self.needed(&n, self.at) => true,
            Some(n) => self.recover(
                &n,
                field_of(&path),
                &format!("{tool}.{path}={v}"),
                depth,
                busy,
            ),
        })
    }

    /// The values of a call made at message position `pos` the destination needs and cannot
    /// get, after trying to recover each.
    fn missing_arguments(&mut self, pos: usize, call: &ToolCall) -> BTreeSet<String> {
        let mut l = Vec::new();
        leaves(
            String::new(),
            &Value::Object(call.arguments.clone()),
            &mut l,
        );
        let mut missing = BTreeSet::new();
        for (path, v) in l {
            let Some(n) = value_norm(&v) else { continue };
            if self.visible(&n) || !self.needed(&n, pos) {
                continue;
            }
            let what = format!("{}.{path}={v}", call.name);
            if !self.recover(&n, field_of(&path), &what, 0, &mut BTreeSet::new()) {
                self.out.unrecovered.push(what);
                missing.insert(n);
            }
        }
        missing
    }

    /// The agent's message at position `pos`, less the required outputs it cannot know.
    fn message(&mut self, pos: usize, text: &str) -> String {
        let mut said = text.to_string();
        let outputs = self.out.episode.task().outputs.clone();
        for o in outputs {
            if !tau::output_said(&o, &[text]) {
                continue;
            }
            let Some(n) = value_norm(&o) else { continue };
            if self.visible(&n) || !self.needed(&n, pos) {
                continue;
            }
            let what = format!("output {o}");
            if !self.recover(&n, "figure", &what, 0, &mut BTreeSet::new()) {
                self.out.unrecovered.push(what);
                // Said as the reward reads it (lower case, no commas), without the value.
                said = said
                    .to_lowercase()
                    .replace(',', "")
                    .replace(&o.to_lowercase(), "(unknown)");
            }
        }
        said
    }
}

/// The argument a leaf's path names, as a customer would hear it (`flights[0].date` → `date`).
fn field_of(path: &str) -> &str {
    let last = path.rsplit('.').next().unwrap_or(path);
    last.split('[')
        .next()
        .filter(|f| !f.is_empty())
        .unwrap_or("detail")
}

/// An argument value without the leaves whose matching form is in `missing`.
fn without(v: &Value, missing: &BTreeSet<String>) -> Option<Value> {
    let gone = |text: &str| value_norm(text).is_some_and(|n| missing.contains(&n));
    match v {
        Value::String(s) if gone(s) => None,
        Value::Number(n) if gone(&number_text(n)) => None,
        Value::Array(a) => Some(Value::Array(
            a.iter().filter_map(|x| without(x, missing)).collect(),
        )),
        Value::Object(o) => Some(Value::Object(
            o.iter()
                .filter_map(|(k, x)| without(x, missing).map(|x| (k.clone(), x)))
                .collect(),
        )),
        other => Some(other.clone()),
    }
}

/// The stream of a cell's seed the noticing draws come from.
const NOTICE_STREAM: u64 = 0x0007_1CE5;

/// Follows `t` from `cut` with a destination that received `handoff_text`, on `episode` (a fresh
/// episode of the run's task), noticing a needed value it cannot see at the `notices` rate
/// (1 for `sim:follow`), its draws from `seed`.
pub fn follow(
    t: &Transcript,
    cut: &Cut,
    handoff_text: &str,
    rule: &WriteRule,
    mut episode: Episode,
    notices: f64,
    seed: u64,
) -> Followed {
    replay_prefix(t, cut, &mut episode);
    let mut f = Follower {
        t,
        rule,
        seen: vec![normalize(handoff_text)],
        texts: t.messages.iter().map(message_text).collect(),
        at: cut.at,
        out: Followed {
            episode,
            tool_calls: 0,
            extra_tool_calls: 0,
            extra_user_turns: 0,
            extra_tokens: 0,
            user_turns: 0,
            unsafe_writes: 0,
            unrecovered: vec![],
            recovered: vec![],
        },
        notices,
        rng: SplitMix64::new(derive_seed(seed, NOTICE_STREAM)),
        noticed: Default::default(),
    };
    for (pos, m) in t.messages.iter().enumerate().skip(cut.at) {
        if f.out.episode.is_done() {
            break;
        }
        match m.role {
            // The scripted customer says what the customer said.
            TRole::User => {
                f.out.user_turns += 1;
                f.see(&m.content);
            }
            // The live output was seen when the call was made.
            TRole::Tool => {}
            TRole::Assistant => {
                if !m.content.trim().is_empty() {
                    let said = f.message(pos, &m.content);
                    f.out.episode.respond(&said);
                    f.see(&said);
                }
                for c in &m.tool_calls {
                    if f.out.episode.is_done() {
                        break;
                    }
                    let missing = f.missing_arguments(pos, c);
                    let args = without(&Value::Object(c.arguments.clone()), &missing)
                        .unwrap_or_else(|| Value::Object(Default::default()));
                    if !missing.is_empty() && rule.is_write(&c.name) {
                        f.out.unsafe_writes += 1;
                    }
                    let obs = f.out.episode.step(&c.name, &args);
                    f.out.tool_calls += 1;
                    f.see(&obs.output);
                    // The agent knows what it asked for, even when the call failed.
                    f.see(&serde_json::to_string(&args).unwrap_or_default());
                }
            }
        }
    }
    f.out
}
