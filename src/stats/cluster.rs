//! Means of clustered observations: the ratio estimator with its cluster-robust standard error,
//! Student-t intervals and tests on `clusters − 1` degrees of freedom, a proportion's interval at
//! its effective sample size (Korn & Graubard 1998), the smallest difference a one-sided test can
//! detect, and Bonferroni's level for a family of one-sided intervals.
//!
//! Numbers in, numbers out: a cluster is a `(sum, count)` pair, whatever the caller groups by.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::interval::z_two_sided;

/// The mean of observations that come in clusters (correlated within, independent between),
/// with its cluster-robust standard error.
///
/// For clusters `c = 1..k` with totals `Y_c` over `n_c` observations, the estimate is the ratio
/// `m = ΣY_c / Σn_c` (every observation weighs the same) and its linearised variance is
/// `V = k/(k−1) · Σ(Y_c − m·n_c)² / (Σn_c)²` (the CR1 sandwich of a regression on a constant;
/// Cameron & Miller 2015). Intervals and tests use Student's t with `k − 1` degrees of freedom,
/// since the variance rests on `k` clusters, however many observations they hold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ClusteredMean {
    /// `ΣY_c / Σn_c`.
    pub estimate: f64,
    /// Cluster-robust standard error (NaN with fewer than two clusters: not estimable).
    pub se: f64,
    /// Clusters with at least one observation.
    pub clusters: usize,
    /// Observations (`Σn_c`).
    pub n: f64,
}

impl ClusteredMean {
    /// The mean of `(sum, count)` clusters. Clusters with a count ≤ 0 or a non-finite number are
    /// left out; `None` when none remains.
    pub fn of(clusters: &[(f64, f64)]) -> Option<ClusteredMean> {
        let kept: Vec<(f64, f64)> = clusters
            .iter()
            .copied()
            .filter(|(y, n)| y.is_finite() && n.is_finite() && *n > 0.0)
            .collect();
        if kept.is_empty() {
            return None;
        }
        let k = kept.len();
        let n: f64 = kept.iter().map(|c| c.1).sum();
        let estimate = kept.iter().map(|c| c.0).sum::<f64>() / n;
        let se = if k < 2 {
            f64::NAN
        } else {
            let ss: f64 = kept.iter().map(|(y, c)| (y - estimate * c).powi(2)).sum();
            (k as f64 / (k as f64 - 1.0) * ss).sqrt() / n
        };
        Some(ClusteredMean {
            estimate,
            se,
            clusters: k,
            n,
        })
    }

    /// Degrees of freedom of the t reference: `clusters − 1`.
    pub fn df(&self) -> f64 {
        self.clusters as f64 - 1.0
    }

    /// Two-sided `confidence` interval `m ± t·SE`. `None` with fewer than two clusters or a
    /// level outside `(0, 1)`.
    pub fn interval(&self, confidence: f64) -> Option<(f64, f64)> {
        if !(confidence > 0.0 && confidence < 1.0) {
            return None;
        }
        let t = t_quantile(1.0 - (1.0 - confidence) / 2.0, self.df())?;
        self.se
            .is_finite()
            .then_some((self.estimate - t * self.se, self.estimate + t * self.se))
    }

    /// One-sided bounds at `confidence`: `(m − t·SE, m + t·SE)` with `t` the `confidence`
    /// quantile. Each bound alone is a one-sided interval at that level.
    pub fn one_sided_bounds(&self, confidence: f64) -> Option<(f64, f64)> {
        if !(confidence > 0.0 && confidence < 1.0) {
            return None;
        }
        let t = t_quantile(confidence, self.df())?;
        self.se
            .is_finite()
            .then_some((self.estimate - t * self.se, self.estimate + t * self.se))
    }

