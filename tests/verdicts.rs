//! Sound verdicts (issue 26) on constructed runs with known effects, built in memory (and
//! written as small run folders for the gate): a 10-point drop the gate fails, a one-cell noise
//! difference that yields a shared rank, a safe-but-useless strategy ranked below a successful
//! one, a significantly higher handoff-caused unsafe rate that orders a strategy below, a
//! too-small suite the gate calls inconclusive, and the gate's power on 32 scenarios.

use std::path::Path;

use compaction_eval::gate::{self, Policy, Verdict};
use compaction_eval::record::{Diagnostics, Metrics, RunRecord, Source, Status};
use compaction_eval::report::summarize;
use compaction_eval::results::baseline::paired_comparisons;
use compaction_eval::results::outcome::metric;
use compaction_eval::stats::{SplitMix64, bonferroni, smallest_detectable_difference};

/// What happened in a cell.
#[derive(Clone, Copy, PartialEq)]
enum Outcome {
    Success,
    Failure,
    /// Task succeeded, but a safety violation: the handoff lacked the fact.
    HandoffUnsafe,
    /// Task succeeded, but a safety violation: the destination missed a fact the handoff showed.
    Distracted,
}

fn record(
    scenario: &str,
    point: &str,
    scale: &str,
    strategy: &str,
    model: &str,
    o: Outcome,
) -> RunRecord {
    let mut diagnostics = Diagnostics::default();
    match o {
        Outcome::HandoffUnsafe => diagnostics.facts_lost_in_handoff = vec!["fact".into()],
        Outcome::Distracted => diagnostics.facts_forgotten = vec!["fact".into()],
        _ => {}
    }
    RunRecord {
        source: Source::Scenario,
        transcript: None,
        governed: None,
        conversation: None,
        scenario: scenario.into(),
        scale: scale.into(),
        interrupt: point.into(),
        strategy: strategy.into(),
        model: model.into(),
        rep: 0,
        seed: 1,
        status: Status::Ok,
        error: None,
        error_class: None,
        metrics: Metrics {
            task_success: o != Outcome::Failure,
            omitted_context: 0,
            repeated_work: 0,
            duplicate_side_effects: 0,
            safety_violations: u32::from(matches!(o, Outcome::HandoffUnsafe | Outcome::Distracted)),
            recovery_quality: 1.0,
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
        diagnostics: diagnostics.into(),
    }
}

const POINTS: [&str; 5] = ["p1", "p2", "p3", "p4", "p5"];
const SCALES: [&str; 3] = ["base", "40k", "120k"];

/// A run of `strategies` × `models` over `scenarios` scenarios × 5 points × 3 scales, each cell's
/// outcome from `f(strategy index, model, scenario index, cell index within the scenario)`.
fn run(
    strategies: &[&str],
    models: &[&str],
    scenarios: usize,
    mut f: impl FnMut(usize, &str, usize, usize) -> Outcome,
) -> Vec<RunRecord> {
    let mut out = Vec::new();
    for (si, s) in strategies.iter().enumerate() {
        for m in models {
            for sc in 0..scenarios {
                for (pi, p) in POINTS.iter().enumerate() {
                    for (ki, k) in SCALES.iter().enumerate() {
                        let o = f(si, m, sc, pi * SCALES.len() + ki);
                        out.push(record(&format!("s{sc:02}"), p, k, s, m, o));
                    }
                }
            }
        }
    }
    out
}

fn write_run(dir: &Path, records: &[RunRecord]) {
    std::fs::create_dir_all(dir).expect("mkdir");
    let text: String = records
        .iter()
        .map(|r| serde_json::to_string(r).expect("json") + "\n")
        .collect();
    std::fs::write(dir.join("results.jsonl"), text).expect("write");
}

/// Ranks of `model` as `strategy → "rank"` labels (`1` or `1–2`).
fn ranks(records: &[RunRecord], model: &str) -> Vec<(String, usize, usize)> {
    summarize(records)
        .ranking
        .into_iter()
        .filter(|r| r.model == model)
        .map(|r| (r.strategy, r.rank, r.rank_high))
        .collect()
}

/// A per-scenario success level between 0.7 and 1.0, so scenarios differ as real ones do.
fn base_success(sc: usize, cell: usize) -> bool {
    let level = 0.7 + 0.3 * ((sc * 7) % 10) as f64 / 9.0;
    (cell as f64 + 0.5) / 15.0 < level
}

#[test]
fn one_cell_of_noise_leaves_two_strategies_sharing_a_rank() {
    // X and Y succeed in the same cells of 8 scenarios, except one cell where Y's destination
    // was distracted into an unsafe act.
    let rs = run(&["X", "Y"], &["sim"], 8, |s, _, sc, cell| {
        if s == 1 && sc == 3 && cell == 0 {
            Outcome::Distracted
        } else if base_success(sc, cell) {
            Outcome::Success
        } else {
            Outcome::Failure
        }
    });
    let r = ranks(&rs, "sim");
    assert_eq!(
        r,
        vec![("X".into(), 1, 2), ("Y".into(), 1, 2)],
        "one random cell decides nothing"
    );
}

#[test]
fn a_safe_but_useless_strategy_ranks_below_a_successful_one() {
    // G blocks everything safely (task success 0.25, never unsafe); C succeeds almost always
    // but its destination was distracted into two unsafe cells.
    let rs = run(&["G", "C"], &["sim"], 8, |s, _, sc, cell| match s {
        0 if cell % 4 == 0 => Outcome::Success,
        0 => Outcome::Failure,
        _ if (sc == 1 || sc == 5) && cell == 2 => Outcome::Distracted,
        _ => Outcome::Success,
    });
    let r = ranks(&rs, "sim");
    assert_eq!(r, vec![("C".into(), 1, 1), ("G".into(), 2, 2)]);
    let s = summarize(&rs);
    let c = s.ranking.iter().find(|x| x.strategy == "C").expect("C");
    assert_eq!((c.handoff_unsafe_cells, c.distraction_cells), (0, 2));
}

#[test]
fn a_significantly_higher_handoff_caused_unsafe_rate_orders_a_strategy_below() {
    // U succeeds at the task everywhere but a third of its cells act unsafely because its
    // handoff lacked a fact (safe success 0.67); V is never unsafe but succeeds in only 0.6.
    let rs = run(&["U", "V"], &["sim"], 8, |s, _, _, cell| match s {
        0 if cell % 3 == 0 => Outcome::HandoffUnsafe,
        0 => Outcome::Success,
        _ if cell < 9 => Outcome::Success,
        _ => Outcome::Failure,
    });
    let s = summarize(&rs);
    let u = s.ranking.iter().find(|x| x.strategy == "U").expect("U");
    let v = s.ranking.iter().find(|x| x.strategy == "V").expect("V");
    assert!(u.safe_success.expect("rate").rate > v.safe_success.expect("rate").rate);
    assert_eq!((v.rank, u.rank), (1, 2), "safety first, when significant");
    assert_eq!(
        u.below,
        vec![("V".to_string(), "handoff-caused unsafe rate")]
    );
}

/// Base: every strategy × model at its scenario's level; the candidate's C loses `drop` of all
/// cells at random (seeded) among the base's successes.
fn base_and_drop(
    scenarios: usize,
    strategies: &[&str],
    drop: f64,
    seed: u64,
) -> (Vec<RunRecord>, Vec<RunRecord>) {
    let models = ["sim:careful", "sim:literal"];
    let outcome = |sc: usize, cell: usize| {
        if base_success(sc, cell) {
            Outcome::Success
        } else {
            Outcome::Failure
        }
    };
    let base = run(strategies, &models, scenarios, |_, _, sc, cell| {
        outcome(sc, cell)
    });
    let level = base.iter().filter(|r| r.metrics.task_success).count() as f64 / base.len() as f64;
    let mut rng = SplitMix64::new(seed);
    let cand = run(strategies, &models, scenarios, |s, _, sc, cell| {
        let o = outcome(sc, cell);
        if strategies[s] == "C" && o == Outcome::Success && rng.next_f64() < drop / level {
            Outcome::Failure
        } else {
            o
        }
    });
    (base, cand)
}

const DEFAULT_MATRIX: [&str; 9] = ["none", "A", "B", "C", "D", "mask", "B+A", "gov:B", "gov:C"];

#[test]
fn a_ten_point_drop_in_safe_success_fails_the_gate_on_32_scenarios() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (base, cand) = base_and_drop(32, &DEFAULT_MATRIX, 0.10, 7);
    let (b, c) = (tmp.path().join("base"), tmp.path().join("cand"));
    write_run(&b, &base);
    write_run(&c, &cand);
    let policy = Policy {
        must_be_safe: vec![],
        continuity_must_pass: vec![],
        ..Policy::default()
    };
    let results = gate::evaluate(&c, Some(&b), &policy).expect("gate");
    let verdict = |name: &str| {
        results
            .iter()
            .find(|r| r.name.starts_with(name))
            .unwrap_or_else(|| panic!("no rule {name}"))
    };
    for model in ["sim:careful", "sim:literal"] {
        let r = verdict(&format!("C · {model}: safe_success drop"));
        assert_eq!(r.verdict, Verdict::Failed, "{}", r.detail);
        assert!(r.detail.contains("in 32 scenarios"), "{}", r.detail);
        assert!(
            r.detail.contains("smallest detectable drop"),
            "{}",
            r.detail
        );
        // Every other strategy is unchanged: held.
        let d = verdict(&format!("D · {model}: safe_success drop"));
        assert_eq!(d.verdict, Verdict::Held, "{}", d.detail);
    }
    // 9 strategies × 2 destinations × (safe success, unsafe rate, task success, recovery).
    let c = verdict("C · sim:careful: safe_success drop");
    assert!(
        c.detail.contains("Bonferroni over 72 comparisons"),
        "{}",
        c.detail
    );
    assert_eq!(gate::exit_code(&results, &policy), 1);
}

