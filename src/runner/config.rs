//! What a run is asked to do: [`RunConfig`] (scenarios, strategies, destinations, repetitions,
//! seed, budgets, output folder) and [`Shard`] (a deterministic part of the matrix).
//!
//! Owns: the configuration's fields, their defaults (the offline default benchmark) and the
//! `--shard K/N` syntax. Must not: read files or decide what a field implies for the matrix (the
//! plan does).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::record::CellId;
use crate::scenario::volume::Scale;
use crate::shipped::Source;

/// What to run.
#[derive(Debug, Clone, Serialize)]
pub struct RunConfig {
    /// Where the scenarios come from: a folder (or one file), or the embedded ones.
    pub scenario_dir: Source,
    /// Where the strategy configurations and templates come from: a folder, or the embedded ones.
    pub strategy_dir: Source,
    /// Scenario ids (`None`: all, benign variants included).
    pub scenarios: Option<Vec<String>>,
    pub interrupts: Option<Vec<String>>,
    pub strategies: Vec<String>,
    pub models: Vec<String>,
    pub reps: u32,
    pub seed: u64,
    pub limit: Option<usize>,
    pub concurrency: usize,
    pub out: PathBuf,
    pub resume: bool,
    pub step_budget: u32,
    /// The simulated destinations' distraction model: a multiplier of its calibrated forgetting
    /// (1: as fitted, 0: off; see `destination::attention`).
    pub attention: f64,
    /// History scales (`base`, `40k`, …): every scenario that declares volume runs at each.
    pub scales: Vec<Scale>,
    /// The simulated destinations' context window (default
    /// [`crate::strategy::DEFAULT_CONTEXT_WINDOW`]); live models have their own.
    pub context_window: Option<u64>,
    /// Live models by name (`[model.NAME]` in the configuration file).
    pub model_defs: BTreeMap<String, crate::destination::live::ModelConfig>,
    /// Response cache folder (default: the user's cache directory).
    pub cache_dir: Option<PathBuf>,
    /// Bypass the response cache.
    pub no_cache: bool,
    /// With `resume`: drop the errored records first, so their cells run again.
    pub rerun_errored: bool,
    /// Probe every live model once before the first cell (`run --no-probe` turns it off).
    pub probe: bool,
    /// Ask live destinations the probe questions after their continuation (one more request
    /// per cell); simulated destinations always answer them.
    /// (Left out of the manifest when off, so folders written before it resume as they were.)
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub live_probe_questions: bool,
    /// Stop before the first cell when a plug-in fails on each of its first handoffs
    /// ([`crate::runner::FAIL_FAST_AFTER`]; `run --no-fail-fast` turns it off). Changes no
    /// result, so it is not part of the configuration a resume compares.
    #[serde(skip)]
    pub fail_fast: bool,
    /// Run only a stratified sample of this many units (scenario × scale × point × strategy;
    /// every model and repetition of each), `--sample N` ([`super::matrix::sample_points`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample: Option<usize>,
    /// Run only this part of the matrix (`--shard K/N`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// The agent of the source run, for governed lineage (`gov:X`): a destination that differs
    /// from it is a `REPLACED` session. `None`: every destination resumes as the source's agent
    /// (`COLD_RESUME` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_model: Option<String>,
}

/// A deterministic part of the matrix: shard `index` (1-based) of `count`, chosen by a hash of
/// each cell's identity, so the shards of one matrix are disjoint and cover it whatever the
/// order or the other arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Parses `K/N` (1 ≤ K ≤ N).
    pub fn parse(text: &str) -> Result<Shard, ShardError> {
        let bad = || ShardError(text.to_string());
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            k.trim().parse::<u32>().map_err(|_| bad())?,
            n.trim().parse::<u32>().map_err(|_| bad())?,
        );
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// Whether the cell belongs to this shard.
    pub fn holds(&self, id: &CellId) -> bool {
        let d = Sha256::digest(id.key().as_bytes());
        let mut b = [0u8; 8];
        b.copy_from_slice(&d[..8]);
        u64::from_le_bytes(b) % u64::from(self.count) == u64::from(self.index - 1)
    }
}

/// A `--shard` value that is not `K/N` with 1 ≤ K ≤ N.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`shard` must be K/N with 1 ≤ K ≤ N (e.g. 2/8), not `{0}`")]
pub struct ShardError(pub String);

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            scenario_dir: "scenarios".into(),
            strategy_dir: "strategies".into(),
            scenarios: None,
            interrupts: None,
            strategies: ["none", "A", "B", "C", "D", "mask", "B+A", "gov:B", "gov:C"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            models: vec!["sim:careful".into(), "sim:literal".into()],
            reps: 1,
            seed: crate::DEFAULT_SEED,
            limit: None,
            concurrency: 2,
            out: "reports/latest".into(),
            resume: false,
            step_budget: 40,
            attention: 1.0,
            scales: crate::scenario::volume::RUN_SCALES.to_vec(),
            context_window: None,
            model_defs: BTreeMap::new(),
            cache_dir: None,
            no_cache: false,
            rerun_errored: false,
            shard: None,
            sample: None,
            probe: true,
            live_probe_questions: false,
            fail_fast: true,
            source_model: None,
        }
    }
}
