//! `check-handoff`: a checkpoint (a strategy's, or a JSON file) against the compaction rules.
//!
//! Owns: getting the checkpoint from the flags, the lines or `--json` object on stdout, exit
//! [`exit::FAILED`] when a rule is broken. Must not: check rules
//! ([`crate::checkpoint::rules`] does).

use std::path::Path;
use std::sync::Arc;

use super::{find_scenario, hidden, strategy_registry};
use crate::checkpoint::Checkpoint;
use crate::cli::args::CheckHandoffArgs;
use crate::error::Error;
use crate::exit;
use crate::shipped::Source;
use crate::state::RestorePoint;
use crate::strategy::StrategyError;

pub fn run(dir: &Source, args: &CheckHandoffArgs) -> Result<i32, Error> {
    let s = Arc::new(find_scenario(dir, &args.scenario)?);
    let state = RestorePoint::build(s, &args.interrupt).map_err(StrategyError::from)?;
    // A checkpoint gets every rule; a text handoff the rules that can be checked on text.
    let v = match (&args.strategy, &args.checkpoint) {
        (Some(id), _) => {
            let h = strategy_registry(&args.strategy_dir)?
                .with_hidden(hidden(dir))
                .handoff(id, &state)?;
            crate::audit::rule_check(&h, &h, &state)
        }
        (None, Some(file)) => crate::checkpoint::rules::check(&read_checkpoint(file)?, &state),
        (None, None) => return Err(Error::Usage("give --strategy or --checkpoint".into())),
    };
    if args.json {
        say!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"violations": v})).unwrap_or_default()
        );
    } else {
        for x in &v {
            say!("{} at {}: {}", x.rule, x.at, x.detail);
        }
        say!("{} rule violation(s)", v.len());
    }
    Ok(if v.is_empty() { exit::OK } else { exit::FAILED })
}

/// A checkpoint document from a file; errors name the file and the JSON path of the problem.
fn read_checkpoint(file: &Path) -> Result<Checkpoint, Error> {
    let text = crate::text::read_file(file)
        .map_err(|e| Error::Usage(format!("{}: {e}", file.display())))?;
    let mut de = serde_json::Deserializer::from_str(&text);
    let cp: Checkpoint = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        Error::Usage(format!(
            "{}: at `{}`: {}",
            file.display(),
            e.path(),
            e.inner()
        ))
    })?;
    if cp.format != crate::checkpoint::FORMAT {
        return Err(Error::Usage(format!(
            "{}: at `format`: `{}` is not `{}`",
            file.display(),
            cp.format,
            crate::checkpoint::FORMAT
        )));
    }
    Ok(cp)
}
