//! `summary.json`: the whole [`crate::report::Summary`] as pretty-printed JSON.
//!
//! Owns: nothing but the serialisation (the summary's types define the fields). Must not:
//! aggregate or write a file.

use super::{Export, ExportError, ExportInput};

const FILE: &str = "summary.json";

/// `summary.json`.
pub struct SummaryJson;

impl Export for SummaryJson {
    fn file_name(&self) -> &'static str {
        FILE
    }

    fn render(&self, input: &ExportInput<'_>) -> Result<Vec<u8>, ExportError> {
        serde_json::to_vec_pretty(input.summary)
            .map_err(|source| ExportError::Json { file: FILE, source })
    }
}
