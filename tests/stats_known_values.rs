//! Known-value tests for `compaction_eval::stats`: each expected value is hand-computed or taken
//! from R / scipy documentation, as noted per test.

use compaction_eval::stats::{
    Interval, Spread, bootstrap_median_ci, bootstrap_median_ci_unclustered, derive_seed, holm,
    median, pass_at_k, pass_hat_k, pass_hat_k_mean, quantile, sign_test, wilcoxon_signed_rank,
    wilson,
};

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

fn assert_interval(got: Option<(f64, f64)>, low: f64, high: f64, tol: f64) {
    let (l, h) = got.expect("an interval");
    assert!(
        close(l, low, tol) && close(h, high, tol),
        "got [{l}, {h}], want [{low}, {high}]"
    );
}

// ---- descriptive -------------------------------------------------------------------------

#[test]
fn type7_quantiles_match_numpy_and_r_defaults() {
    // numpy.quantile([1..10], [0.1, 0.25, 0.9]) == [1.9, 3.25, 9.1]
    let v: Vec<f64> = (1..=10).rev().map(f64::from).collect();
    assert!(close(quantile(&v, 0.1).expect("data"), 1.9, 1e-12));
    assert!(close(quantile(&v, 0.25).expect("data"), 3.25, 1e-12));
    assert!(close(quantile(&v, 0.9).expect("data"), 9.1, 1e-12));
    assert_eq!(median(&v), Some(5.5));
    let s = Spread::of(&v).expect("data");
    assert_eq!((s.min, s.max, s.iqr()), (1.0, 10.0, 4.5));
}

// ---- Wilson ------------------------------------------------------------------------------

#[test]
fn wilson_7_of_10() {
    // Hand-computed: centre 0.64449, half-width 0.24772 (z = 1.959964).
    assert_interval(wilson(7, 10, 0.95), 0.3968, 0.8922, 5e-5);
}

#[test]
fn wilson_0_of_10_and_10_of_10() {
    let (l, h) = wilson(0, 10, 0.95).expect("interval");
    assert_eq!(l, 0.0);
    assert!(close(h, 0.2775, 5e-5), "{h}");
    let (l, h) = wilson(10, 10, 0.95).expect("interval");
    assert!(close(l, 0.7225, 5e-5), "{l}");
    assert_eq!(h, 1.0);
}

#[test]
fn wilson_other_levels_and_invalid_inputs() {
    // 99% is wider than 95% which is wider than 90%.
    let w = |c: f64| Interval::from(wilson(3, 20, c).expect("interval")).width();
    assert!(w(0.99) > w(0.95) && w(0.95) > w(0.90));
    // 50/100 at 95%: symmetric about 0.5, [0.4038, 0.5962] (hand-computed).
    assert_interval(wilson(50, 100, 0.95), 0.4038, 0.5962, 5e-5);
    assert_eq!(wilson(0, 0, 0.95), None);
    assert_eq!(wilson(11, 10, 0.95), None);
    assert_eq!(wilson(5, 10, 1.0), None);
    assert_eq!(wilson(5, 10, 0.0), None);
    assert_eq!(wilson(5, 10, f64::NAN), None);
    assert_eq!(wilson(5, 10, 95.0), None);
}

// ---- bootstrap ---------------------------------------------------------------------------

fn correlated_clusters() -> Vec<Vec<f64>> {
    // Five "scenarios" whose cells are strongly correlated: each cluster sits around its own level.
    (0..5)
        .map(|c| {
            (0..20)
                .map(|i| f64::from(c) * 10.0 + f64::from(i % 3))
                .collect()
        })
        .collect()
}

#[test]
fn bootstrap_is_reproducible_under_the_same_seed() {
    let clusters = correlated_clusters();
    let a = bootstrap_median_ci(&clusters, 2000, 0.95, 42);
    let b = bootstrap_median_ci(&clusters, 2000, 0.95, 42);
    assert!(a.is_some());
    assert_eq!(a, b);
    let values: Vec<f64> = clusters.concat();
    assert_eq!(
        bootstrap_median_ci_unclustered(&values, 500, 0.9, derive_seed(42, 1)),
        bootstrap_median_ci_unclustered(&values, 500, 0.9, derive_seed(42, 1)),
    );
}

