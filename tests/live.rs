//! Live destinations through the real chat-completions protocol, against an OpenAI-compatible
//! server this test starts on 127.0.0.1 (no network). The server's behaviour is chosen by the
//! request's `model`: a scripted agent, a 429 first, malformed tool-call JSON, an unknown tool,
//! text-only answers, and a stall past the timeout.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use compaction_eval::destination::live::{ErrorClass, ModelConfig};
use compaction_eval::runner::{self, RunConfig, RunRecord, Silent, Status};
use serde_json::{Value, json};

const KEY_VAR: &str = "COMPACTION_EVAL_TEST_KEY";
const KEY: &str = "sk-test-DO-NOT-LEAK-7f3a91";

#[derive(Default)]
struct Server {
    requests: AtomicUsize,
    by_model: std::sync::Mutex<BTreeMap<String, usize>>,
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
fn scripted(body: &Value, model: &str) -> Value {
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
    let m = match done {
        0 => call(
            "srv_ok_0",
            "find_ticket_by_key",
            json!({"idempotency_key": "ticket-intent-017"}),
        ),
        1 => call(
            "srv_ok_1",
            "add_ticket_comment",
            json!({"ticket_id": ticket, "visibility": "customer",
            "body": "This is the AUTH-419 stale-session issue (KB-311): we revoked your sessions."}),
        ),
        2 => call(
            "srv_ok_2",
            "update_ticket",
            json!({"id": ticket, "status": "pending_customer"}),
        ),
        _ => call(
            "srv_ok_3",
            "finish",
            json!({"status": "completed", "report": "reconciled and commented"}),
        ),
    };
    completion(model, m)
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
    // The key is sent as a bearer token, and only there.
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(&format!("Bearer {KEY}"))
    {
        return (StatusCode::UNAUTHORIZED, "bad key").into_response();
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
        "unknown-tool" if !has("srv_bad") => {
            Json(completion(&model, call("srv_bad_1", "delete_everything", json!({})))).into_response()
        }
        "summarizer" => Json(completion(&model, json!({"role": "assistant", "content":
            "The create_ticket call with idempotency key ticket-intent-017 timed out; its outcome is unknown. Do not email the customer directly."}))).into_response(),
        "textonly" => Json(completion(&model, json!({"role": "assistant", "content": "All done, I think."}))).into_response(),
        "stall" => {
            tokio::time::sleep(std::time::Duration::from_secs(3)).await;
            Json(scripted(&body, &model)).into_response()
        }
        _ => Json(scripted(&body, &model)).into_response(),
    }
}

/// Starts the server on its own thread and runtime (the runner makes its own); returns the port.
fn start() -> (u16, Arc<Server>) {
    let state = Arc::new(Server::default());
    let s2 = state.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let app = axum::Router::new()
                .route("/v1/chat/completions", axum::routing::post(chat))
                .with_state(s2);
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            tx.send(listener.local_addr().expect("addr").port())
                .expect("send port");
            axum::serve(listener, app).await.expect("serve");
        });
    });
    (rx.recv().expect("port"), state)
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
    // SAFETY: every test in this file sets the same variable to the same value before any run,
    // and nothing here reads the environment concurrently with a different expectation.
    unsafe { std::env::set_var(KEY_VAR, KEY) };
}

fn run(port: u16, models: &[(&str, f64, u32)], out: &Path, cache: &Path) -> Vec<RunRecord> {
    set_key();
    let cfg = RunConfig {
        scenarios: Some(vec!["support-ticket-timeout".into()]),
        interrupts: Some(vec!["uncertain_side_effect".into()]),
        strategies: vec!["C".into()],
        models: models.iter().map(|(n, _, _)| n.to_string()).collect(),
        reps: 1,
        concurrency: 2,
        out: out.to_path_buf(),
        cache_dir: Some(cache.to_path_buf()),
        model_defs: models
            .iter()
            .map(|(n, t, r)| (n.to_string(), model(port, n, *t, *r)))
            .collect(),
        scales: vec![compaction_eval::scenario::volume::Scale::Base],
        attention: 0.0,
        ..RunConfig::default()
    };
    let plan = runner::plan(&cfg).expect("plan");
    runner::write_manifest(&cfg, &plan).expect("manifest");
    runner::execute(&cfg, &plan, &mut Silent).expect("run");
    compaction_eval::report::render_dir(out).expect("report");
    runner::read_records(&out.join("results.jsonl")).expect("records")
}

fn dirs() -> (PathBuf, PathBuf) {
    let d = tempfile::tempdir().expect("tempdir").keep();
    (d.join("out"), d.join("cache"))
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
    let live = r.diagnostics.live.as_ref().expect("live stats");
    assert_eq!((live.calls, live.cache_hits, live.retries), (4, 0, 0));
    assert_eq!((live.input_tokens, live.output_tokens), (400, 40));
    assert_eq!(r.metrics.total_tokens, 440);
    assert_eq!(live.reported_model.as_deref(), Some("scripted-2026-11-01"));
    assert_eq!(live.system_fingerprint.as_deref(), Some("fp_test"));
    assert!((live.cost_usd.unwrap_or_default() - (400.0 * 2.5 + 40.0 * 10.0) / 1e6).abs() < 1e-12);
    let before = server.requests.load(Ordering::SeqCst);
    assert_eq!(before, 4);

    let (out2, _) = dirs();
    let second = run(port, &[("scripted", 10.0, 2)], &out2, &cache);
    assert_eq!(
        server.requests.load(Ordering::SeqCst),
        before,
        "the rerun reached the server"
    );
    let l2 = second[0].diagnostics.live.as_ref().expect("live");
    assert_eq!(l2.cache_hits, 4);
    assert_eq!(second[0].metrics.task_success, r.metrics.task_success);
    assert_eq!(second[0].metrics.total_tokens, r.metrics.total_tokens);
    // Cache hits report the latency measured the first time.
    assert!((l2.latency_ms - live.latency_ms).abs() < 1e-6);
}