    /// Two-sided p-value of "the mean is 0" (t test on `clusters − 1` df). With a zero standard
    /// error it is 1 for a zero estimate and 0 otherwise; with fewer than two clusters it is 1.
    pub fn p_two_sided(&self) -> f64 {
        if !self.se.is_finite() || self.clusters < 2 {
            return 1.0;
        }
        if self.se == 0.0 {
            return if self.estimate == 0.0 { 1.0 } else { 0.0 };
        }
        let Ok(t) = StudentsT::new(0.0, 1.0, self.df()) else {
            return 1.0;
        };
        (2.0 * t.sf((self.estimate / self.se).abs())).clamp(0.0, 1.0)
    }
}

/// The `p`-quantile of Student's t with `df > 0` degrees of freedom. `None` for `p` outside
/// `(0, 1)` or `df ≤ 0` (guards statrs, which panics outside `[0, 1]`).
pub fn t_quantile(p: f64, df: f64) -> Option<f64> {
    if !(p > 0.0 && p < 1.0 && df > 0.0) {
        return None;
    }
    let t = StudentsT::new(0.0, 1.0, df).ok()?.inverse_cdf(p);
    t.is_finite().then_some(t)
}

/// A proportion's two-sided `confidence` interval from its clustered mean, within `[0, 1]`:
/// the Wilson score interval at the Korn–Graubard effective sample size.
///
/// The effective size is `n* = p(1−p)/V` (the clustered variance turned into the number of
/// independent observations it is worth), at most `n`, and `n` itself when `p` is 0 or 1 or the
/// variance is 0 (no design effect can be estimated); it is then scaled by `(z/t)²`, `t` on
/// `clusters − 1` df, so few clusters widen the interval (Korn & Graubard 1998). `None` with
/// fewer than two clusters or a level outside `(0, 1)`.
pub fn clustered_rate_interval(m: &ClusteredMean, confidence: f64) -> Option<(f64, f64)> {
    let z = z_two_sided(confidence)?;
    let t = t_quantile(1.0 - (1.0 - confidence) / 2.0, m.df())?;
    let p = m.estimate.clamp(0.0, 1.0);
    let var = m.se * m.se;
    if !var.is_finite() {
        return None;
    }
    let n_eff = if p > 0.0 && p < 1.0 && var > 0.0 {
        (p * (1.0 - p) / var).min(m.n)
    } else {
        m.n
    };
    let n_adj = n_eff * (z / t).powi(2);
    Some(wilson_real(p, n_adj, z))
}

/// Wilson's score interval for a proportion `p` over a (possibly fractional) `n > 0` at the
/// normal critical value `z`, pinned to `[0, 1]` and around `p`.
fn wilson_real(p: f64, n: f64, z: f64) -> (f64, f64) {
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = z / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    let low = if p <= 0.0 {
        0.0
    } else {
        (centre - half).clamp(0.0, p)
    };
    let high = if p >= 1.0 {
        1.0
    } else {
        (centre + half).clamp(p, 1.0)
    };
    (low, high)
}

/// The smallest true difference a one-sided t test at level `alpha` detects with probability
/// `power`, given the standard error `se` of the estimate and its `clusters`:
/// `(t₁₋α + t_power) · SE` on `clusters − 1` df (the minimum detectable effect; Bloom 1995).
/// `None` for fewer than two clusters, a non-finite `se`, or levels outside `(0, 1)`.
pub fn smallest_detectable_difference(
    se: f64,
    clusters: usize,
    alpha: f64,
    power: f64,
) -> Option<f64> {
    if !se.is_finite() || clusters < 2 {
        return None;
    }
    let df = clusters as f64 - 1.0;
    Some((t_quantile(1.0 - alpha, df)? + t_quantile(power, df)?) * se)
}

