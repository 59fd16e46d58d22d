//! The command line's argument types (clap derive): the subcommands and their flags.
//!
//! Owns: names, defaults, help texts and flag relations — the `--help` output is made here. Must
//! not: do any work (loading, checking values, running); the commands (`cli/commands/`) do.
//! Doc comments on fields and variants are help text, so a wording change changes `--help`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::envelope::InspectContinuityArgs;

/// `run --help`'s closing section: what `--models` accepts and what the exit status means.
const RUN_AFTER_HELP: &str = "\
Model specs (--models, comma-separated):
  sim:careful            simulated destination: acts on what the handoff states, reconciles and
                         verifies before acting, treats quoted outside text as data
  sim:literal            simulated destination: follows every instruction the handoff carries
  sim:oracle             performs the reference continuation exactly: the scorer's calibration
  openai:MODEL           a live OpenAI-compatible model; base URL from --base-url, else
                         OPENAI_BASE_URL, else the OpenAI API; key from OPENAI_API_KEY
  vllm:MODEL             a local vLLM server (http://127.0.0.1:8000/v1), no key
  ollama:MODEL           a local Ollama server (http://127.0.0.1:11434/v1), no key
  llamacpp:MODEL         a local llama.cpp server (http://127.0.0.1:8080/v1), no key
                         (--base-url replaces the default URL, --api-key-env adds a key)
  NAME                   a live model configured in the --config file as a [model.NAME] table
                         (base_url, model, api_key_env, context_window, max_tokens, timeouts, ...)

Exit codes:
  0 the run is complete and no more cells errored than --max-errored-fraction allows
  1 a scenario file is invalid (each problem is listed with its file and field)
  2 unusable input: bad arguments, unknown ids, a missing file or folder, a corrupt strategy
    file or run folder
  5 incomplete: results.jsonl lacks cells of the matrix (run again with --resume)
  6 more cells errored than --max-errored-fraction allows (the reports are written)
  7 before the first cell, a live model failed its probe (key, URL or model), or a plug-in
    failed on each of its first 3 handoffs (--no-fail-fast runs on): no cell ran
  8 a configuration that cannot work: a [model.NAME] table, a summariser naming no model
  9 the file system failed (a full disk, permissions); what was written stays whole
 10 a report could not be rendered; the records are intact (`report DIR` renders again)
 11 the harness failed: a bug, please report it
 12 the run folder is in use: another run, --resume or merge writes it (named in the message)
 13 a live destination's ranking is not meaningful: it never made a valid tool call, or most
    of its cells errored on its side (the reports are written and say which and why)
";

// Parsed once per process: the size of the largest variant (`run`'s many flags) costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate, list, show scenarios, print the scenario format's JSON Schema, or write out the
    /// shipped scenarios.
    #[command(subcommand)]
    Scenarios(ScenariosCmd),
    /// Write out the shipped strategy folder (configurations, templates, schemas, examples).
    #[command(subcommand)]
    Strategies(StrategiesCmd),
    /// Run the benchmark matrix (offline default: shipped scenarios, strategies none A B C D mask
    /// B+A gov:B gov:C, destinations sim:careful sim:literal, 1 repetition, the 40k scale) and write the run
    /// folder.
    #[command(after_long_help = RUN_AFTER_HELP)]
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
    /// Check a checkpoint against the compaction rules (README, References): a strategy's, or a JSON file
    /// (`compaction-eval/handoff/1`). Exit 0 when it breaks none, 1 when it breaks some.
    CheckHandoff(CheckHandoffArgs),
    /// Write the JSON Schemas of the plug-in protocol (state, handoff, text documents).
    PluginSchemas(PluginSchemasArgs),
    /// Print the exact state document (`compaction-eval/state/3`, or the format the strategy's
    /// `reads` names) a plug-in compactor receives on stdin for one scenario and interrupt
    /// point: the same bytes, nothing added.
    PluginInput(PluginInputArgs),
    /// Inspect or clear the response cache of live models.
    #[command(subcommand)]
    Cache(CacheCmd),
    /// Re-render runs.csv, summary.csv, summary.json and report.md from a run folder.
    Report(ReportArgs),
    /// Merge the run folders of the shards of one run (`run --shard K/N`) into one run folder:
    /// refuses folders of different runs, missing and duplicate cells; then writes the report.
    Merge(MergeArgs),
    /// Print one cell of a run readably: its score explained, its handoff, and its conversation
    /// (every request, answer, tool call and the world's answers). Without CELL, list the cells.
    Show(ShowArgs),
    /// Import real agent logs (OpenAI chat messages, τ-bench trajectories), list and show them;
    /// `run --transcripts DIR` compacts and measures them.
    #[command(subcommand)]
    Transcripts(TranscriptsCmd),
    /// The τ-bench airline environment, native: replay recorded runs' tool calls on a fresh
    /// database and write what the environment answers.
    #[command(subcommand)]
    Tau(TauCmd),
    /// Build one handoff and print it as a destination would see it, with its token count.
    Handoff(HandoffArgs),
    /// The continuity-envelope reference exercise (exit 0 reauthorization_required,
    /// 3 blocked_on_reconciliation, 4 continuity_validation_failed).
    InspectContinuity(InspectContinuityArgs),
    /// Print the governed-context report of one `gov:X` handoff as JSON: the policy,
    /// the report before and after governed resume, the session lineage and the byte counts —
    /// never document contents. Exit 0 READY, 1 BLOCKED, 2 on unusable input.
    ContextReport(ContextReportArgs),
    /// Validate a `coding-context-policy/1` file; with --store, also report its context against a
    /// folder of artifacts (a run folder's `artifacts/`). Exit 0 valid (and READY), 1 invalid
    /// (or BLOCKED), 2 unreadable.
    InspectContext(InspectContextArgs),
}

#[derive(Debug, Args)]
pub struct ContextReportArgs {
    /// Scenario id (`ID@benign` for the benign variant of an injection scenario).
    #[arg(long)]
    pub scenario: String,
    /// Interrupt point.
    #[arg(long)]
    pub interrupt: String,
    /// A governed strategy id: `gov:X` or `gov@MAX_BYTES:X`.
    #[arg(long)]
    pub strategy: String,
    /// The destination agent [default: sim:careful].
    #[arg(long, default_value = "sim:careful")]
    pub model: String,
    /// The source run's agent; a different destination is a REPLACED session [default: the
    /// destination].
    #[arg(long)]
    pub source_model: Option<String>,
    #[command(flatten)]
    pub build: BuildArgs,
}

#[derive(Debug, Args)]
pub struct InspectContextArgs {
    /// The policy file (JSON).
    pub policy: PathBuf,
    /// A folder of artifacts named by digest: report the policy's context against it.
    #[arg(long)]
    pub store: Option<PathBuf>,
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
    /// Keep going when a plug-in fails on each of its first handoffs (by default the run stops
    /// there, naming the plug-in and its last stderr line; with this its cells are errored).
    #[arg(long)]
    #[serde(default)]
    pub no_fail_fast: bool,
    /// Governed byte budgets to sweep: each `gov:X` strategy runs once per budget, as
    /// `gov@N:X` (`gov:X` at 32768) [default: 32768].
    #[arg(long, value_delimiter = ',')]
    pub governed_max_bytes: Option<Vec<u64>>,
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
            transcripts: self.transcripts.or(file.transcripts),
            cuts: self.cuts.or(file.cuts),
            write_tools: self.write_tools.or(file.write_tools),
            tau: self.tau.or(file.tau),
            tasks: self.tasks.or(file.tasks),
            cut_rules: self.cut_rules.or(file.cut_rules),
            tau_user: self.tau_user.or(file.tau_user),
            max_errored_fraction: self.max_errored_fraction.or(file.max_errored_fraction),
            no_probe: self.no_probe || file.no_probe,
            no_fail_fast: self.no_fail_fast || file.no_fail_fast,
            governed_max_bytes: self.governed_max_bytes.or(file.governed_max_bytes),
            source_model: self.source_model.or(file.source_model),
            base_url: self.base_url.or(file.base_url),
            model_name: self.model_name.or(file.model_name),
            api_key_env: self.api_key_env.or(file.api_key_env),
            model: file.model,
        }
    }
}

