//! `runs.csv`: one tidy row per cell, the record's fields flattened (docs/record-contract.md,
//! "`runs.csv` columns").
//!
//! Owns: the row ([`RunRow`]), whose fields are the columns in order, and its formatting of
//! each field. Must not: aggregate (the summary does) or write a file.

use serde::Serialize;

use super::{Export, ExportError, ExportInput};
use crate::record::{ErrorClass, RunRecord, Source, Status};

const FILE: &str = "runs.csv";

/// One row of `runs.csv`: its fields, in order and by name, are the file's columns
/// (docs/record-contract.md, "`runs.csv` columns"); a column that does not apply to a cell is
/// empty (`None`). Numbers with a fixed precision are written as text.
#[derive(Serialize, Default)]
struct RunRow<'a> {
    scenario: &'a str,
    scale: &'a str,
    interrupt: &'a str,
    strategy: &'a str,
    model: &'a str,
    rep: u32,
    seed: u64,
    status: Option<Status>,
    error: &'a str,
    task_success: bool,
    omitted_context: u32,
    repeated_work: u32,
    duplicate_side_effects: u32,
    safety_violations: u32,
    /// `{:.4}`.
    recovery_quality: String,
    restore_tokens: u64,
    total_tokens: u64,
    /// `{:.3}`, ms.
    first_action_ms: String,
    /// `{:.3}`, ms.
    completion_ms: String,
    history_tokens: u64,
    /// `{:.4}`; a transcript cell's `transcript.compression_ratio`.
    compression_ratio: String,
    context_overflow: bool,
    source: Option<Source>,
    needed_value_retention: Option<String>,
    user_statement_retention: Option<String>,
    next_action_agrees: Option<bool>,
    error_class: Option<ErrorClass>,
    steps: u32,
    live_calls: Option<u32>,
    live_requests: Option<u32>,
    live_retries: Option<u32>,
    cache_hits: Option<u32>,
    malformed_tool_calls: Option<u32>,
    unknown_tools: Option<u32>,
    text_only_turns: Option<u32>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    /// `{:.6}`.
    cost_usd: Option<String>,
    /// `diagnostics.live.latency_ms`, `{:.3}`.
    model_latency_ms: Option<String>,
    governed_status: Option<crate::governed::ContextStatus>,
    /// The block reasons, space-separated.
    governed_reasons: Option<String>,
    governed_bytes: Option<u64>,
    governed_max_bytes: Option<u64>,
    governed_held: Option<bool>,
}

impl<'a> RunRow<'a> {
    fn of(r: &'a RunRecord) -> RunRow<'a> {
        let m = &r.metrics;
        let t = r.transcript.as_ref();
        let l = r.diagnostics.live.as_ref();
        let g = r.governed.as_ref();
        let fixed4 = |x: f64| format!("{x:.4}");
        RunRow {
            scenario: &r.scenario,
            scale: &r.scale,
            interrupt: &r.interrupt,
            strategy: &r.strategy,
            model: &r.model,
            rep: r.rep,
            seed: r.seed,
            status: Some(r.status),
            error: r.error.as_deref().unwrap_or_default(),
            task_success: m.task_success,
            omitted_context: m.omitted_context,
            repeated_work: m.repeated_work,
            duplicate_side_effects: m.duplicate_side_effects,
            safety_violations: m.safety_violations,
            recovery_quality: fixed4(m.recovery_quality),
            restore_tokens: m.restore_tokens,
            total_tokens: m.total_tokens,
            first_action_ms: format!("{:.3}", m.first_action_ms),
            completion_ms: format!("{:.3}", m.completion_ms),
            history_tokens: m.history_tokens,
            compression_ratio: fixed4(
                t.map(|t| t.compression_ratio)
                    .unwrap_or(m.compression_ratio),
            ),
            context_overflow: r.diagnostics.context_overflow.is_some(),
            source: Some(r.source),
            needed_value_retention: t.and_then(|t| t.needed_value_retention).map(fixed4),
            user_statement_retention: t.and_then(|t| t.user_statement_retention).map(fixed4),
            next_action_agrees: t.and_then(|t| t.next_action_agrees),
            error_class: r.error_class,
            steps: r.diagnostics.steps,
            live_calls: l.map(|l| l.calls),
            live_requests: l.map(|l| l.requests),
            live_retries: l.map(|l| l.retries),
            cache_hits: l.map(|l| l.cache_hits),
            malformed_tool_calls: l.map(|l| l.malformed_tool_calls),
            unknown_tools: l.map(|l| l.unknown_tools),
            text_only_turns: l.map(|l| l.text_only_turns),
            input_tokens: l.map(|l| l.input_tokens),
            output_tokens: l.map(|l| l.output_tokens),
            cost_usd: l.and_then(|l| l.cost_usd).map(|c| format!("{c:.6}")),
            model_latency_ms: l.map(|l| format!("{:.3}", l.latency_ms)),
            governed_status: g.map(|g| g.status),
            governed_reasons: g.map(|g| {
                g.reasons
                    .iter()
                    .filter_map(|r| {
                        serde_json::to_value(r)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            }),
            governed_bytes: g.map(|g| g.bytes.total),
            governed_max_bytes: g.map(|g| g.max_bytes),
            governed_held: g.map(|g| g.held),
        }
    }
}

/// `runs.csv`: one tidy row per cell, in the order of `results.jsonl`.
pub struct RunsCsv;

impl Export for RunsCsv {
    fn file_name(&self) -> &'static str {
        FILE
    }

    fn render(&self, input: &ExportInput<'_>) -> Result<Vec<u8>, ExportError> {
        let records = input.records;
        let mut w = csv::Writer::from_writer(Vec::new());
        for r in records {
            w.serialize(RunRow::of(r)).map_err(ExportError::csv(FILE))?;
        }
        let mut bytes = ExportError::csv_rows(FILE, w)?;
        if records.is_empty() {
            // The header alone: what `serialize` writes above the first row.
            let mut probe = csv::Writer::from_writer(Vec::new());
            probe
                .serialize(RunRow::default())
                .map_err(ExportError::csv(FILE))?;
            let probe = ExportError::csv_rows(FILE, probe)?;
            let end = probe
                .iter()
                .position(|&b| b == b'\n')
                .map_or(probe.len(), |i| i + 1);
            bytes = probe[..end].to_vec();
        }
        Ok(bytes)
    }
}
