//! `handoff`: build one handoff and print it as a destination would see it.
//!
//! Owns: the text and `--json` renderings on stdout. Must not: build or change the handoff
//! itself ([`crate::strategy`] does).

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use super::find_scenario;
use crate::cli::args::HandoffArgs;
use crate::error::Error;
use crate::exit;
use crate::strategy::{Registry, RestorePoint, StrategyError};

pub fn run(dir: &Path, args: &HandoffArgs) -> Result<i32, Error> {
    let scenario = Arc::new(find_scenario(dir, &args.scenario)?);
    let registry = Registry::load(&args.strategy_dir)?;
    registry.get(&args.strategy)?;
    let at = RestorePoint::build(scenario.clone(), &args.interrupt).map_err(StrategyError::from)?;
    let h = registry.handoff(&args.strategy, &at)?;
    // A plug-in's handoff may quote a key it found: never print one.
    crate::secrets::load_run([]);
    let mut h = h;
    h.text = crate::secrets::redact(&h.text).into_owned();
    crate::secrets::redact_serde(&mut h.messages);
    crate::secrets::redact_serde(&mut h.checkpoint);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        let doc = serde_json::json!({
            "scenario": scenario.id,
            "interrupt": args.interrupt,
            "strategy": h.strategy,
            "tokens_at_restore": h.tokens_at_restore,
            "text": h.text,
            "messages": h.messages,
            "extra_tools": h.extra_tools,
            "checkpoint": h.checkpoint,
            "dropped_events": h.dropped_events,
        });
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        );
    } else {
        let _ = write!(out, "{}", h.text);
        let _ = writeln!(
            out,
            "--- {} · {} · {} · {} tokens at restore",
            scenario.id, args.interrupt, h.strategy, h.tokens_at_restore
        );
    }
    Ok(exit::OK)
}
