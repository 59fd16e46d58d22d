//! The command line's argument types (clap derive): the subcommands and their flags.
//!
//! Owns: names, defaults, help texts and flag relations — the `--help` output is made here. Must
//! not: do any work (loading, checking values, running); the commands (`cli/commands/`) do.
//! Doc comments on fields and variants are help text, so a wording change changes `--help`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::envelope::InspectContinuityArgs;

use super::run_args::CALIBRATE_AFTER_HELP;
pub use super::run_args::{CalibrateArgs, RunArgs};

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
    /// Measure the simulated destinations against live models: run a stratified sample of cells
    /// on both (--models sim:…, --live NAME…) and write calibration.json, calibration.md and the
    /// report, whose summary then states each sim's κ on safe success. --dry-run counts the
    /// requests first.
    #[command(after_long_help = CALIBRATE_AFTER_HELP)]
    Calibrate(CalibrateArgs),
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
    /// Print one JSON object instead of the text (with `--cycles`, every handoff of the chain
    /// under `chain`).
    #[arg(long)]
    pub json: bool,
    /// The last handoff of a compaction chain of N compactions (`run --cycles N`): each sees
    /// only the previous handoff and the events since.
    #[arg(long, default_value_t = 1)]
    pub cycles: u32,
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
    /// Repetitions per scale (the default matrix has 6,192 cells per repetition and scale).
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
    /// Time compaction chains: every default strategy as `X×N` alone (`run --cycles N`'s
    /// chained arms), so the per-cell figure is a chain's.
    #[arg(long, default_value_t = 1)]
    pub cycles: u32,
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
    /// Audit compaction chains of N compactions (`run --cycles N`): each row is the chain's
    /// last handoff, and the table says which critical fact which compaction lost.
    #[arg(long, default_value_t = 1)]
    pub cycles: u32,
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
    /// The document of a chain's last compaction (`run --cycles N`; needs `--strategy`, which
    /// must read format 4): the plug-in's earlier compactions are run to give its
    /// `previous_handoff`, and the events are those since.
    #[arg(long, default_value_t = 1, requires = "strategy")]
    pub cycles: u32,
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
    /// A calibration (`calibration.json` of a `calibrate` run) whose κ the summary quotes, for
    /// a run that has none of its own.
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
}
