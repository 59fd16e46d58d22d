//! Outcomes are layout-invariant: for every shipped scenario × interrupt point × offline strategy,
//! a handoff rewritten by a meaning-preserving layout transform (`layout/transforms.rs`) leads
//! `sim:careful` and `sim:literal` (attention 0) to the same task success, safety violations,
//! duplicate side effects, directives followed and facts lost as the handoff as built.
//!
//! Owns the property and its driver. Must not: tune a transform to the shipped wording, or
//! compare anything a layout may legitimately change (token counts, timings).
//!
//! Runs on `common::scenario_sample()`: a fixed sample of 8 shipped scenarios drawn by a fixed
//! seed that covers every feature of the suite (so the test's time does not grow with the suite;
//! `scenarios_cli` validates every scenario).

mod common;

#[path = "layout/transforms.rs"]
mod transforms;

use std::path::Path;
use std::sync::Arc;

use compaction_eval::destination::{Continuation, SimAgent, SimKind};
use compaction_eval::handoff::{Handoff, render_text};
use compaction_eval::scenario::Scenario;
use compaction_eval::score::{Run, score};
use compaction_eval::state::RestorePoint;
use compaction_eval::strategy::Registry;

/// The built-ins and the two shipped plug-ins: a checkpoint (`exec:python-example`) and a text
/// of one message per line (`exec:shell-example`, `[origin] text` lines).
const STRATEGIES: [&str; 9] = [
    "none",
    "A",
    "B",
    "C",
    "D",
    "mask",
    "B+A",
    "exec:python-example",
    "exec:shell-example",
];

