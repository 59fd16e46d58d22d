//! Live destinations through the real chat-completions protocol, against an OpenAI-compatible
//! server this test starts on 127.0.0.1 (no network). The server validates every request as
//! strictly as the common servers do (string `content` on every message — llama-cpp-python
//! rejects `null` with HTTP 500 —, tool calls answered in order, `max_tokens` present) and its
//! behaviour is chosen by the request's `model`: a scripted agent, a 429 first, malformed
//! tool-call JSON (once, or forever), an unknown tool, text-only answers, a validation rejection,
//! a context-length rejection, a persistent 500, a stall, and a hang that a flag releases.
//! A raw TCP server that never finishes its answer checks that a timed-out request's connection
//! is closed; the binary is run for the exit codes, the interrupted run and `| head`.

mod common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use compaction_eval::destination::live::{ErrorClass, ModelConfig, RetryNotice};
use compaction_eval::runner::{
    self, Counts, Reporter, RunConfig, RunError, RunEvent, RunRecord, Silent, Status,
};
use serde_json::{Value, json};

const KEY_VAR: &str = "COMPACTION_EVAL_TEST_KEY";
const KEY: &str = "sk-test-DO-NOT-LEAK-7f3a91";
const SCENARIO: &str = "support-ticket-timeout";

#[derive(Default)]
struct Server {
    requests: AtomicUsize,
    /// Requests the validator rejected.
    rejected: AtomicUsize,
    by_model: std::sync::Mutex<BTreeMap<String, usize>>,
    /// While set, the `hang` model never answers.
    hang: AtomicBool,
    /// The first request's body of each model (what a destination was given).
    first_body: std::sync::Mutex<BTreeMap<String, String>>,
}

fn completion(model: &str, message: Value) -> Value {
    json!({
        "id": "chatcmpl-test", "object": "chat.completion", "created": 1_700_000_000u32,
        "model": format!("{model}-2026-11-01"), "system_fingerprint": "fp_test",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    })
}

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
        "function": {"name": name, "arguments": args.to_string()}}]})
}

/// The scripted agent: reconcile the timed-out ticket write, comment, set the status, finish.
/// `parallel` makes the comment and the status update one turn with two tool calls.
fn scripted(body: &Value, model: &str, parallel: bool) -> Value {
    let msgs = body["messages"].as_array().cloned().unwrap_or_default();
    let done = msgs
        .iter()
        .filter(|m| {
            m["tool_calls"][0]["id"]
                .as_str()
                .is_some_and(|id| id.starts_with("srv_ok_"))
        })
        .count();
    // The ticket id comes from the reconcile call's tool result, as a real agent would read it.
    let ticket = msgs
        .iter()
        .filter(|m| m["role"] == "tool")
        .find_map(|m| {
            let v: Value = serde_json::from_str(m["content"].as_str()?).ok()?;
            v[0]["id"].as_str().map(str::to_string)
        })
        .unwrap_or_else(|| "T-0".into());
    let comment = json!({"ticket_id": ticket, "visibility": "customer",
        "body": "This is the AUTH-419 stale-session issue (KB-311): we revoked your sessions."});
    let status = json!({"id": ticket, "status": "pending_customer"});
    let m = match (done, parallel) {
        (0, _) => call(
            "srv_ok_0",
            "find_ticket_by_key",
            json!({"idempotency_key": "ticket-intent-017"}),
        ),
        (1, true) => {
            json!({"role": "assistant", "content": "Commenting and updating.", "tool_calls": [
            {"id": "srv_ok_1", "type": "function", "function": {"name": "add_ticket_comment", "arguments": comment.to_string()}},
            {"id": "srv_ok_2", "type": "function", "function": {"name": "update_ticket", "arguments": status.to_string()}}]})
        }
        (1, false) => call("srv_ok_1", "add_ticket_comment", comment),
        (2, false) => call("srv_ok_2", "update_ticket", status),
        _ => call(
            "srv_ok_3",
            "finish",
            json!({"status": "completed", "report": "reconciled and commented"}),
        ),
    };
    completion(model, m)
}

/// What a strict OpenAI-compatible server checks (the union of OpenAI's, vLLM's, llama.cpp's and
/// llama-cpp-python's request rules the harness could break), or the first violation.
fn validate(body: &Value) -> Result<(), String> {
    let Some(msgs) = body["messages"].as_array() else {
        return Err("messages: field required".into());
    };
    if !body["model"].is_string() {
        return Err("model: field required".into());
    }
    if body["max_tokens"].as_u64().unwrap_or(0) == 0 {
        return Err(
            "max_tokens: every request of this harness must carry a positive max_tokens".into(),
        );
    }
    if let Some(tools) = body.get("tools") {
        for (i, t) in tools.as_array().into_iter().flatten().enumerate() {
            if t["type"] != "function"
                || !t["function"]["name"].is_string()
                || !t["function"]["parameters"].is_object()
            {
                return Err(format!("tools[{i}]: not a function definition"));
            }
        }
    }
    let mut open: Vec<String> = Vec::new();
    for (i, m) in msgs.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or_default();
        if !m["content"].is_string() {
            return Err(format!(
                "1 validation error for ChatCompletionRequestMessage messages.{i}.content: Input should be a valid string [type=string_type, input_value={}]",
                m["content"]
            ));
        }
        if role != "tool" && !open.is_empty() {
            return Err(format!(
                "messages.{i}: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id' ({} open)",
                open.join(", ")
            ));
        }
        match role {
            "system" | "user" => {}
            "assistant" => {
                if let Some(calls) = m.get("tool_calls") {
                    for c in calls.as_array().into_iter().flatten() {
                        let id = c["id"].as_str().unwrap_or_default();
                        if id.is_empty()
                            || c["type"] != "function"
                            || !c["function"]["name"].is_string()
                            || !c["function"]["arguments"].is_string()
                        {
                            return Err(format!(
                                "messages.{i}.tool_calls: malformed tool call {c}"
                            ));
                        }
                        // llama.cpp's server renders the history through the chat template and
                        // parses every call's arguments first.
                        let args = c["function"]["arguments"].as_str().unwrap_or_default();
                        if !matches!(serde_json::from_str::<Value>(args), Ok(Value::Object(_))) {
                            return Err(format!(
                                "messages.{i}.tool_calls: Failed to parse tool call arguments as JSON: {args}"
                            ));
                        }
                        open.push(id.to_string());
                    }
                }
            }
            "tool" => {
                let id = m["tool_call_id"].as_str().unwrap_or_default();
                match open.iter().position(|o| o == id) {
                    Some(p) => {
                        open.remove(p);
                    }
                    None => {
                        return Err(format!(
                            "messages.{i}: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (tool_call_id {id:?})"
                        ));
                    }
                }
            }
            other => return Err(format!("messages.{i}.role: unknown role {other:?}")),
        }
    }
    match msgs.last().and_then(|m| m["role"].as_str()) {
        Some("user") | Some("tool") => Ok(()),
        other => Err(format!(
            "the last message must be a user or tool message, not {other:?}"
        )),
    }
}

