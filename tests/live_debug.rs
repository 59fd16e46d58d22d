//! Live runs a researcher can debug and trust, against an OpenAI-compatible server this test
//! starts on 127.0.0.1 (no network), through the binary: every cell's conversation is saved
//! (`conversations.jsonl.gz`) and `show` prints it; a destination that only answers text cut at
//! `max_tokens` is flagged and `run` exits with code 13; the one-flag set-up (`--model-name`,
//! `--base-url`, `--api-key-env`) and the server prefixes (`vllm:`, `ollama:`, `llamacpp:`) reach
//! the server; the key is in no file of the run folder, compressed ones included; and
//! `viewer.html` filters cells and shows model-written text as text in headless Chromium.
//!
//! The server's behaviour is chosen by the request's `model`: `works` reads the ticket and
//! finishes (its report carries markup, to check escaping), `cut` answers text only, cut at
//! `max_tokens` (`finish_reason: length`). A request with an `Authorization` header must carry
//! the test key; one without is a local server's request.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use compaction_eval::conversation::{self, Kind, Verdict};
use compaction_eval::record::{RunRecord, read_records};
use serde_json::{Value, json};

const KEY_VAR: &str = "COMPACTION_EVAL_DEBUG_TEST_KEY";
const KEY: &str = "sk-debug-DO-NOT-LEAK-5b21c8e0";
const MARKUP: &str = "</script><img src=x onerror=\"document.title='pwned'\"><b>bold</b>";

#[derive(Default)]
struct Seen {
    /// (model, authorization header) of every request.
    requests: Mutex<Vec<(String, Option<String>)>>,
}

fn completion(model: &str, message: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-debug", "object": "chat.completion", "created": 1_700_000_000u32,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 16, "total_tokens": 136}
    })
}

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"role": "assistant", "content": "", "tool_calls": [{"id": id, "type": "function",
        "function": {"name": name, "arguments": args.to_string()}}]})
}

async fn chat(State(s): State<Arc<Seen>>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    let model = body["model"].as_str().unwrap_or_default().to_string();
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    s.requests
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((model.clone(), auth.clone()));
    if auth.as_ref().is_some_and(|a| a != &format!("Bearer {KEY}")) {
        return (StatusCode::UNAUTHORIZED, "bad key").into_response();
    }
    if body["max_tokens"].as_u64().is_none() || body["tool_choice"].is_null() {
        return (
            StatusCode::BAD_REQUEST,
            "max_tokens and tool_choice are required here",
        )
            .into_response();
    }
    let answered = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|m| m["role"] == "tool");
    // `prefill` acts as llama.cpp's server does with `tool_choice = "required"`: prose unless the
    // request ends with an assistant turn that opens a tool call, which the answer continues.
    let prefilled = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .is_some_and(|m| m["role"] == "assistant" && m["content"] == "<tool_call>\n");
    let m = match model.as_str() {
        "prefill" if !prefilled => {
            return Json(completion(
                &model,
                json!({"role": "assistant", "content": "You can use the find_ticket_by_key function to find the ticket."}),
                "length",
            ))
            .into_response();
        }
        "cut" => {
            return Json(completion(
                &model,
                json!({"role": "assistant", "content": "I will now look up the ticket by calling the tool with the arguments {\"idempotency_key\": \"tick"}),
                "length",
            ))
            .into_response();
        }
        _ if !answered => call(
            "srv_1",
            "find_ticket_by_key",
            json!({"idempotency_key": "ticket-intent-017"}),
        ),
        _ => call(
            "srv_2",
            "finish",
            json!({"status": "blocked", "report": format!("stopping here {MARKUP}")}),
        ),
    };
    Json(completion(&model, m, "tool_calls")).into_response()
}

fn start() -> (u16, Arc<Seen>) {
    let state = Arc::new(Seen::default());
    let port = common::serve(
        axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(chat))
            .with_state(state.clone()),
    );
    (port, state)
}