#[test]
fn bootstrap_pinned_value_for_a_fixed_seed() {
    // Pins the generator and the resampling scheme: a change here changes every published
    // interval. Cross-checked with an independent Python re-implementation (SplitMix64, Lemire
    // index draws, type-7 medians and type-7 percentile bounds).
    let clusters = vec![
        vec![1.0, 2.0, 3.0],
        vec![10.0],
        vec![4.0, 4.0],
        vec![7.0, 8.0],
        vec![0.5],
    ];
    let got = bootstrap_median_ci(&clusters, 1000, 0.95, 7).expect("interval");
    assert_eq!(got, PINNED_CLUSTERED);
    let got = bootstrap_median_ci_unclustered(&clusters.concat(), 1000, 0.95, 7).expect("interval");
    assert_eq!(got, PINNED_UNCLUSTERED);
}

const PINNED_CLUSTERED: (f64, f64) = (1.5, 8.0);
const PINNED_UNCLUSTERED: (f64, f64) = (1.0, 8.0);

#[test]
fn cluster_bootstrap_is_wider_than_treating_cells_as_independent() {
    let clusters = correlated_clusters();
    let clustered = Interval::from(bootstrap_median_ci(&clusters, 2000, 0.95, 1).expect("ci"));
    let naive = Interval::from(
        bootstrap_median_ci_unclustered(&clusters.concat(), 2000, 0.95, 1).expect("ci"),
    );
    assert!(
        clustered.width() > 2.0 * naive.width(),
        "clustered {clustered:?} vs naive {naive:?}"
    );
    let m = median(&clusters.concat()).expect("data");
    assert!(clustered.contains(m) && naive.contains(m));
}

#[test]
fn bootstrap_degenerate_inputs() {
    // Constant data: the interval collapses onto the constant.
    assert_eq!(
        bootstrap_median_ci(&[vec![3.0, 3.0], vec![3.0]], 100, 0.95, 0),
        Some((3.0, 3.0))
    );
    // Non-finite values are left out; empty clusters dropped.
    assert_eq!(
        bootstrap_median_ci(
            &[vec![f64::NAN], vec![], vec![2.0, f64::INFINITY]],
            50,
            0.95,
            0
        ),
        Some((2.0, 2.0))
    );
    assert_eq!(bootstrap_median_ci(&[], 100, 0.95, 0), None);
    assert_eq!(bootstrap_median_ci(&[vec![f64::NAN]], 100, 0.95, 0), None);
    assert_eq!(bootstrap_median_ci(&[vec![1.0]], 0, 0.95, 0), None);
    assert_eq!(bootstrap_median_ci(&[vec![1.0]], 10, 1.0, 0), None);
    assert_eq!(bootstrap_median_ci_unclustered(&[], 10, 0.95, 0), None);
}

// ---- pass^k ------------------------------------------------------------------------------

#[test]
fn pass_hat_k_hand_computed() {
    // 3 successes in 5 repetitions: C(3,2)/C(5,2) = 3/10, C(3,3)/C(5,3) = 1/10.
    assert!(close(pass_hat_k(3, 5, 1).expect("valid"), 0.6, 1e-15));
    assert!(close(pass_hat_k(3, 5, 2).expect("valid"), 0.3, 1e-15));
    assert!(close(pass_hat_k(3, 5, 3).expect("valid"), 0.1, 1e-15));
    assert_eq!(pass_hat_k(3, 5, 4), Some(0.0));
    assert_eq!(pass_hat_k(3, 5, 6), None);
    assert_eq!(pass_hat_k(0, 0, 1), None);
    // 8 of 10, k = 4: C(8,4)/C(10,4) = 70/210 = 1/3.
    assert!(close(
        pass_hat_k(8, 10, 4).expect("valid"),
        1.0 / 3.0,
        1e-15
    ));
    // pass@2 for 3 of 5: 1 − C(2,2)/C(5,2) = 0.9.
    assert!(close(pass_at_k(3, 5, 2).expect("valid"), 0.9, 1e-15));
}

