//! pass^k (all of k attempts succeed) and pass@k (at least one of k succeeds), estimated without
//! bias from `n` repetitions with `c` successes.

/// Unbiased estimate of pass^k — the probability that `k` independent attempts *all* succeed —
/// from `c` successes in `n` repetitions: `C(c, k) / C(n, k)` (the chance that `k` of the `n`
/// recorded attempts drawn without replacement are all successes).
///
/// Computed as the product `∏_{i<k} (c − i) / (n − i)`, which never overflows and is exactly 0
/// when `c < k`. `pass_hat_k(c, n, 0) == 1`; `pass_hat_k(c, n, 1) == c / n`; non-increasing in `k`.
///
/// `None` when `n == 0`, `k > n` or `c > n`.
pub fn pass_hat_k(c: usize, n: usize, k: usize) -> Option<f64> {
    if n == 0 || k > n || c > n {
        return None;
    }
    if c < k {
        return Some(0.0);
    }
    let mut p = 1.0;
    for i in 0..k {
        p *= (c - i) as f64 / (n - i) as f64;
    }
    Some(p)
}

/// Mean of [`pass_hat_k`] over tasks, each given as `(successes, repetitions)`.
///
/// `None` when `per_task` is empty or any task's estimate is undefined (`n == 0`, `k > n` or
/// `c > n`): a task with fewer than `k` repetitions cannot be estimated, and silently leaving it
/// out would bias the mean.
pub fn pass_hat_k_mean(per_task: &[(usize, usize)], k: usize) -> Option<f64> {
    if per_task.is_empty() {
        return None;
    }
    let mut sum = 0.0;
    for &(c, n) in per_task {
        sum += pass_hat_k(c, n, k)?;
    }
    Some(sum / per_task.len() as f64)
}

/// Unbiased estimate of pass@k — the probability that at least one of `k` attempts succeeds —
/// from `c` successes in `n` repetitions: `1 − C(n − c, k) / C(n, k)` (Chen et al. 2021).
///
/// `None` when `n == 0`, `k > n` or `c > n`.
pub fn pass_at_k(c: usize, n: usize, k: usize) -> Option<f64> {
    if c > n {
        return None;
    }
    Some(1.0 - pass_hat_k(n - c, n, k)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_cases() {
        assert_eq!(pass_hat_k(3, 5, 0), Some(1.0));
        assert_eq!(pass_hat_k(3, 5, 6), None);
        assert_eq!(pass_hat_k(0, 0, 0), None);
        assert_eq!(pass_hat_k(6, 5, 1), None);
        assert_eq!(pass_hat_k(2, 5, 3), Some(0.0));
        assert_eq!(pass_hat_k(5, 5, 5), Some(1.0));
        assert_eq!(pass_at_k(0, 5, 2), Some(0.0));
        assert_eq!(pass_at_k(6, 5, 2), None);
    }

    #[test]
    fn huge_counts_do_not_overflow() {
        let p = pass_hat_k(usize::MAX / 2, usize::MAX, 3).expect("valid");
        assert!((p - 0.125).abs() < 1e-12, "{p}");
        let p = pass_hat_k(900, 1000, 200).expect("valid");
        assert!(p.is_finite() && p > 0.0 && p < 0.9f64.powi(200));
    }
}
