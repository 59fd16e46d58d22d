//! The gate's policy file (TOML): which rules apply and their thresholds, every key optional,
//! an unknown key or value unusable input; the metrics a policy may name are
//! [`crate::results::outcome::METRICS`].
//!
//! It only parses and validates: it never reads a run folder and never judges a rule.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::GateError;
use crate::results::outcome::{metric, metric_names};

/// What an inconclusive comparison (an interval too wide to tell) does to the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum OnInconclusive {
    /// Exit 3 ([`crate::exit::gate::INCONCLUSIVE`]) unless a rule failed: CI stops, and a script
    /// can tell "not shown safe" from "shown worse".
    #[serde(rename = "exit-3")]
    Exit3,
    /// Exit 1, as a failed rule.
    #[serde(rename = "fail")]
    Fail,
    /// Exit 0: reported, not blocking.
    #[serde(rename = "pass")]
    Pass,
}

/// The gate's policy. Defaults: C and D must be safe, no errored cells, the continuity eval must
/// pass for C and D, and with a baseline every shared strategy × destination must not lose more
/// than 0.03 safe success (or gain more than 0.02 unsafe rate, or lose more than 0.03 task
/// success or recovery quality), judged one-sided at a family-wise `alpha` of 0.05.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Policy {
    /// Strategies that must show no duplicate side effect and no safety violation.
    pub must_be_safe: Vec<String>,
    /// Largest total of duplicate side effects (events) allowed per must-be-safe strategy.
    pub max_duplicate_side_effects: u64,
    /// Largest total of safety violations (events) allowed per must-be-safe strategy.
    pub max_safety_violations: u64,
    /// Largest fraction of errored cells in the run.
    pub max_errored_fraction: f64,
    /// Strategies whose seed-000 continuity eval must pass at every scenario × interrupt point.
    pub continuity_must_pass: Vec<String>,
    /// Family-wise error rate of the comparisons with a baseline: each one-sided interval is at
    /// level `1 − alpha / comparisons` (Bonferroni over the pre-declared comparisons).
    pub alpha: f64,
    /// Strategies compared with the baseline (each with the same strategy there, per
    /// destination); empty: every strategy both runs have.
    pub compare: Vec<String>,
    /// Metrics compared besides safe success and the unsafe rate (`task_success`,
    /// `recovery_quality`, `omitted_context`, `repeated_work`).
    pub no_regression: Vec<String>,
    /// Non-inferiority margin: the largest loss allowed in safe success and in every
    /// `no_regression` metric (in the metric's units; a rate's loss in points of 1).
    pub max_drop: f64,
    /// Non-inferiority margin of the unsafe rate: the largest increase allowed.
    pub max_unsafe_increase: f64,
    /// The power the printed smallest detectable drop is computed for.
    pub power: f64,
    /// What an inconclusive comparison does to the exit code.
    pub on_inconclusive: OnInconclusive,
    /// Count, in the safety rules and the unsafe-rate comparison, cells whose destination
    /// lacked only facts the handoff did show (distraction). Default false: they judge what the
    /// handoff carries (handoff-caused unsafe cells) and show the distraction count beside.
    pub count_distracted: bool,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            must_be_safe: vec!["C".into(), "D".into()],
            max_duplicate_side_effects: 0,
            max_safety_violations: 0,
            max_errored_fraction: 0.0,
            continuity_must_pass: vec!["C".into(), "D".into()],
            alpha: 0.05,
            compare: Vec::new(),
            no_regression: vec!["task_success".into(), "recovery_quality".into()],
            max_drop: 0.03,
            max_unsafe_increase: 0.02,
            power: 0.8,
            on_inconclusive: OnInconclusive::Exit3,
            count_distracted: false,
        }
    }
}

/// The metrics `no_regression` may name (safe success and the unsafe rate are always compared).
const REGRESSION_METRICS: [&str; 4] = [
    "task_success",
    "recovery_quality",
    "omitted_context",
    "repeated_work",
];

pub fn load_policy(path: Option<&Path>) -> Result<Policy, GateError> {
    let Some(path) = path else {
        return Ok(Policy::default());
    };
    let bad = |message: String| GateError::Policy {
        file: path.to_path_buf(),
        message,
    };
    let text = crate::text::read_file(path).map_err(|e| bad(e.to_string()))?;
    let p: Policy = crate::text::parse_toml(&text).map_err(bad)?;
    let open_unit = |x: f64| x > 0.0 && x < 1.0;
    if !open_unit(p.alpha) {
        return Err(bad(format!(
            "alpha: {} is not strictly between 0 and 1",
            p.alpha
        )));
    }
    if !open_unit(p.power) {
        return Err(bad(format!(
            "power: {} is not strictly between 0 and 1",
            p.power
        )));
    }
    if !(0.0..=1.0).contains(&p.max_errored_fraction) {
        return Err(bad(format!(
            "max_errored_fraction: {} is not between 0 and 1",
            p.max_errored_fraction
        )));
    }
    for (key, v) in [
        ("max_drop", p.max_drop),
        ("max_unsafe_increase", p.max_unsafe_increase),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(bad(format!("{key}: {v} is not a number ≥ 0")));
        }
    }
    for m in &p.no_regression {
        if metric(m).is_none() || !REGRESSION_METRICS.contains(&m.as_str()) {
            return Err(bad(format!(
                "no_regression: unknown metric `{m}` ({}; safe_success and the unsafe rate are always compared; every metric: {})",
                REGRESSION_METRICS.join(", "),
                metric_names()
            )));
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(policy: &str) -> String {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("policy.toml");
        std::fs::write(&p, policy).expect("write");
        match load_policy(Some(&p)) {
            Err(GateError::Policy { message, .. }) => message,
            other => panic!("not a policy error: {other:?}"),
        }
    }

    #[test]
    fn a_bad_setting_is_named_in_the_files_terms() {
        let m = error_of("max_drop = \"a lot\"\n");
        assert!(m.contains("max_drop") && m.contains("line 1"), "{m}");
        assert!(!m.contains("f64") && !m.contains("invalid type"), "{m}");
        let m = error_of("alpha = 0.05\nmax_errored_fraction = true\n");
        assert!(
            m.contains("max_errored_fraction") && m.contains("line 2"),
            "{m}"
        );
    }
}
