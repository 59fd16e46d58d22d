//! Whether a run's live destinations did anything a ranking can rest on, from saved records
//! only: per live destination the share of its model turns with a valid tool call, cut at
//! `max_tokens` (`finish_reason` `length`) and with malformed arguments, the cells that ended
//! before any request, and the errored cells.
//!
//! A destination that never made a valid tool call, or whose cells mostly errored on its side (a
//! plug-in compactor's failure is not the destination's), is flagged:
//! its scores measure the endpoint's set-up (a server without tool calling, a `max_tokens` too
//! small to finish a call, a wrong URL), not the strategies, so its ranking is "not meaningful"
//! and `run` exits with [`crate::exit::run::NOT_MEANINGFUL`].
//!
//! Owns: the figures and the two flags. Must not: render (the report, the viewer and the `run`
//! command word them) or change a record.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::record::{ErrorClass, RunRecord, Source, Status};

/// Why a destination's ranking is not meaningful.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Flag {
    /// Not one of its turns carried a valid tool call.
    NeverValidToolCall,
    /// More than half of its cells errored on the destination's side (a plug-in compactor's
    /// failure is the compactor's, not the destination's).
    MostlyErrored,
}

/// The health figures of one live destination.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Health {
    pub model: String,
    pub cells: usize,
    pub errored: usize,
    /// Errored cells whose class is not `plugin`: the endpoint, its set-up or the cell's budget.
    pub destination_errored: usize,
    /// Completions the destination's cells read.
    pub turns: u64,
    pub tool_call_turns: u64,
    pub length_turns: u64,
    pub malformed_turns: u64,
    /// Cells that ended before their first request (a handoff that could not be built or did not
    /// fit, a context not delivered, a key not set).
    pub no_request_cells: usize,
    pub flags: Vec<Flag>,
}

fn share(n: u64, of: u64) -> Option<f64> {
    (of > 0).then(|| n as f64 / of as f64)
}

impl Health {
    /// Share of turns with a valid tool call (`None` without a turn).
    pub fn valid_share(&self) -> Option<f64> {
        share(self.tool_call_turns, self.turns)
    }
    /// Share of turns cut at `max_tokens`.
    pub fn length_share(&self) -> Option<f64> {
        share(self.length_turns, self.turns)
    }
    /// Share of turns with malformed tool-call arguments.
    pub fn malformed_share(&self) -> Option<f64> {
        share(self.malformed_turns, self.turns)
    }
    /// Whether a ranking of this destination's cells means anything.
    pub fn meaningful(&self) -> bool {
        self.flags.is_empty()
    }

    /// The figures in one line: `12 turns: 0% valid tool calls, 83% cut at max_tokens, …`.
    pub fn figures(&self) -> String {
        let pct = |x: Option<f64>| match x {
            Some(v) => format!("{:.0}%", v * 100.0),
            None => "-".into(),
        };
        format!(
            "{} cells ({} errored, {} ended before any request), {} turns: {} with a valid tool call, {} cut at max_tokens (finish_reason length), {} with malformed arguments",
            self.cells,
            self.errored,
            self.no_request_cells,
            self.turns,
            pct(self.valid_share()),
            pct(self.length_share()),
            pct(self.malformed_share())
        )
    }

    /// Why the ranking is not meaningful, in words (empty when it is).
    pub fn warning(&self) -> String {
        let mut why: Vec<String> = Vec::new();
        for f in &self.flags {
            why.push(match f {
                Flag::NeverValidToolCall => {
                    let hint = if self.length_turns * 2 > self.turns && self.turns > 0 {
                        "; most answers were cut at max_tokens: raise max_tokens"
                    } else {
                        "; check that the server has tool calling on (vLLM --enable-auto-tool-choice --tool-call-parser, llama.cpp --jinja, an Ollama model with tool support)"
                    };
                    format!("never made a valid tool call{hint}")
                }
                Flag::MostlyErrored => format!(
                    "{} of its {} cells errored on the destination's side (see \"Errored cells\")",
                    self.destination_errored, self.cells
                ),
            });
        }
        why.join("; ")
    }
}

/// Whether `model` names a live destination (anything but a simulated one).
fn is_live(model: &str) -> bool {
    !model.starts_with("sim:")
}

/// The health of every live destination of the scenario cells of `records`, by model name.
pub fn assess(records: &[RunRecord]) -> Vec<Health> {
    let mut a = Assessor::default();
    for r in records {
        a.add(r);
    }
    a.finish()
}

/// [`assess`] a record at a time, for a pass that does not hold the run's records.
#[derive(Debug, Default)]
pub struct Assessor {
    by: BTreeMap<String, Health>,
}

