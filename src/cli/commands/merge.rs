//! `merge`: the shards' run folders into one run folder, then its report.
//!
//! Owns: holding the output folder's lock through the merge and its report, and the summary line. Must not: check or merge records ([`crate::runner::merge`] does) or
//! render the report ([`crate::report`] does).

use crate::cli::args::MergeArgs;
use crate::error::Error;
use crate::exit;

pub fn run(args: &MergeArgs) -> Result<i32, Error> {
    // One writer per folder, through the report.
    let _lock = crate::runner::lock(&args.out, "merge")?;
    let merged = crate::runner::merge::merge(
        &args.out,
        &args.dirs,
        crate::runner::merge::MergeOptions { force: args.force },
    )?;
    crate::report::render_dir(&args.out)?;
    say!(
        "merged {} records from {} folders into {}",
        merged.records,
        merged.folders,
        args.out.display()
    );
    Ok(exit::OK)
}
