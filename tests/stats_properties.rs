//! Property tests for `compaction_eval::stats`.

use compaction_eval::stats::{
    ClusteredMean, bootstrap_median_ci, bootstrap_median_ci_unclustered, clustered_rate_interval,
    holm, pass_at_k, pass_hat_k, pass_hat_k_mean, quantile, sign_test, wilcoxon_signed_rank,
    wilson,
};
use proptest::prelude::*;

/// Finite values with some repeats (small integers) and some spread.
fn value() -> impl Strategy<Value = f64> {
    prop_oneof![(-5i32..5).prop_map(f64::from), -1e6f64..1e6]
}

/// Any f64 at all, NaN and infinities included.
fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(0.0),
        value(),
    ]
}

proptest! {
    #[test]
    fn quantile_is_monotone_in_p_and_within_range(
        v in prop::collection::vec(prop_oneof![value(), Just(f64::NAN)], 1..60),
        a in 0.0f64..=1.0,
        b in 0.0f64..=1.0,
    ) {
        let finite: Vec<f64> = v.iter().copied().filter(|x| !x.is_nan()).collect();
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        match (quantile(&v, lo), quantile(&v, hi)) {
            (Some(x), Some(y)) => {
                prop_assert!(x <= y);
                let min = finite.iter().copied().fold(f64::INFINITY, f64::min);
                let max = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                prop_assert!(min <= x && y <= max);
            }
            (None, None) => prop_assert!(finite.is_empty()),
            other => prop_assert!(false, "inconsistent: {other:?}"),
        }
    }

    #[test]
    fn wilson_contains_the_estimate_and_lies_in_unit_interval(
        n in 1usize..2000,
        frac in 0.0f64..=1.0,
        confidence in 0.5f64..0.9999,
    ) {
        let s = ((n as f64) * frac).round() as usize;
        let (l, h) = wilson(s, n, confidence).expect("valid input");
        let p = s as f64 / n as f64;
        prop_assert!(0.0 <= l && l <= p && p <= h && h <= 1.0, "[{l}, {h}] for {s}/{n}");
    }

    #[test]
    fn wilson_never_panics(s in any::<usize>(), n in any::<usize>(), c in any_f64()) {
        if let Some((l, h)) = wilson(s, n, c) {
            prop_assert!(0.0 <= l && l <= h && h <= 1.0);
        }
    }

    #[test]
    fn bootstrap_ci_is_ordered_within_data_and_reproducible(
        clusters in prop::collection::vec(prop::collection::vec(value(), 1..8), 1..12),
        resamples in 1usize..200,
        confidence in 0.5f64..0.99,
        seed in any::<u64>(),
    ) {
        let all: Vec<f64> = clusters.concat();
        let min = all.iter().copied().fold(f64::INFINITY, f64::min);
        let max = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let ci = bootstrap_median_ci(&clusters, resamples, confidence, seed);
        let (l, h) = ci.expect("non-empty data");
        prop_assert!(min <= l && l <= h && h <= max, "[{l}, {h}] outside [{min}, {max}]");
        prop_assert_eq!(ci, bootstrap_median_ci(&clusters, resamples, confidence, seed));

        let flat = bootstrap_median_ci_unclustered(&all, resamples, confidence, seed);
        let (l, h) = flat.expect("non-empty data");
        prop_assert!(min <= l && l <= h && h <= max);
        prop_assert_eq!(flat, bootstrap_median_ci_unclustered(&all, resamples, confidence, seed));
    }

    #[test]
    fn bootstrap_never_panics(
        clusters in prop::collection::vec(prop::collection::vec(any_f64(), 0..5), 0..6),
        resamples in 0usize..20,
        confidence in any_f64(),
        seed in any::<u64>(),
    ) {
        if let Some((l, h)) = bootstrap_median_ci(&clusters, resamples, confidence, seed) {
            prop_assert!(l <= h);
        }
        let _ = bootstrap_median_ci_unclustered(&clusters.concat(), resamples, confidence, seed);
    }

    #[test]
    fn pass_hat_k_is_decreasing_in_k_and_a_probability(n in 1usize..200, frac in 0.0f64..=1.0) {
        let c = ((n as f64) * frac).round() as usize;
        let mut prev = 1.0;
        for k in 0..=n {
            let p = pass_hat_k(c, n, k).expect("k <= n");
            prop_assert!((0.0..=1.0).contains(&p));
            prop_assert!(p <= prev, "pass^{k} = {p} > {prev}");
            if k >= 1 {
                let at = pass_at_k(c, n, k).expect("k <= n");
                prop_assert!(at + 1e-12 >= p, "pass@{k} {at} < pass^{k} {p}");
            }
            prev = p;
        }
        prop_assert_eq!(pass_hat_k(c, n, n + 1), None);
    }

    #[test]
    fn pass_hat_k_mean_lies_between_task_extremes(
        successes in prop::collection::vec(0usize..=10, 1..10),
        k in 0usize..=5,
    ) {
        let tasks: Vec<(usize, usize)> = successes.into_iter().map(|c| (c, 10)).collect();
        let each: Vec<f64> = tasks.iter().map(|&(c, n)| pass_hat_k(c, n, k).expect("valid")).collect();
        let m = pass_hat_k_mean(&tasks, k).expect("valid");
        let lo = each.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = each.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        prop_assert!(lo - 1e-12 <= m && m <= hi + 1e-12);
    }

    #[test]
    fn holm_is_at_least_raw_at_most_one_and_order_preserving(
        p in prop::collection::vec(0.0f64..=1.0, 0..30),
    ) {
        let adj = holm(&p);
        prop_assert_eq!(adj.len(), p.len());
        for i in 0..p.len() {
            prop_assert!(p[i] <= adj[i] && adj[i] <= 1.0);
            for j in 0..p.len() {
                if p[i] <= p[j] {
                    prop_assert!(adj[i] <= adj[j]);
                }
            }
        }
    }

    #[test]
    fn holm_never_panics(p in prop::collection::vec(any_f64(), 0..10)) {
        for a in holm(&p) {
            prop_assert!((0.0..=1.0).contains(&a));
        }
    }

    #[test]
    fn paired_tests_give_probabilities_and_are_symmetric_under_negation(
        d in prop::collection::vec(value(), 1..70),
    ) {
        let neg: Vec<f64> = d.iter().map(|x| -x).collect();
        for test in [sign_test, wilcoxon_signed_rank] {
            let t = test(&d).expect("non-empty");
            prop_assert!((0.0..=1.0).contains(&t.p_value), "{t:?}");
            prop_assert_eq!(t.n, d.len());
            let u = test(&neg).expect("non-empty");
            prop_assert!((t.p_value - u.p_value).abs() < 1e-12, "{t:?} vs {u:?}");
        }
    }

    #[test]
    fn wilcoxon_ignores_zero_differences(
        d in prop::collection::vec(value(), 1..40),
        zeros in 0usize..10,
    ) {
        let mut padded = d.clone();
        padded.extend(std::iter::repeat_n(0.0, zeros));
        let (a, b) = (wilcoxon_signed_rank(&d).expect("data"), wilcoxon_signed_rank(&padded).expect("data"));
        prop_assert_eq!((a.n_nonzero, a.statistic, a.p_value), (b.n_nonzero, b.statistic, b.p_value));
        prop_assert_eq!(b.n, d.len() + zeros);
    }

    #[test]
    fn paired_tests_never_panic(d in prop::collection::vec(any_f64(), 0..30)) {
        for test in [sign_test, wilcoxon_signed_rank] {
            if let Some(t) = test(&d) {
                prop_assert!((0.0..=1.0).contains(&t.p_value));
                prop_assert!(t.n_nonzero <= t.n);
            }
        }
    }

    /// A proportion's clustered interval lies in [0, 1] and holds the rate; copying every cluster's
    /// observations (identical repetitions) changes neither the estimate nor its error.
    #[test]
    fn clustered_rates_stay_in_range_and_ignore_identical_copies(
        clusters in prop::collection::vec((0u32..20, 1u32..20), 2..40),
        copies in 1u32..4,
    ) {
        let data: Vec<(f64, f64)> = clusters
            .iter()
            .map(|&(k, n)| (f64::from(k.min(n)), f64::from(n)))
            .collect();
        let copied: Vec<(f64, f64)> = data
            .iter()
            .map(|&(k, n)| (k * f64::from(copies), n * f64::from(copies)))
            .collect();
        let (m, c) = (ClusteredMean::of(&data).expect("data"), ClusteredMean::of(&copied).expect("data"));
        prop_assert!((m.estimate - c.estimate).abs() < 1e-12);
        prop_assert!((m.se - c.se).abs() < 1e-12);
        let (lo, hi) = clustered_rate_interval(&m, 0.95).expect("interval");
        prop_assert!(0.0 <= lo && lo <= m.estimate + 1e-12 && m.estimate <= hi + 1e-12 && hi <= 1.0, "{lo} {hi} {m:?}");
    }

    #[test]
    fn clustered_means_never_panic(clusters in prop::collection::vec((any_f64(), any_f64()), 0..20)) {
        if let Some(m) = ClusteredMean::of(&clusters) {
            prop_assert!((0.0..=1.0).contains(&m.p_two_sided()));
            let _ = m.interval(0.95);
            let _ = clustered_rate_interval(&m, 0.95);
        }
    }
}
