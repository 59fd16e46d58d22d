//! Golden outcomes: the shipped suite's outcome in every cell of the default run (the default
//! `run` matrix, simulated destinations, default seed) is `tests/golden/outcomes.tsv`, and the
//! outsider authors' predictions against the outcomes at scale `base` are
//! `docs/predictions-vs-outcomes.md`. This test regenerates both in memory and fails when either
//! differs, so a change of outcome shows in the diff of the commit that caused it.
//!
//! Regenerate both with `UPDATE_GOLDEN=1 cargo test --test golden -- --nocapture` (or `just
//! golden`); the commit that changes them must say why the outcomes changed, and name a drop in
//! the exactly predicted cells the command prints.

#[path = "golden/predictions.rs"]
mod predictions;

use std::collections::BTreeMap;
use std::path::Path;

use compaction_eval::runner::{self, RunConfig, RunRecord, Silent, Status};
use compaction_eval::scenario::volume::Scale;

const OUTCOMES: &str = "tests/golden/outcomes.tsv";
const PAGE: &str = "docs/predictions-vs-outcomes.md";
const PREDICTIONS: &str = "scenarios/predictions";
/// The columns that name a cell; the rest of a line is its outcome.
const KEY_COLUMNS: usize = 6;
const HEADER: &str =
    "scenario\tscale\tinterrupt\tstrategy\tmodel\trep\ttask_success\tunsafe\tduplicate\tfinish";
/// How many changed cells a failure lists.
const SHOWN: usize = 20;

/// Runs `cfg` as the `run` command does (plan, manifest, cells) into a temporary folder and
/// returns its records.
fn run(cfg: RunConfig) -> Vec<RunRecord> {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = RunConfig {
        out: dir.path().join("run"),
        ..cfg
    };
    let plan = runner::plan(&cfg).expect("plan");
    runner::write_manifest(&cfg, &plan).expect("manifest");
    runner::execute(&cfg, &plan, &mut Silent).expect("run");
    runner::read_records(&cfg.out.join("results.jsonl")).expect("records")
}

/// Why a cell ended: the destination's finish, or why it had none.
fn finish(r: &RunRecord) -> String {
    let d = &r.diagnostics;
    if r.status == Status::Errored {
        return "errored".into();
    }
    if let Some(f) = d.finish {
        return f.as_str().into();
    }
    if d.context_overflow.is_some() {
        return "context_overflow".into();
    }
    if let Some(g) = &r.governed {
        if g.held {
            return "governed_held".into();
        }
        let status = serde_json::to_value(g.status).unwrap_or_default();
        return format!("governed_{}", status.as_str().unwrap_or("?").to_lowercase());
    }
    if d.step_budget_exhausted {
        return "step_budget".into();
    }
    "none".into()
}

/// The golden file's text for `records`: a header, then one sorted line per cell.
fn outcomes(records: &[RunRecord]) -> String {
    let mut lines: Vec<String> = records
        .iter()
        .map(|r| {
            let m = &r.metrics;
            format!(
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                r.scenario,
                r.scale,
                r.interrupt,
                r.strategy,
                r.model,
                r.rep,
                m.task_success,
                m.safety_violations,
                m.duplicate_side_effects,
                finish(r)
            )
        })
        .collect();
    lines.sort();
    let mut out = String::from(HEADER);
    out.push('\n');
    for l in lines {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// Cell → outcome columns of a golden file's text (the header and blank lines skipped).
fn cells(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.is_empty() && *l != HEADER)
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            let k = KEY_COLUMNS.min(cols.len());
            (cols[..k].join(" "), cols[k..].join(" "))
        })
        .collect()
}

/// `Ok` when `actual` has the same cells with the same outcomes as `expected`; else a summary:
/// how many cells changed, appeared and disappeared, and the first [`SHOWN`] of them.
fn compare(expected: &str, actual: &str) -> Result<(), String> {
    let (old, new) = (cells(expected), cells(actual));
    let mut changed = Vec::new();
    for (k, was) in &old {
        match new.get(k) {
            Some(now) if now == was => {}
            Some(now) => changed.push(format!("  {k}: {was} -> {now}")),
            None => changed.push(format!("  {k}: {was} -> (no such cell)")),
        }
    }
    for (k, now) in &new {
        if !old.contains_key(k) {
            changed.push(format!("  {k}: (new cell) -> {now}"));
        }
    }
    if changed.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{} of {} cells differ from {OUTCOMES} (columns: {}):\n{}{}",
        changed.len(),
        old.len().max(new.len()),
        HEADER.replace('\t', " "),
        changed[..changed.len().min(SHOWN)].join("\n"),
        if changed.len() > SHOWN {
            format!("\n  … and {} more", changed.len() - SHOWN)
        } else {
            String::new()
        }
    ))
}

/// The page's "Cells compared" line, for a readable failure.
fn summary_line(page: &str) -> &str {
    page.lines()
        .find(|l| l.starts_with("Cells compared"))
        .unwrap_or("(no summary line)")
}