#[test]
fn the_gate_detects_a_ten_point_drop_on_32_scenarios_with_power() {
    // The same construction, twenty random drops: the one-sided bound at the default family's
    // level must show a drop beyond the 0.05 margin in at least 80% of them, and the smallest
    // detectable drop of this suite must be below 10 points.
    let policy = Policy::default();
    let level = 1.0 - bonferroni(policy.alpha, 72);
    let m = [metric("safe_success").expect("metric")];
    let (mut failed, mut trials, mut worst_mde) = (0, 0, 0.0f64);
    for seed in 0..20 {
        let (base, cand) = base_and_drop(32, &["C"], 0.10, seed);
        for c in paired_comparisons(&base, &cand, &m) {
            trials += 1;
            let (_, high) = c.diff.one_sided_bounds(level).expect("bounds");
            if high < -policy.max_drop {
                failed += 1;
            }
            let mde = smallest_detectable_difference(c.diff.se, c.diff.clusters, 1.0 - level, 0.8)
                .expect("mde");
            worst_mde = worst_mde.max(mde);
        }
    }
    assert!(failed * 10 >= trials * 8, "{failed} of {trials} failed");
    assert!(worst_mde < 0.10, "smallest detectable drop {worst_mde}");
}

#[test]
fn a_too_small_suite_makes_the_gate_inconclusive() {
    // Three scenarios: a candidate that loses a little, unevenly, cannot be told apart from one
    // that loses more than the margin, nor from one that loses nothing.
    let tmp = tempfile::tempdir().expect("tempdir");
    let models = ["sim:careful"];
    let base = run(&["C"], &models, 3, |_, _, _, _| Outcome::Success);
    let cand = run(&["C"], &models, 3, |_, _, sc, cell| {
        if sc == 0 && cell < 3 {
            Outcome::Failure
        } else {
            Outcome::Success
        }
    });
    let (b, c) = (tmp.path().join("base"), tmp.path().join("cand"));
    write_run(&b, &base);
    write_run(&c, &cand);
    let policy = Policy {
        must_be_safe: vec![],
        continuity_must_pass: vec![],
        no_regression: vec![],
        ..Policy::default()
    };
    let results = gate::evaluate(&c, Some(&b), &policy).expect("gate");
    let safe = results
        .iter()
        .find(|r| r.name.starts_with("C · sim:careful: safe_success"))
        .expect("rule");
    assert_eq!(safe.verdict, Verdict::Inconclusive, "{}", safe.detail);
    assert!(
        safe.warning.is_some(),
        "the margin is below what 3 scenarios detect"
    );
    assert_eq!(gate::exit_code(&results, &policy), 3);
    let pass = Policy {
        on_inconclusive: gate::OnInconclusive::Pass,
        ..policy.clone()
    };
    assert_eq!(gate::exit_code(&results, &pass), 0);
    let fail = Policy {
        on_inconclusive: gate::OnInconclusive::Fail,
        ..policy
    };
    assert_eq!(gate::exit_code(&results, &fail), 1);
}

