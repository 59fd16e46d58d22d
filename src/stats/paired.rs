//! Paired comparisons: differences, the exact sign test, the Wilcoxon signed-rank test, and Holm's
//! step-down correction for several comparisons.

use std::collections::BTreeMap;

use serde::Serialize;
use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, Normal};

use super::quantile_sorted;

/// Largest number of non-zero differences for which [`wilcoxon_signed_rank`] uses the exact null
/// distribution (when there are also no ties); R and scipy use the same cut-off.
pub const WILCOXON_EXACT_MAX_N: usize = 50;

/// Result of a two-sided paired test on differences `a − b`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PairedTest {
    /// Number of (non-NaN) differences.
    pub n: usize,
    /// Number of those that are non-zero (the ones the test uses).
    pub n_nonzero: usize,
    /// Type-7 median of all `n` differences, zeros included.
    pub median_diff: f64,
    /// Mean of all `n` differences, zeros included.
    pub mean_diff: f64,
    /// Test statistic; see the test function for its definition.
    pub statistic: f64,
    /// Two-sided p-value in `[0, 1]`.
    pub p_value: f64,
    /// Which test and which null distribution produced `p_value`.
    pub method: &'static str,
}

/// Element-wise differences `a[i] − b[i]` of two equally long samples paired by position.
/// `None` when the lengths differ. NaNs propagate (the tests leave them out).
pub fn paired_differences(a: &[f64], b: &[f64]) -> Option<Vec<f64>> {
    (a.len() == b.len()).then(|| a.iter().zip(b).map(|(x, y)| x - y).collect())
}

/// Differences `a − b` over the keys present in both samples, in ascending key order; keys found in
/// only one sample are left out (no partner). `None` if a key occurs twice in the same sample,
/// since the pairing would then be ambiguous.
pub fn paired_differences_by_key<K: Ord + Clone>(
    a: &[(K, f64)],
    b: &[(K, f64)],
) -> Option<Vec<(K, f64)>> {
    let mut left: BTreeMap<&K, f64> = BTreeMap::new();
    for (k, x) in a {
        if left.insert(k, *x).is_some() {
            return None;
        }
    }
    let mut right: BTreeMap<&K, f64> = BTreeMap::new();
    for (k, y) in b {
        if right.insert(k, *y).is_some() {
            return None;
        }
    }
    Some(
        left.into_iter()
            .filter_map(|(k, x)| right.get(k).map(|y| (k.clone(), x - y)))
            .collect(),
    )
}

/// The mean of the values of each key, in ascending key order, with how many values it averaged;
/// NaN values are left out (a key whose values are all NaN is left out).
///
/// Used to collapse observations that are not independent before a test: repeated measurements of
/// one unit become one value per unit, units of one cluster one value per cluster.
pub fn means_by_key<K: Ord + Clone>(values: &[(K, f64)]) -> Vec<(K, f64, usize)> {
    let mut acc: BTreeMap<&K, (f64, usize)> = BTreeMap::new();
    for (k, x) in values.iter().filter(|(_, x)| !x.is_nan()) {
        let e = acc.entry(k).or_default();
        e.0 += x;
        e.1 += 1;
    }
    acc.into_iter()
        .map(|(k, (sum, n))| (k.clone(), sum / n as f64, n))
        .collect()
}

/// The NaN-free differences with their median and mean; `None` when none remain.
fn describe(diffs: &[f64]) -> Option<(Vec<f64>, f64, f64)> {
    let mut v: Vec<f64> = diffs.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let median = quantile_sorted(&v, 0.5)?;
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    Some((v, median, mean))
}

