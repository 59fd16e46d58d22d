//! Seeded percentile bootstrap of the median, by cluster or by observation.
//!
//! The generator is a hand-written SplitMix64 (Steele, Lea & Flood 2014; the seeding generator of
//! xoshiro), so results depend only on the data, the number of resamples, the confidence level
//! and the seed — not on any crate's version.

use super::quantile_sorted;

/// SplitMix64 pseudo-random generator: tiny, fast, deterministic, statistically fine for
/// resampling (not for cryptography).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose whole output is determined by `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform float in `[0, 1)` (the top 53 bits).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A uniform integer in `0..bound`, without modulo bias (Lemire's multiply-and-reject).
    /// Returns 0 when `bound` is 0.
    pub fn below(&mut self, bound: usize) -> usize {
        if bound <= 1 {
            return 0;
        }
        let s = bound as u64;
        let mut m = u128::from(self.next_u64()) * u128::from(s);
        if (m as u64) < s {
            let threshold = s.wrapping_neg() % s;
            while (m as u64) < threshold {
                m = u128::from(self.next_u64()) * u128::from(s);
            }
        }
        (m >> 64) as usize
    }
}

/// A seed for an independent stream `stream` derived from a run seed, so that several bootstraps
/// seeded from one run seed do not share their random numbers. Deterministic.
pub fn derive_seed(seed: u64, stream: u64) -> u64 {
    let mut g = SplitMix64::new(seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03));
    g.next_u64()
}

/// Type-7 median of `v`, reordering `v` in place (selection, not a full sort). `v` non-empty.
fn median_in_place(v: &mut [f64]) -> f64 {
    let len = v.len();
    let h = (len - 1) as f64 * 0.5;
    let lo = (len - 1) / 2;
    let (_, a, right) = v.select_nth_unstable_by(lo, f64::total_cmp);
    let a = *a;
    if len % 2 == 1 {
        return a;
    }
    let b = right.iter().copied().min_by(f64::total_cmp).unwrap_or(a);
    a + (h - lo as f64) * (b - a)
}

/// Core: percentile interval of the median over `resamples` cluster resamples. Clusters are
/// non-empty and finite.
fn median_ci_of_clusters(
    clusters: &[&[f64]],
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> Option<(f64, f64)> {
    if clusters.is_empty() || resamples == 0 || !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let k = clusters.len();
    let total: usize = clusters.iter().map(|c| c.len()).sum();
    let mut rng = SplitMix64::new(seed);
    let mut pooled: Vec<f64> = Vec::with_capacity(total * 2);
    let mut medians: Vec<f64> = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        pooled.clear();
        for _ in 0..k {
            pooled.extend_from_slice(clusters[rng.below(k)]);
        }
        medians.push(median_in_place(&mut pooled));
    }
    medians.sort_by(f64::total_cmp);
    let alpha = 1.0 - confidence;
    let low = quantile_sorted(&medians, (alpha / 2.0).clamp(0.0, 1.0))?;
    let high = quantile_sorted(&medians, (1.0 - alpha / 2.0).clamp(0.0, 1.0))?;
    Some((low, high))
}

/// Cluster-bootstrap percentile confidence interval of the median.
///
/// Each of the `resamples` replicates draws `clusters.len()` whole clusters uniformly *with
/// replacement*, pools all their values and takes the type-7 median of the pool; the interval is
/// the type-7 `(1−confidence)/2` and `(1+confidence)/2` quantiles of the replicate medians
/// (percentile method). Resampling whole clusters keeps correlated observations (e.g. all values
/// that came from one underlying unit) together, so the interval reflects between-cluster
/// variation instead of pretending the pooled values are independent.
///
/// Deterministic: the same inputs and `seed` always give the same interval ([`SplitMix64`]).
/// Use [`derive_seed`] to give each of several bootstraps its own stream from one run seed.
///
/// Non-finite values (NaN, ±∞) are left out; clusters left empty are dropped. `None` when no
/// value remains, when `resamples == 0`, or when `confidence` is not in `(0, 1)`.
///
/// Both bounds lie within the minimum and maximum of the (finite) data and `low ≤ high`. The
/// percentile interval need not contain the sample median exactly; with very few clusters it is
/// coarse (there are only so many distinct resamples).
pub fn bootstrap_median_ci(
    clusters: &[Vec<f64>],
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> Option<(f64, f64)> {
    let cleaned: Vec<Vec<f64>> = clusters
        .iter()
        .map(|c| {
            c.iter()
                .copied()
                .filter(|x| x.is_finite())
                .collect::<Vec<f64>>()
        })
        .filter(|c| !c.is_empty())
        .collect();
    let refs: Vec<&[f64]> = cleaned.iter().map(Vec::as_slice).collect();
    median_ci_of_clusters(&refs, resamples, confidence, seed)
}

/// Ordinary (unclustered) bootstrap percentile interval of the median: every value is its own
/// cluster, i.e. [`bootstrap_median_ci`] with singleton clusters (same random stream for the same
/// seed). Only appropriate when the values are independent.
///
/// Non-finite values are left out; `None` as for [`bootstrap_median_ci`].
pub fn bootstrap_median_ci_unclustered(
    values: &[f64],
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> Option<(f64, f64)> {
    let refs: Vec<&[f64]> = values
        .iter()
        .filter(|x| x.is_finite())
        .map(std::slice::from_ref)
        .collect();
    median_ci_of_clusters(&refs, resamples, confidence, seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_output() {
        // Reference values of SplitMix64 seeded with 0 (as in the xoshiro authors' splitmix64.c).
        let mut g = SplitMix64::new(0);
        assert_eq!(g.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(g.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(g.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut g = SplitMix64::new(42);
        let mut seen = [0usize; 7];
        for _ in 0..7000 {
            let i = g.below(7);
            assert!(i < 7);
            seen[i] += 1;
        }
        assert!(seen.iter().all(|&c| c > 800), "{seen:?}");
        assert_eq!(g.below(0), 0);
        assert_eq!(g.below(1), 0);
    }

    #[test]
    fn median_in_place_is_type7() {
        assert_eq!(median_in_place(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median_in_place(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median_in_place(&mut [5.0]), 5.0);
        assert_eq!(median_in_place(&mut [5.0, 5.0]), 5.0);
    }

    #[test]
    fn derived_seeds_differ_by_stream() {
        assert_ne!(derive_seed(1, 0), derive_seed(1, 1));
        assert_eq!(derive_seed(7, 3), derive_seed(7, 3));
    }
}