/// Bonferroni's level for each of `comparisons` one-sided intervals so that the family's error
/// rate stays at most `alpha`: `alpha / comparisons` (`alpha` itself for none or one).
pub fn bonferroni(alpha: f64, comparisons: usize) -> f64 {
    alpha / comparisons.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_tables() {
        // t(0.975; 7) = 2.364624, t(0.975; 31) = 2.039513, t(0.95; 1) = 6.313752.
        for (p, df, want) in [
            (0.975, 7.0, 2.364_624),
            (0.975, 31.0, 2.039_513),
            (0.95, 1.0, 6.313_752),
        ] {
            let t = t_quantile(p, df).expect("valid");
            assert!((t - want).abs() < 1e-5, "{p} {df}: {t}");
        }
        assert_eq!(t_quantile(1.0, 3.0), None);
        assert_eq!(t_quantile(0.5, 0.0), None);
        assert_eq!(t_quantile(f64::NAN, 3.0), None);
    }

    #[test]
    fn ratio_estimator_and_its_cluster_robust_error() {
        // Clusters (2/4, 4/4, 0/2): m = 6/10; residuals 2−2.4, 4−2.4, 0−1.2.
        let m = ClusteredMean::of(&[(2.0, 4.0), (4.0, 4.0), (0.0, 2.0)]).expect("data");
        assert!((m.estimate - 0.6).abs() < 1e-12);
        let ss: f64 = 0.16 + 2.56 + 1.44;
        assert!((m.se - (1.5 * ss).sqrt() / 10.0).abs() < 1e-12);
        assert_eq!((m.clusters, m.n), (3, 10.0));
        // One cluster: no standard error, no interval.
        let one = ClusteredMean::of(&[(3.0, 4.0), (1.0, 0.0)]).expect("data");
        assert!(one.se.is_nan() && one.interval(0.95).is_none());
        assert_eq!(one.p_two_sided(), 1.0);
        assert!(ClusteredMean::of(&[]).is_none());
    }

    #[test]
    fn zero_variance_tests_by_the_estimate() {
        let same = ClusteredMean::of(&[(-1.0, 1.0), (-2.0, 2.0)]).expect("data");
        assert_eq!((same.se, same.p_two_sided()), (0.0, 0.0));
        let none = ClusteredMean::of(&[(0.0, 1.0), (0.0, 2.0)]).expect("data");
        assert_eq!(none.p_two_sided(), 1.0);
    }

    #[test]
    fn rate_interval_stays_in_the_unit_interval_and_widens_with_fewer_clusters() {
        let many: Vec<(f64, f64)> = (0..32).map(|i| (f64::from(i % 4), 4.0)).collect();
        let few: Vec<(f64, f64)> = (0..4).map(|i| (f64::from(i % 4), 4.0)).collect();
        let (a, b) = (
            ClusteredMean::of(&many).expect("data"),
            ClusteredMean::of(&few).expect("data"),
        );
        let (la, ha) = clustered_rate_interval(&a, 0.95).expect("interval");
        let (lb, hb) = clustered_rate_interval(&b, 0.95).expect("interval");
        assert!(0.0 <= lb && lb < la && la < a.estimate && a.estimate < ha && ha < hb && hb <= 1.0);
        let all = ClusteredMean::of(&[(4.0, 4.0), (4.0, 4.0)]).expect("data");
        let (l, h) = clustered_rate_interval(&all, 0.95).expect("interval");
        assert!(l < 1.0 && h == 1.0);
    }

    #[test]
    fn detectable_difference_shrinks_with_clusters() {
        let d8 = smallest_detectable_difference(0.02, 8, 0.05, 0.8).expect("value");
        let d32 = smallest_detectable_difference(0.02, 32, 0.05, 0.8).expect("value");
        assert!(d32 < d8);
        // z-limit: (1.645 + 0.842)·SE.
        let big = smallest_detectable_difference(1.0, 100_000, 0.05, 0.8).expect("value");
        assert!((big - 2.486).abs() < 0.01, "{big}");
        assert_eq!(smallest_detectable_difference(0.02, 1, 0.05, 0.8), None);
        assert_eq!(bonferroni(0.05, 10), 0.005);
        assert_eq!(bonferroni(0.05, 0), 0.05);
    }
}