/// Where transcripts are cut.
#[derive(Debug, Args, Default, Clone)]
pub struct CutArgs {
    /// At most K cuts per run (kept in this order: before the first write call, before the final
    /// assistant message, before each later write call).
    #[arg(long, value_name = "K")]
    pub cuts: Option<usize>,
    /// Comma-separated tools whose calls are writes (default: a tool whose name starts with a
    /// write verb such as book, cancel, update, send; see README).
    #[arg(long, value_delimiter = ',')]
    pub write_tools: Option<Vec<String>>,
}

#[derive(Debug, Subcommand)]
pub enum TranscriptsCmd {
    /// Read a log file and write one normalised transcript (`ID.json`) per run into --out.
    Import(TranscriptImportArgs),
    /// One line per run: messages, tool calls, tokens, reward, ground-truth actions, cuts.
    List {
        /// Folder written by `transcripts import`.
        dir: PathBuf,
        #[command(flatten)]
        cut: CutArgs,
    },
    /// One run: its messages with roles, tool calls and token counts, and its cut points.
    Show {
        /// Folder written by `transcripts import`.
        dir: PathBuf,
        /// Run id (as `transcripts list` prints it).
        run: String,
        /// Print the normalised transcript as JSON instead.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        cut: CutArgs,
    },
}