/// A long validation error, as llama-cpp-python's server sends it (HTTP 500): the cause is at the
/// end, past the first 300 characters.
fn pydantic_error(cause: &str) -> Value {
    let noise = "Input should be 'system' [type=literal_error]; Input should be 'user' [type=literal_error]; Input should be 'function' [type=literal_error]; ".repeat(3);
    json!({"error": {"message": format!("6 validation errors for CreateChatCompletionRequest: {noise}{cause}"), "type": "internal_server_error"}})
}

async fn chat(
    State(s): State<Arc<Server>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    s.requests.fetch_add(1, Ordering::SeqCst);
    let model = body["model"].as_str().unwrap_or_default().to_string();
    let n = {
        let mut m = s.by_model.lock().unwrap_or_else(|e| e.into_inner());
        let c = m.entry(model.clone()).or_default();
        *c += 1;
        *c
    };
    s.first_body
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(model.clone())
        .or_insert_with(|| body.to_string());
    // The key is sent as a bearer token, and only there.
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(&format!("Bearer {KEY}"))
    {
        return (StatusCode::UNAUTHORIZED, "bad key").into_response();
    }
    if let Err(e) = validate(&body) {
        s.rejected.fetch_add(1, Ordering::SeqCst);
        return (StatusCode::INTERNAL_SERVER_ERROR, Json(pydantic_error(&e))).into_response();
    }
    let has = |id: &str| body.to_string().contains(id);
    match model.as_str() {
        "flaky" if n == 1 => {
            (StatusCode::TOO_MANY_REQUESTS, [("retry-after", "0")], "slow down").into_response()
        }
        "malformed" if !has("srv_bad") => {
            let mut m = call("srv_bad_1", "find_ticket_by_key", json!({}));
            m["tool_calls"][0]["function"]["arguments"] = json!("{not json");
            Json(completion(&model, m)).into_response()
        }
        "malformed-forever" => {
            let mut m = call(&format!("srv_bad_{n}"), "find_ticket_by_key", json!({}));
            m["tool_calls"][0]["function"]["arguments"] = json!("{\"idempotency_key\": \"ticket-");
            Json(completion(&model, m)).into_response()
        }
        "unknown-tool" if !has("srv_bad") => {
            Json(completion(&model, call("srv_bad_1", "delete_everything", json!({})))).into_response()
        }
        "summarizer" => Json(completion(&model, json!({"role": "assistant", "content":
            "The create_ticket call with idempotency key ticket-intent-017 timed out; its outcome is unknown. Do not email the customer directly."}))).into_response(),
        "textonly" => Json(completion(&model, json!({"role": "assistant", "content": "All done, I think."}))).into_response(),
        "rejects" => (StatusCode::INTERNAL_SERVER_ERROR, Json(pydantic_error(
            "messages.3.content: Input should be a valid string [type=string_type, input_value=None]"))).into_response(),
        "too-long" => (StatusCode::BAD_REQUEST, Json(json!({"object": "error", "type": "BadRequestError",
            "message": "This model's maximum context length is 8192 tokens. However, you requested 9100 tokens (8076 in the messages, 1024 in the completion)."}))).into_response(),
        "broken" => (StatusCode::INTERNAL_SERVER_ERROR, "internal error").into_response(),
        "stall" => {
            tokio::time::sleep(Duration::from_secs(3)).await;
            Json(scripted(&body, &model, false)).into_response()
        }
        "hang" => {
            while s.hang.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Json(scripted(&body, &model, false)).into_response()
        }
        "parallel" => Json(scripted(&body, &model, true)).into_response(),
        _ => Json(scripted(&body, &model, false)).into_response(),
    }
}

/// Starts the server on its own thread and runtime (the runner makes its own); returns the port.
fn start() -> (u16, Arc<Server>) {
    let state = Arc::new(Server::default());
    let port = common::serve(
        axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(chat))
            .with_state(state.clone()),
    );
    (port, state)
}

fn model(port: u16, name: &str, timeout: f64, retries: u32) -> ModelConfig {
    let mut m = ModelConfig::openai(name);
    m.name = name.to_string();
    m.base_url = format!("http://127.0.0.1:{port}/v1");
    m.api_key_env = Some(KEY_VAR.into());
    m.request_timeout_s = timeout;
    m.retries = retries;
    m.backoff_s = 0.01;
    m.price_input_per_mtok = Some(2.5);
    m.price_output_per_mtok = Some(10.0);
    m
}

fn set_key() {
    // SAFETY: every test in this file sets the same variables to the same values before any
    // run, and nothing here reads the environment concurrently with a different expectation.
    unsafe {
        std::env::set_var(KEY_VAR, KEY);
        std::env::set_var("OPENAI_API_KEY", KEY);
    };
}