/// Two-sided exact sign test of "positive and negative differences are equally likely".
///
/// NaN differences are left out; zero differences are dropped from the test (but counted in `n`
/// and in the median and mean). With `n⁺` positive and `n⁻` negative differences and
/// `m = n⁺ + n⁻`, the p-value is `min(1, 2·P(X ≤ min(n⁺, n⁻)))` for `X ~ Binomial(m, ½)`
/// (statrs), as in R's `binom.test`. `statistic` is `n⁺`. With no non-zero differences the
/// p-value is 1.
///
/// `None` when there is no non-NaN difference.
pub fn sign_test(diffs: &[f64]) -> Option<PairedTest> {
    let (v, median_diff, mean_diff) = describe(diffs)?;
    let pos = v.iter().filter(|&&x| x > 0.0).count();
    let neg = v.iter().filter(|&&x| x < 0.0).count();
    let m = pos + neg;
    let p_value = if m == 0 {
        1.0
    } else {
        let b = Binomial::new(0.5, m as u64).ok()?;
        (2.0 * b.cdf(pos.min(neg) as u64)).clamp(0.0, 1.0)
    };
    Some(PairedTest {
        n: v.len(),
        n_nonzero: m,
        median_diff,
        mean_diff,
        statistic: pos as f64,
        p_value,
        method: "sign test, exact binomial, two-sided",
    })
}

/// Two-sided Wilcoxon signed-rank test of "the differences are symmetric about 0".
///
/// - NaN differences are left out; zero differences are dropped before ranking (Wilcoxon's
///   original method, scipy's `zero_method="wilcox"`, R's behaviour) but counted in `n` and in
///   the median and mean.
/// - The non-zero `|d|` are ranked 1..m, tied `|d|` (exactly equal values) getting their average
///   rank. `R⁺` / `R⁻` are the rank sums of the positive / negative differences, and `statistic`
///   is `min(R⁺, R⁻)` (scipy's two-sided statistic; R reports `V = R⁺`).
/// - If there are no ties and `m ≤` [`WILCOXON_EXACT_MAX_N`], the p-value is exact:
///   `min(1, 2·P(W ≤ min(R⁺, R⁻)))` with `W` the null distribution of `R⁺` (all `2^m` sign
///   assignments equally likely), counted by dynamic programming.
/// - Otherwise the normal approximation with continuity correction and tie-corrected variance:
///   `z = max(0, |R⁺ − m(m+1)/4| − ½) / σ`, `σ² = m(m+1)(2m+1)/24 − Σ(t³ − t)/48` over tie groups of
///   size `t`, `p = 2·(1 − Φ(z))` (statrs), as R's `wilcox.test(correct = TRUE)`.
/// - With no non-zero differences the p-value is 1 and the statistic 0.
///
/// `method` says which case applied. `None` when there is no non-NaN difference.
pub fn wilcoxon_signed_rank(diffs: &[f64]) -> Option<PairedTest> {
    let (v, median_diff, mean_diff) = describe(diffs)?;
    let mut nz: Vec<f64> = v.iter().copied().filter(|&x| x != 0.0).collect();
    let m = nz.len();
    let mut out = PairedTest {
        n: v.len(),
        n_nonzero: m,
        median_diff,
        mean_diff,
        statistic: 0.0,
        p_value: 1.0,
        method: "wilcoxon signed-rank, no non-zero differences",
    };
    if m == 0 {
        return Some(out);
    }
    nz.sort_by(|a, b| a.abs().total_cmp(&b.abs()));

    // Average ranks over tie groups of equal |d|.
    let mut r_plus = 0.0;
    let mut tie_term = 0.0;
    let mut ties = false;
    let mut i = 0;
    while i < m {
        let mut j = i + 1;
        while j < m && nz[j].abs() == nz[i].abs() {
            j += 1;
        }
        let t = (j - i) as f64;
        if j - i > 1 {
            ties = true;
            tie_term += t * t * t - t;
        }
        // Ranks i+1 ..= j, average (i + 1 + j) / 2.
        let rank = (i + 1 + j) as f64 / 2.0;
        r_plus += rank * nz[i..j].iter().filter(|&&x| x > 0.0).count() as f64;
        i = j;
    }
    let mf = m as f64;
    let total = mf * (mf + 1.0) / 2.0;
    let r_minus = total - r_plus;
    out.statistic = r_plus.min(r_minus);

    if !ties && m <= WILCOXON_EXACT_MAX_N {
        out.p_value = exact_two_sided(m, out.statistic.round() as usize);
        out.method = "wilcoxon signed-rank, exact, two-sided";
    } else {
        let mean = total / 2.0;
        let var = mf * (mf + 1.0) * (2.0 * mf + 1.0) / 24.0 - tie_term / 48.0;
        out.p_value = if var > 0.0 {
            let z = ((r_plus - mean).abs() - 0.5).max(0.0) / var.sqrt();
            (2.0 * Normal::standard().sf(z)).clamp(0.0, 1.0)
        } else {
            1.0
        };
        out.method = "wilcoxon signed-rank, normal approximation with continuity and tie correction, two-sided";
    }
    Some(out)
}

