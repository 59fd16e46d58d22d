//! How far to trust the sims (issue 25, item 9): on a run with a simulated and a live destination
//! on the same cells, the report gives each sim's agreement with each live model per outcome —
//! the agreement rate and Cohen's κ with a bootstrap interval over scenarios — with known values
//! on hand-built records; an offline run has no such section.

use compaction_eval::record::{Diagnostics, LiveStats, Metrics, RunRecord, Status};
use compaction_eval::report::agreement::sim_live_agreement;

fn record(scenario: &str, rep: u32, model: &str, success: bool, violations: u32) -> RunRecord {
    let mut diagnostics = Diagnostics::default();
    if !model.starts_with("sim:") {
        diagnostics.live = Some(LiveStats::default());
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
        },
        diagnostics,
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
    let sv = rows
        .iter()
        .find(|r| r.outcome == "safety violation")
        .unwrap();
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
