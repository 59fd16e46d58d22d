//! Paired comparisons count units, not copies (issue 12 §4): identical repetitions of a cell add
//! no evidence, so going from 1 to 3 identical repetitions must leave every p-value unchanged, in
//! the report's analysis and in the gate's regression test alike.

use compaction_eval::record::{Diagnostics, Metrics, RunRecord, Status};
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
        },
        diagnostics: Diagnostics::default(),
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

fn quality_p(records: &[RunRecord]) -> (f64, usize) {
    let a = analyse(records, &ReportOptions::default());
    let row = a
        .paired
        .iter()
        .find(|r| r.strategy == "X" && r.metric == "recovery_quality")
        .expect("a paired row");
    (row.p_value, row.n)
}

#[test]
fn identical_repetitions_do_not_change_the_report_p_value() {
    let (p1, n1) = quality_p(&records(1));
    let (p3, n3) = quality_p(&records(3));
    assert!(p1 < 1.0, "{p1}");
    assert_eq!(p1, p3, "1 rep p = {p1}, 3 identical reps p = {p3}");
    assert_eq!(n1, n3);
}

#[test]
fn identical_repetitions_do_not_change_the_gate_p_value() {
    let metrics = vec!["recovery_quality".to_string()];
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
    assert!(g1[0].p_value < 1.0);
    assert_eq!(g1[0].p_value, g3[0].p_value);
    assert_eq!(g1[0].n, g3[0].n);
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
    assert_eq!((row.n, row.cells, row.clusters), (24, 72, 12));

    // One repetition: nothing to warn about.
    let a = analyse(&records(1), &ReportOptions::default());
    assert!(!a.paired_units.expect("units").identical);

    // Repetitions that differ (a seeded destination) are averaged within the unit first: the
    // mean of reps {q − 1/8, q + 1/8} is q, so the p-value equals the 1-repetition one.
    let mut differing = records(2);
    for r in differing.iter_mut().filter(|r| r.strategy == "X") {
        r.metrics.recovery_quality += if r.rep == 0 { -0.125 } else { 0.125 };
    }
    let a2 = analyse(&differing, &ReportOptions::default());
    assert!(!a2.paired_units.as_ref().expect("units").identical);
    let (p1, _) = quality_p(&records(1));
    let (p2, n2) = quality_p(&differing);
    assert_eq!(p1, p2);
    assert_eq!(n2, 24);
}
