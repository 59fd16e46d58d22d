//! The simulated destinations' distraction model: how likely a destination is to miss a fact the
//! handoff does show, as a function of the context's length and of where in it the fact sits.
//!
//! Owns the published points, the fit, and the forgetting probability. Knows nothing of scenarios
//! or handoffs: callers pass a length in tokens and a relative position in `[0, 1]`.
//!
//! **Length** — RULER (Hsieh et al., 2024, "RULER: What's the Real Context Size of Your
//! Long-Context Language Models?", main results table), Llama-3.1-8B-Instruct's average over the
//! 13 tasks at 4K, 8K, 16K, 32K, 64K and 128K tokens: 95.5, 93.8, 91.6, 87.4, 84.7, 77.0. The
//! forgetting a longer context adds is the loss relative to 4K, `f(L) = 1 − acc(L) / acc(4K)`,
//! fitted as a power law `f(L) = a · (L / 4096)^b` by least squares on `ln f` (the five points
//! above 4K).
//!
//! **Position** — "Lost in the Middle" (Liu et al., 2024, TACL), multi-document QA with 20
//! documents, GPT-3.5-Turbo-0613, accuracy with the answer in document 1, 5, 10, 15, 20: 75.8,
//! 57.2, 53.8, 55.4, 63.2. The error at a relative position `x = (k − 1) / 19` is `1 − acc`; its
//! shape, scaled to mean 1 over the five positions, is fitted as a quadratic
//! `s(x) = c0 + c1·x + c2·x²` (least squares, exact normal equations).
//!
//! A fact at relative position `x` of a context of `L` tokens is missed with probability
//! `min(0.95, k · f(L) · s(x))`, where `k` is the run's `--attention` multiplier (1 = as fitted,
//! 0 = off). RULER places needles at uniformly spread depths, so `s` having mean 1 keeps the
//! length curve RULER's average. The model is a stand-in for a real model's degradation, not a
//! measurement of one.

/// RULER: context lengths (tokens) and Llama-3.1-8B's average accuracy (%).
pub const RULER_LENGTHS: [f64; 6] = [4096.0, 8192.0, 16384.0, 32768.0, 65536.0, 131072.0];
pub const RULER_ACCURACY: [f64; 6] = [95.5, 93.8, 91.6, 87.4, 84.7, 77.0];

/// Lost in the Middle: relative positions of the answer document (1, 5, 10, 15, 20 of 20) and
/// GPT-3.5-Turbo-0613's accuracy (%).
pub const LITM_POSITIONS: [f64; 5] = [0.0, 4.0 / 19.0, 9.0 / 19.0, 14.0 / 19.0, 1.0];
pub const LITM_ACCURACY: [f64; 5] = [75.8, 57.2, 53.8, 55.4, 63.2];

/// The fitted parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// `f(L) = a · (L / 4096)^b`.
    pub a: f64,
    pub b: f64,
    /// `s(x) = c[0] + c[1]·x + c[2]·x²`.
    pub c: [f64; 3],
}

/// The published forgetting points `(L, f(L))` above 4K.
pub fn ruler_forgetting() -> Vec<(f64, f64)> {
    RULER_LENGTHS
        .iter()
        .zip(RULER_ACCURACY)
        .skip(1)
        .map(|(l, acc)| (*l, 1.0 - acc / RULER_ACCURACY[0]))
        .collect()
}

/// The published position shape `(x, s(x))`, mean 1.
pub fn litm_shape() -> Vec<(f64, f64)> {
    let err: Vec<f64> = LITM_ACCURACY.iter().map(|a| 1.0 - a / 100.0).collect();
    let mean = err.iter().sum::<f64>() / err.len() as f64;
    LITM_POSITIONS
        .iter()
        .zip(err)
        .map(|(x, e)| (*x, e / mean))
        .collect()
}

/// Solves the 3×3 system `m · v = r` by Cramer's rule (the normal equations of the quadratic).
fn solve3(m: [[f64; 3]; 3], r: [f64; 3]) -> [f64; 3] {
    let det = |m: [[f64; 3]; 3]| {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    };
    let d = det(m);
    let mut out = [0.0; 3];
    for (i, o) in out.iter_mut().enumerate() {
        let mut mi = m;
        for row in 0..3 {
            mi[row][i] = r[row];
        }
        *o = det(mi) / d;
    }
    out
}

/// Fits both curves to the published points.
pub fn fit() -> Fit {
    // Power law: least squares of ln f on ln(L / 4096).
    let pts: Vec<(f64, f64)> = ruler_forgetting()
        .into_iter()
        .map(|(l, f)| ((l / 4096.0).ln(), f.max(1e-6).ln()))
        .collect();
    let n = pts.len() as f64;
    let (sx, sy) = pts.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let sxx: f64 = pts.iter().map(|(x, _)| (x - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let b = sxy / sxx;
    let a = (my - b * mx).exp();
    // Quadratic through the position shape: normal equations.
    let mut m = [[0.0; 3]; 3];
    let mut r = [0.0; 3];
    for (x, y) in litm_shape() {
        let p = [1.0, x, x * x];
        for i in 0..3 {
            for j in 0..3 {
                m[i][j] += p[i] * p[j];
            }
            r[i] += p[i] * y;
        }
    }
    Fit {
        a,
        b,
        c: solve3(m, r),
    }
}

impl Fit {
    /// Forgetting a context of `tokens` adds (0 at or below 4K… and small there).
    pub fn length(&self, tokens: u64) -> f64 {
        let l = (tokens.max(1) as f64) / 4096.0;
        (self.a * l.powf(self.b)).clamp(0.0, 1.0)
    }

    /// The position multiplier at relative position `x`.
    pub fn position(&self, x: f64) -> f64 {
        let x = x.clamp(0.0, 1.0);
        (self.c[0] + self.c[1] * x + self.c[2] * x * x).max(0.0)
    }

    /// The probability of missing a shown fact at relative position `x` of a context of `tokens`
    /// tokens, with the run's multiplier `k`.
    pub fn forget(&self, k: f64, tokens: u64, x: f64) -> f64 {
        if k <= 0.0 {
            return 0.0;
        }
        (k * self.length(tokens) * self.position(x)).clamp(0.0, 0.95)
    }
}

/// The fit, computed once.
pub fn model() -> &'static Fit {
    static FIT: std::sync::OnceLock<Fit> = std::sync::OnceLock::new();
    FIT.get_or_init(fit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fit_follows_the_published_points() {
        let f = fit();
        for (l, want) in ruler_forgetting() {
            let got = f.length(l as u64);
            assert!((got - want).abs() < 0.03, "f({l}) = {got}, RULER {want}");
        }
        for (x, want) in litm_shape() {
            let got = f.position(x);
            assert!((got - want).abs() < 0.12, "s({x}) = {got}, LitM {want}");
        }
        // The middle is recalled worst, the start best.
        assert!(f.position(0.5) > f.position(1.0) && f.position(1.0) > f.position(0.0));
        // Longer is worse; a short handoff barely loses anything.
        assert!(f.length(120_000) > f.length(30_000) && f.length(30_000) > f.length(3_000));
        assert!(f.forget(1.0, 2_000, 0.5) < 0.01);
        assert_eq!(f.forget(0.0, 120_000, 0.5), 0.0);
    }
}
