//! Paired comparisons count scenarios, not copies (issues 12 §4 and 26): identical repetitions
//! of a cell add no evidence, so going from 1 to 3 identical repetitions must leave every
//! difference and its scenario-clustered interval unchanged, in the report's analysis and in the
//! gate's comparison with a baseline alike.

use compaction_eval::record::{Metrics, RunRecord, Status};
use compaction_eval::report::analysis::{ReportOptions, analyse};

fn record(scenario: &str, interrupt: &str, strategy: &str, rep: u32, quality: f64) -> RunRecord {
    RunRecord {
        source: compaction_eval::record::Source::Scenario,
        transcript: None,
        governed: None,
        conversation: None,
        scenario: scenario.into(),
        scale: "base".into(),
        interrupt: interrupt.into(),
        strategy: strategy.into(),
        model: "sim".into(),
        rep,
        seed: 1,
        status: Status::Ok,
        error: None,
        error_class: None,
        metrics: Metrics {
            task_success: quality >= 0.5,
            omitted_context: 0,
            repeated_work: 0,
            duplicate_side_effects: 0,
            safety_violations: 0,
            recovery_quality: quality,
            restore_tokens: 100,
            total_tokens: 1000,
            first_action_ms: 1.0,
            completion_ms: 2.0,
            compaction_tokens: 0,
            history_tokens: 0,
            compression_ratio: 0.0,
            carried: None,
            compacted: None,
            chain: None,
            probes: Default::default(),
        },
        diagnostics: Default::default(),
    }
}

/// 12 scenarios × 2 interrupt points; strategy X is better than C on most units by varying
/// amounts (dyadic values, so means are exact). Every cell repeated `reps` times with identical
/// metrics.
fn records(reps: u32) -> Vec<RunRecord> {
    let mut out = Vec::new();
    for s in 0..12 {
        for (p, point) in ["early", "late"].into_iter().enumerate() {
            for rep in 0..reps {
                let scenario = format!("s{s:02}");
                let base = 0.25 + s as f64 / 64.0;
                let delta = if s % 5 == 4 {
                    -0.0625
                } else {
                    (s + p + 1) as f64 / 32.0
                };
                out.push(record(&scenario, point, "C", rep, base));
                out.push(record(&scenario, point, "X", rep, base + delta));
            }
        }
    }
    out
}

/// The paired row of X's recovery quality: its interval and paired cells.
fn quality_row(records: &[RunRecord]) -> (f64, (f64, f64), usize, usize) {
    let a = analyse(records, &ReportOptions::default());
    let row = a
        .paired
        .iter()
        .find(|r| r.strategy == "X" && r.metric == "recovery_quality")
        .expect("a paired row");
    (
        row.mean_diff,
        row.interval.expect("12 scenarios give an interval"),
        row.clusters,
        row.cells,
    )
}

fn close(a: (f64, f64), b: (f64, f64)) -> bool {
    (a.0 - b.0).abs() < 1e-12 && (a.1 - b.1).abs() < 1e-12
}

#[test]
fn identical_repetitions_do_not_change_the_report_interval() {
    let (d1, i1, k1, c1) = quality_row(&records(1));
    let (d3, i3, k3, c3) = quality_row(&records(3));
    assert!(i1.0 > 0.0, "X is better than C: {i1:?}");
    assert!((d1 - d3).abs() < 1e-12 && close(i1, i3), "{i1:?} vs {i3:?}");
    assert_eq!((k1, k3), (12, 12));
    assert_eq!((c1, c3), (24, 72));
}

#[test]
fn identical_repetitions_do_not_change_the_gate_interval() {
    let metrics =
        vec![compaction_eval::results::outcome::metric("recovery_quality").expect("metric")];
    let split = |rs: Vec<RunRecord>| -> (Vec<RunRecord>, Vec<RunRecord>) {
        // Baseline: strategy C's numbers relabelled as X; candidate: X.
        let base = rs
            .iter()
            .filter(|r| r.strategy == "C")
            .map(|r| RunRecord {
                strategy: "X".into(),
                ..r.clone()
            })
            .collect();
        let cand = rs.into_iter().filter(|r| r.strategy == "X").collect();
        (base, cand)
    };
    let (b1, c1) = split(records(1));
    let (b3, c3) = split(records(3));
    let g1 = compaction_eval::results::baseline::paired_comparisons(&b1, &c1, &metrics);
    let g3 = compaction_eval::results::baseline::paired_comparisons(&b3, &c3, &metrics);
    assert_eq!(g1.len(), 1);
    assert!(g1[0].diff.estimate > 0.0);
    assert!((g1[0].diff.estimate - g3[0].diff.estimate).abs() < 1e-12);
    assert!((g1[0].diff.se - g3[0].diff.se).abs() < 1e-12);
    assert_eq!(g1[0].diff.clusters, g3[0].diff.clusters);
}

#[test]
fn the_analysis_states_the_unit_and_warns_on_identical_copies() {
    let a = analyse(&records(3), &ReportOptions::default());
    let u = a.paired_units.expect("paired units");
    assert_eq!(
        (u.distinct_units, u.clusters, u.max_repetitions),
        (24, 12, 3)
    );
    assert!(u.identical);
    assert_eq!(
        u.warning.as_deref(),
        Some("repetitions are identical copies; n counts units, not cells")
    );
    let row = &a.paired[0];
    assert_eq!((row.cells, row.clusters), (72, 12));

    // One repetition: nothing to warn about.
    let a = analyse(&records(1), &ReportOptions::default());
    assert!(!a.paired_units.expect("units").identical);

    // Repetitions that differ (a seeded destination) only move the cells' mean: the mean of
    // reps {q − 1/8, q + 1/8} is q, so the difference equals the 1-repetition one.
    let mut differing = records(2);
    for r in differing.iter_mut().filter(|r| r.strategy == "X") {
        r.metrics.recovery_quality += if r.rep == 0 { -0.125 } else { 0.125 };
    }
    let a2 = analyse(&differing, &ReportOptions::default());
    assert!(!a2.paired_units.as_ref().expect("units").identical);
    let (d1, i1, _, _) = quality_row(&records(1));
    let (d2, i2, k2, _) = quality_row(&differing);
    assert!((d1 - d2).abs() < 1e-12 && close(i1, i2), "{i1:?} vs {i2:?}");
    assert_eq!(k2, 12);
}
