//! A compacting strategy's trigger (`trigger_tokens`): below it the history is handed over as
//! it is, as a condenser that triggers at a maximum size leaves a short context alone.
//!
//! Owns [`Triggered`]: the wrapper that decides, per interrupted state, between the transcript
//! (A's handoff at the same window, under the strategy's id, `compacted: false`) and the wrapped
//! strategy's own handoff (`compacted: true`). Must not: change what the wrapped strategy builds.

use super::transcript::{Transcript, full_history_tokens};
use super::{BuildFuture, Strategy, StrategyConfig};
use crate::handoff::Handoff;
use crate::state::InterruptedState;

/// A strategy that compacts only a history of at least `trigger` tokens.
pub struct Triggered {
    inner: Box<dyn Strategy>,
    transcript: Transcript,
    trigger: u64,
}

impl Triggered {
    /// Wraps `inner`, built from `config` (whose window budget the transcript shares).
    pub fn new(inner: Box<dyn Strategy>, config: &StrategyConfig, trigger: u64) -> Triggered {
        // A's handoff: the strategy's own budget (a checkpoint's, say) does not bound it.
        let mut c = config.clone();
        c.token_budget = None;
        Triggered {
            inner,
            transcript: Transcript::new(c, None),
            trigger,
        }
    }
}

impl Strategy for Triggered {
    fn id(&self) -> &str {
        self.inner.id()
    }

    fn build<'a>(&'a self, state: &'a InterruptedState) -> BuildFuture<'a> {
        Box::pin(async move {
            let below = full_history_tokens(state) < self.trigger;
            let built = if below {
                self.transcript.build(state).await
            } else {
                self.inner.build(state).await
            };
            built.map(|mut h| {
                h.compacted = Some(!below);
                h
            })
        })
    }

    /// Once the strategy has compacted, the context begins with its handoff and every later
    /// compaction of the chain compacts again: the trigger decides only when the first happens
    /// (a chain whose earlier handoffs were transcripts hands the raw events to [`Self::build`]).
    fn build_after<'a>(
        &'a self,
        previous: &'a Handoff,
        since: &'a InterruptedState,
    ) -> BuildFuture<'a> {
        Box::pin(async move {
            self.inner.build_after(previous, since).await.map(|mut h| {
                h.compacted = Some(true);
                h
            })
        })
    }
}
