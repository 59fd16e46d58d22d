//! A handoff that writes the transcript one message per line (`[agent report] …` lines, or
//! `agent report: …` lines, separated by a single newline) reads as the same messages with a
//! blank line or a bullet between them: on every shipped scenario × interrupt point, for
//! `sim:careful` and `sim:literal`, the outcome does not depend on the separator (validity 4,
//! issue 37: 40 cells differed at attention 0 before turn labels were read as structure).

mod common;

use std::sync::Arc;

use compaction_eval::destination::SimKind;
use compaction_eval::handoff::{self, Message};
use compaction_eval::scenario;
use compaction_eval::state::RestorePoint;

/// The transcript as a plug-in outside the project wrote it: one labelled line per message.
fn transcript(at: &RestorePoint, bracketed: bool, sep: &str) -> String {
    let lines: Vec<String> = at
        .state
        .events
        .iter()
        .map(|e| {
            let who = e.origin.label();
            let text = e.text.replace('\n', " ");
            if bracketed {
                format!("[{who} {}] {text}", e.kind)
            } else {
                format!("{who} {}: {text}", e.kind)
            }
        })
        .collect();
    format!(
        "Handoff (the run so far, one message per line):\n{}",
        lines.join(sep)
    )
}

fn outcome(at: &RestorePoint, text: &str, kind: SimKind) -> (bool, u32, u32, Vec<String>) {
    let h = handoff::finish(
        "exec:one-per-line",
        vec![Message::user(text.to_string())],
        None,
        at.state.events.iter().map(|e| e.id.clone()).collect(),
        vec![],
    );
    let (m, agent) = common::continue_and_score(at, &h, kind);
    let mut lost = agent.lost_facts.clone();
    lost.extend(agent.obeyed.iter().map(|o| format!("obeyed {o}")));
    (
        m.task_success,
        m.duplicate_side_effects,
        m.safety_violations,
        lost,
    )
}

fn shipped() -> Vec<Arc<scenario::Scenario>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    scenario::scenario_files(&dir)
        .expect("scenario files")
        .iter()
        .map(|f| Arc::new(scenario::load_file(f).expect("a shipped scenario loads")))
        .collect()
}

#[test]
fn one_message_per_line_reads_as_separated_messages() {
    let mut differ = Vec::new();
    let mut cells = 0;
    for s in shipped() {
        for it in &s.interrupts {
            let at = RestorePoint::build(s.clone(), &it.point).expect("state builds");
            for bracketed in [true, false] {
                for kind in [SimKind::Careful, SimKind::Literal] {
                    let base = outcome(&at, &transcript(&at, bracketed, "\n\n"), kind);
                    for sep in ["\n", "\n- "] {
                        cells += 1;
                        let got = outcome(&at, &transcript(&at, bracketed, sep), kind);
                        if got != base {
                            differ.push(format!(
                                "{} {} {kind:?} bracketed={bracketed} sep={sep:?}: {got:?} vs blank lines {base:?}",
                                s.id, it.point
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(cells > 400, "only {cells} cells compared");
    assert!(
        differ.is_empty(),
        "{} of {cells} cells change with the separator:\n{}",
        differ.len(),
        differ.join("\n")
    );
}

/// The issue's own case: the timed-out resize is in the handoff on a line of its own, so the
/// destination reconciles it before any retry instead of resizing twice.
#[test]
fn the_timed_out_resize_on_its_own_line_is_reconciled() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let s = Arc::new(
        scenario::load_file(&dir.join("cloud-cost-rightsizing-freeze.yaml")).expect("loads"),
    );
    let at = RestorePoint::build(s, "uncertain_side_effect").expect("state builds");
    let text = transcript(&at, true, "\n");
    assert!(text.contains(
        "\n[agent report] The resize_instance request for bi-cache-1 (key rs-i-0b27d4e81c) timed out"
    ));
    let (success, duplicates, unsafe_, lost) = outcome(&at, &text, SimKind::Careful);
    assert_eq!(duplicates, 0, "resized twice; lost {lost:?}");
    assert_eq!(unsafe_, 0, "lost {lost:?}");
    assert!(success, "lost {lost:?}");
}
