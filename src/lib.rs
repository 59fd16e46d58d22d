//! compaction-eval: measures how well an interrupted LLM-agent run can be continued after its
//! context was compacted.
//!
//! The library holds everything; `main.rs` only parses arguments and calls [`cli::run`].

pub mod audit;
pub mod carried;
pub mod checkpoint;
pub mod cli;
pub mod continuity;
pub mod conversation;
pub mod delivery;
pub mod destination;
pub mod durable;
pub mod envelope;
pub mod error;
pub mod exit;
pub mod gate;
pub mod governed;
pub mod handoff;
pub mod health;
pub mod lexicon;
pub mod plugin;
pub mod provenance;
pub mod record;
pub mod report;
pub mod results;
pub mod runner;
pub mod runtime;
pub mod scenario;
pub mod score;
pub mod secrets;
pub mod shipped;
pub mod spec;
pub mod state;
pub mod stats;
pub mod strategy;
pub mod tau;
pub mod text;
pub mod tokens;
pub mod transcript;
pub mod upgrades;
pub mod viewer;
pub mod vocab;
pub mod world;

/// The base seed of a run when none is given (every cell's seed derives from it).
pub const DEFAULT_SEED: u64 = 20_260_721;