/// One cell: the scenario, its restore point, the strategy and its handoff.
type Case = (Arc<Scenario>, Arc<RestorePoint>, &'static str, Arc<Handoff>);

type Transform = (&'static str, fn(&str) -> String);

/// Transforms of each message's content (the text is rendered again from the messages).
const CONTENT: [Transform; 11] = [
    ("split_paragraphs", transforms::split_paragraphs),
    ("join_paragraphs", transforms::join_paragraphs),
    ("blank_doubled", transforms::blank_doubled),
    ("blank_removed", transforms::blank_removed),
    ("wrap60", transforms::wrap),
    ("bullets_to_prose", transforms::bullets_to_prose),
    ("prose_to_bullets", transforms::prose_to_bullets),
    ("headings_deeper", transforms::headings_deeper),
    ("setext", transforms::setext),
    ("shuffle_sections", transforms::shuffle_sections),
    ("whitespace", transforms::whitespace),
];

/// Transforms of the rendered text as a whole.
fn whole(name: &str, text: &str) -> String {
    match name {
        "crlf" => text.replace('\n', "\r\n"),
        "messages_single_newline" => transforms::message_separation(text, "\n"),
        "messages_many_newlines" => transforms::message_separation(text, "\n\n\n\n"),
        "lines_blank" => transforms::labelled_lines(text, "\n\n"),
        "lines_many" => transforms::labelled_lines(text, "\n\n\n"),
        "lines_bulleted" => transforms::labelled_bullets(text),
        "labels_as_colons" => transforms::labels_as_colons(text),
        "messages_split" => transforms::split_messages(text),
        _ => unreachable!(),
    }
}
const WHOLE: [&str; 8] = [
    "crlf",
    "messages_single_newline",
    "messages_many_newlines",
    "lines_blank",
    "lines_many",
    "lines_bulleted",
    "labels_as_colons",
    "messages_split",
];

/// The outcome compared: task success, safety violations, duplicate side effects, directives
/// followed, facts lost.
type Outcome = (bool, u32, u32, Vec<String>, Vec<String>);

fn outcome(s: &Arc<Scenario>, at: &RestorePoint, h: &Handoff, kind: SimKind) -> Outcome {
    let mut agent = SimAgent::new(kind, s.clone(), &at.interrupt, h, 7, 0.0);
    let mut c = Continuation::new(at, h);
    let steps = c.drive(&mut agent, 60);
    let run = Run {
        scenario: s,
        interrupt: &at.interrupt,
        world: c.world(),
        finish: c.finish(),
        degraded: c.degraded(),
        restore_tokens: h.tokens_at_restore,
        total_tokens: 0,
        first_action_ms: 0.0,
        completion_ms: 0.0,
        steps,
        step_budget_exhausted: c.finish().is_none(),
    };
    let (m, _) = score(&run, agent.lost_facts.clone(), agent.obeyed.clone());
    (
        m.task_success,
        m.safety_violations,
        m.duplicate_side_effects,
        agent.obeyed.clone(),
        agent.lost_facts.clone(),
    )
}

fn transformed(h: &Handoff, name: &str) -> Handoff {
    let mut t = h.clone();
    if let Some((_, f)) = CONTENT.iter().find(|(n, _)| *n == name) {
        for m in &mut t.messages {
            m.content = f(&m.content);
        }
        t.text = render_text(&t.messages);
    } else {
        t.text = whole(name, &t.text);
    }
    t
}

/// The transforms composed into three pipelines (each transform in exactly one; the ones that
/// undo each other — split/join, doubled/removed blank lines, bullets/prose, the two heading
/// rewrites — in different ones), so every cell is driven three times, not fourteen. With
/// `LAYOUT_EACH=1` every transform is a pipeline of its own (to name the one that breaks).
fn pipelines() -> Vec<Vec<&'static str>> {
    if std::env::var_os("LAYOUT_EACH").is_some() {
        return CONTENT
            .iter()
            .map(|(n, _)| *n)
            .chain(WHOLE)
            .map(|n| vec![n])
            .collect();
    }
    vec![
        vec![
            "split_paragraphs",
            "wrap60",
            "headings_deeper",
            "shuffle_sections",
            "whitespace",
            "messages_single_newline",
            "lines_blank",
            "messages_split",
            "crlf",
        ],
        vec![
            "join_paragraphs",
            "setext",
            "bullets_to_prose",
            "blank_removed",
            "messages_many_newlines",
            "lines_bulleted",
        ],
        vec![
            "prose_to_bullets",
            "blank_doubled",
            "labels_as_colons",
            "lines_many",
        ],
    ]
}

/// `h` through the pipeline's transforms that apply to strategy `id`, in order.
fn through(h: &Handoff, pipeline: &[&str], id: &str) -> Handoff {
    pipeline
        .iter()
        .filter(|n| transforms::applies(n, id))
        .fold(h.clone(), |t, n| transformed(&t, n))
}

#[test]
fn outcomes_do_not_depend_on_layout() {
    let started = std::time::Instant::now();
    let reg = Registry::load(Path::new("strategies")).expect("strategies load");
    let mut cases: Vec<Case> = Vec::new();
    for s in common::scenario_sample() {
        let s = Arc::new(s);
        for it in &s.interrupts {
            let at = Arc::new(RestorePoint::build(s.clone(), &it.point).expect("state builds"));
            for id in STRATEGIES {
                let h = Arc::new(reg.handoff(id, &at).expect("handoff builds"));
                cases.push((s.clone(), at.clone(), id, h));
            }
        }
    }
    assert!(cases.len() >= 100, "the shipped suite has cases to check");
    let pipes = pipelines();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 4));
    let chunk = cases.len().div_ceil(threads);
    let failures: Vec<String> = std::thread::scope(|sc| {
        let handles: Vec<_> = cases
            .chunks(chunk)
            .map(|part| {
                let pipes = &pipes;
                sc.spawn(move || {
                    let mut out = Vec::new();
                    for (s, at, id, h) in part {
                        for kind in [SimKind::Careful, SimKind::Literal] {
                            let base = outcome(s, at, h, kind);
                            for pipe in pipes {
                                let t = through(h, pipe, id);
                                if t.text == h.text {
                                    continue;
                                }
                                let name = pipe.join("+");
                                let got = outcome(s, at, &t, kind);
                                if got != base {
                                    out.push(format!(
                                        "{name} {id} {} {} {kind:?}: {base:?} → {got:?}",
                                        s.id, at.interrupt.point
                                    ));
                                }
                            }
                        }
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a worker finished"))
            .collect()
    });
    eprintln!(
        "{} cases × {} pipelines in {:.1} s",
        cases.len(),
        pipes.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} outcomes changed with the layout:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The transforms keep what they must: a JSON line, a tag line and a blockquote's markers.
#[test]
fn the_transforms_keep_structure() {
    let t = "Intro sentence one. Intro two.\n\n<external source=\"a b\">\n> quoted line one that is long enough to wrap at sixty columns for sure\n</external>\n{\"k\": \"a value with spaces\"}\n";
    let w = transforms::wrap(t);
    assert!(w.contains("<external source=\"a b\">"), "{w}");
    assert!(w.contains("{\"k\": \"a value with spaces\"}"), "{w}");
    assert!(
        w.lines()
            .filter(|l| l.contains("quoted") || l.contains("sixty"))
            .all(|l| l.starts_with("> ")),
        "{w}"
    );
    let s = transforms::split_paragraphs(t);
    assert!(s.starts_with("Intro sentence one.\n\nIntro two."), "{s}");
}
