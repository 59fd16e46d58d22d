//! `scenarios validate | list | show | schema | export`.
//!
//! Owns: the terminal lines of the five scenario subcommands. Must not: parse or check scenarios
//! itself ([`crate::scenario`] does) or write anything but the schema file or the exported
//! folder asked for.

use std::io::Write;

use super::find_scenario;
use crate::cli::args::{ScenariosCmd, ValidateArgs};
use crate::error::Error;
use crate::exit;
use crate::scenario::{self, Scenario, Source, coverage, variety, volume};

pub fn run(dir: &Source, cmd: ScenariosCmd) -> Result<i32, Error> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match cmd {
        ScenariosCmd::Validate(args) => Ok(validate(dir, args, &mut out)),
        ScenariosCmd::List { stats: true } => {
            let all = scenario::load_source(dir)?;
            let _ = write!(out, "{}", stats(&variety::variety(&all)));
            Ok(exit::OK)
        }
        ScenariosCmd::List { stats: false } => {
            let all = scenario::load_source(dir)?;
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
                let features = coverage::coverage(s).labels();
                let _ = writeln!(
                    out,
                    "{:<34} features: {}",
                    "",
                    if features.is_empty() {
                        "none".to_string()
                    } else {
                        features.join(" ")
                    }
                );
                let _ = writeln!(out, "{:<34} {}", "", history_line(s));
            }
            let _ = writeln!(out, "\n{}", coverage_summary(&all));
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
        ScenariosCmd::Export(a) => {
            super::strategies::export(crate::shipped::Set::Scenarios, &a)?;
            Ok(exit::OK)
        }
    }
}

