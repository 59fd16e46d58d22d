//! `plugin-input`: print the state document a plug-in compactor receives for one scenario,
//! interrupt point, history scale and seed.
//!
//! Owns: choosing the token budget as a run chooses it and writing those bytes to stdout
//! unchanged. Must not: build the document ([`crate::plugin::protocol::state_input`] does, for
//! this command and for `exec:` strategies alike).

use std::io::Write;

use super::{scenario_at, strategy_registry};
use crate::cli::args::PluginInputArgs;
use crate::error::Error;
use crate::exit;
use crate::shipped::Source;
use crate::state::RestorePoint;
use crate::strategy::StrategyError;

pub fn run(dir: &Source, args: &PluginInputArgs) -> Result<i32, Error> {
    let (scenario, _) = scenario_at(dir, &args.scenario, &args.build.scale, args.build.seed)?;
    let at = std::sync::Arc::new(
        RestorePoint::build(scenario, &args.interrupt).map_err(StrategyError::from)?,
    );
    let window = args
        .build
        .context_window
        .unwrap_or(crate::strategy::DEFAULT_CONTEXT_WINDOW);
    let usable = crate::strategy::usable_context(window);
    // A run gives a plug-in the smaller of its configured budget and the destination's usable
    // context; the same rule here keeps the printed bytes those of a run.
    // The strategy's configured budget and the input format it reads (state/3 without one).
    let (configured, format) = match &args.strategy {
        Some(id) => {
            let registry = strategy_registry(&args.build.strategy_dir)?;
            registry.get(id)?;
            let c = registry.config(id);
            (
                c.and_then(|c| c.token_budget),
                c.and_then(|c| c.reads.as_deref())
                    .and_then(crate::plugin::protocol::InputFormat::parse)
                    .unwrap_or_default(),
            )
        }
        None => (None, Default::default()),
    };
    let budget = args
        .token_budget
        .or(crate::strategy::min_budget(configured, Some(usable)));
    let (previous, state) = match (&args.strategy, args.cycles) {
        (Some(id), cycles) if cycles > 1 => previous_of(dir, args, id, &at, cycles, usable)?,
        _ => (None, (*at.state).clone()),
    };
    let input = crate::plugin::protocol::state_input_after(previous, &state, budget, format)
        .map_err(|e| Error::Usage(format!("cannot serialise the state document: {e}")))?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let _ = out.write_all(&input);
    let _ = out.flush();
    Ok(exit::OK)
}

/// A chain's last compaction as the plug-in `id` meets it: its previous handoff (its earlier
/// compactions run, as a run runs them) and the state holding only the events since.
fn previous_of(
    dir: &Source,
    args: &PluginInputArgs,
    id: &str,
    at: &std::sync::Arc<RestorePoint>,
    cycles: u32,
    usable: u64,
) -> Result<
    (
        Option<crate::plugin::protocol::PreviousHandoff>,
        crate::state::InterruptedState,
    ),
    Error,
> {
    use crate::strategy::chain;
    chain::check_cycles(cycles).map_err(Error::Usage)?;
    let registry = strategy_registry(&args.build.strategy_dir)?.with_hidden(super::hidden(dir));
    let points = chain::restore_points(at, cycles).map_err(StrategyError::from)?;
    if points.len() < 2 {
        // The scenario has no point before this one: the chain is one compaction.
        return Ok((None, (*at.state).clone()));
    }
    let reads = registry.config(id).and_then(|c| c.reads.clone());
    if reads.as_deref() != Some(crate::plugin::protocol::STATE_FORMAT_4) {
        return Err(Error::Usage(format!(
            "--cycles {cycles}: strategy `{id}` cannot be chained: {}",
            crate::strategy::chain_refusal(reads.as_deref())
        )));
    }
    let strategy = registry.get_for(id, None, usable)?;
    let earlier = &points[..points.len() - 1];
    // Each earlier handoff restored as a run restores it: in the world the source left there.
    let states: Vec<&crate::state::InterruptedState> =
        earlier.iter().map(|p| p.state.as_ref()).collect();
    let hs = crate::runtime::block_on(chain::build_over(strategy.as_ref(), &states, |k, h| {
        registry.restore(h, &earlier[k].source_world)
    }))
    .map_err(|e| Error::Usage(format!("cannot start the async runtime: {e}")))??;
    let (prev, prev_at) = (&hs[hs.len() - 1], &earlier[earlier.len() - 1]);
    Ok((
        Some(crate::plugin::protocol::PreviousHandoff {
            after: prev_at.state.after.clone(),
            text: prev.text.clone(),
            checkpoint: prev.checkpoint.clone(),
        }),
        at.state.since(prev_at.state.cut),
    ))
}