fn config(models: Vec<ModelConfig>, out: &Path, cache: &Path) -> RunConfig {
    RunConfig {
        scenarios: Some(vec![SCENARIO.into()]),
        interrupts: Some(vec!["uncertain_side_effect".into()]),
        strategies: vec!["C".into()],
        models: models.iter().map(|m| m.name.clone()).collect(),
        reps: 1,
        concurrency: 2,
        out: out.to_path_buf(),
        cache_dir: Some(cache.to_path_buf()),
        model_defs: models.into_iter().map(|m| (m.name.clone(), m)).collect(),
        scales: vec![compaction_eval::scenario::volume::Scale::Base],
        attention: 0.0,
        ..RunConfig::default()
    }
}

fn run_cfg(cfg: &RunConfig, reporter: &mut dyn Reporter) -> Vec<RunRecord> {
    set_key();
    let plan = runner::plan(cfg).expect("plan");
    runner::write_manifest(cfg, &plan).expect("manifest");
    runner::execute(cfg, &plan, reporter).expect("run");
    compaction_eval::report::render_dir(&cfg.out).expect("report");
    runner::read_records(&cfg.out.join("results.jsonl")).expect("records")
}

fn run(port: u16, models: &[(&str, f64, u32)], out: &Path, cache: &Path) -> Vec<RunRecord> {
    let models = models
        .iter()
        .map(|(n, t, r)| model(port, n, *t, *r))
        .collect();
    run_cfg(&config(models, out, cache), &mut Silent)
}

fn dirs() -> (PathBuf, PathBuf) {
    let d = tempfile::tempdir().expect("tempdir").keep();
    (d.join("out"), d.join("cache"))
}

fn live(r: &RunRecord) -> &compaction_eval::record::LiveStats {
    r.diagnostics.live.as_ref().expect("live stats")
}

fn err(r: &RunRecord) -> &str {
    r.error.as_deref().unwrap_or_default()
}

#[test]
fn a_scripted_model_plays_the_protocol_and_a_rerun_makes_no_requests() {
    let (port, server) = start();
    let (out, cache) = dirs();
    let first = run(port, &[("scripted", 10.0, 2)], &out, &cache);
    assert_eq!(first.len(), 1);
    let r = &first[0];
    assert_eq!(r.status, Status::Ok, "{:?}", r.error);
    assert!(r.metrics.task_success, "{:?}", r.diagnostics);
    assert_eq!(r.metrics.duplicate_side_effects, 0);
    assert_eq!(r.metrics.recovery_quality, 1.0);
    let l = live(r);
    assert_eq!((l.calls, l.requests, l.cache_hits, l.retries), (4, 4, 0, 0));
    assert_eq!((l.input_tokens, l.output_tokens), (400, 40));
    assert_eq!(r.metrics.total_tokens, 440);
    assert_eq!(l.reported_model.as_deref(), Some("scripted-2026-11-01"));
    assert_eq!(l.system_fingerprint.as_deref(), Some("fp_test"));
    assert!((l.cost_usd.unwrap_or_default() - (400.0 * 2.5 + 40.0 * 10.0) / 1e6).abs() < 1e-12);
    // The cell's wall time holds its calls' latency.
    assert!(r.metrics.completion_ms >= l.latency_ms);
    assert_eq!(server.requests.load(Ordering::SeqCst), 4);
    assert_eq!(server.rejected.load(Ordering::SeqCst), 0);

    let (out2, _) = dirs();
    let second = run(port, &[("scripted", 10.0, 2)], &out2, &cache);
    assert_eq!(
        server.requests.load(Ordering::SeqCst),
        4,
        "the rerun reached the server"
    );
    let l2 = live(&second[0]);
    assert_eq!((l2.cache_hits, l2.requests), (4, 0));
    assert!(l2.from_cache());
    assert_eq!(second[0].metrics.task_success, r.metrics.task_success);
    assert_eq!(second[0].metrics.total_tokens, r.metrics.total_tokens);
    // Cache hits report the latency measured the first time, apart from this run's.
    assert_eq!(l2.latency_ms, 0.0);
    assert!((l2.cache_latency_ms - l.latency_ms).abs() < 1e-6);
    // … and a cell answered from the cache is left out of the latency medians.
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out2.join("summary.json")).expect("summary"))
            .expect("json");
    assert!(summary["by_strategy_model"][0]["completion_ms"].is_null());
    assert_eq!(summary["live"][0]["totals"]["cached_cells"], 1);
}

#[test]
fn tool_calling_conversations_replay_through_a_strictly_validating_server() {
    let (port, server) = start();
    let (out, cache) = dirs();
    let mut cfg = config(
        vec![
            model(port, "scripted", 10.0, 0),
            model(port, "parallel", 10.0, 0),
        ],
        &out,
        &cache,
    );
    // A replays the source's tool calls and results; mask and none send other shapes.
    cfg.strategies = vec!["A".into(), "mask".into(), "C".into(), "none".into()];
    cfg.interrupts = Some(vec![
        "uncertain_side_effect".into(),
        "mid_implementation".into(),
    ]);
    let recs = run_cfg(&cfg, &mut Silent);
    assert_eq!(recs.len(), 16);
    assert_eq!(
        server.rejected.load(Ordering::SeqCst),
        0,
        "a request was invalid"
    );
    for r in &recs {
        assert_eq!(
            r.status,
            Status::Ok,
            "{} {}: {:?}",
            r.strategy,
            r.model,
            r.error
        );
        assert!(live(r).calls >= 3);
    }
    // Two tool calls in one turn are two actions and one request.
    let p = recs
        .iter()
        .find(|r| {
            r.model == "parallel" && r.strategy == "C" && r.interrupt == "uncertain_side_effect"
        })
        .expect("record");
    assert_eq!((live(p).calls, p.diagnostics.steps), (3, 4));
}

