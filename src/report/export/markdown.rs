//! `report.md`: the comparison tables and the ranking under seed 003's rule, rendered from the
//! shared [`crate::report::view`] through `templates/report.md.j2`.
//!
//! It only renders: the numbers and their formatting come from the view. Must not: read files,
//! compute a number, or run a cell.

use super::{Export, ExportError, ExportInput, templates};
use crate::report::view;

/// `report.md`.
pub struct MarkdownReport;

impl Export for MarkdownReport {
    fn file_name(&self) -> &'static str {
        "report.md"
    }

    fn render(&self, input: &ExportInput<'_>) -> Result<Vec<u8>, ExportError> {
        let v = view::view(input.records, input.summary, input.manifest);
        templates::render(templates::MARKDOWN, &v, minijinja::Value::UNDEFINED)
            .map(String::into_bytes)
    }
}
