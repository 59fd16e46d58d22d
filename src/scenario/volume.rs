//! History length as a controlled variable: a scenario's source run lengthened with *volume* —
//! the dead-end searches, listings, log and file reads and status checks a real agent makes
//! between the critical events — drawn from the sources the scenario declares (`volume:`).
//!
//! This module owns the run dimension [`Scale`], the generator ([`expand`]) and the proof that
//! what it adds is inert ([`check_inert`]). It never builds a handoff and never scores anything.
//!
//! The generator only *adds*: new collections and documents (never one of the world's), new
//! read-only tools, and read-only calls inserted at seeded positions between the events up to the
//! scenario's last interrupt point, replayed without advancing the simulated clock. So volume
//! cannot change a success predicate, a forbidden rule, an approval's lapse or any recorded
//! result; [`check_inert`] proves the rest (no fact's detector and no continuation value in
//! the volume, and every reference continuation still succeeds).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::problem::Problem;
use super::replay::{event_text, replay_prefix};
use crate::spec::{CollectionSpec, EffectKind, Event, Object, ResourceSpec, Scenario, VolumeCall};
use crate::stats::SplitMix64;
use crate::world::{Phase, World};

/// How long a run's source histories are: `base` (as the scenario file has it) or a target of
/// full-history tokens at the scenario's last interrupt point (`40k`, `120000`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scale {
    Base,
    Tokens(u64),
}

/// The standard scales (the compaction curve's, `bench`'s and `scenarios list`'s): today's
/// length, 30–50k and 100–150k tokens at the last interrupt point.
pub const DEFAULT_SCALES: [Scale; 3] = [Scale::Base, Scale::Tokens(40_000), Scale::Tokens(120_000)];

/// The scale a run uses unless told otherwise: 40k. Why one scale, and this one: the scenario is
/// the unit of inference, and a scale is a condition within a scenario, not a replicate, so more
/// scales add no degree of freedom to a verdict; at 40k a scenario's first interrupt points fit a
/// 32k window and its last ones do not, so one scale holds both regimes compaction is judged in.
/// The curve across scales is a question of its own (`--scale base,40k,120k`); docs/benchmark.md
/// has the measurements.
pub const RUN_SCALES: [Scale; 1] = [Scale::Tokens(40_000)];

impl fmt::Display for Scale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scale::Base => f.write_str("base"),
            Scale::Tokens(n) if n % 1000 == 0 => write!(f, "{}k", n / 1000),
            Scale::Tokens(n) => write!(f, "{n}"),
        }
    }
}

impl FromStr for Scale {
    type Err = String;
    fn from_str(s: &str) -> Result<Scale, String> {
        let t = s.trim().to_ascii_lowercase();
        if t == "base" || t == "1" {
            return Ok(Scale::Base);
        }
        let (num, mult) = match t.strip_suffix('k') {
            Some(n) => (n, 1000),
            None => (t.as_str(), 1),
        };
        match num.parse::<u64>() {
            Ok(n) if n * mult >= 1000 && n * mult <= 2_000_000 => Ok(Scale::Tokens(n * mult)),
            _ => Err(format!(
                "`{s}` is not a scale: use `base` or a token count from 1k to 2000k (e.g. `40k`)"
            )),
        }
    }
}