#[test]
fn rejections_are_classified_with_the_full_message_and_not_retried() {
    let (port, server) = start();
    let (out, cache) = dirs();
    let recs = run(
        port,
        &[
            ("rejects", 10.0, 3),
            ("too-long", 10.0, 3),
            ("broken", 10.0, 2),
        ],
        &out,
        &cache,
    );
    let by = |m: &str| recs.iter().find(|r| r.model == m).expect("record");
    let rej = by("rejects");
    assert_eq!(rej.status, Status::Errored);
    assert_eq!(rej.error_class, Some(ErrorClass::RequestRejected));
    // The cause, past the first 300 characters, is kept, with the status and the URL.
    assert!(err(rej).contains("HTTP 500"), "{}", err(rej));
    assert!(err(rej).contains(&format!("http://127.0.0.1:{port}/v1/chat/completions")));
    assert!(
        err(rej).contains("messages.3.content: Input should be a valid string"),
        "{}",
        err(rej)
    );
    assert!(err(rej).contains("not retried"));
    assert_eq!((live(rej).requests, live(rej).retries), (1, 0));
    let long = by("too-long");
    assert_eq!(long.error_class, Some(ErrorClass::ContextLength));
    assert!(err(long).contains("maximum context length is 8192 tokens"));
    assert_eq!(live(long).requests, 1);
    // A plain 500 is transient: retried as configured, then infrastructure.
    let broken = by("broken");
    assert_eq!(broken.error_class, Some(ErrorClass::Infrastructure));
    assert_eq!((live(broken).requests, live(broken).retries), (3, 2));
    assert!(err(broken).contains("after 2 retries"), "{}", err(broken));
    assert_eq!(
        server
            .by_model
            .lock()
            .map(|m| m.get("rejects").copied())
            .ok()
            .flatten(),
        Some(1)
    );
    // Errored cells keep what they spent, and the reports carry it by class.
    let csv = std::fs::read_to_string(out.join("runs.csv")).expect("runs.csv");
    assert!(
        csv.lines()
            .next()
            .unwrap_or_default()
            .contains("error_class,steps,live_calls,live_requests,live_retries")
    );
    assert!(csv.contains("request_rejected") && csv.contains("context_length"));
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(md.contains("## Live models"), "{md}");
    assert!(
        md.contains("By class: context_length: 1; infrastructure: 1; request_rejected: 1."),
        "{md}"
    );
    assert!(md.contains("[request_rejected]"));
    let summary = std::fs::read_to_string(out.join("summary.csv")).expect("summary.csv");
    assert!(summary.contains("request_rejected: 1"));
}

#[test]
fn connection_refused_says_so_and_names_the_url() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = free.local_addr().expect("addr").port();
    drop(free);
    let (out, cache) = dirs();
    let mut cfg = config(vec![model(port, "dead", 10.0, 1)], &out, &cache);
    // Without the probe the cell runs and errors…
    cfg.probe = false;
    let recs = run_cfg(&cfg, &mut Silent);
    let r = &recs[0];
    assert_eq!(r.error_class, Some(ErrorClass::Infrastructure));
    assert!(
        err(r).contains(&format!(
            "cannot connect to http://127.0.0.1:{port}/v1/chat/completions"
        )),
        "{}",
        err(r)
    );
    assert!(err(r).to_lowercase().contains("refused"), "{}", err(r));
    assert_eq!(live(r).requests, 2);
    // … with it (the default) the run does not start, and says which table to fix.
    cfg.probe = true;
    set_key();
    match runner::plan(&cfg) {
        Err(RunError::Preflight(m)) => {
            assert_eq!(m.len(), 1);
            assert!(
                m[0].contains("[model.dead]")
                    && m[0].contains(&format!("http://127.0.0.1:{port}/v1/models")),
                "{m:?}"
            );
            assert!(m[0].to_lowercase().contains("refused"), "{m:?}");
        }
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("the probe passed"),
    }
}

#[test]
fn a_missing_key_variable_stops_the_run_before_its_first_cell() {
    let (port, server) = start();
    let (out, cache) = dirs();
    let mut m = model(port, "scripted", 10.0, 0);
    m.api_key_env = Some("COMPACTION_EVAL_NO_SUCH_KEY".into());
    let cfg = config(vec![m], &out, &cache);
    match runner::plan(&cfg) {
        Err(RunError::Preflight(m)) => {
            assert!(
                m[0].contains("[model.scripted]") && m[0].contains("COMPACTION_EVAL_NO_SUCH_KEY"),
                "{m:?}"
            )
        }
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("the probe passed"),
    }
    assert_eq!(server.requests.load(Ordering::SeqCst), 0);
    // Without the probe, each cell is a harness error naming the variable.
    let mut cfg = cfg;
    cfg.probe = false;
    let plan = runner::plan(&cfg).expect("plan");
    runner::execute(&cfg, &plan, &mut Silent).expect("run");
    let r = &runner::read_records(&out.join("results.jsonl")).expect("records")[0];
    assert_eq!(r.error_class, Some(ErrorClass::Harness));
    assert!(err(r).contains("COMPACTION_EVAL_NO_SUCH_KEY"));
}

#[test]
fn every_model_turn_counts_against_the_step_budget_and_requests_are_capped() {
    let (port, server) = start();
    let (out, cache) = dirs();
    let mut capped = model(port, "broken", 10.0, 50);
    capped.max_requests_per_cell = 3;
    let mut cfg = config(
        vec![
            model(port, "malformed-forever", 10.0, 0),
            capped,
            model(port, "textonly", 10.0, 0),
        ],
        &out,
        &cache,
    );
    cfg.step_budget = 5;
    let recs = run_cfg(&cfg, &mut Silent);
    let by = |m: &str| recs.iter().find(|r| r.model == m).expect("record");
    let mal = by("malformed-forever");
    assert_eq!(mal.status, Status::Ok, "{:?}", mal.error);
    assert!(mal.diagnostics.step_budget_exhausted);
    assert_eq!(mal.diagnostics.steps, 5);
    assert_eq!((live(mal).requests, live(mal).malformed_tool_calls), (5, 5));
    assert!(!mal.metrics.task_success);
    assert_eq!(
        server
            .by_model
            .lock()
            .map(|m| m.get("malformed-forever").copied())
            .ok()
            .flatten(),
        Some(5)
    );
    let cap = by("broken");
    assert_eq!(cap.error_class, Some(ErrorClass::Budget));
    assert!(err(cap).contains("request cap of 3"), "{}", err(cap));
    assert!(err(cap).contains("HTTP 500"), "{}", err(cap));
    assert_eq!((live(cap).requests, live(cap).retries), (3, 2));
    // Text only: a nudge, then the cell ends as a failed continuation; both turns were steps.
    let txt = by("textonly");
    assert_eq!((txt.diagnostics.steps, live(txt).text_only_turns), (2, 2));
}