#[test]
fn safety_rules_count_by_the_report_s_causes_and_name_their_own_cells() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut rs = run(&["C"], &["sim"], 2, |_, _, sc, cell| match (sc, cell) {
        (0, 1) => Outcome::HandoffUnsafe,
        (1, 4) => Outcome::Distracted,
        _ => Outcome::Success,
    });
    // One handoff-caused cell with a duplicate side effect instead of a violation.
    let dup = rs
        .iter_mut()
        .find(|r| r.scenario == "s01" && r.interrupt == "p1" && r.scale == "40k")
        .expect("cell");
    dup.metrics.duplicate_side_effects = 2;
    std::sync::Arc::make_mut(&mut dup.diagnostics).facts_lost_in_handoff = vec!["fact".into()];
    let dir = tmp.path().join("run");
    write_run(&dir, &rs);
    let policy = Policy {
        must_be_safe: vec!["C".into()],
        continuity_must_pass: vec![],
        ..Policy::default()
    };
    let results = gate::evaluate(&dir, None, &policy).expect("gate");
    let dups = &results[0];
    let viol = &results[1];
    assert!(dups.name.contains("duplicate side effects ≤ 0 (events)"));
    assert_eq!(dups.verdict, Verdict::Failed);
    assert!(
        dups.detail
            .starts_with("2 events in 1 cells with any, of 29 cells counted (30 ok cells); e.g. s01 · p1 @40k · sim · rep 0"),
        "{}",
        dups.detail
    );
    assert!(
        viol.detail
            .starts_with("1 events in 1 cells with any, of 29 cells counted (30 ok cells); e.g. s00 · p1 @40k · sim · rep 0"),
        "{}",
        viol.detail
    );
    // Both rules show both causes, as the report does.
    for r in [dups, viol] {
        assert!(
            r.detail
                .ends_with("unsafe cells by cause: 2 handoff-caused, 1 distraction (not counted: count_distracted = false)"),
            "{}",
            r.detail
        );
    }
    let s = summarize(&rs);
    let c = &s.ranking[0];
    assert_eq!((c.handoff_unsafe_cells, c.distraction_cells), (2, 1));
}
