//! τ-bench cuts in compaction chains (`run --tau airline --cycles 2`): a recorded run cut at
//! several points is compacted at each of them in turn, as a scenario's interrupt points are,
//! each compaction seeing only the previous handoff and the messages since.
//!
//! Owns the run's arms (a strategy, or a strategy chained over N cuts) and a cut's chain: the
//! run's chosen cuts before it, the last N − 1, then it. Must not: continue or score a cell
//! (`cells` does), or decide what a strategy keeps (`strategy::chain`).

use crate::destination::live::Cache;
use crate::handoff::Handoff;
use crate::record::{Chain, ChainStep};
use crate::runner::RunConfig;
use crate::state::InterruptedState;
use crate::strategy::{Registry, Strategy, StrategyError, chain};
use crate::transcript::TranscriptError;
use crate::transcript::cuts::{Cut, WriteRule};
use crate::transcript::eval::{self, BASELINE};
use crate::transcript::model::Transcript;
use crate::transcript::prefix;

/// One arm of a τ-bench run: its id in records (`C`, `C×2`), its strategy, its compactions.
pub(super) struct Arm {
    pub id: String,
    pub strategy: Box<dyn Strategy>,
    pub cycles: u32,
}

impl Arm {
    /// The strategy part of the arm's cell seeds: a chain draws as its single-shot cell does.
    pub fn seed_id(&self) -> &str {
        chain::parse(&self.id).map_or(self.id.as_str(), |(s, _)| s)
    }
}

/// The run's arms, the baseline first.
pub(super) fn arms(
    cfg: &RunConfig,
    registry: &Registry,
    cache: &Option<Cache>,
) -> Result<Vec<Arm>, TranscriptError> {
    let mut ids = vec![BASELINE.to_string()];
    ids.extend(cfg.strategies.iter().filter(|s| *s != BASELINE).cloned());
    let mut out = Vec::new();
    for id in ids {
        let (base, cycles) = chain::parse(&id).map_err(TranscriptError::Usage)?;
        let strategy = eval::strategies_for(cfg, registry, cache, &[base.to_string()])?
            .pop()
            .ok_or_else(|| TranscriptError::Usage(format!("strategy `{base}` was not built")))?;
        out.push(Arm {
            id,
            strategy,
            cycles,
        });
    }
    Ok(out)
}

/// The handoff `arm` gives at `cut` (one of the run's `chosen` cuts, `state` its state), and the
/// chain it ended, for a chained arm.
pub(super) fn handoff(
    rt: &tokio::runtime::Runtime,
    arm: &Arm,
    t: &Transcript,
    chosen: &[Cut],
    cut: &Cut,
    rule: &WriteRule,
    state: &InterruptedState,
) -> Result<(Handoff, Option<Chain>), StrategyError> {
    if arm.cycles <= 1 {
        return rt.block_on(arm.strategy.build(state)).map(|h| (h, None));
    }
    let mut earlier: Vec<&Cut> = chosen.iter().filter(|c| c.at < cut.at).collect();
    earlier.sort_by_key(|c| c.at);
    earlier.dedup_by_key(|c| c.at);
    let from = earlier.len().saturating_sub(arm.cycles as usize - 1);
    let cuts: Vec<&Cut> = earlier[from..].iter().copied().chain([cut]).collect();
    let states: Vec<InterruptedState> = cuts[..cuts.len() - 1]
        .iter()
        .map(|c| prefix::state_at(t, c, rule))
        .collect();
    let all: Vec<&InterruptedState> = states.iter().chain([state]).collect();
    let mut hs = rt.block_on(chain::build_over(arm.strategy.as_ref(), &all, |_, h| Ok(h)))?;
    let record = Chain {
        cycles: arm.cycles,
        compactions: chain::compactions(&hs),
        steps: cuts
            .iter()
            .zip(&hs)
            .map(|(c, h)| ChainStep {
                interrupt: c.name.clone(),
                restore_tokens: h.tokens_at_restore,
                compacted: h.compacted != Some(false),
                continuity_passed: None,
            })
            .collect(),
    };
    let last = hs.pop().ok_or_else(|| StrategyError::Chain {
        id: arm.id.clone(),
        message: "the chain is empty".into(),
    })?;
    Ok((last, Some(record)))
}
