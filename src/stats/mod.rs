//! Statistics for the evaluation report. Knows nothing about compaction: numbers in, numbers out.
//!
//! - Descriptive: [`quantile_sorted`], [`quantile`], [`median`], [`Spread`] (n, median, quartiles,
//!   IQR, min/max), [`Rate`].
//! - Intervals: [`wilson`] score interval for rates; [`bootstrap_median_ci`] (cluster bootstrap,
//!   resampling whole clusters) and [`bootstrap_median_ci_unclustered`], seeded and reproducible
//!   ([`SplitMix64`], [`derive_seed`]); [`Interval`] as a serialisable `(low, high)`.
//! - Repetitions: [`pass_hat_k`] / [`pass_hat_k_mean`] (pass^k, unbiased `C(c,k)/C(n,k)`),
//!   [`pass_at_k`].
//! - Clustered means: [`ClusteredMean`] (ratio estimator, cluster-robust standard error, Student-t
//!   intervals and tests on `clusters − 1` df), [`clustered_rate_interval`] (a proportion's
//!   interval at its Korn–Graubard effective sample size), [`smallest_detectable_difference`],
//!   [`bonferroni`], [`t_quantile`].
//! - Paired comparisons: [`paired_differences`], [`paired_differences_by_key`], [`means_by_key`]
//!   (one value per unit or cluster), [`sign_test`],
//!   [`wilcoxon_signed_rank`] ([`PairedTest`]), and [`holm`] across several comparisons.
//!
//! Definitions:
//! - Quantiles use linear interpolation between order statistics (Hyndman & Fan type 7, numpy's
//!   and R's default), not statrs' type 8: for sorted `x₀ ≤ … ≤ x₍ₙ₋₁₎`, `h = (n − 1)·p` and
//!   `Q(p) = x⌊h⌋ + (h − ⌊h⌋)(x⌈h⌉ − x⌊h⌋)`. The median is `Q(0.5)`, the IQR `Q(0.75) − Q(0.25)`.
//! - Normal and binomial distributions come from statrs; Wilson, the bootstrap, pass^k, the exact
//!   signed-rank distribution and Holm are hand-written here (statrs lacks them).
//! - NaN inputs are left out (or, where nothing would remain, the result is `None`); no function
//!   here panics on any input. Confidence levels must lie strictly between 0 and 1, else `None`.

use serde::{Deserialize, Serialize};

mod agreement;
mod bootstrap;
mod cluster;
mod interval;
mod paired;
mod passk;

pub use agreement::{Agreement, agreement, agreement_of, confusion, kappa_ci, kendall_tau_b};
pub use bootstrap::{
    SplitMix64, bootstrap_median_ci, bootstrap_median_ci_unclustered, derive_seed,
};
pub use cluster::{
    ClusteredMean, bonferroni, clustered_rate_interval, smallest_detectable_difference, t_quantile,
};
pub use interval::{Interval, wilson, z_two_sided};
pub use paired::{
    PairedTest, WILCOXON_EXACT_MAX_N, holm, means_by_key, paired_differences,
    paired_differences_by_key, sign_test, wilcoxon_signed_rank,
};
pub use passk::{pass_at_k, pass_hat_k, pass_hat_k_mean};

/// The `p`-quantile (0 ≤ p ≤ 1) of `sorted` (ascending), type 7. `None` for no data.
pub fn quantile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=1.0).contains(&p) {
        return None;
    }
    let h = (sorted.len() - 1) as f64 * p;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    Some(sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo]))
}

/// The type-7 `p`-quantile of unsorted `values`, NaNs left out. `None` when no value remains or
/// `p` is not in `[0, 1]`.
pub fn quantile(values: &[f64], p: f64) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    v.sort_by(f64::total_cmp);
    quantile_sorted(&v, p)
}

/// The type-7 median (`quantile(values, 0.5)`) of unsorted `values`, NaNs left out.
pub fn median(values: &[f64]) -> Option<f64> {
    quantile(values, 0.5)
}

/// n, median, quartiles and range of a sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub n: usize,
    pub median: f64,
    pub q1: f64,
    pub q3: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    /// `None` for an empty sample; NaNs are left out.
    pub fn of(values: &[f64]) -> Option<Spread> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(Spread {
            n: v.len(),
            median: quantile_sorted(&v, 0.5)?,
            q1: quantile_sorted(&v, 0.25)?,
            q3: quantile_sorted(&v, 0.75)?,
            min: v[0],
            max: v[v.len() - 1],
        })
    }

    pub fn iqr(&self) -> f64 {
        self.q3 - self.q1
    }
}

/// A proportion with its count.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    pub successes: usize,
    pub n: usize,
    pub rate: f64,
}

impl Rate {
    pub fn of(successes: usize, n: usize) -> Rate {
        Rate {
            successes,
            n,
            rate: if n == 0 {
                f64::NAN
            } else {
                successes as f64 / n as f64
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type7_quantiles_match_numpy() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile_sorted(&v, 0.5), Some(2.5));
        assert_eq!(quantile_sorted(&v, 0.25), Some(1.75));
        assert_eq!(quantile_sorted(&v, 0.75), Some(3.25));
        assert_eq!(quantile_sorted(&[7.0], 0.3), Some(7.0));
        assert_eq!(quantile_sorted(&[], 0.5), None);
    }

    #[test]
    fn spread_of_a_sample() {
        let s = Spread::of(&[5.0, 1.0, 3.0, f64::NAN]).expect("non-empty");
        assert_eq!((s.n, s.median, s.min, s.max), (3, 3.0, 1.0, 5.0));
        assert_eq!(s.iqr(), 2.0);
        assert!(Spread::of(&[]).is_none());
    }

    #[test]
    fn unsorted_quantile_and_median() {
        assert_eq!(median(&[4.0, f64::NAN, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(quantile(&[4.0, 1.0, 3.0, 2.0], 0.25), Some(1.75));
        assert_eq!(median(&[f64::NAN]), None);
        assert_eq!(quantile(&[1.0], 1.5), None);
        assert_eq!(quantile(&[1.0], f64::NAN), None);
    }

    proptest::proptest! {
        #[test]
        fn quantiles_are_monotone(mut v in proptest::collection::vec(-1e6f64..1e6, 1..50), a in 0.0f64..1.0, b in 0.0f64..1.0) {
            v.sort_by(f64::total_cmp);
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            let (x, y) = (quantile_sorted(&v, lo).unwrap_or(0.0), quantile_sorted(&v, hi).unwrap_or(0.0));
            proptest::prop_assert!(x <= y);
            proptest::prop_assert!(v[0] <= x && y <= v[v.len() - 1]);
        }
    }
}
