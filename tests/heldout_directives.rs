//! The judge on a held-out corpus (issue 25, item 4): 74 handoff excerpts in ten formats,
//! written and labelled by meaning by someone who never read `src/` or the cue words, after the
//! lexicon was frozen; nothing was tuned to them (`tests/fairness.rs`'s corpus is the tuning
//! set). This test measures how often `sim:careful` and `sim:literal` reach the labelled verdict
//! on each case's directive, prints every miss, and holds the figure README reports from
//! falling.

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

#[test]
fn the_judge_reaches_the_labelled_verdict_on_the_held_out_corpus() {
    let text = std::fs::read_to_string(Path::new("tests/fixtures/heldout/directives.yaml"))
        .expect("corpus is readable");
    let cases: Vec<Case> = serde_saphyr::from_str(&text).expect("corpus parses");
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let formats: std::collections::BTreeSet<&str> =
        cases.iter().map(|c| c.format.as_str()).collect();
    assert!(formats.len() >= 6, "{formats:?}");
    let (mut right, mut total) = (0usize, 0usize);
    let mut misses = Vec::new();
    for c in &cases {
        let verdicts = provenance::judge_all(&c.text, &c.directive);
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
        "held-out verdicts as labelled: {right}/{total} ({:.0}%)",
        100.0 * right as f64 / total as f64
    );
    for m in &misses {
        println!("miss: {m}");
    }
    // 122 of 148 when the lexicon was frozen (README, "How far to trust the judge").
    assert!(right as f64 / total as f64 >= 0.8, "{right}/{total}");
}
