//! The report's files, one module per format behind one trait ([`Export`]): `runs.csv`
//! ([`runs_csv`]), `summary.csv` ([`summary_csv`]), `summary.json` ([`json`]), `report.md`
//! ([`markdown`]) and `report.html` ([`html`]); the two reports render the shared
//! [`super::view`] through [`templates`].
//!
//! Owns: the trait, what every export is rendered from ([`ExportInput`]), the list of exports
//! ([`ALL`]) and their error type ([`ExportError`]). Must not: write a file (the caller writes
//! what an export returns), compute a statistic, or read a record from disk.

pub mod html;
pub mod json;
pub mod markdown;
pub mod runs_csv;
pub mod summary_csv;
pub mod templates;

use super::plots::Plot;
use super::summary::Summary;
use crate::record::RunRecord;

pub use html::HtmlReport;
pub use json::SummaryJson;
pub use markdown::MarkdownReport;
pub use runs_csv::RunsCsv;
pub use summary_csv::SummaryCsv;

/// What every export is rendered from: the saved records, their summary, the manifest and the
/// report's plots (which `report.html` inlines).
#[derive(Debug, Clone, Copy)]
pub struct ExportInput<'a> {
    pub records: &'a [RunRecord],
    pub summary: &'a Summary,
    /// `manifest.json` (`Null` when the run folder has none).
    pub manifest: &'a serde_json::Value,
    pub plots: &'a [Plot],
}

/// One output format: a file of the run folder.
pub trait Export {
    /// The file's name in the run folder.
    fn file_name(&self) -> &'static str;
    /// The file's bytes.
    fn render(&self, input: &ExportInput<'_>) -> Result<Vec<u8>, ExportError>;
}

/// Every export, in the order they are written.
pub const ALL: [&dyn Export; 5] = [
    &RunsCsv,
    &SummaryCsv,
    &SummaryJson,
    &MarkdownReport,
    &HtmlReport,
];

/// Why an export could not be rendered, with a message for the user.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// A CSV file could not be assembled.
    #[error("{file}: {source}")]
    Csv {
        file: &'static str,
        #[source]
        source: csv::Error,
    },
    /// The rows of a CSV file could not be flushed out of the writer.
    #[error("{file}: {source}")]
    CsvFlush {
        file: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// A JSON file could not be serialised.
    #[error("{file}: {source}")]
    Json {
        file: &'static str,
        #[source]
        source: serde_json::Error,
    },
    /// A report template could not be rendered (the template's name and minijinja's account).
    #[error("{template}: {source:#}")]
    Template {
        template: &'static str,
        #[source]
        source: minijinja::Error,
    },
}

impl ExportError {
    /// A CSV error of `file`.
    pub(crate) fn csv(file: &'static str) -> impl Fn(csv::Error) -> ExportError {
        move |source| ExportError::Csv { file, source }
    }

    /// The rows of `file`'s CSV writer, or the error of the last flush.
    pub(crate) fn csv_rows(
        file: &'static str,
        w: csv::Writer<Vec<u8>>,
    ) -> Result<Vec<u8>, ExportError> {
        w.into_inner().map_err(|e| ExportError::CsvFlush {
            file,
            source: e.into_error(),
        })
    }
}
