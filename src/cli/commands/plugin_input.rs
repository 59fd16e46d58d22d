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
    let at = RestorePoint::build(scenario, &args.interrupt).map_err(StrategyError::from)?;
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
    let input = crate::plugin::protocol::state_input(&at.state, budget, format)
        .map_err(|e| Error::Usage(format!("cannot serialise the state document: {e}")))?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let _ = out.write_all(&input);
    let _ = out.flush();
    Ok(exit::OK)
}
