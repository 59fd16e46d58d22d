//! The declared sources of a scenario's volume: word lists, generated collections and documents,
//! read-only tools over them and the padding calls. The declaration only; the seeded generator
//! and the proof that the volume is inert are `crate::scenario::volume`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::world::ToolSpec;

/// The sources of a scenario's volume. Every template string may use `{NAME}` for one entry of
/// the vocabulary list `NAME` (drawn from the run's seed) and the built-ins `{seq}` (the record's
/// or document's number), `{int:A-B}` (an integer from A to B), `{hex:N}` (N hex digits),
/// `{time}` (an RFC 3339 time in the 48 hours before the world's clock) and, in call arguments,
/// `{document}` (a generated document's key, without the called tool's `resource_prefix`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Volume {
    /// Word lists the templates draw from, by name.
    #[serde(default)]
    pub vocab: BTreeMap<String, Vec<String>>,
    /// Generated collections, by name. Each must be a new collection (not one of the world's),
    /// so no success predicate, forbidden rule or write tool can see its records.
    #[serde(default)]
    pub collections: BTreeMap<String, VolumeCollection>,
    /// Generated documents. Their keys must be new (not one of the world's resources).
    #[serde(default)]
    pub documents: Vec<VolumeDocuments>,
    /// Read-only tools over the generated collections and documents (effect `read`,
    /// `read_resource` or `check`), added to the world's tools.
    #[serde(default)]
    pub tools: Vec<ToolSpec>,
    /// The calls the source agent pads its run with; each volume call draws one entry (by
    /// `weight`) and fills its argument templates. A call may name any read-only tool, the
    /// world's own (a dead-end search) or the volume's.
    pub calls: Vec<VolumeCall>,
}

/// Records generated into a new collection.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VolumeCollection {
    /// How many records to generate.
    pub records: u32,
    /// Field name → template. Must include `id` (unique per record: use `{seq}`).
    pub record: BTreeMap<String, String>,
}

/// A family of generated documents.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VolumeDocuments {
    /// Key template, numbered by `{seq}` (e.g. `logs/gateway-{seq}.log`).
    pub key: String,
    /// How many documents to generate.
    pub count: u32,
    /// Lines per document: a number or a template such as `{int:20-60}`.
    pub lines: String,
    /// The template of each line.
    pub line: String,
}

/// One kind of volume call.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VolumeCall {
    /// A read-only tool (the world's or the volume's).
    pub tool: String,
    /// Argument name → template.
    #[serde(default)]
    pub args: BTreeMap<String, String>,
    /// Relative frequency (default 1).
    #[serde(default = "default_weight")]
    pub weight: u32,
    /// Status checks and retries: the call is made 1 to `repeat` times in a row (default 1).
    #[serde(default = "default_weight")]
    pub repeat: u32,
}

fn default_weight() -> u32 {
    1
}
