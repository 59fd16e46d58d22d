//! The flags of `run` and of `calibrate` (which takes a run's flags): split from
//! [`super::args`], which re-exports them, to keep each file readable.
//!
//! Owns: names, defaults and help texts of those flags, and how a configuration file fills
//! what the command line leaves unset ([`RunArgs::or`]). Must not: do any work (the commands do).

use std::path::PathBuf;

use clap::Args;

pub(crate) const CALIBRATE_AFTER_HELP: &str = "Examples:
  compaction-eval calibrate --live vllm:Qwen2.5-7B-Instruct --base-url http://127.0.0.1:8000/v1 --dry-run
  compaction-eval calibrate --live vllm:Qwen2.5-7B-Instruct --base-url http://127.0.0.1:8000/v1 --sample 54 --out reports/calibration
  compaction-eval report reports/latest --calibration reports/calibration/calibration.json";

/// `calibrate`: a run's flags, with the simulated destinations in --models and the live ones in
/// --live.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Comma-separated live destinations: `[model.NAME]` tables of --config, prefixed models
    /// (vllm:MODEL, ollama:MODEL, llamacpp:MODEL, openai:MODEL), or --model-name at --base-url.
    #[arg(long, value_delimiter = ',', value_name = "NAME")]
    pub live: Vec<String>,
    /// Print the cells, requests and estimated tokens the calibration would send, and send
    /// nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Also fit a simulated destination's behavioural rates to each live model on a training
    /// split of the scenarios, write them as OUT/profile-NAME.toml (run with --models
    /// sim:fitted:PATH), and report the fitted profile's κ on the held-out split beside the
    /// hand-set sims' (OUT/fit.md, OUT/fit.json).
    #[arg(long)]
    pub fit: bool,
    /// The share of the sample's scenarios `--fit` holds out for scoring (0 < F < 1).
    #[arg(long, value_name = "F", default_value_t = crate::report::fit::DEFAULT_HOLDOUT)]
    pub fit_holdout: f64,
}

