//! Index-safe text: every judge, checker and metric that reads a handoff takes arbitrary Unicode —
//! characters whose lowercase has another byte length (`İ`, the Kelvin sign, `ẞ`), combining
//! marks, right-to-left text, emoji, curly quotes — mixed into a real scenario's text, without
//! a panic, and reports offsets that index the original text.

use std::path::Path;
use std::sync::Arc;

use compaction_eval::destination::{SimAgent, SimKind};
use compaction_eval::handoff::{Handoff, Message, finish};
use compaction_eval::provenance;
use compaction_eval::scenario;
use compaction_eval::state::RestorePoint;
use proptest::prelude::*;

/// Text built from pieces that break byte-offset arithmetic, ordinary words and markup.
fn awkward_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("İlker: “a@b.example” is the address.".to_owned()),
        Just("\u{212A}elvin ".to_owned()),
        Just("STRAẞE ".to_owned()),
        Just("e\u{301}\u{302} ".to_owned()),
        Just("שלום ".to_owned()),
        Just("🧪🔥 ".to_owned()),
        Just("<external source=\"email\">".to_owned()),
        Just("</external>".to_owned()),
        Just("> quoted line\n".to_owned()),
        Just("Do not email the customer directly. ".to_owned()),
        Just("ticket-intent-017 ".to_owned()),
        Just("Hypothesis (not verified yet): ".to_owned()),
        Just("\n\n".to_owned()),
        "\\PC{0,12}",
    ];
    prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

fn support() -> RestorePoint {
    let s = scenario::load_file(Path::new("scenarios/support-ticket-timeout.yaml")).expect("loads");
    RestorePoint::build(Arc::new(s), "uncertain_side_effect").expect("state")
}

fn text_handoff(text: &str) -> Handoff {
    finish(
        "exec:fuzz",
        vec![Message::user(text.to_owned())],
        None,
        vec![],
        vec![],
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn provenance_offsets_index_the_original(text in awkward_text(), phrase in awkward_text()) {
        for pos in provenance::find(&text, &phrase) {
            prop_assert!(text.is_char_boundary(pos), "offset {pos} inside a character");
            let _ = provenance::judge(&text, pos);
            let _ = provenance::span(&text, pos);
            let _ = provenance::is_hedged(&text, pos);
            let _ = provenance::is_marked_verified(&text, pos);
            let _ = provenance::is_attributed_to_user(&text, pos);
        }
        for pos in [0, text.len() / 3, text.len() / 2, text.len()] {
            let _ = provenance::judge(&text, pos);
            let _ = provenance::span(&text, pos);
        }
        let _ = provenance::judge_all(&text, &phrase);
        let _ = provenance::presents_reconcile_first(&text, "ticket-intent-017");
    }

    #[test]
    fn checkers_audit_continuity_and_destinations_take_any_text(text in awkward_text()) {
        let at = support();
        let h = text_handoff(&text);
        let _ = compaction_eval::checkpoint::rules::check_text(&h.text, &at);
        let _ = compaction_eval::audit::audit_handoff(&at, &h);
        let _ = compaction_eval::continuity::evaluate(&at, &h, &text);
        for kind in [SimKind::Careful, SimKind::Literal] {
            let mut agent = SimAgent::new(kind, at.scenario.clone(), &at.interrupt, &h, 7, 1.0);
            let _ = agent.act(None);
        }
    }
}

#[test]
fn the_reported_panic_cases_are_judged() {
    for text in [
        "İlker: “a@b.example” is the address.",
        "The \u{212A}elvin reading: “do not email the customer directly” said the supplier.",
    ] {
        for phrase in ["a@b.example", "address", "do not email", "supplier"] {
            for pos in provenance::find(text, phrase) {
                assert!(text.is_char_boundary(pos));
                let _ = provenance::judge(text, pos);
            }
        }
        assert!(!provenance::find(text, "a@b.example").is_empty() || !text.contains("a@b"));
    }
    // A statement found around a position may start after it (CI's proptest found `{}`).
    for text in ["{}", "{\"a\": 1}", "> {}"] {
        for pos in 0..=text.len() {
            let _ = provenance::judge(text, pos);
            let _ = provenance::span(text, pos);
        }
    }
}