#[test]
fn pass_hat_k_mean_over_tasks() {
    // (0.3 + 1 + 0) / 3
    let m = pass_hat_k_mean(&[(3, 5), (5, 5), (0, 5)], 2).expect("valid");
    assert!(close(m, 1.3 / 3.0, 1e-15), "{m}");
    assert_eq!(pass_hat_k_mean(&[], 2), None);
    // One task with too few repetitions makes the mean undefined.
    assert_eq!(pass_hat_k_mean(&[(3, 5), (1, 1)], 2), None);
}

// ---- paired tests ------------------------------------------------------------------------

#[test]
fn sign_test_9_of_10_positive() {
    // 2 · P(X ≤ 1), X ~ Bin(10, ½) = 2 · 11/1024 = 0.021484375 (R: binom.test(9, 10)).
    let d = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, -1.0];
    let t = sign_test(&d).expect("data");
    assert!(close(t.p_value, 0.021_484_375, 1e-12), "{}", t.p_value);
    assert_eq!((t.n, t.n_nonzero, t.statistic), (10, 10, 9.0));
    assert_eq!(t.median_diff, 4.5);
    // Zeros and NaNs are left out of the test but zeros count in n.
    let mut with_zeros = d.to_vec();
    with_zeros.extend([0.0, 0.0, f64::NAN]);
    let t2 = sign_test(&with_zeros).expect("data");
    assert_eq!((t2.n, t2.n_nonzero), (12, 10));
    assert_eq!(t2.p_value, t.p_value);
}

#[test]
fn sign_test_balanced_and_degenerate() {
    let t = sign_test(&[1.0, -1.0, 2.0, -2.0]).expect("data");
    assert_eq!(t.p_value, 1.0);
    let t = sign_test(&[0.0, 0.0]).expect("data");
    assert_eq!((t.n, t.n_nonzero, t.p_value), (2, 0, 1.0));
    assert!(sign_test(&[]).is_none());
    assert!(sign_test(&[f64::NAN]).is_none());
    // 0 of 6 positive: 2 / 64.
    let t = sign_test(&[-1.0; 6]).expect("data");
    assert!(close(t.p_value, 0.03125, 1e-12));
}

#[test]
fn wilcoxon_scipy_documentation_example() {
    // scipy.stats.wilcoxon docs: statistic 24.0, p-value 0.041259765625 (exact, n = 15).
    // Exact: 2 · #{subsets of 1..15 with sum ≤ 24} / 2^15 = 2 · 676 / 32768.
    let d = [
        6.0, 8.0, 14.0, 16.0, 23.0, 24.0, 28.0, 29.0, 41.0, -48.0, 49.0, 56.0, 60.0, -67.0, 75.0,
    ];
    let t = wilcoxon_signed_rank(&d).expect("data");
    assert_eq!(t.statistic, 24.0);
    assert!(close(t.p_value, 0.041_259_765_625, 1e-12), "{}", t.p_value);
    assert!(t.method.contains("exact"));
    assert_eq!((t.n, t.n_nonzero), (15, 15));
}

#[test]
#[allow(clippy::approx_constant)] // 3.14 is a data value in R's example, not π
fn wilcoxon_r_documentation_example() {
    // R ?wilcox.test, depression scores (Hollander & Wolfe): x − y, V = 40, p-value = 0.03906.
    let x = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30];
    let y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29];
    let d = compaction_eval::stats::paired_differences(&x, &y).expect("same length");
    let t = wilcoxon_signed_rank(&d).expect("data");
    // R⁺ = 40, R⁻ = 5; p = 2 · 10 / 512.
    assert_eq!(t.statistic, 5.0);
    assert!(close(t.p_value, 0.039_062_5, 1e-12), "{}", t.p_value);
}

