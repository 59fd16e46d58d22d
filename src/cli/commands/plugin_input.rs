//! `plugin-input`: print the state document a plug-in compactor receives for one scenario and
//! interrupt point.
//!
//! Owns: writing those bytes to stdout unchanged. Must not: build the document
//! ([`crate::plugin::protocol::state_input`] does, for this command and for `exec:` strategies
//! alike).

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use super::find_scenario;
use crate::cli::args::PluginInputArgs;
use crate::error::Error;
use crate::exit;
use crate::state::RestorePoint;
use crate::strategy::StrategyError;

pub fn run(dir: &Path, args: &PluginInputArgs) -> Result<i32, Error> {
    let scenario = Arc::new(find_scenario(dir, &args.scenario)?);
    let at = RestorePoint::build(scenario, &args.interrupt).map_err(StrategyError::from)?;
    let input = crate::plugin::protocol::state_input(&at.state, args.token_budget)
        .map_err(|e| Error::Usage(format!("cannot serialise the state document: {e}")))?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let _ = out.write_all(&input);
    let _ = out.flush();
    Ok(exit::OK)
}
