//! `handoff`: build one handoff and print it as a destination would see it.
//!
//! Owns: the text and `--json` renderings on stdout. Must not: build or change the handoff
//! itself ([`crate::strategy`] does).

use std::io::Write;

use super::{hidden, scenario_at, strategy_registry};
use crate::cli::args::HandoffArgs;
use crate::error::Error;
use crate::exit;
use crate::shipped::Source;
use crate::state::RestorePoint;
use crate::strategy::StrategyError;

pub fn run(dir: &Source, args: &HandoffArgs) -> Result<i32, Error> {
    let (scenario, scale) = scenario_at(dir, &args.scenario, &args.build.scale, args.build.seed)?;
    // Plug-ins must not read the scenario files.
    let registry = strategy_registry(&args.build.strategy_dir)?.with_hidden(hidden(dir));
    let gov = crate::delivery::GovSpec::parse(&args.strategy)
        .transpose()
        .map_err(|e| Error::Usage(format!("--strategy {e}")))?;
    registry.get(gov.as_ref().map_or(&args.strategy, |g| &g.inner))?;
    let at = std::sync::Arc::new(
        RestorePoint::build(scenario.clone(), &args.interrupt).map_err(StrategyError::from)?,
    );
    let window = args
        .build
        .context_window
        .unwrap_or(crate::strategy::DEFAULT_CONTEXT_WINDOW);
    let budget = crate::strategy::usable_context(window);
    crate::strategy::chain::check_cycles(args.cycles).map_err(Error::Usage)?;
    let points =
        crate::strategy::chain::restore_points(&at, args.cycles).map_err(StrategyError::from)?;
    let inner = gov
        .as_ref()
        .map_or(args.strategy.as_str(), |g| g.inner.as_str());
    let strategy = registry.get_for(inner, None, budget)?;
    let mut chain = crate::strategy::chain::build_blocking(&registry, strategy.as_ref(), &points)?;
    let Some(last) = chain.pop() else {
        return Err(Error::Usage("the chain built no handoff".into()));
    };
    let h = match &gov {
        // What a governed cell's destination reads when its context is READY (`context-report`
        // says whether it is).
        Some(g) => crate::delivery::prepare(&at, g, std::sync::Arc::new(last))
            .map_err(|e| Error::Usage(e.to_string()))?
            .delivered
            .as_ref()
            .clone(),
        None => last,
    };
    let earlier: Vec<serde_json::Value> = chain
        .iter_mut()
        .zip(&points)
        .map(|(h, p)| {
            h.text = crate::secrets::redact(&h.text).into_owned();
            serde_json::json!({
                "interrupt": p.interrupt.point,
                "tokens_at_restore": h.tokens_at_restore,
                "compacted": h.compacted != Some(false),
                "text": h.text,
            })
        })
        .collect();
    // A plug-in's handoff may quote a key it found: never print one.
    crate::secrets::load_run([]);
    let mut h = h;
    h.text = crate::secrets::redact(&h.text).into_owned();
    crate::secrets::redact_serde(&mut h.messages);
    crate::secrets::redact_serde(&mut h.checkpoint);
    let history = crate::strategy::full_history_tokens(&at.state);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        let doc = serde_json::json!({
            "scenario": scenario.id,
            "interrupt": args.interrupt,
            "strategy": h.strategy,
            "scale": scale.to_string(),
            "tokens_at_restore": h.tokens_at_restore,
            "history_tokens": history,
            "text": h.text,
            "messages": h.messages,
            "extra_tools": h.extra_tools,
            "checkpoint": h.checkpoint,
            "dropped_events": h.dropped_events,
        });
        let mut doc = doc;
        if args.cycles > 1 {
            // Every handoff of the chain before the last, in order.
            doc["cycles"] = serde_json::json!(args.cycles);
            doc["chain"] = serde_json::json!(earlier);
        }
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        );
    } else {
        let _ = write!(out, "{}", h.text);
        let _ = writeln!(
            out,
            "--- {} · {} · {} · scale {scale} · {} tokens at restore of {history} in the full history",
            scenario.id, args.interrupt, h.strategy, h.tokens_at_restore
        );
        if args.cycles > 1 {
            let _ = writeln!(
                out,
                "--- compaction {} of a chain over {} (tokens at each: {})",
                points.len(),
                points
                    .iter()
                    .map(|p| p.interrupt.point.as_str())
                    .collect::<Vec<_>>()
                    .join(" → "),
                earlier
                    .iter()
                    .map(|e| e["tokens_at_restore"].to_string())
                    .chain(std::iter::once(h.tokens_at_restore.to_string()))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    Ok(exit::OK)
}