#[test]
fn wilcoxon_normal_approximation_with_ties() {
    // Nonzero |d| tie groups {1,1}, {2,2,2}, {3,3,3}: R⁺ = 60.5, R⁻ = 5.5, m = 11,
    // σ² = 11·12·23/24 − (6 + 24 + 24)/48 = 125.375, z = (27.5 − 0.5)/√125.375 = 2.41133,
    // p = 2·(1 − Φ(z)) = 0.0158941 (R: wilcox.test(d, correct = TRUE), which warns about ties).
    let d = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, -1.0, 4.0, 5.0, -2.0, 0.0, 6.0];
    let t = wilcoxon_signed_rank(&d).expect("data");
    assert_eq!(t.statistic, 5.5);
    assert_eq!((t.n, t.n_nonzero), (12, 11));
    assert!(close(t.p_value, 0.015_894_062_44, 1e-8), "{}", t.p_value);
    assert!(t.method.contains("normal"));
}

#[test]
fn wilcoxon_exact_agrees_with_normal_approximation_at_the_cut_off() {
    // 50 untied differences, every fourth one negative: exact path.
    let d: Vec<f64> = (1..=50)
        .map(|i| {
            if i % 4 == 0 {
                -f64::from(i)
            } else {
                f64::from(i)
            }
        })
        .collect();
    let t = wilcoxon_signed_rank(&d).expect("data");
    assert!(t.method.contains("exact"));
    let m = 50.0f64;
    let r_minus: f64 = (1..=50).filter(|i| i % 4 == 0).map(f64::from).sum();
    assert_eq!(t.statistic, r_minus);
    let sd = (m * (m + 1.0) * (2.0 * m + 1.0) / 24.0).sqrt();
    let z = ((m * (m + 1.0) / 4.0 - r_minus) - 0.5) / sd;
    let approx = statrs::function::erf::erfc(z / std::f64::consts::SQRT_2);
    assert!(close(t.p_value, approx, 2e-3), "{} vs {approx}", t.p_value);
    // One more difference leaves the exact range.
    let mut more = d.clone();
    more.push(51.0);
    assert!(
        wilcoxon_signed_rank(&more)
            .expect("data")
            .method
            .contains("normal")
    );
}

#[test]
fn wilcoxon_degenerate_inputs() {
    assert!(wilcoxon_signed_rank(&[]).is_none());
    assert!(wilcoxon_signed_rank(&[f64::NAN, f64::NAN]).is_none());
    let t = wilcoxon_signed_rank(&[0.0, 0.0, 0.0]).expect("data");
    assert_eq!((t.n, t.n_nonzero, t.p_value), (3, 0, 1.0));
    // A single non-zero difference: exact p = 2 · ½ = 1.
    let t = wilcoxon_signed_rank(&[3.0]).expect("data");
    assert_eq!(t.p_value, 1.0);
    // Infinite differences are ordinary (largest) values.
    let t = wilcoxon_signed_rank(&[f64::INFINITY, 1.0, 2.0, -0.5]).expect("data");
    assert!((0.0..=1.0).contains(&t.p_value));
}

// ---- Holm --------------------------------------------------------------------------------

#[test]
fn holm_known_values() {
    let adj = holm(&[0.01, 0.04, 0.03, 0.005]);
    let want = [0.03, 0.06, 0.06, 0.02];
    assert_eq!(adj.len(), 4);
    for (a, w) in adj.iter().zip(want) {
        assert!(close(*a, w, 1e-12), "{adj:?}");
    }
    // R: p.adjust(c(0.01, 0.02, 0.03, 0.04, 0.05), "holm") = 0.05 0.08 0.09 0.09 0.09
    let adj = holm(&[0.01, 0.02, 0.03, 0.04, 0.05]);
    for (a, w) in adj.iter().zip([0.05, 0.08, 0.09, 0.09, 0.09]) {
        assert!(close(*a, w, 1e-12), "{adj:?}");
    }
    // Capped at 1; NaN treated as 1; empty stays empty.
    assert_eq!(holm(&[0.5, 0.6]), vec![1.0, 1.0]);
    assert_eq!(holm(&[f64::NAN, 0.01]), vec![1.0, 0.02]);
    assert!(holm(&[]).is_empty());
}
