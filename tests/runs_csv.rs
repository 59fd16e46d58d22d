//! `runs.csv`: its 44 columns in the documented order, and every kind of cell's row — a live
//! transcript cell with cost, an errored cell, a governed cell — as one tidy row with the columns
//! that do not apply left empty.

use compaction_eval::record::RunRecord;
use compaction_eval::report::{Export, ExportInput, RunsCsv, summarize};

const HEADER: &str = "scenario,scale,interrupt,strategy,model,rep,seed,status,error,task_success,omitted_context,repeated_work,duplicate_side_effects,safety_violations,recovery_quality,restore_tokens,total_tokens,first_action_ms,completion_ms,history_tokens,compression_ratio,context_overflow,source,needed_value_retention,user_statement_retention,next_action_agrees,error_class,steps,live_calls,live_requests,live_retries,cache_hits,malformed_tool_calls,unknown_tools,text_only_turns,input_tokens,output_tokens,cost_usd,model_latency_ms,governed_status,governed_reasons,governed_bytes,governed_max_bytes,governed_held\n";

fn csv(records: &[RunRecord]) -> String {
    let summary = summarize(records);
    let input = ExportInput {
        records,
        summary: &summary,
        manifest: &serde_json::Value::Null,
        plots: &[],
    };
    let bytes = RunsCsv.render(&input).expect("runs.csv");
    String::from_utf8(bytes).expect("utf-8")
}

fn record(json: serde_json::Value) -> RunRecord {
    serde_json::from_value(json).expect("record")
}

fn metrics() -> serde_json::Value {
    serde_json::json!({
        "task_success": true, "omitted_context": 1, "repeated_work": 2,
        "duplicate_side_effects": 0, "safety_violations": 3, "recovery_quality": 0.123456,
        "restore_tokens": 10, "total_tokens": 20, "first_action_ms": 1.23456,
        "completion_ms": 7.0, "history_tokens": 40, "compression_ratio": 0.25
    })
}

#[test]
fn an_empty_run_has_the_header_only() {
    assert_eq!(csv(&[]), HEADER);
}

#[test]
fn every_kind_of_cell_is_one_row() {
    let live = record(serde_json::json!({
        "source": "transcript", "scenario": "run-1", "interrupt": "cut, \"first\"",
        "strategy": "B", "model": "gpt-x", "rep": 0, "seed": 9, "status": "ok",
        "metrics": metrics(),
        "diagnostics": {"finish": "completed", "degraded": false, "steps": 4,
            "context_overflow": {"restore_tokens": 9, "context_window": 8, "reserve": 1},
            "live": {"calls": 3, "cache_hits": 1, "retries": 2, "input_tokens": 100,
                "output_tokens": 50, "cached_input_tokens": 0, "estimated_tokens": 0,
                "malformed_tool_calls": 1, "unknown_tools": 0, "text_only_turns": 2,
                "requests": 4, "latency_ms": 12.34567, "cost_usd": 0.0012345}},
        "transcript": {"cut_rule": "first_write", "cut_before": 3, "full_prefix_tokens": 80,
            "operator_tokens": 5, "needed_value_retention": 0.5, "values_needed": 2,
            "user_statement_retention": null, "compression_ratio": 0.33333,
            "next_action_agrees": false}
    }));
    let errored = record(serde_json::json!({
        "scenario": "s", "scale": "40k", "interrupt": "p", "strategy": "C", "model": "m",
        "rep": 2, "seed": 1, "status": "errored", "error": "HTTP 400: bad\nrequest",
        "error_class": "request_rejected", "metrics": metrics(),
        "diagnostics": {"finish": null, "degraded": false, "steps": 0}
    }));
    let governed = record(serde_json::json!({
        "scenario": "s", "interrupt": "p", "strategy": "gov:C", "model": "sim:careful",
        "rep": 0, "seed": 2, "status": "ok", "metrics": metrics(),
        "diagnostics": {"finish": "blocked", "degraded": false, "steps": 1},
        "governed": {"inner": "C", "max_bytes": 100, "status": "BLOCKED",
            "reasons": ["missing", "over_budget"],
            "bytes": {"instructions": 1, "evidence": 2, "summary": 3, "total": 6},
            "held": true}
    }));
    let text = csv(&[live, errored, governed]);
    let expected = format!(
        "{HEADER}\
run-1,base,\"cut, \"\"first\"\"\",B,gpt-x,0,9,ok,,true,1,2,0,3,0.1235,10,20,1.235,7.000,40,0.3333,true,transcript,0.5000,,false,,4,3,4,2,1,1,0,2,100,50,0.001234,12.346,,,,,\n\
s,40k,p,C,m,2,1,errored,\"HTTP 400: bad\nrequest\",true,1,2,0,3,0.1235,10,20,1.235,7.000,40,0.2500,false,scenario,,,,request_rejected,0,,,,,,,,,,,,,,,,\n\
s,base,p,gov:C,sim:careful,0,2,ok,,true,1,2,0,3,0.1235,10,20,1.235,7.000,40,0.2500,false,scenario,,,,,1,,,,,,,,,,,,BLOCKED,missing over_budget,6,100,true\n"
    );
    assert_eq!(text, expected);
}
