//! A resumed run keeps where each record is, not the record (`runner::resume`): its file comes
//! back in cell order whatever order the records were in, a cell's last record wins across the
//! results and the journal, and a file that holds a cell twice is refused by line.

mod common;

use std::path::Path;

use compaction_eval::runner::{self, RunConfig, Silent};
use compaction_eval::scenario::volume::Scale;

fn config(out: &Path, resume: bool) -> RunConfig {
    RunConfig {
        scenarios: Some(vec!["support-ticket-timeout".into()]),
        strategies: vec!["C".into(), "A".into()],
        reps: 2,
        resume,
        out: out.to_path_buf(),
        scales: vec![Scale::Base],
        ..RunConfig::default()
    }
}

fn run(cfg: &RunConfig) -> Result<usize, runner::RunError> {
    let plan = runner::plan(cfg).expect("plan");
    runner::write_manifest(cfg, &plan).expect("manifest");
    runner::execute(cfg, &plan, &mut Silent)
}

#[test]
fn a_resume_puts_records_back_in_cell_order_and_refuses_a_cell_twice_in_one_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let n = run(&config(&out, false)).expect("run");
    assert!(n >= 8, "{n} cells");
    let whole = common::records(&out);
    let text = std::fs::read_to_string(out.join("results.jsonl")).expect("results");
    let lines: Vec<&str> = text.lines().collect();

    // Reversed, and the last three records moved to the journal: the resume runs nothing and
    // writes the file in cell order again.
    let (head, tail) = lines.split_at(lines.len() - 3);
    let reversed: Vec<&str> = head.iter().rev().copied().collect();
    std::fs::write(out.join("results.jsonl"), reversed.join("\n") + "\n").expect("write");
    std::fs::write(out.join(runner::JOURNAL), tail.join("\n") + "\n").expect("journal");
    assert_eq!(run(&config(&out, true)).expect("resume"), 0);
    assert_eq!(common::records(&out), whole);
    assert!(!out.join(runner::JOURNAL).exists());

    // A cell's record in the journal wins over its record in the results.
    let mut changed: serde_json::Value = serde_json::from_str(lines[0]).expect("record");
    changed["metrics"]["restore_tokens"] = serde_json::json!(12345);
    std::fs::write(out.join(runner::JOURNAL), format!("{changed}\n")).expect("journal");
    assert_eq!(run(&config(&out, true)).expect("resume"), 0);
    let now = common::records(&out);
    assert_eq!(now.len(), whole.len());
    assert_eq!(now[0]["metrics"]["restore_tokens"], 12345);
    assert_eq!(now[1..], whole[1..]);

    // Two records of one cell in one file: refused, naming the file and both lines.
    std::fs::write(
        out.join("results.jsonl"),
        format!("{}\n{}\n{}\n", lines[0], lines[1], lines[0]),
    )
    .expect("write");
    let err = run(&config(&out, true))
        .expect_err("a cell twice")
        .to_string();
    assert!(
        err.contains("results.jsonl: line 3 repeats the cell of line 1"),
        "{err}"
    );
}
