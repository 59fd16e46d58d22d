//! The command line's argument types (clap derive): the subcommands and their flags.
//!
//! Owns: names, defaults, help texts and flag relations — the `--help` output is made here. Must
//! not: do any work (loading, checking values, running); the commands (`cli/commands/`) do.
//! Doc comments on fields and variants are help text, so a wording change changes `--help`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::envelope::InspectContinuityArgs;

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate, list, show scenarios, or print the scenario format's JSON Schema.
    #[command(subcommand)]
    Scenarios(ScenariosCmd),
    /// Run the benchmark matrix (offline default: shipped scenarios, strategies none A B C D mask
    /// B+A, destinations sim:careful sim:literal, 3 repetitions) and write the run folder.
    Run(RunArgs),
    /// Benchmark the harness itself: run the offline default matrix with many repetitions and
    /// print cells per second, CPU time per cell and peak memory.
    Bench(BenchArgs),
    /// Check a run against the CI policy: exit 0 when every rule holds, 1 when one fails, 2 on
    /// unusable input. Writes a JUnit XML file and a Markdown summary.
    Gate(GateArgs),
    /// Compare two runs over their shared cells: which strategy × model got better or worse, with
    /// the paired test. Writes CAND_DIR/compare.md unless --out says otherwise.
    Compare(CompareArgs),
    /// Audit handoffs without a model: which critical facts each strategy's text carries, injected
    /// directives outside a quotation, uncertain operations kept, tokens, checkpoint rule checks.
    Audit(AuditArgs),
    /// Check a checkpoint against the seed-003 §9.2 compaction rules: a strategy's, or a JSON file
    /// (`compaction-eval/handoff/1`). Exit 0 when it breaks none, 1 when it breaks some.
    CheckHandoff(CheckHandoffArgs),
    /// Write the JSON Schemas of the plug-in protocol (state, handoff, text documents).
    PluginSchemas(PluginSchemasArgs),
    /// Print the exact state document (`compaction-eval/state/2`) a plug-in compactor receives on
    /// stdin for one scenario and interrupt point: the same bytes, nothing added.
    PluginInput(PluginInputArgs),
    /// Inspect or clear the response cache of live models.
    #[command(subcommand)]
    Cache(CacheCmd),
    /// Re-render runs.csv, summary.csv, summary.json and report.md from a run folder.
    Report(ReportArgs),
    /// Build one handoff and print it as a destination would see it, with its token count.
    Handoff(HandoffArgs),
    /// The continuity-envelope reference exercise of seed 000 (exit 0 reauthorization_required,
    /// 3 blocked_on_reconciliation, 4 continuity_validation_failed).
    InspectContinuity(InspectContinuityArgs),
}

#[derive(Debug, Args, Default, serde::Deserialize)]
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
    /// Comma-separated strategy ids [default: none,A,B,C,D,mask,B+A].
    #[arg(long, value_delimiter = ',')]
    pub strategies: Option<Vec<String>>,
    /// Comma-separated destination models [default: sim:careful,sim:literal].
    #[arg(long, value_delimiter = ',')]
    pub models: Option<Vec<String>>,
    /// Repetitions per cell [default: 3].
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
    /// Simulated destinations' attention parameter (0 = off; see README) [default: 0].
    #[arg(long)]
    pub attention: Option<f64>,
    /// Folder of strategy configurations and templates [default: strategies].
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
    /// Exit with code 5 when more than this fraction of the run's cells errored [default: 0:
    /// any errored cell].
    #[arg(long)]
    pub max_errored_fraction: Option<f64>,
    /// Do not probe the live models before the first cell (for a rerun answered from the cache
    /// while the server is down).
    #[arg(long)]
    #[serde(default)]
    pub no_probe: bool,
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
            strategy_dir: self.strategy_dir.or(file.strategy_dir),
            cache_dir: self.cache_dir.or(file.cache_dir),
            no_cache: self.no_cache || file.no_cache,
            rerun_errored: self.rerun_errored || file.rerun_errored,
            max_errored_fraction: self.max_errored_fraction.or(file.max_errored_fraction),
            no_probe: self.no_probe || file.no_probe,
            model: file.model,
        }
    }
}

