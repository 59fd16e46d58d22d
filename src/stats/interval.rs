//! Confidence intervals for proportions (Wilson score interval) and the [`Interval`] value type.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal};

/// A closed interval `[low, high]`, e.g. a confidence interval.
///
/// The interval functions of this module return plain `(low, high)` tuples; this type is the
/// serialisable form of such a tuple (`Interval::from((low, high))`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// Whether `x` lies in `[low, high]` (false for NaN).
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }

    /// `high - low`.
    pub fn width(&self) -> f64 {
        self.high - self.low
    }
}

impl From<(f64, f64)> for Interval {
    fn from((low, high): (f64, f64)) -> Interval {
        Interval { low, high }
    }
}

impl From<Interval> for (f64, f64) {
    fn from(i: Interval) -> (f64, f64) {
        (i.low, i.high)
    }
}

/// Two-sided standard-normal critical value `z` with `P(|Z| ≤ z) = confidence`
/// (1.959964 for 0.95).
///
/// `None` unless `0 < confidence < 1` (so NaN gives `None`); also `None` if the value is not finite.
/// Guards the argument of statrs' `inverse_cdf`, which panics outside `[0, 1]`.
pub fn z_two_sided(confidence: f64) -> Option<f64> {
    if !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let q = 1.0 - (1.0 - confidence) / 2.0;
    if !(0.0..=1.0).contains(&q) {
        return None;
    }
    let z = Normal::standard().inverse_cdf(q);
    z.is_finite().then_some(z)
}

/// Wilson score interval for a binomial proportion `successes / n` at the given two-sided
/// `confidence` (e.g. `0.95`).
///
/// With `p̂ = successes / n` and `z` the two-sided normal critical value:
/// `(p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n)`.
/// The result lies in `[0, 1]`, always contains `p̂`, and is exactly `0` at the bottom for
/// `successes = 0` and exactly `1` at the top for `successes = n`.
///
/// `None` when `n == 0`, when `successes > n`, or when `confidence` is not in `(0, 1)`.
pub fn wilson(successes: usize, n: usize, confidence: f64) -> Option<(f64, f64)> {
    if n == 0 || successes > n {
        return None;
    }
    let z = z_two_sided(confidence)?;
    let nf = n as f64;
    let p = successes as f64 / nf;
    let z2 = z * z;
    let denom = 1.0 + z2 / nf;
    let centre = (p + z2 / (2.0 * nf)) / denom;
    let half = z / denom * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).sqrt();
    // Rounding can push the bounds a hair past p̂ or out of [0, 1]; pin them.
    let low = if successes == 0 {
        0.0
    } else {
        (centre - half).clamp(0.0, p)
    };
    let high = if successes == n {
        1.0
    } else {
        (centre + half).clamp(p, 1.0)
    };
    Some((low, high))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z_for_usual_levels() {
        let z = z_two_sided(0.95).expect("valid level");
        assert!((z - 1.959_963_984_540_054).abs() < 1e-9, "{z}");
        let z = z_two_sided(0.90).expect("valid level");
        assert!((z - 1.644_853_626_951_472).abs() < 1e-9, "{z}");
    }

    #[test]
    fn z_rejects_bad_levels_without_panicking() {
        for c in [
            0.0,
            1.0,
            -0.5,
            1.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            assert_eq!(z_two_sided(c), None, "{c}");
        }
        // So close to 1 that the quantile is infinite or nearly so: never panics.
        let _ = z_two_sided(1.0 - f64::EPSILON);
    }

    #[test]
    fn interval_conversions() {
        let i = Interval::from((0.25, 0.75));
        assert!(i.contains(0.5) && !i.contains(0.8) && !i.contains(f64::NAN));
        assert_eq!(i.width(), 0.5);
        assert_eq!(<(f64, f64)>::from(i), (0.25, 0.75));
    }
}
