//! `scenarios validate | list | show | schema`.
//!
//! Owns: the terminal lines of the four scenario subcommands. Must not: parse or check scenarios
//! itself ([`crate::scenario`] does) or write anything but the schema file asked for.

use std::io::Write;
use std::path::Path;

use super::find_scenario;
use crate::cli::args::{ScenariosCmd, ValidateArgs};
use crate::error::Error;
use crate::exit;
use crate::scenario::{self, Scenario};

pub fn run(dir: &Path, cmd: ScenariosCmd) -> Result<i32, Error> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match cmd {
        ScenariosCmd::Validate(args) => Ok(validate(dir, args, &mut out)),
        ScenariosCmd::List => {
            let all = scenario::load_dir(dir)?;
            let _ = writeln!(
                out,
                "{:<34} {:<12} {:>6} {:>5}  interrupt points / facts by kind",
                "id", "domain", "events", "facts"
            );
            for s in &all {
                let _ = writeln!(
                    out,
                    "{:<34} {:<12} {:>6} {:>5}  {}",
                    s.id,
                    s.domain,
                    s.events.len(),
                    s.facts.len(),
                    s.interrupts
                        .iter()
                        .map(|i| i.point.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                let _ = writeln!(out, "{:<34} {}", "", fact_counts(s));
            }
            Ok(exit::OK)
        }
        ScenariosCmd::Show { id } => {
            let s = find_scenario(dir, &id)?;
            let _ = writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&s).unwrap_or_default()
            );
            Ok(exit::OK)
        }
        ScenariosCmd::Schema { out: file } => {
            let schema = scenario::json_schema();
            match file {
                Some(f) => std::fs::write(&f, schema).map_err(Error::write_to(&f))?,
                None => {
                    let _ = out.write_all(schema.as_bytes());
                }
            }
            Ok(exit::OK)
        }
    }
}

/// Validates every scenario file under the given paths (default: `dir`), one line per file.
fn validate(dir: &Path, args: ValidateArgs, out: &mut impl Write) -> i32 {
    let paths = if args.paths.is_empty() {
        vec![dir.to_path_buf()]
    } else {
        args.paths
    };
    let mut bad = 0usize;
    let mut good = 0usize;
    let mut ids: std::collections::BTreeMap<String, std::path::PathBuf> = Default::default();
    for p in paths {
        let files = match scenario::scenario_files(&p) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("error: {e}");
                bad += 1;
                continue;
            }
        };
        for f in files {
            match scenario::load_file(&f) {
                Ok(s) if ids.contains_key(&s.id) => {
                    bad += 1;
                    let e = scenario::ScenarioError::DuplicateId {
                        id: s.id.clone(),
                        first: ids[&s.id].clone(),
                        second: f.clone(),
                    };
                    eprintln!("error: {e}");
                }
                Ok(s) => {
                    ids.insert(s.id.clone(), f.clone());
                    good += 1;
                    let _ = writeln!(
                        out,
                        "ok    {} ({}: {} events, {} interrupt points, {} facts)",
                        f.display(),
                        s.id,
                        s.events.len(),
                        s.interrupts.len(),
                        s.facts.len()
                    );
                }
                Err(e) => {
                    bad += 1;
                    eprintln!("error: {e}");
                }
            }
        }
    }
    let _ = writeln!(out, "{good} valid, {bad} invalid");
    if bad == 0 { exit::OK } else { exit::FAILED }
}

/// `kind=count` for each fact kind the scenario has.
fn fact_counts(s: &Scenario) -> String {
    scenario::FactKind::ALL
        .iter()
        .filter_map(|k| {
            let n = s.facts.iter().filter(|f| f.kind == *k).count();
            (n > 0).then(|| format!("{}={n}", k.as_str()))
        })
        .collect::<Vec<_>>()
        .join(" ")
}