#[derive(Debug, Args)]
pub struct TranscriptImportArgs {
    /// The log: a JSON array (or JSONL) of chat messages, or of runs holding `messages`/`traj`,
    /// or a τ-bench trajectory file.
    pub file: PathBuf,
    /// The input format [default: detected; τ-bench when every run has `task_id` and `traj`].
    #[arg(long, value_enum)]
    pub format: Option<crate::transcript::Format>,
    /// Folder for the transcripts (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// Skip malformed runs (counted and listed on stderr) instead of stopping at the first.
    #[arg(long)]
    pub skip_bad: bool,
}

#[derive(Debug, Subcommand)]
pub enum TauCmd {
    /// Replay each run's tool calls in order on a fresh database and write one JSON line per
    /// run: `task_id`, `trial`, `replayed_r_actions` (1.0 when the final database equals the
    /// one the run's own ground-truth actions give) and `calls` (`call_id`, `tool`, `output`).
    Replay(TauReplayArgs),
}

#[derive(Debug, Args)]
pub struct TauReplayArgs {
    /// The recorded runs: a τ-bench trajectory file (a JSON array of runs with `task_id`,
    /// `trial`, `info.task` and `traj`).
    pub runs: PathBuf,
    /// Where to write the replay (JSON Lines, one line per run); written through a temporary
    /// file in the same folder and a rename.
    #[arg(long)]
    pub out: PathBuf,
    /// The τ-bench airline data folder, holding `env/` [default: $COMPACTION_EVAL_TAU_BENCH,
    /// else data/tau-bench-airline in the working directory, else the data shipped inside the
    /// binary].
    #[arg(long)]
    pub data: Option<PathBuf>,
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
    #[command(flatten)]
    pub build: BuildArgs,
}

/// How a command that builds one handoff builds it, as `run` would.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Folder of strategy configurations and templates [default: `strategies/` in the working
    /// directory when it is there, else the strategies shipped inside the binary].
    #[arg(long)]
    pub strategy_dir: Option<PathBuf>,
    /// History scale (`base`, `40k`, `120k`, …).
    #[arg(long, default_value = "base")]
    pub scale: String,
    /// Run seed the volume is drawn from (as `run --seed`) [default: 20260721].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Destination context window that bounds A, mask and B+A [default: 32768].
    #[arg(long)]
    pub context_window: Option<u64>,
}