/// Runs the binary on one cell per strategy (C and none) of one scenario and interrupt point,
/// base scale, with `args`; returns the exit code, stderr and the run folder.
fn run(args: &[&str]) -> (i32, String, PathBuf) {
    let d = tempfile::tempdir().expect("tempdir").keep();
    let out = d.join("out");
    let o = std::process::Command::new(assert_cmd::cargo::cargo_bin!("compaction-eval"))
        .env_remove("RUST_BACKTRACE")
        .env(KEY_VAR, KEY)
        .args([
            "run",
            "--scenarios",
            "support-ticket-timeout",
            "--interrupts",
            "uncertain_side_effect",
            "--strategies",
            "C,none",
            "--scale",
            "base",
            "--reps",
            "1",
            "--no-cache",
            "--out",
        ])
        .arg(&out)
        .args(args)
        .output()
        .expect("run");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        out,
    )
}

fn records(out: &Path) -> Vec<RunRecord> {
    read_records(&out.join("results.jsonl")).expect("records")
}

fn show(out: &Path, cell: &str) -> String {
    let o = std::process::Command::new(assert_cmd::cargo::cargo_bin!("compaction-eval"))
        .env_remove("RUST_BACKTRACE")
        .args(["show"])
        .arg(out)
        .arg(cell)
        .output()
        .expect("show");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn text_cut_at_max_tokens_is_flagged_and_the_run_exits_12() {
    let (port, _) = start();
    let url = format!("http://127.0.0.1:{port}/v1");
    let (code, stderr, out) = run(&[
        "--model-name",
        "cut",
        "--base-url",
        &url,
        "--max-errored-fraction",
        "1",
    ]);
    assert_eq!(code, compaction_eval::exit::run::NOT_MEANINGFUL, "{stderr}");
    assert!(
        stderr.contains("live destination cut: its ranking is not meaningful: never made a valid tool call; most answers were cut at max_tokens"),
        "{stderr}"
    );
    let recs = records(&out);
    assert_eq!(recs.len(), 2);
    for r in &recs {
        let l = r.diagnostics.live.as_ref().expect("live");
        // The text-only answer, the nudge, the second text-only answer.
        assert_eq!((l.calls, l.tool_call_turns, l.length_turns), (2, 0, 2));
        assert_eq!(l.finish_reasons.get("length"), Some(&2));
        assert_eq!(l.first_prompt_tokens, Some(120));
        assert!(l.first_request_ms.is_some());
    }
    let report = std::fs::read_to_string(out.join("report.md")).expect("report");
    assert!(
        report.contains("**Warning: the ranking of cut is not meaningful**"),
        "{report}"
    );
    // The conversation says why: finish_reason length on every turn.
    let text = show(&out, "1");
    assert!(text.contains("finish_reason length"), "{text}");
    assert!(text.contains("\"idempotency_key\": \"tick"), "{text}");
}

/// Every file under `dir`, gzip files decompressed.
fn contents(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let bytes = std::fs::read(&p).expect("read");
            let text = if p.extension().is_some_and(|x| x == "gz") {
                let mut s = String::new();
                flate2::read::MultiGzDecoder::new(&bytes[..])
                    .read_to_string(&mut s)
                    .expect("gunzip");
                s
            } else {
                String::from_utf8_lossy(&bytes).into_owned()
            };
            out.push((p, text));
        }
    }
    out
}