#[test]
fn a_429_is_retried_and_counted() {
    let (port, _) = start();
    let (out, cache) = dirs();
    let recs = run(port, &[("flaky", 10.0, 3)], &out, &cache);
    let r = &recs[0];
    assert_eq!(r.status, Status::Ok, "{:?}", r.error);
    assert_eq!(r.diagnostics.live.as_ref().map(|l| l.retries), Some(1));
    assert!(r.metrics.task_success);
}

#[test]
fn malformed_arguments_and_unknown_tools_get_an_error_result_and_the_cell_goes_on() {
    let (port, _) = start();
    let (out, cache) = dirs();
    let recs = run(
        port,
        &[
            ("malformed", 10.0, 1),
            ("unknown-tool", 10.0, 1),
            ("textonly", 10.0, 1),
        ],
        &out,
        &cache,
    );
    let by = |m: &str| recs.iter().find(|r| r.model == m).expect("record");
    let mal = by("malformed");
    assert_eq!(mal.status, Status::Ok);
    assert_eq!(
        mal.diagnostics
            .live
            .as_ref()
            .map(|l| l.malformed_tool_calls),
        Some(1)
    );
    assert!(mal.metrics.task_success);
    let unk = by("unknown-tool");
    assert_eq!(
        unk.diagnostics.live.as_ref().map(|l| l.unknown_tools),
        Some(1)
    );
    assert!(unk.metrics.task_success);
    // Text only: one nudge, then the cell ends as a failed continuation (not an errored cell).
    let txt = by("textonly");
    assert_eq!(txt.status, Status::Ok);
    assert_eq!(
        txt.diagnostics.live.as_ref().map(|l| l.text_only_turns),
        Some(2)
    );
    assert!(!txt.metrics.task_success);
}

#[test]
fn a_stalled_endpoint_times_out_into_an_errored_cell_while_the_rest_completes() {
    let (port, _) = start();
    let (out, cache) = dirs();
    let recs = run(
        port,
        &[("stall", 0.3, 1), ("scripted", 10.0, 1)],
        &out,
        &cache,
    );
    let stall = recs.iter().find(|r| r.model == "stall").expect("record");
    assert_eq!(stall.status, Status::Errored);
    assert_eq!(stall.error_class, Some(ErrorClass::Infrastructure));
    assert!(
        stall
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("timed out")
    );
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

#[test]
fn a_missing_key_variable_is_a_harness_error_naming_the_variable() {
    let (port, _) = start();
    let (out, cache) = dirs();
    let mut m = model(port, "scripted", 10.0, 0);
    m.api_key_env = Some("COMPACTION_EVAL_NO_SUCH_KEY".into());
    let cfg = RunConfig {
        scenarios: Some(vec!["support-ticket-timeout".into()]),
        interrupts: Some(vec!["uncertain_side_effect".into()]),
        strategies: vec!["C".into()],
        models: vec!["scripted".into()],
        reps: 1,
        out: out.clone(),
        cache_dir: Some(cache),
        model_defs: [("scripted".to_string(), m)].into_iter().collect(),
        scales: vec![compaction_eval::scenario::volume::Scale::Base],
        attention: 0.0,
        ..RunConfig::default()
    };
    let plan = runner::plan(&cfg).expect("plan");
    runner::execute(&cfg, &plan, &mut Silent).expect("run");
    let r = &runner::read_records(&out.join("results.jsonl")).expect("records")[0];
    assert_eq!(r.error_class, Some(ErrorClass::Harness));
    assert!(
        r.error
            .as_deref()
            .unwrap_or_default()
            .contains("COMPACTION_EVAL_NO_SUCH_KEY")
    );
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
        &[("scripted", 10.0, 1), ("flaky", 10.0, 2), ("stall", 0.2, 0)],
        &out,
        &cache,
    );
    let mut files = Vec::new();
    files_under(&out, &mut files);
    files_under(&cache, &mut files);
    assert!(files.len() > 6);
    for f in files {
        let bytes = std::fs::read(&f).expect("read");
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
        scenarios: Some(vec!["support-ticket-timeout".into()]),
        interrupts: Some(vec!["uncertain_side_effect".into()]),
        strategies: vec!["B-live".into()],
        models: vec!["sim:careful".into()],
        reps: 2,
        out: out.clone(),
        strategy_dir: strategies,
        cache_dir: Some(cache),
        model_defs: [("summarizer".to_string(), model(port, "summarizer", 10.0, 1))]
            .into_iter()
            .collect(),
        scales: vec![compaction_eval::scenario::volume::Scale::Base],
        attention: 0.0,
        ..RunConfig::default()
    };
    let plan = runner::plan(&cfg).expect("plan");
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
