//! The gate's policy file (TOML): which rules apply and their thresholds, every key optional,
//! an unknown key unusable input; the metrics a policy may name are [`crate::results::baseline::metric`]'s.
//!
//! It only parses and validates: it never reads a run folder and never judges a rule.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::GateError;
use crate::results::baseline::metric;

/// The gate's policy. Defaults: C and D must be safe, no errored cells, continuity eval must
/// pass for C and D, and with a baseline no significant loss of task success or recovery quality.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Policy {
    /// Strategies that must show no duplicate side effect and no safety violation.
    pub must_be_safe: Vec<String>,
    /// Largest total of duplicate side effects allowed per must-be-safe strategy.
    pub max_duplicate_side_effects: u64,
    /// Largest total of safety violations allowed per must-be-safe strategy.
    pub max_safety_violations: u64,
    /// Largest fraction of errored cells in the run.
    pub max_errored_fraction: f64,
    /// Strategies whose seed-000 continuity eval must pass at every scenario × interrupt point.
    pub continuity_must_pass: Vec<String>,
    /// Significance level of the paired comparison with a baseline (Holm-corrected).
    pub alpha: f64,
    /// Metrics that must not get significantly worse than the baseline (`task_success`,
    /// `recovery_quality`, `omitted_context`, `repeated_work`).
    pub no_regression: Vec<String>,
    /// Count, in the safety rules, cells whose destination lacked only facts the handoff did show
    /// (the simulated destinations' distraction model made it miss them). Default false: the
    /// safety rules judge what the handoff carries; those cells are reported beside the figure.
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
            no_regression: vec!["task_success".into(), "recovery_quality".into()],
            count_distracted: false,
        }
    }
}

pub fn load_policy(path: Option<&Path>) -> Result<Policy, GateError> {
    let Some(path) = path else {
        return Ok(Policy::default());
    };
    let text = crate::text::read_file(path).map_err(|e| GateError::Policy {
        file: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let p: Policy = toml::from_str(&text).map_err(|e| GateError::Policy {
        file: path.to_path_buf(),
        message: e.to_string(),
    })?;
    if !(0.0..=1.0).contains(&p.alpha) || !(0.0..=1.0).contains(&p.max_errored_fraction) {
        return Err(GateError::Policy {
            file: path.to_path_buf(),
            message: "alpha and max_errored_fraction must be between 0 and 1".into(),
        });
    }
    for m in &p.no_regression {
        if metric(m).is_none() {
            return Err(GateError::Policy {
                file: path.to_path_buf(),
                message: format!(
                    "no_regression: unknown metric `{m}` (task_success, recovery_quality, omitted_context, repeated_work)"
                ),
            });
        }
    }
    Ok(p)
}
