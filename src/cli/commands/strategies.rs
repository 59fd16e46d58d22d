//! `strategies export DIR`, and the export both `scenarios export` and it print.
//!
//! Owns: the line an export prints. Must not: choose or write the shipped files itself
//! ([`crate::shipped`] does).

use crate::cli::args::{ExportArgs, StrategiesCmd};
use crate::error::Error;
use crate::exit;
use crate::shipped::Set;

pub fn run(cmd: StrategiesCmd) -> Result<i32, Error> {
    match cmd {
        StrategiesCmd::Export(a) => {
            export(Set::Strategies, &a)?;
            Ok(exit::OK)
        }
    }
}

/// Writes `set` into `a.dir` and says how many files it wrote.
pub fn export(set: Set, a: &ExportArgs) -> Result<(), Error> {
    let written = crate::shipped::export(set, &a.dir, a.force)?;
    let total = set.files().len();
    say!(
        "wrote {} of the {total} files of the shipped {}/ ({}) to {}{}",
        written.len(),
        set.name(),
        crate::shipped::embedded_label(),
        a.dir.display(),
        if written.len() < total {
            format!("; {} were already there, unchanged", total - written.len())
        } else {
            String::new()
        }
    );
    Ok(())
}