#[test]
fn malformed_arguments_and_unknown_tools_get_an_error_result_and_the_cell_goes_on() {
    let (port, _) = start();
    let (out, cache) = dirs();
    let recs = run(
        port,
        &[("malformed", 10.0, 1), ("unknown-tool", 10.0, 1)],
        &out,
        &cache,
    );
    let by = |m: &str| recs.iter().find(|r| r.model == m).expect("record");
    let mal = by("malformed");
    assert_eq!(mal.status, Status::Ok);
    assert_eq!(live(mal).malformed_tool_calls, 1);
    assert!(mal.metrics.task_success);
    // The wasted turn is a step: 1 + the 4 scripted actions.
    assert_eq!(mal.diagnostics.steps, 5);
    let unk = by("unknown-tool");
    assert_eq!(live(unk).unknown_tools, 1);
    assert!(unk.metrics.task_success);
}

#[test]
fn a_stall_past_the_cell_budget_ends_the_cell_as_errored_with_what_it_spent() {
    let (port, _) = start();
    let (out, cache) = dirs();
    let mut stall = model(port, "stall", 30.0, 0);
    stall.cell_timeout_s = 0.4;
    let recs = run_cfg(
        &config(vec![stall, model(port, "scripted", 10.0, 0)], &out, &cache),
        &mut Silent,
    );
    let r = recs.iter().find(|r| r.model == "stall").expect("record");
    assert_eq!(r.error_class, Some(ErrorClass::Budget));
    assert!(err(r).contains("wall-clock budget of 0.4 s"), "{}", err(r));
    assert_eq!(live(r).requests, 1);
    assert!(r.metrics.completion_ms >= 400.0);
    let ok = recs.iter().find(|r| r.model == "scripted").expect("record");
    assert_eq!(ok.status, Status::Ok);
    let report = std::fs::read_to_string(out.join("report.md")).expect("report");
    assert!(report.contains("Errored cells (1)"));
    // Errors are not cached: the next run asks again.
    assert_eq!(
        compaction_eval::destination::live::Cache { dir: cache }
            .stats()
            .0,
        4
    );
}

/// A server that sends headers and the start of a body, then nothing: counts connections and
/// the ones the client closed.
fn never_finishing_server() -> (u16, Arc<(AtomicUsize, AtomicUsize)>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let counts = Arc::new((AtomicUsize::new(0), AtomicUsize::new(0)));
    let c2 = counts.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let c = c2.clone();
            c.0.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut buf = [0u8; 65536];
                let _ = s.read(&mut buf);
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000000\r\n\r\n{\"choices\": [{\"message\": {\"tool_calls\": [{\"function\": {\"arguments\": \"{");
                let _ = s.flush();
                // Generate without end, until the client goes away.
                loop {
                    if s.write_all(b"a").is_err() {
                        break;
                    }
                    let _ = s.set_read_timeout(Some(Duration::from_millis(20)));
                    match s.read(&mut buf) {
                        Ok(0) => break,
                        Ok(_) => {}
                        Err(e)
                            if e.kind() == std::io::ErrorKind::WouldBlock
                                || e.kind() == std::io::ErrorKind::TimedOut => {}
                        Err(_) => break,
                    }
                }
                c.1.fetch_add(1, Ordering::SeqCst);
            });
        }
    });
    (port, counts)
}

#[test]
fn a_request_past_its_timeout_is_abandoned_and_its_connection_closed() {
    let (port, counts) = never_finishing_server();
    let (out, cache) = dirs();
    let mut m = model(port, "endless", 0.3, 1);
    m.api_key_env = None;
    let mut cfg = config(vec![m], &out, &cache);
    cfg.probe = false;
    let recs = run_cfg(&cfg, &mut Silent);
    let r = &recs[0];
    assert_eq!(r.error_class, Some(ErrorClass::Infrastructure));
    assert!(
        err(r).contains("abandoned and its connection closed"),
        "{}",
        err(r)
    );
    assert_eq!((live(r).requests, live(r).retries), (2, 1));
    // Both connections were closed by the harness (the server saw them end).
    let until = Instant::now() + Duration::from_secs(20);
    while counts.1.load(Ordering::SeqCst) < 2 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(counts.0.load(Ordering::SeqCst), 2);
    assert_eq!(
        counts.1.load(Ordering::SeqCst),
        2,
        "a connection was left open"
    );
}

#[test]
fn a_429_is_retried_counted_and_its_backoff_is_in_the_wall_time() {
    let (port, _) = start();
    let (out, cache) = dirs();
    let mut flaky = model(port, "flaky", 10.0, 3);
    flaky.backoff_s = 0.05;
    let mut cfg = config(vec![flaky], &out, &cache);
    cfg.concurrency = 1;
    #[derive(Default)]
    struct Collect {
        retries: Vec<RetryNotice>,
        finished: Vec<Counts>,
        started: usize,
        done: Option<Counts>,
    }
    impl Reporter for Collect {
        fn event(&mut self, e: RunEvent<'_>) {
            match e {
                RunEvent::Retrying { notice, .. } => self.retries.push(notice.clone()),
                RunEvent::CellStarted { .. } => self.started += 1,
                RunEvent::CellFinished { counts, .. } => self.finished.push(counts),
                RunEvent::RunFinished { counts, .. } => self.done = Some(counts),
                RunEvent::Planned { .. } | RunEvent::TornTail { .. } => {}
            }
        }
    }
    let mut c = Collect::default();
    let recs = run_cfg(&cfg, &mut c);
    let r = &recs[0];
    assert_eq!(r.status, Status::Ok, "{:?}", r.error);
    assert_eq!((live(r).retries, live(r).requests), (1, 5));
    assert!(r.metrics.task_success);
    // The Retry-After of 0 wins over the backoff, so only the latencies are in the wall time.
    assert!(r.metrics.completion_ms >= live(r).latency_ms);
    assert_eq!(c.retries.len(), 1);
    assert_eq!(
        (
            c.retries[0].model.as_str(),
            c.retries[0].attempt,
            c.retries[0].cell
        ),
        ("flaky", 1, Some(0))
    );
    assert!(c.retries[0].reason.contains("HTTP 429"));
    assert_eq!(c.started, 1);
    assert_eq!(c.finished.len(), 1);
    let done = c.done.expect("finished");
    assert_eq!(
        (
            done.finished,
            done.total,
            done.in_flight,
            done.retries,
            done.errored
        ),
        (1, 1, 0, 1, 0)
    );
}

