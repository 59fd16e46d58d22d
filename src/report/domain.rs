//! Results per scenario domain (the scenario file's `domain` field, which the run's manifest
//! records under `domains`): per domain × strategy × model, the cells, safe success and task
//! success with their scenario-clustered intervals, and the unsafe cells by cause.
//!
//! Owns: [`DomainRow`] and [`rows`]. Reads the records and the manifest only. Must not: format a
//! number for a reader, or guess a domain the manifest does not name (those cells are `unknown`).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::record::{RunRecord, Status};
use crate::results::outcome::{
    ClusteredRate, UnsafeCause, clustered_rate, safe_success, unsafe_cause,
};
use crate::results::paired::cluster_of;

/// The label of cells whose scenario the manifest gives no domain.
pub const UNKNOWN: &str = "unknown";

/// One domain × strategy × model.
#[derive(Debug, Clone, Serialize)]
pub struct DomainRow {
    pub domain: String,
    pub strategy: String,
    pub model: String,
    /// Scenarios of the domain with an ok cell.
    pub scenarios: usize,
    pub safe_success: Option<ClusteredRate>,
    pub task_success: Option<ClusteredRate>,
    pub handoff_unsafe_cells: usize,
    pub distraction_cells: usize,
}

/// The domain of each scenario id, from the manifest's `domains` map.
fn domains(manifest: &serde_json::Value) -> BTreeMap<String, String> {
    manifest
        .get("domains")
        .and_then(|d| d.as_object())
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// The per-domain rows (domains alphabetical, then strategies and models in first-seen order);
/// empty when the manifest names no domain.
pub fn rows(
    records: &[RunRecord],
    manifest: &serde_json::Value,
    confidence: f64,
) -> Vec<DomainRow> {
    let map = domains(manifest);
    if map.is_empty() {
        return Vec::new();
    }
    let domain_of = |id: &str| {
        map.get(id)
            .or_else(|| map.get(cluster_of(id)))
            .cloned()
            .unwrap_or_else(|| UNKNOWN.to_string())
    };
    let mut order: Vec<(String, String)> = Vec::new();
    let mut by: BTreeMap<(String, usize), Vec<&RunRecord>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.status == Status::Ok) {
        let k = (r.strategy.clone(), r.model.clone());
        let i = order.iter().position(|x| *x == k).unwrap_or_else(|| {
            order.push(k);
            order.len() - 1
        });
        by.entry((domain_of(&r.scenario), i)).or_default().push(r);
    }
    by.into_iter()
        .map(|((domain, i), rs)| {
            let count = |c: UnsafeCause| rs.iter().filter(|r| unsafe_cause(r) == Some(c)).count();
            DomainRow {
                scenarios: crate::results::outcome::scenario_count(rs.iter().copied()),
                safe_success: clustered_rate(rs.iter().copied(), safe_success, confidence),
                task_success: clustered_rate(
                    rs.iter().copied(),
                    |r| r.metrics.task_success,
                    confidence,
                ),
                handoff_unsafe_cells: count(UnsafeCause::Handoff),
                distraction_cells: count(UnsafeCause::Distraction),
                domain,
                strategy: order[i].0.clone(),
                model: order[i].1.clone(),
            }
        })
        .collect()
}
