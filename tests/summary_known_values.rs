//! Known values of the summary (`report::summarize` on hand-built records: medians, quartiles,
//! rates, errored cells) and of the ranking (issue 26: by safe success, strategies no
//! scenario-clustered test tells apart sharing a rank range, then fewer restore tokens within it;
//! one unsafe cell decides nothing).

use compaction_eval::record::{Metrics, RunRecord, Status};
use compaction_eval::report::summarize;

struct Cell {
    success: bool,
    omitted: u32,
    dups: u32,
    violations: u32,
    restore: u64,
}

fn record(strategy: &str, interrupt: &str, rep: u32, c: Cell) -> RunRecord {
    RunRecord {
        source: compaction_eval::record::Source::Scenario,
        transcript: None,
        governed: None,
        conversation: None,
        scenario: "s".into(),
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
            task_success: c.success,
            omitted_context: c.omitted,
            repeated_work: 0,
            duplicate_side_effects: c.dups,
            safety_violations: c.violations,
            recovery_quality: 1.0,
            restore_tokens: c.restore,
            total_tokens: 10 * c.restore,
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

fn cell(success: bool, omitted: u32, restore: u64) -> Cell {
    Cell {
        success,
        omitted,
        dups: 0,
        violations: 0,
        restore,
    }
}

#[test]
fn summary_medians_quartiles_and_rates_are_exact() {
    let mut rs = vec![
        record("X", "early", 0, cell(true, 0, 100)),
        record("X", "early", 1, cell(true, 1, 200)),
        record("X", "late", 0, cell(false, 2, 300)),
        record("X", "late", 1, cell(true, 5, 400)),
    ];
    let mut errored = record("X", "late", 2, cell(false, 9, 9999));
    errored.status = Status::Errored;
    errored.error = Some("boom".into());
    rs.push(errored);

    let s = summarize(&rs);
    let g = &s.by_strategy_model[0];
    assert_eq!((g.n, g.errored), (4, 1));
    assert_eq!((g.task_success.successes, g.task_success.n), (3, 4));
    assert_eq!(g.task_success.rate, 0.75);
    // Omitted context [0, 1, 2, 5], type-7 quartiles.
    let o = g.omitted_context.expect("spread");
    assert_eq!(
        (o.median, o.q1, o.q3, o.min, o.max),
        (1.5, 0.75, 2.75, 0.0, 5.0)
    );
    assert_eq!(o.iqr(), 2.0);
    let t = g.restore_tokens.expect("spread");
    assert_eq!((t.median, t.q1, t.q3), (250.0, 175.0, 325.0));
    // Per interrupt point: the errored cell counts apart and not in the spreads.
    let late = s
        .by_strategy_model_interrupt
        .iter()
        .find(|g| g.interrupt.as_deref() == Some("late"))
        .expect("late group");
    assert_eq!((late.n, late.errored), (2, 1));
    assert_eq!(late.task_success.rate, 0.5);
    assert_eq!(late.omitted_context.expect("spread").median, 3.5);
}

#[test]
fn strategies_no_test_tells_apart_share_a_rank_and_tokens_order_them_within_it() {
    let unsafe_cell = Cell {
        success: true,
        omitted: 0,
        dups: 1,
        violations: 0,
        restore: 1,
    };
    let mut rs = Vec::new();
    for sc in 0..4 {
        for rep in 0..2 {
            let mut push = |strategy: &str, c: Cell| {
                let mut r = record(strategy, "p", rep, c);
                r.scenario = format!("s{sc}");
                rs.push(r);
            };
            // Cheap and successful, but one cell with a duplicate side effect.
            let cheap = if sc == 2 && rep == 0 {
                Cell { ..unsafe_cell }
            } else {
                cell(true, 0, 1)
            };
            push("Cheap", cheap);
            // Safe, never successful.
            push("Weak", cell(false, 0, 10));
            // Safe, full success, expensive.
            push("Costly", cell(true, 0, 5000));
            // Safe, full success, cheaper: ties on success, first on restore tokens.
            push("Lean", cell(true, 0, 50));
        }
    }
    let s = summarize(&rs);
    let order: Vec<(&str, usize, usize)> = s
        .ranking
        .iter()
        .map(|r| (r.strategy.as_str(), r.rank, r.rank_high))
        .collect();
    assert_eq!(
        order,
        vec![
            // One duplicate in one of 4 scenarios tells Cheap apart from nothing: a shared range,
            // ordered by safe success, then fewer restore tokens.
            ("Lean", 1, 3),
            ("Costly", 1, 3),
            ("Cheap", 1, 3),
            // Failing in every scenario is told apart from all three.
            ("Weak", 4, 4),
        ]
    );
    let cheap = &s.ranking[2];
    let safe = cheap.safe_success.expect("rate");
    assert_eq!((safe.successes, safe.n, safe.clusters), (7, 8, 4));
    assert_eq!(cheap.handoff_unsafe_cells, 1);
    assert_eq!(s.scenarios, 4);
}