#[derive(Debug, Clone, Args, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    /// A TOML file with any of these options (same names, underscores for dashes); flags given on
    /// the command line win over the file.
    #[arg(long)]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// Comma-separated scenario ids (default: all, with benign variants `ID@benign`).
    #[arg(long, value_delimiter = ',')]
    pub scenarios: Option<Vec<String>>,
    /// Comma-separated interrupt points (default: all).
    #[arg(long, value_delimiter = ',')]
    pub interrupts: Option<Vec<String>>,
    /// Comma-separated strategy ids; `gov:X` runs X under governed context
    /// [default: none,A,B,C,D,mask,B+A,gov:B,gov:C].
    #[arg(long, value_delimiter = ',')]
    pub strategies: Option<Vec<String>>,
    /// Comma-separated destination models [default: sim:careful,sim:literal].
    #[arg(long, value_delimiter = ',')]
    pub models: Option<Vec<String>>,
    /// Repetitions per cell [default: 1: the scenario is the unit of inference; see docs/benchmark.md].
    #[arg(long)]
    pub reps: Option<u32>,
    /// Base seed; every cell's seed derives from it and the cell's identity [default: 20260721].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run at most this many cells (in matrix order).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Cells run at once [default: 2].
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Output folder [default: reports/latest].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Keep the records already in OUT/results.jsonl and run only the missing cells.
    #[arg(long)]
    #[serde(default)]
    pub resume: bool,
    /// Actions a destination may take before the cell ends [default: 40].
    #[arg(long)]
    pub step_budget: Option<u32>,
    /// Simulated destinations' distraction model: a multiplier of its calibrated forgetting
    /// (1 = as fitted to RULER and Lost in the Middle, 0 = off; see README) [default: 1].
    #[arg(long)]
    pub attention: Option<f64>,
    /// Comma-separated history scales: `base` and/or full-history token targets at the last
    /// interrupt point (`40k`, `120000`); `base,40k,120k` draws the compaction curve [default: 40k:
    /// one scale whose points span a 32k window; see docs/benchmark.md].
    #[arg(long, value_delimiter = ',')]
    pub scale: Option<Vec<String>>,
    /// Context window of the simulated destinations, in tokens [default: 32768].
    #[arg(long)]
    pub context_window: Option<u64>,
    /// Folder of strategy configurations and templates [default: `strategies/` in the working
    /// directory when it is there, else the strategies shipped inside the binary].
    #[arg(long)]
    pub strategy_dir: Option<PathBuf>,
    /// Response cache folder [default: the user's cache directory].
    #[arg(long)]
    pub cache_dir: Option<PathBuf>,
    /// Bypass the response cache (neither read nor written).
    #[arg(long)]
    #[serde(default)]
    pub no_cache: bool,
    /// With --resume: run the errored cells again (their records are replaced).
    #[arg(long, requires = "resume")]
    #[serde(default)]
    pub rerun_errored: bool,
    /// Run only a stratified sample of N units (scenario × scale × interrupt point × strategy,
    /// every model and repetition of each): N / strategies interrupt points spread over the
    /// scenarios, every strategy on each, chosen from --seed.
    #[arg(long, value_name = "N")]
    pub sample: Option<usize>,
    /// Run only shard K of N (1 ≤ K ≤ N): a deterministic part of the matrix chosen by a hash of
    /// each cell's identity. Merge the shards' folders with `merge`.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Run on imported transcripts (`transcripts import --out DIR`) instead of scenarios: each
    /// strategy compacts every run at its cut points, measured offline, plus next-action
    /// agreement for the live models among --models.
    #[arg(long, value_name = "DIR")]
    pub transcripts: Option<PathBuf>,
    /// With --transcripts: at most K cuts per run (see `transcripts list --help`).
    #[arg(long, value_name = "K")]
    pub cuts: Option<usize>,
    /// With --transcripts: comma-separated tools whose calls are writes (default: the verb rule).
    #[arg(long, value_delimiter = ',')]
    pub write_tools: Option<Vec<String>>,
    /// Run on τ-bench instead of scenarios (`airline`): the shipped runs that succeeded, cut by
    /// rule, every strategy's handoff continued on the native environment by `sim:follow` (the
    /// scenario simulators among --models stand for it) and by the live models among --models.
    #[arg(long, value_name = "ENV")]
    pub tau: Option<String>,
    /// With --tau: the task ids to use, comma-separated ids and ranges (`0-9,12`) [default: all].
    #[arg(long, value_name = "LIST")]
    pub tasks: Option<String>,
    /// With --tau: the cut rules to use, comma-separated: first_write, later_write,
    /// final_assistant [default: all].
    #[arg(long, value_name = "RULES")]
    pub cut_rules: Option<String>,
    /// With --tau and live destinations: the model that plays the customer (a [model.NAME]
    /// table or openai:MODEL).
    #[arg(long, value_name = "MODEL")]
    pub tau_user: Option<String>,
    /// Exit with code 6 when more than this fraction of the run's cells errored [default: 0:
    /// any errored cell].
    #[arg(long)]
    pub max_errored_fraction: Option<f64>,
    /// Do not probe the live models before the first cell (for a rerun answered from the cache
    /// while the server is down).
    #[arg(long)]
    #[serde(default)]
    pub no_probe: bool,
    /// Also ask each live destination the probe questions once its continuation ends (one more
    /// request per cell, with the handoff as input: docs/metrics.md, "Probe questions").
    /// Simulated destinations always answer them.
    #[arg(long)]
    #[serde(default)]
    pub live_probe_questions: bool,
    /// Keep going when a plug-in fails on each of its first handoffs (by default the run stops
    /// there, naming the plug-in and its last stderr line; with this its cells are errored).
    #[arg(long)]
    #[serde(default)]
    pub no_fail_fast: bool,
    /// Governed byte budgets to sweep: each `gov:X` strategy runs once per budget, as
    /// `gov@N:X` (`gov:X` at 32768) [default: 32768].
    #[arg(long, value_delimiter = ',')]
    pub governed_max_bytes: Option<Vec<u64>>,
    /// Compaction chains: each strategy also runs compacted N times over the scenario's
    /// interrupt points up to the cell's, as `X×N` (each compaction sees only the previous
    /// handoff and the events since); 1 is the single compaction [default: 1].
    #[arg(long, value_delimiter = ',')]
    pub cycles: Option<Vec<u32>>,
    /// The source run's agent, for governed lineage: a destination that differs is a REPLACED
    /// session [default: each destination resumes as the source's agent].
    #[arg(long)]
    pub source_model: Option<String>,
    /// The base URL (with `/v1`) of the live models named by a prefix (`openai:`, `vllm:`,
    /// `ollama:`, `llamacpp:`) and of --model-name; it replaces a prefix's default URL.
    #[arg(long)]
    pub base_url: Option<String>,
    /// A one-model run: the model name the endpoint at --base-url expects; it is the run's
    /// destination when --models is not given.
    #[arg(long)]
    pub model_name: Option<String>,
    /// The environment variable holding the API key of --model-name and of the prefixed models
    /// (default: none for a local server, OPENAI_API_KEY for openai:).
    #[arg(long)]
    pub api_key_env: Option<String>,
    /// Live models (`[model.NAME]` tables of the configuration file).
    #[arg(skip)]
    #[serde(default)]
    pub model: std::collections::BTreeMap<String, crate::destination::live::ModelConfig>,
}

