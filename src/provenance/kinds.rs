//! What an override takes away and what it targets: the names the rule check, `check-handoff`
//! and the continuity report use. Owns the two enums and their words; reads no text.

use crate::lexicon::get as lex;

/// What an override takes away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OverrideKind {
    /// A constraint (a prohibition, a limit, a freeze) voided or weakened.
    ConstraintWeakened,
    /// A stop condition removed: work goes on where it must halt.
    StopConditionRemoved,
    /// An approval requirement or a reconcile / verify obligation removed.
    ObligationRemoved,
}

impl OverrideKind {
    /// The rule name `check-handoff`, the text rule check and the continuity eval report.
    pub fn rule(self) -> &'static str {
        match self {
            OverrideKind::ConstraintWeakened => "constraint_weakened",
            OverrideKind::StopConditionRemoved => "stop_condition_removed",
            OverrideKind::ObligationRemoved => "obligation_removed",
        }
    }
}

/// What an override targets, in the statement's own words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    Constraint,
    StopCondition,
    Approval,
    Reconcile,
}

impl Target {
    pub(super) const ALL: [Target; 4] = [
        Target::Constraint,
        Target::StopCondition,
        Target::Approval,
        Target::Reconcile,
    ];

    pub(super) fn kind(self) -> OverrideKind {
        match self {
            Target::Constraint => OverrideKind::ConstraintWeakened,
            Target::StopCondition => OverrideKind::StopConditionRemoved,
            Target::Approval | Target::Reconcile => OverrideKind::ObligationRemoved,
        }
    }

    pub(super) fn words(self) -> &'static crate::lexicon::WordList {
        let t = &lex().override_targets;
        match self {
            Target::Constraint => &t.constraint,
            Target::StopCondition => &t.stop_condition,
            Target::Approval => &t.approval,
            Target::Reconcile => &t.reconcile,
        }
    }
}