#[test]
fn the_cache_key_holds_the_cell_so_identical_requests_are_independent_samples() {
    let (port, server) = start();
    let (out, cache) = dirs();
    let mut cfg = config(vec![model(port, "scripted", 10.0, 0)], &out, &cache);
    cfg.strategies = vec!["none".into()];
    cfg.interrupts = Some(vec![
        "uncertain_side_effect".into(),
        "pending_approval".into(),
    ]);
    cfg.reps = 2;
    let recs = run_cfg(&cfg, &mut Silent);
    assert_eq!(recs.len(), 4);
    for r in &recs {
        assert_eq!(
            live(r).cache_hits,
            0,
            "{} rep {} shared an answer",
            r.interrupt,
            r.rep
        );
    }
    let sent = server.requests.load(Ordering::SeqCst);
    assert_eq!(
        sent,
        recs.iter()
            .map(|r| live(r).requests as usize)
            .sum::<usize>()
    );
}

#[test]
fn the_manifest_records_each_model_s_url_and_name_never_the_key() {
    let (port, _) = start();
    let (out, cache) = dirs();
    set_key();
    // SAFETY: see set_key; only this test reads OPENAI_BASE_URL.
    unsafe { std::env::set_var("OPENAI_BASE_URL", format!("http://127.0.0.1:{port}/v1/")) };
    let mut cfg = config(vec![model(port, "scripted", 10.0, 0)], &out, &cache);
    cfg.models.push("openai:scripted".into());
    // A table with credentials in its URL, not run: the manifest's configuration shows it without.
    let mut spare = model(port, "spare", 10.0, 0);
    spare.base_url = format!("http://user:hunter2secret@127.0.0.1:{port}/v1");
    cfg.model_defs.insert("spare".into(), spare);
    cfg.concurrency = 7;
    let recs = run_cfg(&cfg, &mut Silent);
    assert!(recs.iter().all(|r| r.status == Status::Ok), "{recs:?}");
    let text = std::fs::read_to_string(out.join("manifest.json")).expect("manifest");
    assert!(!text.contains("hunter2secret") && !text.contains(KEY));
    let manifest: Value = serde_json::from_str(&text).expect("json");
    let models = manifest["live_models"].as_array().expect("live_models");
    let url = format!("http://127.0.0.1:{port}/v1");
    assert_eq!(models.len(), 2);
    assert_eq!(
        (models[0]["name"].as_str(), models[0]["base_url"].as_str()),
        (Some("openai:scripted"), Some(url.as_str()))
    );
    assert_eq!(models[0]["api_key_env"], "OPENAI_API_KEY");
    // openai:MODEL runs as many requests as --concurrency allows.
    assert_eq!(models[0]["max_concurrency"], 7);
    assert_eq!(
        (models[1]["name"].as_str(), models[1]["base_url"].as_str()),
        (Some("scripted"), Some(url.as_str()))
    );
    assert_eq!(models[1]["max_tokens"], 1024);
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                files_under(&p, out);
            } else {
                out.push(p);
            }
        }
    }
}

#[test]
fn the_api_key_appears_in_no_file_the_harness_writes() {
    let (port, _) = start();
    let (out, cache) = dirs();
    run(
        port,
        &[
            ("scripted", 10.0, 1),
            ("flaky", 10.0, 2),
            ("stall", 0.2, 0),
            ("rejects", 1.0, 0),
        ],
        &out,
        &cache,
    );
    let mut files = Vec::new();
    files_under(&out, &mut files);
    files_under(&cache, &mut files);
    assert!(files.len() > 6);
    assert!(files.iter().any(|f| f.ends_with("conversations.jsonl.gz")));
    for f in files {
        let mut bytes = std::fs::read(&f).expect("read");
        if f.extension().is_some_and(|x| x == "gz") {
            let mut plain = Vec::new();
            std::io::Read::read_to_end(
                &mut flate2::read::MultiGzDecoder::new(&bytes[..]),
                &mut plain,
            )
            .expect("gunzip");
            bytes = plain;
        }
        assert!(
            !String::from_utf8_lossy(&bytes).contains(KEY),
            "the API key leaked into {}",
            f.display()
        );
    }
}

