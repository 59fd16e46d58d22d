//! `report.html`: one self-contained page rendered from the shared [`crate::report::view`]
//! through `templates/report.html.j2` — ranking and plots first, then the findings, then the full
//! tables (long ones collapsible).
//!
//! Every string from data is escaped by minijinja's HTML auto-escaping (strategy names, model
//! names and error texts can come from plug-ins and models); only the plots' SVG, which plotters
//! escapes itself, is inlined as is. No script, no external fetch. Must not: compute a number,
//! draw a plot (it inlines the ones it is given), or read files.

use minijinja::{Value, context};

use super::{Export, ExportError, ExportInput, templates};
use crate::report::view;

/// `report.html`, with the report's plots inlined as SVG.
pub struct HtmlReport;

impl Export for HtmlReport {
    fn file_name(&self) -> &'static str {
        "report.html"
    }

    fn render(&self, input: &ExportInput<'_>) -> Result<Vec<u8>, ExportError> {
        let plots: Vec<Value> = input
            .plots
            .iter()
            .map(|p| {
                // plotters' SVG backend escapes the text it draws; the SVG is inlined as is,
                // without its XML declaration.
                let svg = p.svg.trim_start_matches(|c| c != '<');
                let svg = match svg.strip_prefix("<?xml") {
                    Some(rest) => rest.split_once("?>").map(|(_, r)| r).unwrap_or(rest),
                    None => svg,
                };
                context! { name => p.name, svg => Value::from_safe_string(svg.to_owned()) }
            })
            .collect();
        let v = view::view(input.records, input.summary, input.manifest);
        templates::render(templates::HTML, &v, context! { plots => plots }).map(String::into_bytes)
    }
}