/// `min(1, 2·P(W ≤ t))` for `W` the signed-rank statistic of `m ≤ 63` untied observations.
fn exact_two_sided(m: usize, t: usize) -> f64 {
    let max = m * (m + 1) / 2;
    // counts[s] = number of subsets of {1..m} with sum s (fits u64: total is 2^m).
    let mut counts = vec![0u64; max + 1];
    counts[0] = 1;
    for r in 1..=m {
        for s in (r..=r * (r + 1) / 2).rev() {
            counts[s] += counts[s - r];
        }
    }
    let t = t.min(max);
    let below: u64 = counts[..=t].iter().sum();
    let total = 2f64.powi(m as i32);
    (2.0 * below as f64 / total).clamp(0.0, 1.0)
}

/// Holm's step-down adjustment of p-values for multiple comparisons, controlling the
/// family-wise error rate.
///
/// With the `m` p-values sorted ascending `p₍₁₎ ≤ … ≤ p₍ₘ₎`, the adjusted value of `p₍ᵢ₎` is
/// `min(1, max_{j ≤ i} (m − j + 1)·p₍ⱼ₎)`; results are returned in input order (as R's
/// `p.adjust(method = "holm")`). Every adjusted value is ≥ its raw value and ≤ 1, and the order
/// of the p-values is preserved. Reject hypothesis `i` at level α when `adjusted[i] ≤ α`.
///
/// NaN p-values are treated as 1 (never significant) and values outside `[0, 1]` are clamped
/// into it; they still count in `m`.
pub fn holm(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let clean: Vec<f64> = p_values
        .iter()
        .map(|&p| if p.is_nan() { 1.0 } else { p.clamp(0.0, 1.0) })
        .collect();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| clean[a].total_cmp(&clean[b]));
    let mut adjusted = vec![1.0; m];
    let mut running = 0.0f64;
    for (rank, &idx) in order.iter().enumerate() {
        let candidate = ((m - rank) as f64 * clean[idx]).min(1.0);
        running = running.max(candidate);
        adjusted[idx] = running;
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_distribution_small_cases() {
        // m = 3: sums of subsets of {1,2,3}: 0,1,2,3,3,4,5,6 → P(W ≤ 0) = 1/8.
        assert_eq!(exact_two_sided(3, 0), 0.25);
        assert_eq!(exact_two_sided(3, 1), 0.5);
        assert_eq!(exact_two_sided(3, 3), 1.0);
        // The null distribution is symmetric and sums to 2^m.
        let m = 12;
        let max = m * (m + 1) / 2;
        assert_eq!(exact_two_sided(m, max), 1.0);
        // Largest exact size does not overflow.
        let p = exact_two_sided(WILCOXON_EXACT_MAX_N, 0);
        assert!(p > 0.0 && p < 1e-14, "{p}");
    }

    #[test]
    fn means_by_key_collapses_copies() {
        let v = [(2, 1.0), (1, 4.0), (2, 3.0), (1, f64::NAN), (3, f64::NAN)];
        assert_eq!(means_by_key(&v), vec![(1, 4.0, 1), (2, 2.0, 2)]);
    }

    #[test]
    fn keyed_pairing() {
        let a = [(("s1", 2), 5.0), (("s1", 1), 3.0), (("s2", 1), 1.0)];
        let b = [(("s1", 1), 1.0), (("s1", 2), 5.0), (("s3", 1), 0.0)];
        let d = paired_differences_by_key(&a, &b).expect("no duplicates");
        assert_eq!(d, vec![(("s1", 1), 2.0), (("s1", 2), 0.0)]);
        let dup = [(1, 1.0), (1, 2.0)];
        assert_eq!(paired_differences_by_key(&dup, &[(1, 0.0)]), None);
        assert_eq!(
            paired_differences(&[1.0, 2.0], &[0.5, 3.0]),
            Some(vec![0.5, -1.0])
        );
        assert_eq!(paired_differences(&[1.0], &[]), None);
    }
}
