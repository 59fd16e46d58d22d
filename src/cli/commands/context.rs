//! `context-report` and `inspect-context`: the governed-context report of one `gov:X` handoff,
//! and the validation of a `coding-context-policy/1` file, printed as JSON on stdout.
//!
//! Owns: the JSON documents these commands print and their exit codes. Must not: build, check or
//! deliver context itself ([`crate::delivery`] and [`crate::governed`] do), or print document
//! contents — reports carry references only.

use std::io::Write;
use std::path::Path;

use serde_json::json;

use super::{hidden, scenario_at, strategy_registry};
use crate::cli::args::{ContextReportArgs, InspectContextArgs};
use crate::delivery::{self, GovSpec};
use crate::error::Error;
use crate::exit;
use crate::governed::{self, ArtifactStore, ContextStatus};
use crate::shipped::Source;
use crate::state::RestorePoint;
use crate::strategy::StrategyError;

fn print(doc: &serde_json::Value) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{}",
        serde_json::to_string_pretty(doc).unwrap_or_default()
    )
    .map_err(Error::write_to(Path::new("<stdout>")))
}

/// `context-report`: the report a cell of `gov:X` gets, with its lineage.
pub fn report(dir: &Source, args: &ContextReportArgs) -> Result<i32, Error> {
    let spec = match GovSpec::parse(&args.strategy) {
        Some(Ok(g)) => g,
        Some(Err(e)) => return Err(Error::Usage(format!("--strategy {e}"))),
        None => {
            return Err(Error::Usage(format!(
                "--strategy `{}` is not a governed strategy: write `gov:{}`",
                args.strategy, args.strategy
            )));
        }
    };
    let (scenario, scale) = scenario_at(dir, &args.scenario, &args.build.scale, args.build.seed)?;
    // Plug-ins must not read the scenario files.
    let registry = strategy_registry(&args.build.strategy_dir)?.with_hidden(hidden(dir));
    let at = RestorePoint::build(scenario.clone(), &args.interrupt).map_err(StrategyError::from)?;
    let window = args
        .build
        .context_window
        .unwrap_or(crate::strategy::DEFAULT_CONTEXT_WINDOW);
    let g = delivery::build_at(
        &registry,
        &at,
        &spec,
        crate::strategy::usable_context(window),
    )
    .map_err(|e| Error::Usage(e.to_string()))?;
    let source = args.source_model.as_deref().unwrap_or(&args.model);
    let task = format!(
        "{}/{}/{}/{}",
        scenario.id,
        args.interrupt,
        spec.id(),
        args.model
    );
    let a = delivery::admit(
        &g,
        &task,
        source,
        &args.model,
        &scenario.world.clock,
        &at.world.clock().to_string(),
        1,
    )
    .map_err(|e| Error::Usage(format!("governed lineage: {e}")))?;
    let doc = json!({
        "scenario": scenario.id,
        "interrupt": args.interrupt,
        "scale": scale.to_string(),
        "strategy": spec.id(),
        "inner": spec.inner,
        "max_bytes": spec.max_bytes,
        "bytes": g.bytes,
        "policy": g.policy,
        "policy_digest": g.policy_digest,
        "before_resume": a.before_resume,
        "report": a.report,
        "lineage": a.lineage.records(),
        "envelope_digest": a.envelope.as_ref().map(governed::envelope_digest),
    });
    print(&doc)?;
    Ok(match a.report.status {
        ContextStatus::Blocked => exit::FAILED,
        _ => exit::OK,
    })
}

/// `inspect-context POLICY.json [--store DIR]`.
pub fn inspect(args: &InspectContextArgs) -> Result<i32, Error> {
    let policy = match governed::inspect_file(&args.policy) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return Ok(match e {
                governed::InspectError::Read { .. } => exit::USAGE,
                _ => exit::FAILED,
            });
        }
    };
    let mut doc = json!({
        "file": args.policy.display().to_string(),
        "valid": true,
        "policy_digest": policy.digest(),
    });
    let mut code = exit::OK;
    if let Some(dir) = &args.store {
        if !dir.is_dir() {
            return Err(Error::Usage(format!(
                "--store {}: not a folder of artifacts",
                dir.display()
            )));
        }
        let store = ArtifactStore::open(dir).map_err(|e| Error::Usage(e.to_string()))?;
        // No session is bound to a policy file (sessions belong to runs): this report checks the
        // documents and the budget only.
        let mut report = governed::context_report(Some(&policy), &store, None, 0);
        report
            .reasons
            .retain(|r| *r != governed::BlockReason::OldSessionEpoch);
        if report.reasons.is_empty() {
            report.status = ContextStatus::Ready;
        }
        if report.status == ContextStatus::Blocked {
            code = exit::FAILED;
        }
        doc["report"] = serde_json::to_value(&report).unwrap_or_default();
    }
    print(&doc)?;
    Ok(code)
}
