//! `compare`: two run folders' paired comparison, written as Markdown.
//!
//! Owns: reading the two runs' records, writing the file, the one summary line. Must not: test
//! or format ([`crate::results::baseline::paired_comparisons`], [`crate::report::compare`]).

use crate::cli::args::CompareArgs;
use crate::error::Error;
use crate::exit;
use crate::report::compare::{self, Side};
use crate::results::baseline::paired_comparisons;
use crate::results::scenario_cells;
use crate::runner::read_records;

pub fn run(args: &CompareArgs) -> Result<i32, Error> {
    let (base, cand) = (&args.base_dir, &args.cand_dir);
    // Paired comparisons are over scenario cells (transcript cells carry no scenario metrics).
    let b = scenario_cells(&read_records(&base.join("results.jsonl"))?).into_owned();
    let c = scenario_cells(&read_records(&cand.join("results.jsonl"))?).into_owned();
    let comps = paired_comparisons(&b, &c, &compare::metrics());
    let md = compare::markdown(
        Side {
            dir: base,
            cells: b.len(),
        },
        Side {
            dir: cand,
            cells: c.len(),
        },
        &comps,
    );
    let out = args.out.clone().unwrap_or_else(|| cand.join("compare.md"));
    crate::durable::write(&out, md.as_bytes()).map_err(Error::write_to(&out))?;
    say!(
        "{} paired comparisons; wrote {}",
        comps.len(),
        out.display()
    );
    Ok(exit::OK)
}