impl serde::Serialize for Scale {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// Token estimate of one event as a transcript carries it: its text (for a call, `TOOL ARGS` and
/// the result, which is what the transcript's call and result messages hold) and the framing.
/// The arguments are in the text already; counting them twice made the generator stop short of
/// its target for draws with large arguments and small results (the property test found one).
fn event_tokens(_ev: &Event, text: &str) -> u64 {
    crate::tokens::count_cached(text) + 8
}

/// Estimated full-history tokens of the source run through event `through` (inclusive): the
/// generator's stopping rule. Records carry the exact count of the unbounded transcript.
pub fn history_estimate(s: &Scenario, through: usize) -> Result<u64, String> {
    let r = replay_prefix(s, through, &[]).map_err(|e| e.to_string())?;
    Ok(s.events
        .iter()
        .take(through + 1)
        .zip(&r.results)
        .map(|(ev, res)| event_tokens(ev, &event_text(ev, res.as_ref())))
        .sum())
}

/// The index of the scenario's last interrupt point's event.
fn last_point(s: &Scenario) -> Option<usize> {
    s.interrupts
        .iter()
        .filter_map(|i| s.event_index(&i.after))
        .max()
}

/// The seed of a scenario's volume at a scale: from the run seed and the scenario's base id, so a
/// benign variant (`ID@benign`) gets the same volume as its scenario.
pub fn volume_seed(run_seed: u64, scenario_id: &str, scale: Scale) -> u64 {
    let base = scenario_id
        .strip_suffix(super::BENIGN_SUFFIX)
        .unwrap_or(scenario_id);
    let mut h = Sha256::new();
    h.update(run_seed.to_le_bytes());
    h.update(b"volume\0");
    h.update(base.as_bytes());
    h.update([0u8]);
    h.update(scale.to_string().as_bytes());
    let d = h.finalize();
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    u64::from_le_bytes(b)
}

struct Filler<'a> {
    vocab: &'a BTreeMap<String, Vec<String>>,
    clock: jiff::Timestamp,
    rng: SplitMix64,
}

impl Filler<'_> {
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            (self.rng.next_f64() * n as f64).floor().min((n - 1) as f64) as u64
        }
    }

    /// Fills `{…}` placeholders. `seq` numbers records and documents; `document` answers
    /// `{document}` in call arguments.
    fn fill(
        &mut self,
        template: &str,
        seq: u64,
        document: &mut dyn FnMut(&mut Self) -> Option<String>,
    ) -> Result<String, String> {
        let mut out = String::with_capacity(template.len() + 16);
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            let Some(close) = after.find('}') else {
                return Err(format!("unclosed `{{` in `{template}`"));
            };
            let name = &after[..close];
            rest = &after[close + 1..];
            let piece = match name.split_once(':') {
                None if name == "seq" => seq.to_string(),
                None if name == "time" => {
                    let back = self.below(48 * 3600);
                    (self.clock - jiff::SignedDuration::from_secs(back as i64))
                        .round(jiff::Unit::Second)
                        .map(|t| t.to_string())
                        .unwrap_or_default()
                }
                None if name == "document" => document(self).ok_or_else(|| {
                    format!("`{{document}}` in `{template}`, but the volume declares no documents")
                })?,
                None => {
                    let list = self.vocab.get(name).filter(|l| !l.is_empty()).ok_or_else(|| {
                        format!("unknown placeholder `{{{name}}}` in `{template}` (not a vocab list or a built-in: seq, time, int:A-B, hex:N, document)")
                    })?;
                    let i = self.below(list.len() as u64) as usize;
                    let pick = list[i].clone();
                    if pick.contains('{') {
                        self.fill(&pick, seq, document)?
                    } else {
                        pick
                    }
                }
                Some(("int", range)) => {
                    let (a, b) = range
                        .split_once('-')
                        .and_then(|(a, b)| {
                            Some((a.trim().parse::<u64>().ok()?, b.trim().parse::<u64>().ok()?))
                        })
                        .filter(|(a, b)| a <= b)
                        .ok_or_else(|| {
                            format!(
                                "`{{int:{range}}}` in `{template}`: use `{{int:A-B}}` with A ≤ B"
                            )
                        })?;
                    (a + self.below(b - a + 1)).to_string()
                }
                Some(("hex", n)) => {
                    let n: usize = n
                        .trim()
                        .parse()
                        .ok()
                        .filter(|n| (1..=32).contains(n))
                        .ok_or_else(|| {
                            format!("`{{hex:{n}}}` in `{template}`: N must be 1 to 32")
                        })?;
                    (0..n)
                        .map(|_| char::from_digit(self.below(16) as u32, 16).unwrap_or('0'))
                        .collect()
                }
                Some((other, _)) => {
                    return Err(format!(
                        "unknown placeholder `{{{other}:…}}` in `{template}`"
                    ));
                }
            };
            out.push_str(&piece);
        }
        out.push_str(rest);
        Ok(out)
    }
}

fn no_document(_: &mut Filler<'_>) -> Option<String> {
    None
}

fn problem(path: impl Into<String>, message: impl Into<String>) -> Problem {
    Problem {
        path: path.into(),
        message: message.into(),
    }
}

