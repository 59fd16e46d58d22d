//! `report.html`: one self-contained page rendered from the shared [`super::view`] through
//! `templates/report.html.j2` — ranking and plots first, then the findings, then the full tables
//! (long ones collapsible).
//!
//! Every string from data is escaped by minijinja's HTML auto-escaping (strategy names, model
//! names and error texts can come from plug-ins and models); only the plots' SVG, which plotters
//! escapes itself, is inlined as is. No script, no external fetch. It never computes a number.

use minijinja::{Value, context};

use super::plots::Plot;
use super::{Summary, view};
use crate::record::RunRecord;

/// The whole page from the shared view, with the plots' SVG inlined.
pub fn page(
    records: &[RunRecord],
    summary: &Summary,
    manifest: &serde_json::Value,
    plots: &[Plot],
) -> Result<String, String> {
    let plots: Vec<Value> = plots
        .iter()
        .map(|p| {
            // plotters' SVG backend escapes the text it draws; the SVG is inlined as is, without
            // its XML declaration.
            let svg = p.svg.trim_start_matches(|c| c != '<');
            let svg = match svg.strip_prefix("<?xml") {
                Some(rest) => rest.split_once("?>").map(|(_, r)| r).unwrap_or(rest),
                None => svg,
            };
            context! { name => p.name, svg => Value::from_safe_string(svg.to_owned()) }
        })
        .collect();
    let v = view::view(records, summary, manifest);
    view::render("report.html.j2", &v, context! { plots => plots })
}
