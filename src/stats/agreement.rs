//! Agreement between two raters on binary outcomes: the observed agreement rate and Cohen's κ, with
//! a cluster-bootstrap interval for κ (whole clusters resampled, so pairs that share a cluster stay
//! together). Numbers in, numbers out: it knows nothing of what the raters are.

use super::bootstrap::SplitMix64;
use super::quantile_sorted;

/// The agreement of two raters over `n` paired binary outcomes.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Agreement {
    /// Pairs compared.
    pub n: usize,
    /// Share of pairs on which the two agree.
    pub rate: f64,
    /// Cohen's κ, `(p_o − p_e) / (1 − p_e)`; `None` when chance agreement is 1 (both raters
    /// constant and equal: κ is undefined, though the rate is 1).
    pub kappa: Option<f64>,
}

/// Observed agreement and Cohen's κ of `pairs` (rater a, rater b). `None` for no pairs.
pub fn agreement(pairs: &[(bool, bool)]) -> Option<Agreement> {
    let n = pairs.len();
    if n == 0 {
        return None;
    }
    let (mut a_yes, mut b_yes, mut same) = (0usize, 0usize, 0usize);
    for &(a, b) in pairs {
        a_yes += usize::from(a);
        b_yes += usize::from(b);
        same += usize::from(a == b);
    }
    let nf = n as f64;
    let p_o = same as f64 / nf;
    let (pa, pb) = (a_yes as f64 / nf, b_yes as f64 / nf);
    let p_e = pa * pb + (1.0 - pa) * (1.0 - pb);
    let kappa = if (1.0 - p_e).abs() < 1e-12 {
        None
    } else {
        Some((p_o - p_e) / (1.0 - p_e))
    };
    Some(Agreement {
        n,
        rate: p_o,
        kappa,
    })
}

/// Percentile cluster-bootstrap interval of κ over `resamples` replicates: each draws
/// `clusters.len()` whole clusters with replacement. Replicates where κ is undefined are left out;
/// `None` when fewer than half of them give a κ, when there is no pair, `resamples == 0` or
/// `confidence` is not in `(0, 1)`. Deterministic in `seed`.
pub fn kappa_ci(
    clusters: &[Vec<(bool, bool)>],
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> Option<(f64, f64)> {
    let clusters: Vec<&Vec<(bool, bool)>> = clusters.iter().filter(|c| !c.is_empty()).collect();
    if clusters.is_empty() || resamples == 0 || !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let k = clusters.len();
    let mut rng = SplitMix64::new(seed);
    let mut pooled = Vec::new();
    let mut kappas = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        pooled.clear();
        for _ in 0..k {
            pooled.extend_from_slice(clusters[rng.below(k)]);
        }
        if let Some(kappa) = agreement(&pooled).and_then(|a| a.kappa) {
            kappas.push(kappa);
        }
    }
    if kappas.len() * 2 < resamples {
        return None;
    }
    kappas.sort_by(f64::total_cmp);
    let alpha = 1.0 - confidence;
    Some((
        quantile_sorted(&kappas, alpha / 2.0)?,
        quantile_sorted(&kappas, 1.0 - alpha / 2.0)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kappa_matches_a_worked_example() {
        // 50 pairs: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no. p_o = 0.7; p_a = 0.5, p_b = 0.6;
        // p_e = 0.3 + 0.2 = 0.5; κ = 0.4.
        let mut pairs = vec![(true, true); 20];
        pairs.extend(vec![(true, false); 5]);
        pairs.extend(vec![(false, true); 10]);
        pairs.extend(vec![(false, false); 15]);
        let a = agreement(&pairs).unwrap();
        assert!((a.rate - 0.7).abs() < 1e-12);
        assert!((a.kappa.unwrap() - 0.4).abs() < 1e-12);
    }

    #[test]
    fn perfect_and_chance_and_undefined() {
        let a = agreement(&[(true, true), (false, false)]).unwrap();
        assert_eq!(a.kappa, Some(1.0));
        // Both constant and equal: agreement 1, κ undefined.
        let a = agreement(&[(true, true), (true, true)]).unwrap();
        assert_eq!((a.rate, a.kappa), (1.0, None));
        // Opposite on every pair.
        let a = agreement(&[(true, false), (false, true)]).unwrap();
        assert_eq!(a.kappa, Some(-1.0));
        assert!(agreement(&[]).is_none());
    }

    #[test]
    fn the_interval_is_deterministic_and_contains_a_perfect_kappa() {
        let clusters: Vec<Vec<(bool, bool)>> = (0..8)
            .map(|i| vec![(i % 2 == 0, i % 2 == 0), (i % 3 == 0, i % 3 == 0)])
            .collect();
        let a = kappa_ci(&clusters, 500, 0.95, 7).unwrap();
        assert_eq!(a, kappa_ci(&clusters, 500, 0.95, 7).unwrap());
        assert_eq!(a, (1.0, 1.0));
        assert!(kappa_ci(&clusters, 0, 0.95, 7).is_none());
    }
}
