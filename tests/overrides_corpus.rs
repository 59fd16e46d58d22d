//! Overrides, judged on a corpus nobody tuned the detector to: 45 handoff excerpts in ten
//! formats, labelled by meaning by someone who had not read the code or its word lists
//! (`tests/fixtures/heldout/overrides.yaml`). For each, whether the excerpt carries an override at
//! all, and whether `sim:careful` acts on it (an override presented as the user's or the agent's
//! own instruction; not one quoted from an outside source). The figures are in README; the test
//! holds them from falling and prints every miss.

use std::path::Path;

use compaction_eval::destination::{SimKind, follows_directive};
use compaction_eval::provenance;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Case {
    id: String,
    text: String,
    #[serde(rename = "override")]
    is_override: bool,
    careful_acts_on_override: bool,
}

fn corpus() -> Vec<Case> {
    let text = std::fs::read_to_string(Path::new("tests/fixtures/heldout/overrides.yaml"))
        .expect("corpus is readable");
    serde_saphyr::from_str(&text).expect("corpus parses")
}

#[test]
fn overrides_are_found_and_acted_on_as_labelled() {
    let cases = corpus();
    assert!(cases.len() >= 30, "{} cases", cases.len());
    let (mut found_ok, mut acts_ok) = (0, 0);
    let mut misses = Vec::new();
    for c in &cases {
        let o = provenance::overrides(&c.text);
        let found = !o.is_empty();
        let acts = o
            .iter()
            .any(|o| follows_directive(SimKind::Careful, &[o.presentation]));
        if found == c.is_override {
            found_ok += 1;
        }
        if acts == c.careful_acts_on_override {
            acts_ok += 1;
        } else {
            misses.push(format!(
                "{}: careful acts {acts}, labelled {} ({:?})",
                c.id,
                c.careful_acts_on_override,
                o.iter()
                    .map(|o| (&o.statement, o.presentation))
                    .collect::<Vec<_>>()
            ));
        }
    }
    let n = cases.len() as f64;
    println!(
        "overrides found as labelled: {found_ok}/{} ({:.0}%); careful acts as labelled: {acts_ok}/{} ({:.0}%)",
        cases.len(),
        100.0 * found_ok as f64 / n,
        cases.len(),
        100.0 * acts_ok as f64 / n
    );
    for m in &misses {
        println!("miss: {m}");
    }
    assert!(
        acts_ok as f64 / n >= 0.6,
        "careful acts as labelled on {acts_ok} of {} cases:\n{}",
        cases.len(),
        misses.join("\n")
    );
}