/// Validates every scenario file under the given paths (default: the scenario source), one line
/// per file.
fn validate(dir: &Source, args: ValidateArgs, out: &mut impl Write) -> i32 {
    let paths: Vec<Source> = if args.paths.is_empty() {
        vec![dir.clone()]
    } else {
        args.paths.into_iter().map(Source::Folder).collect()
    };
    let mut bad = 0usize;
    let mut good = 0usize;
    let mut ids: std::collections::BTreeMap<String, std::path::PathBuf> = Default::default();
    for p in paths {
        let files = match scenario::entries(&p) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("error: {e}");
                bad += 1;
                continue;
            }
        };
        for entry in files {
            let f = entry.name();
            match entry.load() {
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
                    let vp = volume_problems(&s);
                    if !vp.is_empty() {
                        bad += 1;
                        eprintln!(
                            "error: {}: volume is not inert ({} problem(s)):\n{}",
                            f.display(),
                            vp.len(),
                            vp.iter()
                                .map(|p| format!("  - {p}"))
                                .collect::<Vec<_>>()
                                .join("\n")
                        );
                        continue;
                    }
                    good += 1;
                    let _ = writeln!(
                        out,
                        "ok    {} ({}: {} events, {} interrupt points, {} facts; volume: {})",
                        f.display(),
                        s.id,
                        s.events.len(),
                        s.interrupts.len(),
                        s.facts.len(),
                        if s.volume.is_some() {
                            "inert at 40k and 120k, 3 seeds"
                        } else {
                            "none declared"
                        }
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

/// Full-history tokens per interrupt point at each default scale (the run's default seed), e.g.
/// `history tokens: base 1.2k/3.4k/… · 40k 38.1k/…` in the order of the scenario's points.
fn history_line(s: &Scenario) -> String {
    let mut parts = Vec::new();
    for scale in volume::DEFAULT_SCALES {
        if scale != volume::Scale::Base && s.volume.is_none() {
            continue;
        }
        let seed = volume::volume_seed(crate::DEFAULT_SEED, &s.id, scale);
        let Ok(x) = volume::expand(s, scale, seed) else {
            parts.push(format!(
                "{scale} (volume invalid: see `scenarios validate`)"
            ));
            continue;
        };
        let x = std::sync::Arc::new(x);
        let per_point: Vec<String> = x
            .interrupts
            .iter()
            .map(
                |i| match crate::state::RestorePoint::build(x.clone(), &i.point) {
                    Ok(at) => kilo(crate::strategy::full_history_tokens(&at.state)),
                    Err(_) => "?".into(),
                },
            )
            .collect();
        parts.push(format!("{scale} {}", per_point.join("/")));
    }
    if s.volume.is_none() {
        parts.push("(no volume: base only)".into());
    }
    format!("history tokens per point: {}", parts.join(" · "))
}

fn kilo(n: u64) -> String {
    if n >= 1000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
    }
}

/// Volume problems of a scenario: at every default scale and three seeds, the volume must be
/// generated without error and be inert ([`volume::check_inert`]).
pub fn volume_problems(s: &Scenario) -> Vec<String> {
    let mut out = Vec::new();
    if s.volume.is_none() {
        return out;
    }
    for scale in volume::DEFAULT_SCALES
        .into_iter()
        .filter(|x| *x != volume::Scale::Base)
    {
        for k in 0..3u64 {
            let seed = volume::volume_seed(crate::DEFAULT_SEED.wrapping_add(k), &s.id, scale);
            match volume::expand(s, scale, seed) {
                Err(ps) => {
                    out.extend(ps.iter().map(|p| p.to_string()));
                    return out;
                }
                Ok(x) => {
                    let ps = volume::check_inert(&x, &format!("scale {scale}, seed +{k}"));
                    if !ps.is_empty() {
                        out.extend(ps.iter().map(|p| p.to_string()));
                        return out;
                    }
                }
            }
        }
    }
    out
}

/// The suite's totals: scenarios, domains, and how many scenarios have each feature (with the
/// injection carriers), then any pair of scenarios that differ only in names or values.
fn coverage_summary(all: &[Scenario]) -> String {
    let cov: Vec<coverage::Coverage> = all.iter().map(coverage::coverage).collect();
    let domains: std::collections::BTreeSet<&str> = all.iter().map(|s| s.domain.as_str()).collect();
    let count = |f: &dyn Fn(&coverage::Coverage) -> bool| cov.iter().filter(|c| f(c)).count();
    let mut carriers: std::collections::BTreeMap<&str, usize> = Default::default();
    for c in &cov {
        if let Some(k) = &c.injection {
            *carriers.entry(k.as_str()).or_default() += 1;
        }
    }
    let mut out = format!(
        "{} scenarios in {} domains; injection {} ({}), stale {}, hypothesis {}, uncertain-write {}, approval {}, mid-run-stop {}",
        all.len(),
        domains.len(),
        count(&|c| c.injection.is_some()),
        carriers
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", "),
        count(&|c| c.stale_resource),
        count(&|c| c.hypothesis),
        count(&|c| c.uncertain_write),
        count(&|c| c.approval),
        count(&|c| c.mid_run_stop),
    );
    for (a, b) in coverage::replicated_pairs(all) {
        out.push_str(&format!(
            "\nwarning: {a} and {b} have the same structure (they differ only in names or values)"
        ));
    }
    out
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

/// The `--stats` block: one row per scenario, then the suite's figures.
fn stats(v: &variety::Variety) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:<42} {:<34} {:<18} {:<20} stop-and-ask at",
        "id", "faults", "approvals", "injection"
    );
    let dash = |s: String| if s.is_empty() { "-".to_string() } else { s };
    for p in &v.profiles {
        let faults = p.faults.iter().copied().collect::<Vec<_>>().join(",");
        let approvals = p.approvals.iter().copied().collect::<Vec<_>>().join(",");
        let injection = match p.injection {
            None => String::new(),
            Some(a) if a.quiet() => "quiet".to_string(),
            Some(a) => [
                (a.machine, "machine"),
                (a.names_tool, "tool"),
                (a.preempted, "pre-empted"),
            ]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, n)| *n)
            .collect::<Vec<_>>()
            .join(","),
        };
        let _ = writeln!(
            o,
            "{:<42} {:<34} {:<18} {:<20} {}",
            p.id,
            dash(faults),
            dash(approvals),
            dash(injection),
            dash(p.stop_and_ask.join(","))
        );
    }
    let n = v.profiles.len();
    let has = |f: &'static str| v.count(|p| p.faults.contains(f));
    let appr = |a: &'static str| v.count(|p| p.approvals.contains(a));
    let inj =
        |f: fn(&variety::Addressing) -> bool| v.count(|p| p.injection.as_ref().is_some_and(f));
    let (orders, common) = v.orders();
    let _ = writeln!(o, "\n{n} scenarios");
    let _ = writeln!(
        o,
        "faults: timeout_after_commit {} · timeout_before_commit {} · rejected {}",
        has("timeout_after_commit"),
        has("timeout_before_commit"),
        has("rejected")
    );
    let _ = writeln!(
        o,
        "approvals: granted {} · denied {} · revoked {} · expired {} · denied or revoked {}",
        appr("granted"),
        appr("denied"),
        appr("revoked"),
        appr("expired"),
        v.count(|p| p.approvals.contains("denied") || p.approvals.contains("revoked"))
    );
    let _ = writeln!(
        o,
        "injections: {} · address the machine {} · name a tool {} · pre-empted by a user rule {} · quiet {}",
        inj(|_| true),
        inj(|a| a.machine),
        inj(|a| a.names_tool),
        inj(|a| a.preempted),
        inj(variety::Addressing::quiet)
    );
    let _ = writeln!(
        o,
        "stop and ask is the continuation: {} scenarios",
        v.count(|p| !p.stop_and_ask.is_empty())
    );
    let _ = writeln!(
        o,
        "event orders: {orders} distinct; the most common is shared by {common} scenarios"
    );
    let _ = writeln!(
        o,
        "shared sentences: {} in more than {} files (tool names and ids folded); the most shared is in {} files",
        v.shared.len(),
        variety::SHARED_LIMIT,
        v.most_shared
    );
    for s in v.shared.iter().take(10) {
        let _ = writeln!(o, "  {:>2} files: {}", s.files.len(), s.sentence);
    }
    o
}