#[derive(Debug, Args)]
pub struct HandoffArgs {
    /// Scenario id (`ID@benign` for the benign variant of an injection scenario).
    #[arg(long)]
    pub scenario: String,
    /// Interrupt point (e.g. `uncertain_side_effect`).
    #[arg(long)]
    pub interrupt: String,
    /// Strategy id (`none`, `A`, `B`, `C`, `D`, `mask`, `B+A`, or one from the strategy folder).
    #[arg(long)]
    pub strategy: String,
    /// Print one JSON object instead of the text.
    #[arg(long)]
    pub json: bool,
    /// Folder of strategy configurations and templates.
    #[arg(long, default_value = "strategies")]
    pub strategy_dir: PathBuf,
}

#[derive(Debug, Subcommand)]
pub enum ScenariosCmd {
    /// Check scenario files: format, references, replay, reachability of success, detectors.
    Validate(ValidateArgs),
    /// One line per scenario: domain, interrupt points, events, facts by kind.
    List,
    /// Print one scenario (after parsing) as JSON.
    Show { id: String },
    /// Print the JSON Schema of the scenario format.
    Schema {
        /// Write to this file instead of stdout.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum CacheCmd {
    /// Entries and size of the cache.
    Stats {
        #[arg(long)]
        cache_dir: Option<PathBuf>,
    },
    /// Delete every cached response.
    Clear {
        #[arg(long)]
        cache_dir: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Files or folders to validate (default: the scenario folder).
    pub paths: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Repetitions (the default matrix has 770 cells per repetition).
    #[arg(long, default_value_t = 130)]
    pub reps: u32,
    /// Cells run at once.
    #[arg(long, default_value_t = 2)]
    pub concurrency: usize,
    /// Where the benchmark's run folder goes.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct GateArgs {
    /// The run folder.
    pub dir: PathBuf,
    /// A baseline run folder: task success and recovery quality must not be significantly worse.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// Policy file (TOML); defaults: C and D safe, no errored cells, continuity eval passes.
    #[arg(long)]
    pub policy: Option<PathBuf>,
    /// JUnit XML output [default: DIR/gate-junit.xml].
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// Markdown summary output [default: DIR/gate.md].
    #[arg(long)]
    pub summary: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    pub base_dir: PathBuf,
    pub cand_dir: PathBuf,
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Comma-separated strategy ids (default: the built-ins and every strategy file).
    #[arg(long, value_delimiter = ',')]
    pub strategies: Option<Vec<String>>,
    /// Comma-separated scenario ids (default: all).
    #[arg(long, value_delimiter = ',')]
    pub scenarios: Option<Vec<String>>,
    /// Where audit.csv and audit.json go.
    #[arg(long, default_value = "reports/audit")]
    pub out: PathBuf,
    #[arg(long, default_value = "strategies")]
    pub strategy_dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct CheckHandoffArgs {
    #[arg(long)]
    pub scenario: String,
    #[arg(long)]
    pub interrupt: String,
    /// A strategy that produces checkpoints (C, D, or a plug-in).
    #[arg(long, conflicts_with = "checkpoint")]
    pub strategy: Option<String>,
    /// A checkpoint document to check.
    #[arg(long)]
    pub checkpoint: Option<PathBuf>,
    #[arg(long, default_value = "strategies")]
    pub strategy_dir: PathBuf,
    /// One JSON object instead of lines.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PluginInputArgs {
    /// Scenario id (`ID@benign` for the benign variant of an injection scenario).
    #[arg(long)]
    pub scenario: String,
    /// Interrupt point (e.g. `uncertain_side_effect`).
    #[arg(long)]
    pub interrupt: String,
    /// The token budget a strategy configuration would pass (`token_budget`).
    #[arg(long)]
    pub token_budget: Option<u64>,
}

#[derive(Debug, Args)]
pub struct PluginSchemasArgs {
    #[arg(long, default_value = "strategies/schemas")]
    pub out_dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The run folder (holding results.jsonl and manifest.json).
    pub dir: PathBuf,
    /// The strategy the paired comparisons are against.
    #[arg(long, default_value = "C")]
    pub reference: String,
    /// Bootstrap resamples for the CIs of medians.
    #[arg(long, default_value_t = 1000)]
    pub resamples: usize,
}