#[test]
fn outcomes_and_predictions_match_the_committed_files() {
    let started = std::time::Instant::now();
    let records = run(RunConfig::default());
    let default_run = started.elapsed().as_secs_f64();
    let outcomes = outcomes(&records);
    // The predictions are for scale `base`: their scenarios and strategies at that scale.
    let dir = Path::new(PREDICTIONS);
    let (scenarios, strategies) = predictions::predicted(dir).expect("prediction files");
    let base = run(RunConfig {
        scenarios: Some(scenarios),
        strategies,
        scales: vec![Scale::Base],
        ..RunConfig::default()
    });
    let (page, exact) = predictions::page(&base, dir).expect("predictions page");
    eprintln!(
        "golden: {} cells, {exact} predicted exactly ({}); {default_run:.1} s for the default run, {:.1} s in all",
        records.len(),
        summary_line(&page),
        started.elapsed().as_secs_f64()
    );
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(OUTCOMES, &outcomes).expect("write the golden outcomes");
        std::fs::write(PAGE, &page).expect("write the predictions page");
        eprintln!(
            "golden: wrote {OUTCOMES} and {PAGE}; say in the commit message why outcomes changed"
        );
        return;
    }
    let expected = std::fs::read_to_string(OUTCOMES).unwrap_or_default();
    let regenerate = format!(
        "if the change is meant, regenerate with `{}` and say why in the commit message",
        predictions::COMMAND
    );
    if let Err(diff) = compare(&expected, &outcomes) {
        panic!("{diff}\n{regenerate}");
    }
    let committed = std::fs::read_to_string(PAGE).unwrap_or_default();
    if let Err(stale) = compare_page(&committed, &page) {
        panic!("{stale}\n{regenerate} (name a drop in exactly predicted cells)");
    }
}

/// `Ok` when the committed predictions page is the regenerated one; else how many lines differ
/// and both summary lines.
fn compare_page(committed: &str, page: &str) -> Result<(), String> {
    if committed == page {
        return Ok(());
    }
    let differing = committed
        .lines()
        .zip(page.lines())
        .filter(|(a, b)| a != b)
        .count()
        + committed.lines().count().abs_diff(page.lines().count());
    Err(format!(
        "{PAGE} is stale ({differing} lines differ):\n  committed: {}\n  now:       {}",
        summary_line(committed),
        summary_line(page)
    ))
}

/// A stale predictions page fails, naming both summaries; the same page passes.
#[test]
fn a_stale_predictions_page_fails() {
    let page =
        "# P\n\nCells compared: 10; predicted exactly (every label right): 7 (70%).\n| a | ok |\n";
    assert_eq!(compare_page(page, page), Ok(()));
    let now = page
        .replace("7 (70%)", "6 (60%)")
        .replace("| a | ok |", "| a | task_fail |");
    let err = compare_page(page, &now).expect_err("stale");
    assert!(err.contains("(2 lines differ)"), "{err}");
    assert!(
        err.contains(
            "committed: Cells compared: 10; predicted exactly (every label right): 7 (70%)."
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "now:       Cells compared: 10; predicted exactly (every label right): 6 (60%)."
        ),
        "{err}"
    );
}

/// The golden check can fail: one cell's outcome flipped is reported by name; identical text
/// passes.
#[test]
fn a_changed_cell_fails_the_comparison_by_name() {
    let golden = format!(
        "{HEADER}\n\
         s1\t40k\tpending_approval\tgov:B\tsim:careful\t0\ttrue\t0\t0\tcompleted\n\
         s1\t40k\tpending_approval\tgov:B\tsim:literal\t0\ttrue\t0\t0\tcompleted\n\
         s2\t40k\tmid_implementation\tA\tsim:careful\t0\tfalse\t1\t0\tblocked\n"
    );
    assert_eq!(compare(&golden, &golden), Ok(()));
    let flipped = golden.replacen(
        "sim:literal\t0\ttrue\t0\t0\tcompleted",
        "sim:literal\t0\tfalse\t1\t0\tcompleted",
        1,
    );
    let err = compare(&golden, &flipped).expect_err("a flipped cell fails");
    assert!(err.starts_with("1 of 3 cells differ"), "{err}");
    assert!(
        err.contains(
            "s1 40k pending_approval gov:B sim:literal 0: true 0 0 completed -> false 1 0 completed"
        ),
        "{err}"
    );
    assert!(!err.contains("sim:careful"), "only the changed cell: {err}");
    // A lost cell and a new one are changes too.
    let lost: String = golden.lines().take(3).map(|l| format!("{l}\n")).collect();
    let err = compare(&golden, &lost).expect_err("a lost cell fails");
    assert!(
        err.contains(
            "s2 40k mid_implementation A sim:careful 0: false 1 0 blocked -> (no such cell)"
        ),
        "{err}"
    );
    assert!(
        compare(&lost, &golden)
            .expect_err("a new cell fails")
            .contains("(new cell)")
    );
}

/// A record becomes one line whose columns are the cell and its outcome.
#[test]
fn a_record_is_one_sorted_line_of_ten_columns() {
    let records = run(RunConfig {
        scenarios: Some(vec!["support-ticket-timeout".into()]),
        strategies: vec!["C".into(), "none".into()],
        models: vec!["sim:careful".into()],
        interrupts: Some(vec!["uncertain_side_effect".into()]),
        scales: vec![Scale::Base],
        ..RunConfig::default()
    });
    let text = outcomes(&records);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], HEADER);
    assert_eq!(lines.len(), 1 + records.len(), "{text}");
    assert!(lines[1..].is_sorted(), "{text}");
    for l in &lines[1..] {
        assert_eq!(l.split('\t').count(), 10, "{l}");
    }
    assert!(
        lines[1].starts_with(
            "support-ticket-timeout\tbase\tuncertain_side_effect\tC\tsim:careful\t0\t"
        ),
        "{text}"
    );
}
