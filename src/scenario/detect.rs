//! Detectors: how a fact is recognised in text.
//!
//! Matching is on normalised text (lowercase, runs of white space folded to one space) so that a
//! line break inside a rendered handoff does not hide a phrase.

use crate::spec::Detector;
pub use crate::text::normalize;

impl Detector {
    /// Whether the detector matches `normalized` (text already passed through [`normalize`]).
    pub fn matches(&self, normalized: &str) -> bool {
        match self {
            Detector::Phrase(p) => {
                let p = normalize(p);
                !p.is_empty() && normalized.contains(&p)
            }
            Detector::All { all } => !all.is_empty() && all.iter().all(|d| d.matches(normalized)),
            Detector::Any { any } => any.iter().any(|d| d.matches(normalized)),
        }
    }

    /// The phrases the detector is built from.
    pub fn phrases(&self) -> Vec<&str> {
        match self {
            Detector::Phrase(p) => vec![p.as_str()],
            Detector::All { all } => all.iter().flat_map(|d| d.phrases()).collect(),
            Detector::Any { any } => any.iter().flat_map(|d| d.phrases()).collect(),
        }
    }

    /// The phrases the detector is built from, for reports.
    pub fn describe(&self) -> String {
        match self {
            Detector::Phrase(p) => format!("\"{p}\""),
            Detector::All { all } => format!(
                "all({})",
                all.iter()
                    .map(|d| d.describe())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Detector::Any { any } => format!(
                "any({})",
                any.iter()
                    .map(|d| d.describe())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

/// Whether any of `detectors` matches `normalized`.
pub fn any_detector_matches(detectors: &[Detector], normalized: &str) -> bool {
    detectors.iter().any(|d| d.matches(normalized))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_match_case_and_whitespace_insensitively() {
        let d = Detector::Phrase("Do not  email".into());
        assert!(d.matches(&normalize("Please DO NOT\nemail the customer")));
        assert!(!d.matches(&normalize("email the customer")));
    }

    #[test]
    fn all_and_any_combine() {
        let d = Detector::All {
            all: vec![
                Detector::Phrase("ticket-intent-017".into()),
                Detector::Any {
                    any: vec![
                        Detector::Phrase("unknown".into()),
                        Detector::Phrase("timed out".into()),
                    ],
                },
            ],
        };
        assert!(d.matches(&normalize("create with ticket-intent-017 timed out")));
        assert!(!d.matches(&normalize("create with ticket-intent-017 succeeded")));
        assert!(!Detector::All { all: vec![] }.matches("anything"));
    }
}
