//! `audit`: the model-free handoff audit, as files and a terminal table.
//!
//! Owns: choosing the scenarios and strategies from the flags and printing. Must not: audit or
//! format the table ([`crate::audit`] does).

use std::io::Write;
use std::sync::Arc;

use super::{hidden, select_scenarios, strategy_registry};
use crate::cli::args::AuditArgs;
use crate::error::Error;
use crate::exit;
use crate::scenario::{self, Source};

pub fn run(dir: &Source, args: AuditArgs) -> Result<i32, Error> {
    // Plug-ins must not read the scenario files.
    let registry = strategy_registry(&args.strategy_dir)?.with_hidden(hidden(dir));
    let strategies = args.strategies.unwrap_or_else(|| registry.ids());
    let mut all = scenario::load_source(dir)?;
    if let Some(ids) = &args.scenarios {
        select_scenarios(&mut all, ids)?;
    }
    let scale: crate::scenario::volume::Scale = args
        .scale
        .parse()
        .map_err(|e| Error::Usage(format!("--scale: {e}")))?;
    let mut scaled = Vec::with_capacity(all.len());
    for s in all {
        let seed = crate::scenario::volume::volume_seed(crate::DEFAULT_SEED, &s.id, scale);
        scaled.push(
            crate::scenario::volume::expand(&s, scale, seed).map_err(|p| {
                Error::Usage(format!(
                    "scenario `{}` at scale {scale}: {}",
                    s.id,
                    p.iter()
                        .map(|p| p.to_string())
                        .collect::<Vec<_>>()
                        .join("; ")
                ))
            })?,
        );
    }
    let all: Vec<Arc<_>> = scaled.into_iter().map(Arc::new).collect();
    crate::strategy::chain::check_cycles(args.cycles).map_err(Error::Usage)?;
    let rows = crate::audit::audit_chained(&all, &registry, &strategies, args.cycles)?;
    let out = &args.out;
    crate::audit::write(out, &rows).map_err(Error::write_to(out))?;
    let stdout = std::io::stdout();
    let mut o = stdout.lock();
    let _ = o.write_all(crate::audit::table(&rows).as_bytes());
    let _ = writeln!(
        o,
        "{} handoffs audited; wrote {} and {}",
        rows.len(),
        out.join("audit.csv").display(),
        out.join("audit.json").display()
    );
    Ok(exit::OK)
}
