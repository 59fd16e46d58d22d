//! One problem in a scenario file: where (a path inside the file) and what is wrong. Data shared by
//! the replaying validation and the static authoring checks; it checks nothing itself.

use std::fmt;

use serde::Serialize;

/// One problem in a scenario file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// Where in the file: `interrupts[2].perturb[0].approval`.
    pub path: String,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}