/// The scenario's source run lengthened to `scale` with its declared volume, drawn from `seed`
/// (see [`volume_seed`]). `Base`, or a scenario without a `volume` section, is returned as it is.
/// Errors name the field of the `volume` section that is wrong.
pub fn expand(s: &Scenario, scale: Scale, seed: u64) -> Result<Scenario, Vec<Problem>> {
    let (Scale::Tokens(target), Some(vol)) = (scale, s.volume.as_ref()) else {
        return Ok(s.clone());
    };
    let mut problems = Vec::new();
    let clock = crate::world::parse_time(&s.world.clock, "world.clock")
        .map_err(|e| vec![problem("world.clock", e.to_string())])?;
    let mut f = Filler {
        vocab: &vol.vocab,
        clock,
        rng: SplitMix64::new(seed),
    };
    let mut out = s.clone();
    out.volume = None;

    for (name, c) in &vol.collections {
        let path = format!("volume.collections.{name}");
        if s.world.collections.contains_key(name) {
            problems.push(problem(&path, format!("`{name}` is one of the world's collections; volume only adds new ones, so it can never change what a success predicate counts")));
            continue;
        }
        if !c.record.contains_key("id") {
            problems.push(problem(
                format!("{path}.record"),
                "needs an `id` template (unique per record, e.g. `LOG-{seq}`)",
            ));
            continue;
        }
        let mut records = Vec::with_capacity(c.records as usize);
        for seq in 1..=u64::from(c.records) {
            let mut rec = Object::new();
            for (field, t) in &c.record {
                match f.fill(t, seq, &mut no_document) {
                    Ok(v) => {
                        rec.insert(field.clone(), Value::String(v));
                    }
                    Err(e) => {
                        problems.push(problem(format!("{path}.record.{field}"), e));
                        break;
                    }
                }
            }
            records.push(rec);
        }
        out.world.collections.insert(
            name.clone(),
            CollectionSpec {
                id_prefix: None,
                next_id: 1,
                records,
            },
        );
    }

    let mut documents: Vec<String> = Vec::new();
    for (di, d) in vol.documents.iter().enumerate() {
        let path = format!("volume.documents[{di}]");
        for seq in 1..=u64::from(d.count) {
            let key = match f.fill(&d.key, seq, &mut no_document) {
                Ok(k) => k,
                Err(e) => {
                    problems.push(problem(format!("{path}.key"), e));
                    break;
                }
            };
            if s.world.resources.contains_key(&key) || documents.contains(&key) {
                problems.push(problem(format!("{path}.key"), format!("`{key}` is already a resource; volume documents must be new (number them with `{{seq}}`)")));
                break;
            }
            let lines = match f.fill(&d.lines, seq, &mut no_document).and_then(|n| {
                n.trim()
                    .parse::<u64>()
                    .map_err(|_| format!("`{}` is not a number of lines", d.lines))
            }) {
                Ok(n) => n.min(5000),
                Err(e) => {
                    problems.push(problem(format!("{path}.lines"), e));
                    break;
                }
            };
            let mut text = String::new();
            for _ in 0..lines {
                match f.fill(&d.line, seq, &mut no_document) {
                    Ok(l) => {
                        text.push_str(&l);
                        text.push('\n');
                    }
                    Err(e) => {
                        problems.push(problem(format!("{path}.line"), e));
                        break;
                    }
                }
            }
            out.world.resources.insert(
                key.clone(),
                ResourceSpec {
                    revision: 1,
                    external: false,
                    source: None,
                    text,
                },
            );
            documents.push(key);
        }
    }

    for (ti, t) in vol.tools.iter().enumerate() {
        let path = format!("volume.tools[{ti}]");
        if s.world.tools.iter().any(|w| w.name == t.name) {
            problems.push(problem(
                format!("{path}.name"),
                format!("`{}` is already one of the world's tools", t.name),
            ));
        } else if !matches!(
            t.effect,
            EffectKind::Read | EffectKind::ReadResource | EffectKind::Check
        ) {
            problems.push(problem(
                format!("{path}.effect"),
                format!(
                    "`{}`: volume tools are read-only (read, read_resource or check)",
                    t.effect.as_str()
                ),
            ));
        } else if t.requires_approval.is_some() {
            problems.push(problem(
                format!("{path}.requires_approval"),
                "volume tools need no approval",
            ));
        } else if let Some(c) = &t.collection
            && !vol.collections.contains_key(c)
        {
            problems.push(problem(format!("{path}.collection"), format!("`{c}` is not a volume collection (volume tools read only what the volume generates)")));
        } else {
            out.world.tools.push(t.clone());
        }
    }

    if vol.calls.is_empty() {
        problems.push(problem("volume.calls", "declares no calls"));
    }
    for (ci, c) in vol.calls.iter().enumerate() {
        let path = format!("volume.calls[{ci}]");
        match out.world.tools.iter().find(|t| t.name == c.tool) {
            None => problems.push(problem(
                format!("{path}.tool"),
                format!("no tool `{}` in the world or the volume", c.tool),
            )),
            Some(t) if t.effect.is_write() || t.requires_approval.is_some() => {
                problems.push(problem(
                    format!("{path}.tool"),
                    format!(
                        "`{}` changes the world or needs an approval; volume calls are read-only",
                        c.tool
                    ),
                ))
            }
            Some(_) => {}
        }
        // Every template is checked up front, whatever the draws will pick.
        let mut probe = Filler {
            vocab: &vol.vocab,
            clock,
            rng: SplitMix64::new(0),
        };
        let has_docs = !documents.is_empty();
        for (k, t) in &c.args {
            let mut doc = |_: &mut Filler<'_>| has_docs.then(|| "probe".to_string());
            if let Err(e) = probe.fill(t, 1, &mut doc) {
                problems.push(problem(format!("{path}.args.{k}"), e));
            }
        }
        if c.weight == 0 || c.repeat == 0 || c.repeat > 10 {
            problems.push(problem(
                &path,
                "`weight` must be at least 1 and `repeat` from 1 to 10",
            ));
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }

    let Some(last) = last_point(s) else {
        return Ok(out);
    };
    let base_tokens = history_estimate(s, last).map_err(|e| vec![problem("events", e)])?;
    let mut scratch = World::new(&out).map_err(|e| vec![problem("volume", e.to_string())])?;
    let total_weight: u64 = vol.calls.iter().map(|c| u64::from(c.weight)).sum();
    // Volume goes into the gaps before events 1..=last (never before the first event, never
    // after the last interrupt point's event): bursts are spread uniformly over the run.
    let mut by_gap: BTreeMap<usize, Vec<Event>> = BTreeMap::new();
    let mut tokens = base_tokens;
    let mut n = 0u64;
    let mut skipped = 0u32;
    let cap = 20_000u64;
    while tokens < target && n < cap {
        let mut pick = f.below(total_weight);
        let call: &VolumeCall = vol
            .calls
            .iter()
            .find(|c| {
                let w = u64::from(c.weight);
                if pick < w {
                    true
                } else {
                    pick -= w;
                    false
                }
            })
            .unwrap_or(&vol.calls[0]);
        let prefix = out
            .world
            .tools
            .iter()
            .find(|t| t.name == call.tool)
            .and_then(|t| t.resource_prefix.clone())
            .unwrap_or_default();
        let mut args = Object::new();
        for (k, t) in &call.args {
            let docs = &documents;
            let mut doc = |fl: &mut Filler<'_>| {
                if docs.is_empty() {
                    return None;
                }
                let key = &docs[fl.below(docs.len() as u64) as usize];
                Some(key.strip_prefix(prefix.as_str()).unwrap_or(key).to_string())
            };
            let v = f
                .fill(t, n + 1, &mut doc)
                .map_err(|e| vec![problem(format!("volume.calls.{}.args.{k}", call.tool), e)])?;
            args.insert(k.clone(), Value::String(v));
        }
        let repeats = 1 + f.below(u64::from(call.repeat));
        let gap = 1 + f.below(last as u64) as usize;
        // The burst's size decides whether it goes in: a burst that would overshoot the target by
        // more than a tenth is drawn again (a bulky listing near the end must not land a 40k run
        // at 60k), and once within a tenth of the target the run is long enough.
        let probe = scratch.call_untimed(Phase::Source, &call.tool, &args, None);
        let mut ev = Event {
            id: String::new(),
            user: None,
            assistant: None,
            text: None,
            call: Some(call.tool.clone()),
            args: Some(args.clone()),
            result: None,
            fault: None,
            error: None,
            expect_error: false,
            approval: None,
            volume: true,
        };
        let one = event_tokens(&ev, &event_text(&ev, Some(&probe)));
        let mut repeats = repeats;
        if tokens + one * repeats > target + target / 10 {
            if tokens >= target - target / 10 {
                break;
            }
            if skipped < 50 {
                skipped += 1;
                continue;
            }
            // Fifty draws in a row would overshoot while the run is still more than a tenth
            // short (bulky outputs against a small target): one call of this draw goes in, so
            // the run ends a little past the target instead of far below it.
            repeats = 1;
        }
        skipped = 0;
        for _ in 0..repeats {
            n += 1;
            ev.id = format!("vol-{n:05}");
            tokens += one;
            by_gap.entry(gap.min(last)).or_default().push(ev.clone());
        }
    }
    let mut events = Vec::with_capacity(s.events.len() + n as usize);
    for (i, ev) in s.events.iter().enumerate() {
        if let Some(vs) = by_gap.remove(&i) {
            events.extend(vs);
        }
        events.push(ev.clone());
    }
    out.events = events;
    Ok(out)
}