#[derive(Debug, Subcommand)]
pub enum ScenariosCmd {
    /// Check scenario files: format, references, replay, reachability of success, detectors.
    Validate(ValidateArgs),
    /// One line per scenario: domain, interrupt points, events, facts by kind.
    List {
        /// Print the suite's family resemblance instead: fault kinds, approval outcomes,
        /// injection addressing, stop-and-ask points, event orders and shared sentences.
        #[arg(long)]
        stats: bool,
    },
    /// Print one scenario (after parsing) as JSON.
    Show {
        /// Scenario id (`ID@benign` for the benign variant of an injection scenario).
        id: String,
    },
    /// Print the JSON Schema of the scenario format.
    Schema {
        /// Write to this file instead of stdout.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Write the scenario files shipped inside the binary into DIR, to copy and edit (then run
    /// with --scenario-dir DIR, or from the folder holding DIR when DIR is `scenarios`).
    Export(ExportArgs),
}

#[derive(Debug, Subcommand)]
pub enum StrategiesCmd {
    /// Write the strategy folder shipped inside the binary into DIR, to copy and edit (then run
    /// with --strategy-dir DIR, or from the folder holding DIR when DIR is `strategies`).
    Export(ExportArgs),
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The folder to write (created if missing).
    pub dir: PathBuf,
    /// Overwrite files that differ from the shipped ones (otherwise such a file is refused
    /// before anything is written).
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Subcommand)]
pub enum CacheCmd {
    /// Entries and size of the cache.
    Stats {
        /// The cache folder [default: `compaction-eval/responses` in the user's cache folder,
        /// e.g. ~/.cache].
        #[arg(long)]
        cache_dir: Option<PathBuf>,
    },
    /// Delete every cached response.
    Clear {
        /// The cache folder [default: `compaction-eval/responses` in the user's cache folder,
        /// e.g. ~/.cache].
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
    /// Repetitions per scale (the default matrix has 990 cells per repetition and scale).
    #[arg(long, default_value_t = 30)]
    pub reps: u32,
    /// Comma-separated scales, each timed on its own [default: base,40k,120k].
    #[arg(long, value_delimiter = ',')]
    pub scale: Option<Vec<String>>,
    /// Cells run at once.
    #[arg(long, default_value_t = 2)]
    pub concurrency: usize,
    /// Where the benchmark's run folder goes.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Growth instead of the per-scale table: whole `run` processes at these multiples of the
    /// matrix (`1x,4x,16x`: its repetitions times each), at the first `--scale`, with each
    /// one's CPU and peak resident memory.
    #[arg(long, value_delimiter = ',')]
    pub cells: Option<Vec<String>>,
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
    /// Check the folder even while its run is in progress (its records are not final).
    #[arg(long)]
    pub allow_incomplete: bool,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline run folder.
    pub base_dir: PathBuf,
    /// The candidate run folder, compared with the baseline over the cells both hold.
    pub cand_dir: PathBuf,
    /// Where the Markdown comparison goes [default: CAND_DIR/compare.md].
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
    /// Folder of strategy configurations and templates [default: `strategies/` in the working
    /// directory when it is there, else the strategies shipped inside the binary].
    #[arg(long)]
    pub strategy_dir: Option<PathBuf>,
    /// History scale the scenarios are audited at (`base`, `40k`, …; the default seed's volume).
    #[arg(long, default_value = "base")]
    pub scale: String,
}

#[derive(Debug, Args)]
pub struct CheckHandoffArgs {
    /// Scenario id (`ID@benign` for the benign variant of an injection scenario).
    #[arg(long)]
    pub scenario: String,
    /// Interrupt point (e.g. `uncertain_side_effect`).
    #[arg(long)]
    pub interrupt: String,
    /// A strategy that produces checkpoints (C, D, or a plug-in).
    #[arg(long, conflicts_with = "checkpoint")]
    pub strategy: Option<String>,
    /// A checkpoint document to check.
    #[arg(long)]
    pub checkpoint: Option<PathBuf>,
    /// Folder of strategy configurations and templates [default: `strategies/` in the working
    /// directory when it is there, else the strategies shipped inside the binary].
    #[arg(long)]
    pub strategy_dir: Option<PathBuf>,
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
    /// An `exec:` strategy whose `token_budget` applies (as in a run: the smaller of it and the
    /// destination's usable context).
    #[arg(long)]
    pub strategy: Option<String>,
    /// The token budget to pass, overriding the strategy's and the window's [default: the
    /// usable context of --context-window, as a run passes it].
    #[arg(long)]
    pub token_budget: Option<u64>,
    #[command(flatten)]
    pub build: BuildArgs,
}

#[derive(Debug, Args)]
pub struct PluginSchemasArgs {
    /// Folder the three schema files are written to.
    #[arg(long, default_value = "strategies/schemas")]
    pub out_dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The run folder.
    pub dir: PathBuf,
    /// The cell's number: its line in results.jsonl (1 for the first), as the list without CELL
    /// and viewer.html number it.
    pub cell: Option<usize>,
    /// Print every request whole (by default a request shows only the messages it adds).
    #[arg(long)]
    pub full: bool,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The merged run folder to write.
    pub out: PathBuf,
    /// The shards' run folders.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Replace OUT even if it holds another run (its run files are removed first).
    #[arg(long)]
    pub force: bool,
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
    /// Render the folder even while its run is in progress (from the records so far).
    #[arg(long)]
    pub allow_incomplete: bool,
}