#[test]
fn a_working_model_s_conversation_is_saved_shown_and_keeps_no_key() {
    let (port, seen) = start();
    let url = format!("http://127.0.0.1:{port}/v1");
    let (code, stderr, out) = run(&[
        "--model-name",
        "works",
        "--base-url",
        &url,
        "--api-key-env",
        KEY_VAR,
    ]);
    assert_eq!(code, 0, "{stderr}");
    // The banner, once.
    assert_eq!(stderr.matches("live model works:").count(), 1, "{stderr}");
    assert!(
        seen.requests
            .lock()
            .expect("lock")
            .iter()
            .all(|(m, a)| m == "works" && a.as_deref() == Some(&format!("Bearer {KEY}")))
    );
    let recs = records(&out);
    assert_eq!(recs.len(), 2);
    let entries = conversation::read(&out).expect("conversations");
    assert_eq!(entries.len(), 2);
    for r in &recs {
        assert_eq!(r.conversation.as_deref(), Some(conversation::FILE));
        let e = conversation::find(&out, &conversation::Cell::from(&r.id()))
            .expect("read")
            .expect("the record's entry");
        assert_eq!(e.kind, Kind::Live);
        let handoffs = conversation::handoffs(&out).expect("handoffs");
        let h = &handoffs[e.handoff.as_deref().expect("a handoff")];
        assert!(!h.messages.is_empty() && !e.tools.is_empty());
        assert_eq!(e.exchanges.len(), 2);
        let first = &e.exchanges[0];
        assert_eq!(first.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(first.tool_calls[0].verdict, Verdict::Valid);
        assert_eq!(
            first.usage.as_ref().map(|u| u["prompt_tokens"].clone()),
            Some(json!(120))
        );
        // The second request extends the first: rebuilt whole, it is the first's messages
        // followed by the tool call and its result.
        let r0 = e.request(0).expect("request 0");
        let r1 = e.request(1).expect("request 1");
        let (m0, m1) = (
            r0["messages"].as_array().expect("m"),
            r1["messages"].as_array().expect("m"),
        );
        assert_eq!(m1.len(), m0.len() + 2);
        assert_eq!(&m1[..m0.len()], &m0[..]);
        assert_eq!(r1["tools"], r0["tools"]);
        // The actions and the world's answers.
        assert_eq!(e.steps.len(), 2);
        assert!(e.steps[0].result.is_some() && e.steps[1].result.is_none());
        assert_eq!(e.outcome.status, "ok");
        let l = r.diagnostics.live.as_ref().expect("live");
        assert_eq!((l.tool_call_turns, l.length_turns), (2, 0));
    }
    let text = show(&out, "2");
    assert!(text.contains("tool call find_ticket_by_key"), "{text}");
    assert!(text.contains("[valid]"), "{text}");
    // Model-written text as written (arguments JSON-escaped, as the model sent them).
    assert!(
        text.contains("stopping here </script><img src=x onerror="),
        "{text}"
    );
    // No key anywhere in the folder, compressed files included.
    let files = contents(&out);
    assert!(files.iter().any(|(p, _)| p.ends_with(conversation::FILE)));
    assert!(
        files
            .iter()
            .any(|(p, _)| p.ends_with(conversation::HANDOFFS))
    );
    assert!(files.iter().any(|(p, _)| p.ends_with("viewer.html")));
    for (p, text) in files {
        assert!(!text.contains(KEY), "the key leaked into {}", p.display());
    }
}

#[test]
fn a_prefill_opens_each_answer_and_the_saved_requests_still_rebuild() {
    let (port, _) = start();
    let dir = tempfile::tempdir().expect("tempdir").keep();
    let config = dir.join("prefill.toml");
    let table = |name: &str, prefill: &str| {
        format!(
            "[model.{name}]\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"prefill\"\ntool_choice = \"required\"\nmax_tokens = 64\nretries = 0\n{prefill}"
        )
    };
    std::fs::write(
        &config,
        format!(
            "{}\n{}",
            table("opened", "prefill = \"<tool_call>\\n\"\n"),
            table("plain", "")
        ),
    )
    .expect("config");
    let with = |model: &str| {
        run(&[
            "--config",
            config.to_str().expect("utf-8"),
            "--models",
            model,
        ])
    };
    // Without it the server answers prose: no tool call, flagged (exit 13).
    let (code, stderr, out) = with("plain");
    assert_eq!(code, 13, "{stderr}");
    assert!(records(&out).iter().all(|r| {
        r.diagnostics
            .live
            .as_ref()
            .is_some_and(|l| l.tool_call_turns == 0)
    }));
    let (code, stderr, out) = with("opened");
    assert_eq!(code, 0, "{stderr}");
    for r in records(&out) {
        let l = r.diagnostics.live.as_ref().expect("live");
        assert_eq!(l.tool_call_turns, 2, "{:?}", r.id());
        let e = conversation::find(&out, &conversation::Cell::from(&r.id()))
            .expect("read")
            .expect("the record's entry");
        let (r0, r1) = (e.request(0).expect("0"), e.request(1).expect("1"));
        let (m0, m1) = (
            r0["messages"].as_array().expect("m"),
            r1["messages"].as_array().expect("m"),
        );
        // Each request as sent ends with the prefill; the next one replaces it with the answer
        // as parsed and the tool's result, and is saved as an extension of the shared part.
        for m in [m0, m1] {
            assert_eq!(
                m.last(),
                Some(&json!({"role": "assistant", "content": "<tool_call>\n"}))
            );
        }
        assert_eq!(m1.len(), m0.len() + 2);
        assert_eq!(&m1[..m0.len() - 1], &m0[..m0.len() - 1]);
        assert_eq!(
            m1[m0.len() - 1]["tool_calls"][0]["function"]["name"],
            "find_ticket_by_key"
        );
        assert_eq!(e.exchanges[1].request.extends, m0.len() - 1);
    }
}

#[test]
fn each_server_prefix_reaches_its_server_without_a_key() {
    let (port, seen) = start();
    let url = format!("http://127.0.0.1:{port}/v1");
    let specs = ["vllm:works", "ollama:works", "llamacpp:works"];
    let (code, stderr, out) = run(&["--models", &specs.join(","), "--base-url", &url]);
    assert_eq!(code, 0, "{stderr}");
    let manifest = std::fs::read_to_string(out.join("manifest.json")).expect("manifest");
    let recs = records(&out);
    for spec in specs {
        assert!(
            stderr.contains(&format!("live model {spec}: {url} (works)")),
            "{stderr}"
        );
        assert!(manifest.contains(&format!("\"{spec}\"")), "{manifest}");
        let cells: Vec<&RunRecord> = recs.iter().filter(|r| r.model == spec).collect();
        assert_eq!(cells.len(), 2);
        assert!(cells.iter().all(|r| {
            r.error.is_none()
                && r.diagnostics
                    .live
                    .as_ref()
                    .is_some_and(|l| l.tool_call_turns == 2)
        }));
    }
    let requests = seen.requests.lock().expect("lock");
    assert_eq!(requests.len(), 12);
    assert!(requests.iter().all(|(m, a)| m == "works" && a.is_none()));
}

/// The Chromium binary, if this machine has one.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

/// The DOM of `page` (a file, with a `#hash`) after its script ran.
fn dump_dom(chrome: &Path, page: &Path, hash: &str) -> String {
    let profile = tempfile::tempdir().expect("profile");
    let o = std::process::Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}#{hash}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn the_viewer_filters_cells_and_shows_model_text_as_text_in_headless_chromium() {
    let Some(chrome) = chromium() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true and no Chromium (/usr/bin/chromium): .ci/run installs it"
        );
        eprintln!("skipped: no Chromium on this machine (apt-get install chromium)");
        return;
    };
    let (port, _) = start();
    let url = format!("http://127.0.0.1:{port}/v1");
    // Two destinations: one works, one only answers text.
    let (code, stderr, out) = run(&[
        "--models",
        "llamacpp:works,llamacpp:cut",
        "--base-url",
        &url,
    ]);
    assert_eq!(code, compaction_eval::exit::run::NOT_MEANINGFUL, "{stderr}");
    let recs = records(&out);
    let n = recs
        .iter()
        .position(|r| r.model == "llamacpp:works" && r.strategy == "none")
        .expect("cell")
        + 1;
    let page = out.join("viewer.html");
    let dom = dump_dom(&chrome, &page, &format!("model=llamacpp%3Aworks&cell={n}"));
    // The filter: only that destination's two cells are listed.
    assert_eq!(dom.matches("class=\"cell-row").count(), 2, "{dom}");
    assert!(dom.contains("2 of 4 cells"), "{dom}");
    // The chosen cell's conversation, with the model's markup as text.
    assert!(
        dom.contains(&format!("Cell {n}: support-ticket-timeout")),
        "{dom}"
    );
    assert!(dom.contains("find_ticket_by_key"), "{dom}");
    assert!(dom.contains("Handoff ("), "{dom}");
    assert!(dom.contains("Resolve customer cust-9"), "{dom}");
    assert!(dom.contains("&lt;img src=x onerror="), "{dom}");
    assert!(!dom.contains("<img") && !dom.contains("<b>bold"), "{dom}");
    assert!(!dom.contains("pwned</title>"), "{dom}");
    // The health warning of the destination that never called a tool.
    assert!(dom.contains("Ranking not meaningful"), "{dom}");
    // The outcome filter: the text-only destination's cells are scored failures.
    let dom = dump_dom(&chrome, &page, "outcome=failure&model=llamacpp%3Acut");
    assert_eq!(dom.matches("class=\"cell-row").count(), 2, "{dom}");
    let dom = dump_dom(&chrome, &page, "error_class=budget");
    assert_eq!(dom.matches("class=\"cell-row").count(), 0, "{dom}");
    // The report links its errored cells and names the viewer.
    let report = std::fs::read_to_string(out.join("report.md")).expect("report");
    assert!(report.contains("viewer.html"), "{report}");
}
