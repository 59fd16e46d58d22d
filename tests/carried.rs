//! Retention and forgetting precision (`compaction_eval::carried`), on a shipped scenario at the
//! 40k scale: a handoff that pastes the whole distraction volume beside C's checkpoint keeps C's
//! retention and loses precision; the transcript carries the volume's identifiers, C few; `none`
//! retains less than the transcript; and every record of a run carries the figures.

use compaction_eval::carried::measure;
use compaction_eval::handoff::Handoff;
use compaction_eval::runner::{Prepared, RunConfig};
use compaction_eval::scenario::volume::Scale;

const SCENARIO: &str = "support-ticket-timeout";

fn plan(out: &std::path::Path) -> compaction_eval::runner::Plan {
    let cfg = RunConfig {
        scenarios: Some(vec![SCENARIO.into()]),
        strategies: vec!["A".into(), "C".into(), "none".into()],
        models: vec!["sim:careful".into()],
        scales: vec![Scale::Tokens(40_000)],
        out: out.to_path_buf(),
        ..RunConfig::default()
    };
    compaction_eval::runner::plan(&cfg).expect("plan")
}

fn handoff(plan: &compaction_eval::runner::Plan, point: &str, strategy: &str) -> Handoff {
    plan.handoffs
        .iter()
        .find(|(k, _)| &*k.point == point && &*k.strategy == strategy)
        .and_then(|(_, p)| match p {
            Prepared::Ready { handoff, .. } => Some((**handoff).clone()),
            Prepared::Failed(_) => None,
        })
        .expect("a built handoff")
}

#[test]
fn pasting_the_volume_beside_a_checkpoint_keeps_retention_and_loses_precision() {
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = plan(&tmp.path().join("run"));
    let mut checked = 0;
    for (key, at) in &plan.points {
        let point: &str = &key.point;
        let c = handoff(&plan, point, "C");
        let a = handoff(&plan, point, "A");
        let none = handoff(&plan, point, "none");
        // C's text, and after it every volume event the source saw, pasted whole.
        let volume: Vec<String> = at
            .state
            .events
            .iter()
            .filter(|e| at.scenario.events.iter().any(|x| x.id == e.id && x.volume))
            .map(|e| e.text.clone())
            .collect();
        assert!(!volume.is_empty(), "{point}: the 40k scale adds volume");
        let mut pasted = c.clone();
        pasted.text = format!("{}\n\n{}", c.text, volume.join("\n"));
        let (mc, mp) = (measure(at, &c), measure(at, &pasted));
        assert_eq!(mc.retention, mp.retention, "{point}: the same needed items");
        assert!(
            mp.inert > 0 && mp.inert_carried == mp.inert,
            "{point}: {mp:?}"
        );
        assert!(
            mp.forgetting_precision < mc.forgetting_precision,
            "{point}: pasted {mp:?} against C {mc:?}"
        );
        // The transcript keeps the volume's identifiers that fit its window; C few of them.
        let ma = measure(at, &a);
        assert!(
            ma.inert_carried > mc.inert_carried,
            "{point}: A {ma:?} C {mc:?}"
        );
        assert!(ma.forgetting_precision < mc.forgetting_precision);
        // Nothing carried of the run is retained less than the transcript.
        let mn = measure(at, &none);
        assert!(mn.retention < ma.retention, "{point}: none {mn:?} A {ma:?}");
        assert_eq!(mn.inert_carried, 0);
        checked += 1;
    }
    assert!(checked >= 3, "{checked} points");
}

#[test]
fn every_scenario_record_carries_the_figures_and_the_summary_has_the_columns() {
    let tmp = tempfile::tempdir().expect("tmp");
    let out = tmp.path().join("run");
    let o = assert_cmd::Command::cargo_bin("compaction-eval")
        .expect("binary")
        .args([
            "run",
            "--scenarios",
            SCENARIO,
            "--strategies",
            "A,C,none",
            "--models",
            "sim:careful",
            "--out",
            out.to_str().expect("utf-8"),
        ])
        .output()
        .expect("runs");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let records =
        compaction_eval::record::read_records(&out.join("results.jsonl")).expect("records");
    assert!(!records.is_empty());
    for r in &records {
        let c = r
            .metrics
            .carried
            .expect("every scenario cell with a handoff");
        assert!(c.needed_carried <= c.needed && c.inert_carried <= c.inert);
    }
    let csv = std::fs::read_to_string(out.join("summary.csv")).expect("summary.csv");
    let header = csv.lines().next().expect("header");
    assert!(
        header.contains("retention_median") && header.contains("forgetting_precision_median"),
        "{header}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(
        md.contains("## What the handoffs carry"),
        "the report's section"
    );
}
