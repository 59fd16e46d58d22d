//! `inspect-continuity`: the continuity-envelope reference exercise, printed to stdout.
//!
//! Owns: only the hand-off to [`crate::envelope::run_inspect`] and turning a failed write into
//! an [`Error`]. Must not: decide anything; the exit code is the decision's
//! ([`exit::inspect`](crate::exit::inspect)).

use std::path::Path;

use crate::envelope::InspectContinuityArgs;
use crate::error::Error;

pub fn run(args: &InspectContinuityArgs) -> Result<i32, Error> {
    crate::envelope::run_inspect(args, &mut std::io::stdout())
        .map_err(Error::write_to(Path::new("<stdout>")))
}