#[test]
fn a_live_summariser_builds_b_and_its_tokens_are_charged_as_compaction_cost() {
    let (port, server) = start();
    let (out, cache) = dirs();
    set_key();
    let strategies = out.parent().expect("parent").join("strategies");
    std::fs::create_dir_all(&strategies).expect("mkdir");
    std::fs::write(
        strategies.join("B-live.toml"),
        "id = \"B-live\"\nkind = \"llm_summary\"\nsummarizer = \"summarizer\"\n",
    )
    .expect("write strategy");
    let cfg = RunConfig {
        scenarios: Some(vec![SCENARIO.into()]),
        interrupts: Some(vec!["uncertain_side_effect".into()]),
        strategies: vec!["B-live".into()],
        models: vec!["sim:careful".into()],
        reps: 2,
        out: out.clone(),
        strategy_dir: strategies.into(),
        cache_dir: Some(cache),
        model_defs: [("summarizer".to_string(), model(port, "summarizer", 10.0, 1))]
            .into_iter()
            .collect(),
        scales: vec![compaction_eval::scenario::volume::Scale::Base],
        attention: 0.0,
        ..RunConfig::default()
    };
    let plan = runner::plan(&cfg).expect("plan");
    assert_eq!(
        plan.live_models.len(),
        1,
        "the summariser is a live model of the run"
    );
    runner::execute(&cfg, &plan, &mut Silent).expect("run");
    let recs = runner::read_records(&out.join("results.jsonl")).expect("records");
    assert_eq!(recs.len(), 2);
    // One summary serves both repetitions; each cell is charged its cost.
    assert_eq!(
        server
            .by_model
            .lock()
            .map(|m| m.get("summarizer").copied())
            .ok()
            .flatten(),
        Some(1)
    );
    for r in &recs {
        assert_eq!(r.status, Status::Ok, "{:?}", r.error);
        assert_eq!(r.metrics.compaction_tokens, 110);
        assert!(r.metrics.total_tokens > 0);
    }
    let Some(compaction_eval::runner::Prepared::Ready { handoff, .. }) =
        plan.handoffs.values().next()
    else {
        panic!("the summariser's handoff is ready");
    };
    let h = &handoff.text;
    assert!(
        h.contains("Summary of the work so far") && h.contains("ticket-intent-017"),
        "{h}"
    );
}

// ---- the binary: exit codes, an interrupted run, a closed stdout ----

