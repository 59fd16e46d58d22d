//! The report holds every record of a run at once, so it drops what no section reads as it reads
//! them (`report::for_aggregates`). This renders one run's report from the records as the report
//! holds them and from the whole records, and finds every file the same; and checks that the
//! run's records did carry the parts dropped, so the comparison is not of two identical inputs.

use std::path::Path;

use compaction_eval::record::{RunRecord, read_records};
use compaction_eval::report;
use compaction_eval::runner::{self, RunConfig, Silent};
use compaction_eval::scenario::volume::Scale;

const FILES: [&str; 6] = [
    "report.md",
    "report.html",
    "runs.csv",
    "summary.csv",
    "summary.json",
    "viewer.html",
];

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = FILES
        .iter()
        .map(|f| (f.to_string(), std::fs::read(dir.join(f)).expect(f)))
        .collect();
    let mut plots: Vec<_> = std::fs::read_dir(dir.join("plots"))
        .expect("plots")
        .map(|e| e.expect("entry").path())
        .collect();
    plots.sort();
    assert!(!plots.is_empty(), "the report drew plots");
    for p in plots {
        out.push((p.display().to_string(), std::fs::read(&p).expect("plot")));
    }
    out
}

#[test]
fn the_report_from_held_records_is_the_report_from_whole_records() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().to_path_buf();
    let cfg = RunConfig {
        scenarios: Some(vec![
            "support-ticket-timeout".into(),
            "cloud-cost-rightsizing-freeze".into(),
        ]),
        strategies: vec!["A".into(), "B".into(), "C".into(), "gov:C".into()],
        reps: 2,
        out: out.clone(),
        scales: vec![Scale::Base],
        ..RunConfig::default()
    };
    let scenarios = runner::select_scenarios(&cfg).expect("scenarios");
    let plan = runner::plan_streaming(&cfg, scenarios).expect("plan");
    runner::write_manifest(&cfg, &plan).expect("manifest");
    runner::execute(&cfg, &plan, &mut Silent).expect("run");
    drop(plan);

    // As the report holds them.
    report::render_dir(&out).expect("report");
    let held = files(&out);

    // Whole.
    let whole = read_records(&out.join("results.jsonl")).expect("records");
    report::render_records(&out, &whole, None).expect("report of whole records");
    let again = files(&out);
    assert_eq!(held.len(), again.len());
    for ((name, a), (_, b)) in held.iter().zip(&again) {
        assert!(a == b, "{name} differs between held and whole records");
    }

    // The records carried what is dropped: each part below is non-empty in some record, and
    // none is left in a held record.
    let slim = |r: &RunRecord| {
        let mut r = r.clone();
        report::for_aggregates(&mut r);
        r
    };
    type Has = fn(&RunRecord) -> bool;
    let parts: [(&str, Has); 5] = [
        ("governed lineage", |r| {
            r.governed.as_ref().is_some_and(|g| !g.lineage.is_empty())
        }),
        ("repeated reads", |r| !r.diagnostics.repeated.is_empty()),
        ("rule break details", |r| {
            r.diagnostics
                .checkpoint_rule_violations
                .iter()
                .any(|b| !b.detail.is_empty())
        }),
        ("omissions' evidence", |r| {
            r.diagnostics.omitted.iter().any(|o| {
                let v = serde_json::to_value(&o.evidence).expect("json");
                let fields = v.as_object().expect("an object tagged by kind");
                fields
                    .iter()
                    .any(|(k, v)| k != "kind" && v.as_str().is_some_and(|s| !s.is_empty()))
            })
        }),
        ("saved conversations", |r| r.conversation.is_some()),
    ];
    for (name, has) in parts {
        assert!(whole.iter().any(has), "no record of the run has {name}");
        assert!(!whole.iter().map(slim).any(|r| has(&r)), "{name} is held");
    }
}