impl RunArgs {
    /// Command-line values win; the file fills what they leave unset.
    pub(crate) fn or(self, file: RunArgs) -> RunArgs {
        RunArgs {
            config: self.config,
            scenarios: self.scenarios.or(file.scenarios),
            interrupts: self.interrupts.or(file.interrupts),
            strategies: self.strategies.or(file.strategies),
            models: self.models.or(file.models),
            reps: self.reps.or(file.reps),
            seed: self.seed.or(file.seed),
            limit: self.limit.or(file.limit),
            concurrency: self.concurrency.or(file.concurrency),
            out: self.out.or(file.out),
            resume: self.resume || file.resume,
            step_budget: self.step_budget.or(file.step_budget),
            attention: self.attention.or(file.attention),
            scale: self.scale.or(file.scale),
            context_window: self.context_window.or(file.context_window),
            strategy_dir: self.strategy_dir.or(file.strategy_dir),
            cache_dir: self.cache_dir.or(file.cache_dir),
            no_cache: self.no_cache || file.no_cache,
            rerun_errored: self.rerun_errored || file.rerun_errored,
            shard: self.shard.or(file.shard),
            sample: self.sample.or(file.sample),
            transcripts: self.transcripts.or(file.transcripts),
            cuts: self.cuts.or(file.cuts),
            write_tools: self.write_tools.or(file.write_tools),
            tau: self.tau.or(file.tau),
            tasks: self.tasks.or(file.tasks),
            cut_rules: self.cut_rules.or(file.cut_rules),
            tau_user: self.tau_user.or(file.tau_user),
            max_errored_fraction: self.max_errored_fraction.or(file.max_errored_fraction),
            no_probe: self.no_probe || file.no_probe,
            live_probe_questions: self.live_probe_questions || file.live_probe_questions,
            no_fail_fast: self.no_fail_fast || file.no_fail_fast,
            governed_max_bytes: self.governed_max_bytes.or(file.governed_max_bytes),
            cycles: self.cycles.or(file.cycles),
            source_model: self.source_model.or(file.source_model),
            base_url: self.base_url.or(file.base_url),
            model_name: self.model_name.or(file.model_name),
            api_key_env: self.api_key_env.or(file.api_key_env),
            model: file.model,
        }
    }
}