impl Assessor {
    /// Counts `r` if it is a live destination's scenario cell.
    pub fn add(&mut self, r: &RunRecord) {
        if r.source != Source::Scenario || !is_live(&r.model) {
            return;
        }
        let h = self.by.entry(r.model.clone()).or_insert_with(|| Health {
            model: r.model.clone(),
            ..Health::default()
        });
        h.cells += 1;
        if r.status == Status::Errored {
            h.errored += 1;
            if r.error_class != Some(ErrorClass::Plugin) {
                h.destination_errored += 1;
            }
        }
        match &r.diagnostics.live {
            Some(l) if l.requests > 0 || l.calls > 0 => {
                h.turns += l.calls as u64;
                h.tool_call_turns += l.tool_call_turns as u64;
                h.length_turns += l.length_turns as u64;
                h.malformed_turns += l.malformed_turns as u64;
            }
            _ => h.no_request_cells += 1,
        }
    }

    /// Each model's health with its flags, by model name.
    pub fn finish(self) -> Vec<Health> {
        self.by
            .into_values()
            .map(|mut h| {
                if h.tool_call_turns == 0 {
                    h.flags.push(Flag::NeverValidToolCall);
                }
                if h.destination_errored * 2 > h.cells {
                    h.flags.push(Flag::MostlyErrored);
                }
                h
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::LiveStats;

    fn record(model: &str, status: Status, live: Option<LiveStats>) -> RunRecord {
        let mut r: RunRecord = serde_json::from_value(serde_json::json!({
            "scenario": "s", "interrupt": "p", "strategy": "C", "model": model, "rep": 0, "seed": 1,
            "status": "ok",
            "metrics": {"task_success": false, "omitted_context": 0, "repeated_work": 0,
                "duplicate_side_effects": 0, "safety_violations": 0, "recovery_quality": 0.0,
                "restore_tokens": 0, "total_tokens": 0, "first_action_ms": 0.0, "completion_ms": 0.0},
            "diagnostics": {"finish": null, "degraded": false, "steps": 0}
        }))
        .expect("record");
        r.status = status;
        std::sync::Arc::make_mut(&mut r.diagnostics).live = live.map(Box::new);
        r
    }

    fn plugin(mut r: RunRecord) -> RunRecord {
        r.error_class = Some(ErrorClass::Plugin);
        r
    }

    #[test]
    fn text_only_and_mostly_errored_destinations_are_flagged_and_working_ones_are_not() {
        let turns = |calls, valid, length| LiveStats {
            calls,
            requests: calls,
            tool_call_turns: valid,
            length_turns: length,
            ..LiveStats::default()
        };
        let records = vec![
            // Text only, mostly cut at max_tokens.
            record("talker", Status::Ok, Some(turns(4, 0, 3))),
            record("talker", Status::Ok, Some(turns(2, 0, 2))),
            // Works, one cell ended before a request.
            record("worker", Status::Ok, Some(turns(5, 4, 0))),
            record("worker", Status::Ok, None),
            // Two of three cells errored, one valid call.
            record("broken", Status::Errored, Some(turns(1, 0, 0))),
            record("broken", Status::Errored, None),
            record("broken", Status::Ok, Some(turns(2, 1, 0))),
            // A plug-in's failures are not the destination's.
            plugin(record("plugged", Status::Errored, None)),
            plugin(record("plugged", Status::Errored, None)),
            record("plugged", Status::Ok, Some(turns(2, 1, 0))),
            // Simulated destinations are never assessed.
            record("sim:careful", Status::Errored, None),
        ];
        let h = assess(&records);
        let by: BTreeMap<&str, &Health> = h.iter().map(|h| (h.model.as_str(), h)).collect();
        assert_eq!(by.len(), 4);
        assert!(by["plugged"].meaningful());
        assert_eq!(by["plugged"].errored, 2);
        let talker = by["talker"];
        assert_eq!(talker.flags, vec![Flag::NeverValidToolCall]);
        assert_eq!(talker.length_share(), Some(5.0 / 6.0));
        assert!(
            talker.warning().contains("raise max_tokens"),
            "{}",
            talker.warning()
        );
        let worker = by["worker"];
        assert!(worker.meaningful());
        assert_eq!(worker.no_request_cells, 1);
        assert_eq!(worker.valid_share(), Some(0.8));
        let broken = by["broken"];
        assert_eq!(broken.flags, vec![Flag::MostlyErrored]);
        assert!(
            broken
                .warning()
                .contains("2 of its 3 cells errored on the destination's side")
        );
    }
}
