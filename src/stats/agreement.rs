//! Agreement between two raters on binary or categorical outcomes: the observed agreement rate and
//! Cohen's κ, with a cluster-bootstrap interval for κ (whole clusters resampled, so pairs that
//! share a cluster stay together), the confusion table, and Kendall's τ-b between two raters'
//! scores of the same items. Numbers in, numbers out: it knows nothing of what the raters are.

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
    agreement_of(pairs)
}

/// Observed agreement and Cohen's κ of categorical `pairs`: `p_e` is the sum over categories of
/// the product of the two raters' marginal shares. `None` for no pairs.
pub fn agreement_of<T: Ord + Copy>(pairs: &[(T, T)]) -> Option<Agreement> {
    let n = pairs.len();
    if n == 0 {
        return None;
    }
    let mut a_count: std::collections::BTreeMap<T, usize> = Default::default();
    let mut b_count: std::collections::BTreeMap<T, usize> = Default::default();
    let mut same = 0usize;
    for &(a, b) in pairs {
        *a_count.entry(a).or_default() += 1;
        *b_count.entry(b).or_default() += 1;
        same += usize::from(a == b);
    }
    let nf = n as f64;
    let p_o = same as f64 / nf;
    let p_e: f64 = a_count
        .iter()
        .map(|(c, na)| (*na as f64 / nf) * (b_count.get(c).copied().unwrap_or(0) as f64 / nf))
        .sum();
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

/// The confusion table of `pairs` over `categories` (rows: rater a, columns: rater b); a pair
/// with a category not listed is not counted.
pub fn confusion<T: PartialEq + Copy>(pairs: &[(T, T)], categories: &[T]) -> Vec<Vec<usize>> {
    let mut table = vec![vec![0usize; categories.len()]; categories.len()];
    for &(a, b) in pairs {
        let (Some(i), Some(j)) = (
            categories.iter().position(|c| *c == a),
            categories.iter().position(|c| *c == b),
        ) else {
            continue;
        };
        table[i][j] += 1;
    }
    table
}

/// Kendall's τ-b between two raters' scores of the same items (`a[i]` and `b[i]` score item
/// `i`): concordant minus discordant pairs over the geometric mean of the pairs untied in each,
/// so ties in either rater are allowed. `None` for unequal lengths, fewer than two items, a NaN,
/// or a rater whose every score is tied (τ-b is undefined).
pub fn kendall_tau_b(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() || a.len() < 2 || a.iter().chain(b).any(|x| x.is_nan()) {
        return None;
    }
    let (mut concordant, mut discordant, mut untied_a, mut untied_b) = (0i64, 0i64, 0i64, 0i64);
    for i in 0..a.len() {
        for j in i + 1..a.len() {
            let da = a[i].total_cmp(&a[j]) as i64;
            let db = b[i].total_cmp(&b[j]) as i64;
            untied_a += i64::from(da != 0);
            untied_b += i64::from(db != 0);
            match da * db {
                1 => concordant += 1,
                -1 => discordant += 1,
                _ => {}
            }
        }
    }
    if untied_a == 0 || untied_b == 0 {
        return None;
    }
    Some((concordant - discordant) as f64 / ((untied_a as f64) * (untied_b as f64)).sqrt())
}

/// Percentile cluster-bootstrap interval of κ over `resamples` replicates: each draws
/// `clusters.len()` whole clusters with replacement. Replicates where κ is undefined are left out;
/// `None` when fewer than half of them give a κ, when there is no pair, `resamples == 0` or
/// `confidence` is not in `(0, 1)`. Deterministic in `seed`.
pub fn kappa_ci<T: Ord + Copy>(
    clusters: &[Vec<(T, T)>],
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> Option<(f64, f64)> {
    let clusters: Vec<&Vec<(T, T)>> = clusters.iter().filter(|c| !c.is_empty()).collect();
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
        if let Some(kappa) = agreement_of(&pooled).and_then(|a| a.kappa) {
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
    fn categorical_kappa_matches_a_worked_example() {
        // Three categories, 10 pairs: 6 on the diagonal. Marginals a = (4, 3, 3), b = (3, 4, 3):
        // p_e = (12 + 12 + 9) / 100 = 0.33; κ = (0.6 − 0.33) / 0.67.
        let pairs = [
            (0, 0),
            (0, 0),
            (0, 1),
            (0, 2),
            (1, 1),
            (1, 1),
            (1, 0),
            (2, 2),
            (2, 2),
            (2, 1),
        ];
        let a = agreement_of(&pairs).unwrap();
        assert!((a.rate - 0.6).abs() < 1e-12);
        assert!((a.kappa.unwrap() - 0.27 / 0.67).abs() < 1e-12);
        let t = confusion(&pairs, &[0, 1, 2]);
        assert_eq!(t, vec![vec![2, 1, 1], vec![1, 2, 0], vec![0, 1, 2]]);
        // Binary pairs read the same either way.
        let b = [(true, true), (true, false), (false, false), (false, false)];
        assert_eq!(agreement(&b), agreement_of(&b));
    }

    #[test]
    fn kendall_tau_b_known_values() {
        assert_eq!(
            kendall_tau_b(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0]),
            Some(1.0)
        );
        assert_eq!(
            kendall_tau_b(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]),
            Some(-1.0)
        );
        // One tie in b: pairs (1,2) C, (1,3) C, (2,3) tied in b. τ-b = 2 / sqrt(3 · 2).
        let t = kendall_tau_b(&[1.0, 2.0, 3.0], &[1.0, 2.0, 2.0]).unwrap();
        assert!((t - 2.0 / 6f64.sqrt()).abs() < 1e-12);
        assert_eq!(kendall_tau_b(&[1.0, 1.0], &[1.0, 2.0]), None);
        assert_eq!(kendall_tau_b(&[1.0], &[1.0]), None);
        assert_eq!(kendall_tau_b(&[1.0, 2.0], &[1.0]), None);
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
