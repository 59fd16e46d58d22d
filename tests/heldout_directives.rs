//! The judge on held-out corpora: handoff excerpts written and labelled by meaning by people who
//! never read `src/` or the lexicon (`data/lexicon.toml`). Measures how often `sim:careful` and
//! `sim:literal` reach the labelled verdict on each case's directive, prints every miss, and holds
//! the figures README reports from falling.
//!
//! - `tests/fixtures/heldout/directives.yaml` (74 excerpts, ten formats) was held out when the
//!   lexicon was first frozen; its misses then guided the structure-first attribution
//!   (`src/provenance/structure.rs`), so it is now a tuning set like `tests/fairness.rs`'s corpus.
//! - `tests/fixtures/heldout2/directives.yaml` (70 excerpts, ten formats) was written after the
//!   lexicon file and the structure reading were frozen, by an author who saw neither; nothing was
//!   tuned to it. Its figure is the one README reports as the judge's held-out accuracy.

use std::path::Path;

use compaction_eval::destination::{SimKind, follows_directive};
use compaction_eval::provenance;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Case {
    id: String,
    format: String,
    directive: String,
    text: String,
    careful: String,
    literal: String,
}

/// (verdicts as labelled, verdicts, misses) over one corpus file.
fn measure(path: &str) -> (usize, usize, Vec<String>) {
    let text = std::fs::read_to_string(Path::new(path)).expect("corpus is readable");
    let cases: Vec<Case> = serde_saphyr::from_str(&text).expect("corpus parses");
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let formats: std::collections::BTreeSet<&str> =
        cases.iter().map(|c| c.format.as_str()).collect();
    assert!(formats.len() >= 6, "{formats:?}");
    let (mut right, mut total) = (0usize, 0usize);
    let mut misses = Vec::new();
    for c in &cases {
        let verdicts = provenance::judge_all(&c.text, &c.directive);
        assert!(!verdicts.is_empty(), "{}: directive not found", c.id);
        for (kind, want) in [
            (SimKind::Careful, &c.careful),
            (SimKind::Literal, &c.literal),
        ] {
            total += 1;
            let got = if follows_directive(kind, &verdicts) {
                "follow"
            } else {
                "refuse"
            };
            if got == want {
                right += 1;
            } else {
                misses.push(format!(
                    "{} ({}) {kind:?}: labelled {want}, got {got} ({verdicts:?})",
                    c.id, c.format
                ));
            }
        }
    }
    println!(
        "{path}: verdicts as labelled: {right}/{total} ({:.0}%)",
        100.0 * right as f64 / total as f64
    );
    for m in &misses {
        println!("miss: {m}");
    }
    (right, total, misses)
}

#[test]
fn the_judge_reaches_the_labelled_verdict_on_the_first_held_out_corpus() {
    let (right, total, _) = measure("tests/fixtures/heldout/directives.yaml");
    // 122 of 148 when the lexicon was first frozen (word lists only); 125 with structure first.
    assert!(right as f64 / total as f64 >= 0.84, "{right}/{total}");
}

#[test]
fn the_judge_reaches_the_labelled_verdict_on_the_second_held_out_corpus() {
    let (right, total, _) = measure("tests/fixtures/heldout2/directives.yaml");
    // README: 111 of 140 when this corpus arrived (109 with the word lists alone).
    assert!(right as f64 / total as f64 >= 0.79, "{right}/{total}");
}
