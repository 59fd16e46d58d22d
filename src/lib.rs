//! compaction-eval: measures how well an interrupted LLM-agent run can be continued after its
//! context was compacted.
//!
//! The library holds everything; `main.rs` only parses arguments and calls [`cli::run`].

pub mod cli;
pub mod error;
pub mod scenario;
pub mod world;
pub mod envelope;
