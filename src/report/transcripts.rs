//! The transcript section of a report: per strategy × model over the `source: transcript`
//! records, needed-value retention, user-statement retention, restore tokens, compression ratio
//! and, for live models, next-action agreement with its Wilson 95% interval.
//!
//! Reads records only. Must not: compute a cell's measures (they are in the records) or read a
//! transcript.

use serde::Serialize;

use crate::record::{RunRecord, Source, Status};
use crate::stats::{Rate, Spread, wilson};

/// One strategy × model (× cut rule) over transcript cells.
#[derive(Debug, Clone, Serialize)]
pub struct TranscriptGroup {
    pub strategy: String,
    pub model: String,
    /// `None` for the aggregate over every cut; else `first_write`, `later_write`, `final_assistant`.
    pub cut_rule: Option<String>,
    pub cells: usize,
    pub errored: usize,
    /// Mean over cells that needed any value.
    pub needed_value_retention: Option<f64>,
    /// Cells that needed at least one value, and all values needed.
    pub cells_with_needed: usize,
    pub values_needed: u64,
    pub values_lost: u64,
    pub user_statement_retention: Option<f64>,
    pub restore_tokens: Option<Spread>,
    pub compression_ratio: Option<Spread>,
    /// Live models: cells whose next tool call matched, with the Wilson 95% interval.
    pub agreement: Option<Rate>,
    pub agreement_ci: Option<(f64, f64)>,
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The cut rules in the order reports list them.
pub const CUT_RULES: [&str; 3] = ["first_write", "later_write", "final_assistant"];

fn rule_of(r: &RunRecord) -> &str {
    r.transcript
        .as_ref()
        .map(|t| t.cut_rule.as_str())
        .unwrap_or_default()
}

/// Groups the transcript records per strategy × model (first-seen order), then per strategy ×
/// model × cut rule.
pub fn summarize(records: &[RunRecord]) -> Vec<TranscriptGroup> {
    let mut order: Vec<(String, String)> = Vec::new();
    for r in records.iter().filter(|r| r.source == Source::Transcript) {
        let k = (r.strategy.clone(), r.model.clone());
        if !order.contains(&k) {
            order.push(k);
        }
    }
    let mut keys: Vec<(String, String, Option<&str>)> = order
        .iter()
        .map(|(s, m)| (s.clone(), m.clone(), None))
        .collect();
    for (s, m) in &order {
        for rule in CUT_RULES {
            keys.push((s.clone(), m.clone(), Some(rule)));
        }
    }
    keys.into_iter()
        .filter_map(|(s, m, rule)| {
            let all: Vec<&RunRecord> = records
                .iter()
                .filter(|r| {
                    r.source == Source::Transcript
                        && r.strategy == s
                        && r.model == m
                        && rule.is_none_or(|k| rule_of(r) == k)
                })
                .collect();
            if all.is_empty() {
                return None;
            }
            let ok: Vec<&crate::record::TranscriptMeasures> = all
                .iter()
                .filter(|r| r.status == Status::Ok)
                .filter_map(|r| r.transcript.as_deref())
                .collect();
            let nvr: Vec<f64> = ok.iter().filter_map(|t| t.needed_value_retention).collect();
            let usr: Vec<f64> = ok
                .iter()
                .filter_map(|t| t.user_statement_retention)
                .collect();
            let tokens: Vec<f64> = all
                .iter()
                .filter(|r| r.status == Status::Ok)
                .map(|r| r.metrics.restore_tokens as f64)
                .collect();
            let ratios: Vec<f64> = ok.iter().map(|t| t.compression_ratio).collect();
            let judged: Vec<bool> = ok.iter().filter_map(|t| t.next_action_agrees).collect();
            let agreed = judged.iter().filter(|a| **a).count();
            Some(TranscriptGroup {
                cut_rule: rule.map(str::to_string),
                cells: all.len(),
                errored: all.len() - all.iter().filter(|r| r.status == Status::Ok).count(),
                needed_value_retention: mean(&nvr),
                cells_with_needed: nvr.len(),
                values_needed: ok.iter().map(|t| t.values_needed as u64).sum(),
                values_lost: all
                    .iter()
                    .filter(|r| r.status == Status::Ok)
                    .map(|r| r.diagnostics.lost_values.len() as u64)
                    .sum(),
                user_statement_retention: mean(&usr),
                restore_tokens: Spread::of(&tokens),
                compression_ratio: Spread::of(&ratios),
                agreement: (!judged.is_empty()).then(|| Rate::of(agreed, judged.len())),
                agreement_ci: wilson(agreed, judged.len(), 0.95),
                strategy: s,
                model: m,
            })
        })
        .collect()
}