/// A `--config` file: the models as `[model.NAME]` tables of the test server; `extra` adds
/// top-level options (`reps` among them, 1 by default).
fn write_config(dir: &Path, port: u16, models: &[&str], extra: &str) -> PathBuf {
    let reps = if extra.contains("reps") {
        ""
    } else {
        "reps = 1\n"
    };
    let mut text = format!(
        "scenarios = [\"{SCENARIO}\"]\ninterrupts = [\"uncertain_side_effect\"]\nstrategies = [\"C\"]\nmodels = [{}]\n{reps}{extra}\n",
        models
            .iter()
            .map(|m| format!("\"{m}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for m in models {
        text.push_str(&format!(
            "[model.{m}]\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"{m}\"\napi_key_env = \"{KEY_VAR}\"\nretries = 0\n\n"
        ));
    }
    let p = dir.join("live.toml");
    std::fs::write(&p, text).expect("write config");
    p
}

fn binary() -> std::process::Command {
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin!("compaction-eval"));
    c.env_remove("RUST_BACKTRACE").env(KEY_VAR, KEY);
    c
}

#[test]
fn run_exits_non_zero_past_the_errored_fraction_and_when_a_probe_fails() {
    let (port, _) = start();
    let d = tempfile::tempdir().expect("tempdir").keep();
    let cfg = write_config(&d, port, &["rejects", "scripted"], "");
    let args = |extra: &[&str]| {
        let mut a = vec![
            "run".to_string(),
            "--scale".to_string(),
            "base".to_string(),
            "--config".into(),
            cfg.display().to_string(),
            "--out".into(),
            d.join("out").display().to_string(),
            "--cache-dir".into(),
            d.join("cache").display().to_string(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let o = binary().args(args(&[])).output().expect("run");
    assert_eq!(
        o.status.code(),
        Some(6),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("1 of 2 cells errored"), "{stderr}");
    assert!(
        stderr.contains("live model rejects: http://127.0.0.1"),
        "{stderr}"
    );
    // Within the allowed fraction, the destination whose every cell errored still makes the
    // run's ranking of it meaningless: code 13, naming it.
    let o = binary()
        .args(args(&["--max-errored-fraction", "0.5"]))
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(13), "{stderr}");
    assert!(
        stderr.contains("warning: live destination rejects: its ranking is not meaningful: never made a valid tool call; check that the server has tool calling on (vLLM --enable-auto-tool-choice --tool-call-parser, llama.cpp --jinja, an Ollama model with tool support); 1 of its 1 cells errored on the destination's side"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("live destination scripted: its ranking"),
        "{stderr}"
    );
    // The same from the configuration file.
    write_config(
        &d,
        port,
        &["rejects", "scripted"],
        "max_errored_fraction = 0.5",
    );
    let o = binary().args(args(&[])).output().expect("run");
    assert_eq!(
        o.status.code(),
        Some(13),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    let dead = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let dead_port = dead.local_addr().expect("addr").port();
    drop(dead);
    let cfg = write_config(&d, dead_port, &["scripted"], "");
    let o = binary().args(args(&[])).output().expect("run");
    assert_eq!(o.status.code(), Some(7));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("[model.scripted]") && stderr.contains(&format!("127.0.0.1:{dead_port}")),
        "{stderr}"
    );
    let _ = cfg;
}

/// Records without their timings, for comparing runs.
fn untimed(mut recs: Vec<RunRecord>) -> Vec<RunRecord> {
    for r in &mut recs {
        r.metrics.completion_ms = 0.0;
        r.metrics.first_action_ms = 0.0;
        if let Some(l) = &mut std::sync::Arc::make_mut(&mut r.diagnostics).live {
            l.latency_ms = 0.0;
            l.cache_latency_ms = 0.0;
            l.first_request_ms = None;
        }
    }
    recs
}

#[test]
fn an_interrupted_run_keeps_its_finished_cells_and_resume_completes_them_in_cell_order() {
    let (port, server) = start();
    server.hang.store(true, Ordering::SeqCst);
    let d = tempfile::tempdir().expect("tempdir").keep();
    // `hang` comes first in cell order, so no record can be written in order while it hangs.
    let cfg = write_config(
        &d,
        port,
        &["hang", "scripted", "parallel"],
        "reps = 2\nconcurrency = 6\nno_cache = true",
    );
    // Every cell runs at once, so the cells that answer finish whatever the hanging ones do, and
    // the hanging cells must still be hanging when the interrupt comes: their request and cell
    // limits are far beyond the test's own wait, so the run cannot end by timing them out first
    // (with a 120 s request limit, a slow first run once finished before the interrupt).
    let text = std::fs::read_to_string(&cfg).expect("config");
    let text = text.replacen(
        "model = \"hang\"\n",
        "model = \"hang\"\nrequest_timeout_s = 900\ncell_timeout_s = 1800\n",
        1,
    );
    std::fs::write(&cfg, text).expect("config");
    let out = d.join("out");
    let args = [
        "run".to_string(),
        "--scale".to_string(),
        "base".to_string(),
        "--config".into(),
        cfg.display().to_string(),
        "--out".into(),
        out.display().to_string(),
    ];
    let mut cmd = binary();
    cmd.args(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // Started with SIGINT ignored, as a background job of a script is (`run … &`): the run must
    // still stop on it (issue 28: it did not, 13 s on).
    #[cfg(unix)]
    // SAFETY: between fork and exec only signal(2), which is async-signal-safe, runs.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("spawn");
    let journal = out.join("journal.jsonl");
    let until = Instant::now() + Duration::from_secs(300);
    let lines = || {
        std::fs::read_to_string(&journal)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    while lines() < 2 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(lines() >= 2, "no cell finished");
    // Ctrl-C.
    let _ = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    // The hanging cells' limits are 900 s: only the interrupt can end the run this soon.
    let sent = Instant::now();
    let stop = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("wait").is_none() && Instant::now() < stop {
        std::thread::sleep(Duration::from_millis(5));
    }
    let ended = child.try_wait().expect("wait");
    eprintln!("SIGINT stopped the live run in {:?}", sent.elapsed());
    if ended.is_none() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("SIGINT did not stop the run");
    }
    let kept = runner::read_records(&journal).expect("journal");
    assert!(
        kept.len() >= 2
            && kept
                .iter()
                .all(|r| r.model != "hang" && r.status == Status::Ok)
    );
    assert_eq!(
        runner::read_records(&out.join("results.jsonl"))
            .map(|r| r.len())
            .unwrap_or(0),
        0
    );

    server.hang.store(false, Ordering::SeqCst);
    let before: usize = server.requests.load(Ordering::SeqCst);
    let o = binary()
        .args(&args)
        .arg("--resume")
        .output()
        .expect("resume");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let resumed = runner::read_records(&out.join("results.jsonl")).expect("records");
    assert_eq!(resumed.len(), 6);
    assert!(!journal.exists(), "the journal outlived a finished run");
    // The kept cells were not run again: only the other cells' requests reached the server.
    let per_cell = |m: &str| if m == "parallel" { 3 } else { 4 };
    let expected: usize = resumed
        .iter()
        .filter(|r| !kept.iter().any(|k| k.model == r.model && k.rep == r.rep))
        .map(|r| per_cell(&r.model))
        .sum();
    // The interrupted `hang` requests may have reached the server before the interrupt.
    let sent = server.requests.load(Ordering::SeqCst) - before;
    assert_eq!(sent, expected);

    // The same matrix uninterrupted, one cell at a time: the same file, timings aside.
    let out1 = d.join("out1");
    let o = binary()
        .args([
            "run",
            "--scale",
            "base",
            "--config",
            &cfg.display().to_string(),
            "--out",
            &out1.display().to_string(),
            "--concurrency",
            "1",
        ])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(0));
    let straight = runner::read_records(&out1.join("results.jsonl")).expect("records");
    assert_eq!(untimed(resumed), untimed(straight));
}

#[test]
fn a_closed_stdout_does_not_panic_the_run() {
    let d = tempfile::tempdir().expect("tempdir").keep();
    let mut child = binary()
        .args([
            "run",
            "--scale",
            "base",
            "--scenarios",
            SCENARIO,
            "--interrupts",
            "uncertain_side_effect",
            "--strategies",
            "C,A",
            "--models",
            "sim:careful",
            "--reps",
            "1",
            "--out",
        ])
        .arg(d.join("out"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // The reader goes away at once, as `head -0` would.
    drop(child.stdout.take());
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut stderr);
    }
    let status = child.wait().expect("wait");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(status.code(), Some(0), "{stderr}");
}

#[test]
fn a_live_model_receives_governed_context_and_its_receipt_is_recorded() {
    let (port, server) = start();
    let (out, cache) = dirs();
    let mut cfg = config(vec![model(port, "scripted", 10.0, 2)], &out, &cache);
    cfg.strategies = vec!["gov:C".into()];
    let recs = run_cfg(&cfg, &mut Silent);
    assert_eq!(recs.len(), 1);
    let r = &recs[0];
    assert_eq!(r.status, Status::Ok, "{:?}", r.error);
    let g = r.governed.as_ref().expect("governed");
    assert_eq!(g.status, compaction_eval::governed::ContextStatus::Ready);
    assert_eq!(g.receipt, g.envelope_digest);
    assert_eq!(
        g.responsibility,
        Some(compaction_eval::governed::Responsibility::Delivered)
    );
    // The request carries the user's first message verbatim, the evidence and C's checkpoint as
    // the advisory summary, after the header that says how to read them.
    let body = server
        .first_body
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get("scripted")
        .cloned()
        .expect("a request");
    let s = compaction_eval::scenario::load_file(Path::new(&format!("scenarios/{SCENARIO}.yaml")))
        .expect("scenario");
    let first_user = s.events[0].user.clone().expect("a user message first");
    let json_text = |t: &str| serde_json::to_string(t).expect("json");
    let inner = |t: String| t[1..t.len() - 1].to_string();
    assert!(body.contains(&inner(json_text(&first_user))), "{body}");
    assert!(body.contains("Governed context (coding-context-envelope/1)"));
    assert!(
        body.contains("advisory-summary advisory=\\\"true\\\""),
        "{body}"
    );
    assert!(body.contains("Retained evidence `kb/KB-311`"));
    assert!(!body.contains(KEY));
}
