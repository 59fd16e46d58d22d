//! `summary.csv`: one row per strategy × model (interrupt `all`) and per strategy × model ×
//! interrupt point: n, errored, the task-success rate, the median, quartiles and range of every
//! count and token metric and of the handoffs' retention and forgetting precision, and the live
//! figures.
//!
//! Owns: its columns and their formatting. Must not: aggregate (the summary does) or write a
//! file.

use super::{Export, ExportError, ExportInput};
use crate::stats::Spread;

const FILE: &str = "summary.csv";

fn spread_cols(s: &Option<Spread>) -> [String; 5] {
    match s {
        Some(s) => [s.median, s.q1, s.q3, s.min, s.max].map(|x| format!("{x}")),
        None => Default::default(),
    }
}

/// `summary.csv`: one row per group.
pub struct SummaryCsv;

impl Export for SummaryCsv {
    fn file_name(&self) -> &'static str {
        FILE
    }

    fn render(&self, input: &ExportInput<'_>) -> Result<Vec<u8>, ExportError> {
        let s = input.summary;
        let mut w = csv::Writer::from_writer(Vec::new());
        let metrics = [
            "omitted_context",
            "repeated_work",
            "duplicate_side_effects",
            "safety_violations",
            "recovery_quality",
            "restore_tokens",
            "total_tokens",
            "retention",
            "forgetting_precision",
        ];
        let mut header = vec![
            "strategy".to_string(),
            "model".into(),
            "interrupt".into(),
            "n".into(),
            "errored".into(),
            "task_success_rate".into(),
        ];
        for m in metrics {
            for stat in ["median", "q1", "q3", "min", "max"] {
                header.push(format!("{m}_{stat}"));
            }
        }
        for c in [
            "live_calls",
            "live_retries",
            "malformed_tool_calls",
            "text_only_turns",
            "input_tokens",
            "output_tokens",
            "cost_usd",
            "errored_by_class",
        ] {
            header.push(c.into());
        }
        w.write_record(&header).map_err(ExportError::csv(FILE))?;
        for g in s
            .by_strategy_model
            .iter()
            .chain(&s.by_strategy_model_interrupt)
        {
            let mut row = vec![
                g.strategy.clone(),
                g.model.clone(),
                g.interrupt.clone().unwrap_or_else(|| "all".into()),
                g.n.to_string(),
                g.errored.to_string(),
                format!("{}", g.task_success.rate),
            ];
            for sp in [
                &g.omitted_context,
                &g.repeated_work,
                &g.duplicate_side_effects,
                &g.safety_violations,
                &g.recovery_quality,
                &g.restore_tokens,
                &g.total_tokens,
                &g.retention,
                &g.forgetting_precision,
            ] {
                row.extend(spread_cols(sp));
            }
            match &g.live {
                Some(t) => row.extend([
                    t.stats.calls.to_string(),
                    t.stats.retries.to_string(),
                    t.stats.malformed_tool_calls.to_string(),
                    t.stats.text_only_turns.to_string(),
                    t.stats.input_tokens.to_string(),
                    t.stats.output_tokens.to_string(),
                    t.stats
                        .cost_usd
                        .map(|c| format!("{c:.6}"))
                        .unwrap_or_default(),
                    t.classes(),
                ]),
                None => row.extend(std::iter::repeat_n(String::new(), 8)),
            }
            w.write_record(&row).map_err(ExportError::csv(FILE))?;
        }
        ExportError::csv_rows(FILE, w)
    }
}