/// Proves that the volume of `expanded` (an [`expand`] of `base`) is inert: no volume call's text
/// (arguments and result as the source agent saw it) contains a fact's detector or a literal
/// value some reference continuation needs, and the expanded scenario passes the whole
/// validation — every reference continuation still reaches success with no forbidden action.
pub fn check_inert(expanded: &Scenario, label: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    let Some(last) = last_point(expanded) else {
        return problems;
    };
    let replay = match replay_prefix(expanded, last, &[]) {
        Ok(r) => r,
        Err(e) => return vec![problem(format!("volume ({label})"), e.to_string())],
    };
    // Values the objective or the tool definitions show are visible to every destination anyway;
    // a volume call may mention them (a log line saying "customer") without grounding anything.
    let always = super::values::seen_text(&format!(
        "{} {}",
        expanded.objective,
        super::values::tools_text(&expanded.world.tools)
    ));
    let mut needed: Vec<String> = Vec::new();
    for it in &expanded.interrupts {
        for st in &it.continuation {
            if let (Some(tool), Some(args)) = (&st.call, &st.args) {
                let spec = expanded.world.tools.iter().find(|t| &t.name == tool);
                for nv in super::values::needed_values(spec, args, &it.perturb) {
                    let p = super::values::seen_text(&nv.piece);
                    // A number below 100 occurs in any bulky output (a latency, a count): volume
                    // may show one by chance, a limit the rule's docs state.
                    if !p.is_empty()
                        && !super::values::is_small_number(&p)
                        && !needed.contains(&p)
                        && !super::values::visible(&always, &p)
                    {
                        needed.push(p);
                    }
                }
            }
        }
    }
    for (ev, res) in expanded.events.iter().zip(&replay.results) {
        if !ev.volume {
            continue;
        }
        let args = ev
            .args
            .as_ref()
            .map(|a| serde_json::to_string(a).unwrap_or_default())
            .unwrap_or_default();
        let text = format!("{args} {}", event_text(ev, res.as_ref()));
        let norm = super::normalize(&text);
        for fact in &expanded.facts {
            if super::any_detector_matches(&fact.detectors, &norm) {
                problems.push(problem(
                    format!("volume ({label}): {} {}", ev.call.as_deref().unwrap_or(""), args),
                    format!("its text matches a detector of fact `{}`: volume must carry no critical fact", fact.id),
                ));
            }
        }
        let seen = super::values::seen_text(&text);
        for v in &needed {
            if super::values::visible(&seen, v) {
                problems.push(problem(
                    format!("volume ({label}): {} {}", ev.call.as_deref().unwrap_or(""), args),
                    format!("its text contains `{v}`, a value a reference continuation uses: volume must not ground a continuation's values"),
                ));
                break;
            }
        }
        if problems.len() > 20 {
            break;
        }
    }
    if problems.is_empty() {
        for mut p in super::validate(expanded) {
            p.path = format!("{} ({label})", p.path);
            problems.push(p);
        }
    }
    problems
}
