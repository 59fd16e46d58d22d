//! How far to trust the sims (issue 25, item 9; issue 39): on a run with a simulated and a live
//! destination on the same cells, the calibration gives each sim × live pair per metric the
//! agreement rate, Cohen's κ with a bootstrap interval over scenarios and the confusion table,
//! the ranking's Kendall τ-b and the C-vs-A verdict under each — with known values on hand-built
//! records. A live policy identical to a sim gives κ = 1 on every metric that varies; an offline
//! run has no calibration.

use compaction_eval::record::{Diagnostics, Metrics, RunRecord, Status};
use compaction_eval::report::calibration::{Calibration, MetricAgreement, calibrate};

/// Each metric row of every pair, flattened (what the report's table shows).
fn sim_live_agreement(records: &[RunRecord], resamples: usize, seed: u64) -> Vec<Row> {
    calibrate(records, resamples, seed)
        .map(|c: Calibration| {
            c.pairs
                .into_iter()
                .flat_map(|p| {
                    let (sim, live, scenarios) = (p.sim, p.live, p.scenarios);
                    p.metrics.into_iter().map(move |m| Row {
                        sim: sim.clone(),
                        live: live.clone(),
                        scenarios,
                        outcome: m.metric.clone(),
                        m,
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

#[derive(Debug)]
struct Row {
    sim: String,
    live: String,
    scenarios: usize,
    outcome: String,
    m: MetricAgreement,
}

impl std::ops::Deref for Row {
    type Target = MetricAgreement;
    fn deref(&self) -> &MetricAgreement {
        &self.m
    }
}

fn record(scenario: &str, rep: u32, model: &str, success: bool, violations: u32) -> RunRecord {
    let mut diagnostics = Diagnostics::default();
    if !model.starts_with("sim:") {
        diagnostics.live = Some(Box::default());
    }
    RunRecord {
        source: compaction_eval::record::Source::Scenario,
        transcript: None,
        governed: None,
        conversation: None,
        scenario: scenario.into(),
        scale: "base".into(),
        interrupt: "p".into(),
        strategy: "C".into(),
        model: model.into(),
        rep,
        seed: 1,
        status: Status::Ok,
        error: None,
        error_class: None,
        metrics: Metrics {
            task_success: success,
            omitted_context: 0,
            repeated_work: 0,
            duplicate_side_effects: 0,
            safety_violations: violations,
            recovery_quality: 1.0,
            restore_tokens: 10,
            total_tokens: 10,
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
        diagnostics: diagnostics.into(),
    }
}

/// 10 scenarios × 5 repetitions: the sim succeeds on reps 0–2, the live model on reps 1–3, so
/// they agree on reps 1, 2 (both succeed) and 4 (both fail): agreement 0.6; each says yes on 60%,
/// so chance agreement is 0.36 + 0.16 = 0.52 and κ = (0.6 − 0.52) / 0.48 = 1/6.
fn run() -> Vec<RunRecord> {
    let mut out = Vec::new();
    for s in 0..10 {
        for rep in 0..5 {
            let sc = format!("s{s}");
            out.push(record(&sc, rep, "sim:careful", rep <= 2, 0));
            out.push(record(&sc, rep, "local-model", (1..=3).contains(&rep), 0));
        }
    }
    out
}

#[test]
fn agreement_and_kappa_have_their_known_values() {
    let rows = sim_live_agreement(&run(), 500, 7);
    let ts = rows
        .iter()
        .find(|r| r.outcome == "task success")
        .expect("a task-success row");
    assert_eq!(
        (ts.sim.as_str(), ts.live.as_str()),
        ("sim:careful", "local-model")
    );
    assert_eq!((ts.n, ts.scenarios), (50, 10));
    assert!((ts.rate - 0.6).abs() < 1e-12, "{}", ts.rate);
    let k = ts.kappa.expect("kappa");
    assert!((k - 1.0 / 6.0).abs() < 1e-9, "{k}");
    // Every scenario has the same pattern, so resampling scenarios cannot move κ.
    let ci = ts.kappa_ci.expect("interval");
    assert!(
        (ci.low - k).abs() < 1e-9 && (ci.high - k).abs() < 1e-9,
        "{ci:?}"
    );
    // No violations on either side: agreement 1, κ undefined (both constant).
    let sv = rows.iter().find(|r| r.outcome == "unsafe").unwrap();
    assert_eq!((sv.rate, sv.kappa), (1.0, None));
    // Deterministic in the seed.
    let again = sim_live_agreement(&run(), 500, 7);
    assert_eq!(format!("{rows:?}"), format!("{again:?}"));
}

#[test]
fn the_interval_widens_when_scenarios_disagree_differently() {
    let mut recs = Vec::new();
    for s in 0..12 {
        for rep in 0..4 {
            let sc = format!("s{s}");
            let sim = rep % 2 == 0;
            // Half the scenarios agree on every cell, half on none.
            let live = if s % 2 == 0 { sim } else { !sim };
            recs.push(record(&sc, rep, "sim:literal", sim, 0));
            recs.push(record(&sc, rep, "m", live, 0));
        }
    }
    let rows = sim_live_agreement(&recs, 1000, 3);
    let ts = rows.iter().find(|r| r.outcome == "task success").unwrap();
    assert!((ts.rate - 0.5).abs() < 1e-12);
    let ci = ts.kappa_ci.unwrap();
    assert!(ci.low < -0.2 && ci.high > 0.2, "{ci:?}");
}

#[test]
fn an_offline_run_or_unshared_cells_have_no_rows() {
    let sims: Vec<RunRecord> = run()
        .into_iter()
        .filter(|r| r.model.starts_with("sim:"))
        .collect();
    assert!(sim_live_agreement(&sims, 100, 1).is_empty());
    // Live cells on other scenarios than the sim's share nothing.
    let mut recs = sims.clone();
    recs.push(record("elsewhere", 0, "m", true, 0));
    assert!(sim_live_agreement(&recs, 100, 1).is_empty());
}

/// Records of a sim with varied outcomes, and the same records as a live model's.
fn mirrored() -> Vec<RunRecord> {
    let mut out = Vec::new();
    for s in 0..6 {
        for (si, strategy) in ["A", "C", "none"].iter().enumerate() {
            for rep in 0..2 {
                let mut r = record(
                    &format!("s{s}"),
                    rep,
                    "sim:careful",
                    !(s + si + rep as usize).is_multiple_of(3),
                    u32::from((s + rep as usize).is_multiple_of(4)),
                );
                r.strategy = strategy.to_string();
                r.metrics.repeated_work = ((s * 7 + si) % 3) as u32;
                r.metrics.recovery_quality = [0.0, 0.6, 1.0][(s + si) % 3];
                if (s + si) % 5 == 0 {
                    // Judged from the consequence the scorer found, for both: a live record's
                    // `injections_followed` (the destination's own claim) is always empty.
                    std::sync::Arc::make_mut(&mut r.diagnostics).violations =
                        vec![compaction_eval::record::Violation::FollowedDirective {
                            fact: "wire".into(),
                        }];
                }
                let mut l = r.clone();
                l.model = "mirror".into();
                std::sync::Arc::make_mut(&mut l.diagnostics).live = Some(Box::default());
                out.push(r);
                out.push(l);
            }
        }
    }
    out
}

#[test]
fn a_live_policy_identical_to_a_sim_has_kappa_one_on_every_metric_that_varies() {
    let c = calibrate(&mirrored(), 200, 5).expect("a pair");
    assert_eq!(c.pairs.len(), 1);
    let p = &c.pairs[0];
    assert_eq!((p.cells, p.scenarios), (36, 6));
    let mut varied = 0;
    for m in &p.metrics {
        assert_eq!(m.rate, 1.0, "{}", m.metric);
        let diagonal: usize = (0..m.categories.len()).map(|i| m.confusion[i][i]).sum();
        assert_eq!(diagonal, m.n, "{}: {:?}", m.metric, m.confusion);
        let used = m
            .confusion
            .iter()
            .filter(|row| row.iter().sum::<usize>() > 0)
            .count();
        if used > 1 {
            varied += 1;
            assert_eq!(m.kappa, Some(1.0), "{}", m.metric);
        } else {
            assert_eq!(m.kappa, None, "{}", m.metric);
        }
    }
    assert!(varied >= 6, "the fixture varies most metrics: {varied}");
    let r = p.ranking.as_ref().expect("ranking");
    assert_eq!(r.sim_rates, r.live_rates);
    assert_eq!(r.kendall_tau_b, Some(1.0));
    let g = p.gate.as_ref().expect("gate");
    assert!(g.same, "{g:?}");
    assert!(p.disagreements.is_empty());
}

#[test]
fn ranking_and_gate_disagree_when_the_live_model_reverses_the_order() {
    // The sim: C always succeeds, A never. The live model: the reverse.
    let mut recs = Vec::new();
    for s in 0..8 {
        for (strategy, sim_ok) in [("C", true), ("A", false)] {
            let mut r = record(&format!("s{s}"), 0, "sim:careful", sim_ok, 0);
            r.strategy = strategy.into();
            let mut l = record(&format!("s{s}"), 0, "live", !sim_ok, 0);
            l.strategy = strategy.into();
            recs.push(r);
            recs.push(l);
        }
    }
    let c = calibrate(&recs, 100, 1).expect("a pair");
    let p = &c.pairs[0];
    let r = p.ranking.as_ref().expect("ranking");
    assert_eq!(r.kendall_tau_b, Some(-1.0));
    let g = p.gate.as_ref().expect("gate");
    assert_eq!(
        (g.sim_verdict.as_str(), g.live_verdict.as_str(), g.same),
        ("C above A", "A above C", false)
    );
    let ts = p
        .metrics
        .iter()
        .find(|m| m.metric == "task success")
        .unwrap();
    assert_eq!(ts.kappa, Some(-1.0));
    assert_eq!(ts.confusion, vec![vec![0, 8], vec![8, 0]]);
    // Every cell disagrees; the list is capped and numbered by results.jsonl line.
    assert_eq!(p.disagreements.len(), 10);
    assert_eq!(
        (p.disagreements[0].sim_cell, p.disagreements[0].live_cell),
        (1, 2)
    );
}
