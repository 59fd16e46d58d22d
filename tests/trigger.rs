//! A compacting strategy's trigger (`trigger_tokens`): below it the handoff is A's transcript and
//! the record says `compacted: false`; at or above it the strategy's own handoff, `compacted:
//! true`; the report counts the cells whose handoff is longer than the history it replaces.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use compaction_eval::scenario;
use compaction_eval::state::RestorePoint;
use compaction_eval::strategy::{DEFAULT_CONTEXT_WINDOW, Registry, usable_context};

/// The shipped strategies, plus `Ct`: C with `trigger_tokens = trigger`.
fn strategies(trigger: u64) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("strategies");
    copy_dir(Path::new("strategies"), &dir);
    std::fs::write(
        dir.join("Ct.toml"),
        format!(
            "id = \"Ct\"\nkind = \"checkpoint\"\nexcerpt_chars = 400\ntrigger_tokens = {trigger}\n"
        ),
    )
    .expect("write");
    (tmp, dir)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).expect("copy");
        }
    }
}

fn build(reg: &Registry, id: &str, at: &RestorePoint) -> compaction_eval::handoff::Handoff {
    reg.get_for(id, None, usable_context(DEFAULT_CONTEXT_WINDOW))
        .expect("strategy")
        .build_blocking(&at.state)
        .expect("builds")
}

#[test]
fn below_the_trigger_the_handoff_is_the_transcript_and_above_it_the_strategy_s_own() {
    let s = Arc::new(
        scenario::load_file(Path::new("scenarios/support-ticket-timeout.yaml")).expect("loads"),
    );
    let (_keep_high, high) = strategies(1_000_000);
    let (_keep_low, low) = strategies(1);
    let (high, low) = (
        Registry::load(&high).expect("loads"),
        Registry::load(&low).expect("loads"),
    );
    for it in &s.interrupts {
        let at = RestorePoint::build(s.clone(), &it.point).expect("state");
        let a = build(&high, "A", &at);
        let c = build(&high, "C", &at);
        let below = build(&high, "Ct", &at);
        assert_eq!(below.messages, a.messages, "{}: A's messages", it.point);
        assert_eq!(below.tokens_at_restore, a.tokens_at_restore);
        assert_eq!(below.strategy, "Ct");
        assert_eq!(below.compacted, Some(false));
        assert_eq!(a.compacted, None, "A has no trigger");
        let above = build(&low, "Ct", &at);
        assert_eq!(above.text, c.text, "{}: C's own text", it.point);
        assert_eq!(above.compacted, Some(true));
        assert_eq!(c.compacted, None, "C without a trigger says nothing");
    }
}

#[test]
fn a_trigger_on_a_transcript_or_of_zero_is_refused_by_name() {
    for (file, text, want) in [
        (
            "A.toml",
            "id = \"A\"\nkind = \"transcript\"\ntrigger_tokens = 5000\n",
            "nothing to compact",
        ),
        (
            "C.toml",
            "id = \"C\"\nkind = \"checkpoint\"\ntrigger_tokens = 0\n",
            "above 0",
        ),
    ] {
        let (_keep, dir) = strategies(10);
        std::fs::write(dir.join(file), text).expect("write");
        let err = Registry::load(&dir).err().expect("refused").to_string();
        assert!(
            err.contains(file) && err.contains("trigger_tokens") && err.contains(want),
            "{err}"
        );
    }
}

#[test]
fn a_run_records_compacted_and_the_report_counts_handoffs_longer_than_the_history() {
    // The support case at base: its histories are a few thousand tokens, C's checkpoint is
    // longer than several of them, and a trigger of 100,000 hands every one over uncompacted.
    let (_keep, dir) = strategies(100_000);
    let tmp = tempfile::tempdir().expect("tmp");
    let out = tmp.path().join("run");
    let o = common::cli()
        .args([
            "run",
            "--scenarios",
            "support-ticket-timeout",
            "--strategies",
            "A,C,Ct",
            "--models",
            "sim:careful",
            "--scale",
            "base",
            "--strategy-dir",
            dir.to_str().expect("utf-8"),
            "--out",
            out.to_str().expect("utf-8"),
        ])
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let records =
        compaction_eval::record::read_records(&out.join("results.jsonl")).expect("records");
    let of = |s: &'static str| records.iter().filter(move |r| r.strategy == s);
    assert!(of("Ct").all(|r| r.metrics.compacted == Some(false)));
    assert!(
        of("C")
            .chain(of("A"))
            .all(|r| r.metrics.compacted.is_none())
    );
    let longer = of("C")
        .filter(|r| r.metrics.restore_tokens > r.metrics.history_tokens)
        .count();
    assert!(longer > 0, "C is longer than the history somewhere at base");
    assert!(
        of("Ct").all(|r| r.metrics.restore_tokens <= r.metrics.history_tokens + 64),
        "uncompacted: the transcript's size"
    );
    let md = std::fs::read_to_string(out.join("report.md")).expect("report");
    let n = of("C").count();
    let row = md
        .lines()
        .find(|l| l.starts_with("| C | sim:careful |") && l.contains(&format!("| {longer}/{n} |")))
        .unwrap_or_else(|| panic!("C's row with {longer}/{n}:\n{md}"));
    assert!(row.ends_with("| — |"), "{row}");
    let ct = md
        .lines()
        .find(|l| l.starts_with("| Ct | sim:careful |") && l.ends_with(&format!("| {n}/{n} |")));
    assert!(ct.is_some(), "Ct's row: every cell not compacted\n{md}");
}
