//! `report.md`: the comparison tables and the ranking under seed 003's rule, rendered from the
//! shared [`super::view`] through `templates/report.md.j2`.
//!
//! It only renders: the numbers and their formatting come from the view, and it never reads
//! files or runs a cell.

use super::{Export, Summary, view};
use crate::record::RunRecord;

pub struct MarkdownReport;

impl Export for MarkdownReport {
    fn file_name(&self) -> &'static str {
        "report.md"
    }

    fn render(
        &self,
        records: &[RunRecord],
        s: &Summary,
        manifest: &serde_json::Value,
    ) -> Result<Vec<u8>, String> {
        let v = view::view(records, s, manifest);
        view::render("report.md.j2", &v, minijinja::Value::UNDEFINED).map(String::into_bytes)
    }
}
