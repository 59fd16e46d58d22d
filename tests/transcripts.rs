//! Real transcripts on the shipped τ-bench airline runs (`data/tau-bench-airline` in the
//! repository, or the folder in `COMPACTION_EVAL_TAU_BENCH`): every run imports with the file's counts, malformed
//! input is named by run, message and field, the offline measures hold their by-construction
//! bounds on all 120 runs, and next-action agreement runs end to end against a local server.

mod common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use compaction_eval::record::{RunRecord, Source, Status};
use compaction_eval::runner::RunConfig;
use compaction_eval::transcript::{self, Format, WriteRule, agree, cuts, eval, import};
use serde_json::{Value, json};

const DATA_FILE: &str = "gpt-4o-airline.tasks-00-29.json";

/// The τ-bench data folder: the repository's copy (`data/tau-bench-airline`), or the folder in
/// `COMPACTION_EVAL_TAU_BENCH` when a user points the tests at another copy.
fn data_file() -> PathBuf {
    let dir = match std::env::var_os("COMPACTION_EVAL_TAU_BENCH") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("data/tau-bench-airline"),
    };
    let f = dir.join(DATA_FILE);
    assert!(f.is_file(), "{} does not exist", f.display());
    f
}

fn raw_runs() -> Vec<Value> {
    let text = std::fs::read_to_string(data_file()).expect("readable");
    serde_json::from_str::<Value>(&text)
        .expect("JSON")
        .as_array()
        .cloned()
        .expect("an array of runs")
}

/// All 120 runs, imported once into a folder shared by the tests of this binary.
fn imported_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let d = tempfile::tempdir().expect("tempdir").keep().join("tau");
        let r = transcript::import_to(&data_file(), None, false, &d).expect("imports");
        assert!(r.skipped.is_empty());
        d
    })
    .clone()
}

#[test]
fn every_shipped_run_imports_with_the_files_counts() {
    let raw = raw_runs();
    let runs = transcript::read_dir(&imported_dir()).expect("reads back");
    assert_eq!(runs.len(), raw.len());
    assert_eq!(runs.len(), 120);
    let imported = import(&data_file(), None, false).expect("imports");
    assert!(imported.runs.iter().all(|t| t.origin.format == "tau-bench"));
    let mut rewarded = 0;
    for (t, r) in imported.runs.iter().zip(&raw) {
        let traj = r["traj"].as_array().expect("traj");
        let system = traj.iter().filter(|m| m["role"] == "system").count();
        assert_eq!(t.messages.len(), traj.len() - system, "{}", t.id);
        assert_eq!(t.system.is_some(), system > 0);
        let calls: usize = traj
            .iter()
            .map(|m| m["tool_calls"].as_array().map_or(0, |a| a.len()))
            .sum();
        assert_eq!(t.calls().count(), calls, "{}", t.id);
        let results = traj.iter().filter(|m| m["role"] == "tool").count();
        assert_eq!(
            t.messages
                .iter()
                .filter(|m| m.role == transcript::model::TRole::Tool)
                .count(),
            results
        );
        let actions = r["info"]["task"]["actions"].as_array().expect("actions");
        assert_eq!(t.ground_truth.len(), actions.len(), "{}", t.id);
        assert_eq!(t.reward, r["reward"].as_f64());
        assert_eq!(
            t.id,
            format!(
                "task-{:03}-trial-{}",
                r["task_id"].as_u64().expect("task id"),
                r["trial"]
            )
        );
        // Arguments are parsed objects equal to the logged JSON strings.
        for (m, tm) in traj
            .iter()
            .filter(|m| m["role"] != "system")
            .zip(&t.messages)
        {
            for (c, tc) in m["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .zip(&tm.tool_calls)
            {
                let logged: Value =
                    serde_json::from_str(c["function"]["arguments"].as_str().expect("string"))
                        .expect("json");
                assert_eq!(Value::Object(tc.arguments.clone()), logged);
            }
        }
        rewarded += usize::from(t.reward == Some(1.0));
    }
    assert_eq!(rewarded, 36);
    // Every run has a cut before its final assistant message; most have a first write.
    let rule = WriteRule::default();
    let with_write = imported
        .runs
        .iter()
        .filter(|t| {
            cuts(t, &rule, None)
                .iter()
                .any(|c| c.rule == transcript::CutRule::FirstWrite)
        })
        .count();
    assert!(
        imported
            .runs
            .iter()
            .all(|t| !cuts(t, &rule, None).is_empty())
    );
    assert!(with_write > 60, "{with_write} runs with a write");
    assert!(
        imported
            .runs
            .iter()
            .all(|t| cuts(t, &rule, Some(1)).len() <= 1)
    );
}

fn write_file(name: &str, v: &Value) -> PathBuf {
    let d = tempfile::tempdir().expect("tempdir").keep();
    let p = d.join(name);
    std::fs::write(&p, serde_json::to_string(v).expect("json")).expect("write");
    p
}

fn import_err(v: &Value) -> String {
    let p = write_file("log.json", v);
    import(&p, Some(Format::Openai), false)
        .expect_err("malformed")
        .to_string()
}

#[test]
fn malformed_input_names_the_run_the_message_and_the_field() {
    let call = |args: &str| {
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_user", "arguments": args}}]})
    };
    let orphan = json!([{"role": "user", "content": "hi"},
        {"role": "tool", "tool_call_id": "nope", "content": "{}"}]);
    let e = import_err(&orphan);
    assert!(
        e.contains("run `log`, message 1, field `tool_call_id`") && e.contains("nope"),
        "{e}"
    );
    let bad_args = json!([{"role": "user", "content": "hi"}, call("{\"user_id\": ")]);
    let e = import_err(&bad_args);
    assert!(
        e.contains("message 1, field `tool_calls[0].function.arguments`: not valid JSON"),
        "{e}"
    );
    let not_object = json!([{"role": "user", "content": "hi"}, call("[1, 2]")]);
    assert!(import_err(&not_object).contains("not as an object"));
    let role = json!([{"role": "user", "content": "hi"}, {"role": "function", "content": "x"}]);
    let e = import_err(&role);
    assert!(
        e.contains("message 1, field `role`: unknown role `function`"),
        "{e}"
    );
    // Runs: the bad one is skipped, counted and listed with --skip-bad.
    let runs = json!([
        {"id": "good", "messages": [{"role": "user", "content": "hi"}, call("{}"),
            {"role": "tool", "tool_call_id": "c1", "content": "ok"}]},
        {"id": "bad", "messages": role},
    ]);
    let p = write_file("runs.json", &runs);
    let e = import(&p, None, false).expect_err("bad run").to_string();
    assert!(e.contains("run `bad`, message 1, field `role`"), "{e}");
    let got = import(&p, None, true).expect("skips");
    assert_eq!(got.runs.len(), 1);
    assert_eq!(got.skipped.len(), 1);
    assert_eq!(got.skipped[0].run, "bad");
    assert_eq!(got.skipped[0].index, Some(1));
    // Not JSON at all.
    let d = tempfile::tempdir().expect("tempdir").keep();
    let p = d.join("x.jsonl");
    std::fs::write(&p, "this is not json\n").expect("write");
    let e = import(&p, None, false).expect_err("not json").to_string();
    assert!(
        e.contains("x.jsonl") && e.contains("not JSON or JSONL"),
        "{e}"
    );
}

#[test]
fn jsonl_messages_and_content_parts_import() {
    let d = tempfile::tempdir().expect("tempdir").keep();
    let p = d.join("chat.jsonl");
    let lines = [
        json!({"role": "system", "content": "Be brief."}),
        json!({"role": "user", "content": [{"type": "text", "text": "Refund order A-17"}]}),
        json!({"role": "assistant", "content": "", "tool_calls": [{"id": "x", "type": "function",
            "function": {"name": "refund_order", "arguments": "{\"order\": \"A-17\"}"}}]}),
        json!({"role": "tool", "tool_call_id": "x", "name": "refund_order", "content": "done"}),
        json!({"role": "assistant", "content": "Refunded."}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&p, text).expect("write");
    let got = import(&p, None, false).expect("imports");
    assert_eq!(got.runs.len(), 1);
    let t = &got.runs[0];
    assert_eq!(t.id, "chat");
    assert_eq!(t.system.as_deref(), Some("Be brief."));
    assert_eq!(t.messages.len(), 4);
    assert_eq!(t.messages[0].content, "Refund order A-17");
    let c = cuts(t, &WriteRule::default(), None);
    let names: Vec<&str> = c.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["first-write@m2", "final@m4"]);
    // A user list replaces the verb rule.
    let listed = cuts(t, &WriteRule::listed(["lookup".to_string()]), None);
    assert_eq!(listed.len(), 1);
}

fn offline_config(out: &Path, strategies: &[&str]) -> RunConfig {
    RunConfig {
        strategies: strategies.iter().map(|s| s.to_string()).collect(),
        models: vec!["sim:careful".into()],
        out: out.to_path_buf(),
        strategy_dir: Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("strategies")
            .into(),
        no_cache: true,
        scales: vec![compaction_eval::scenario::volume::Scale::Base],
        ..RunConfig::default()
    }
}

#[test]
fn offline_measures_hold_their_bounds_on_all_120_runs() {
    let out = tempfile::tempdir().expect("tempdir").keep().join("run");
    let cfg = offline_config(&out, &["none", "A", "B", "C", "D", "mask", "B+A"]);
    // One cut per run (the first write, else the final assistant message) keeps this test fast;
    // the bounds hold at every cut (README's table is over all of them).
    let opts = eval::Options {
        dir: imported_dir(),
        cuts: Some(1),
        write_rule: WriteRule::default(),
    };
    let o = eval::run(&cfg, &opts).expect("runs");
    assert_eq!(o.runs, 120);
    assert_eq!(o.cuts, 120);
    assert_eq!(o.errored, 0);
    assert_eq!(o.skipped_models, ["sim:careful"]);
    let records =
        compaction_eval::runner::read_records(&out.join("results.jsonl")).expect("records");
    assert_eq!(records.len(), o.cuts * 8);
    assert!(
        records
            .iter()
            .all(|r| r.source == Source::Transcript && r.status == Status::Ok)
    );
    let m = |r: &RunRecord| r.transcript.clone().expect("transcript measures");
    // The full prefix carries every needed value, by construction.
    let full: Vec<&RunRecord> = records.iter().filter(|r| r.strategy == "full").collect();
    assert_eq!(full.len(), o.cuts);
    let needing = full
        .iter()
        .filter(|r| m(r).needed_value_retention.is_some())
        .count();
    assert!(
        needing > o.cuts / 2,
        "{needing} of {} cuts need values",
        o.cuts
    );
    for r in &full {
        let t = m(r);
        assert!(
            t.needed_value_retention.is_none_or(|x| x == 1.0),
            "{}",
            r.scenario
        );
        assert!(r.diagnostics.lost_values.is_empty());
        assert_eq!(r.diagnostics.needed_values.len() as u32, t.values_needed);
        assert_eq!(t.compression_ratio, 1.0);
    }
    // `none` keeps no more than any other strategy, cut by cut.
    for n in records.iter().filter(|r| r.strategy == "none") {
        let nv = m(n).needed_value_retention;
        for o in records
            .iter()
            .filter(|o| o.scenario == n.scenario && o.interrupt == n.interrupt)
        {
            assert!(
                nv.unwrap_or(0.0) <= m(o).needed_value_retention.unwrap_or(0.0),
                "{} {} {}",
                n.scenario,
                n.interrupt,
                o.strategy
            );
        }
    }
    // Diagnostics say where each lost value first appeared and what needed it.
    let lost = records
        .iter()
        .filter(|r| r.strategy == "none")
        .flat_map(|r| r.diagnostics.lost_values.clone())
        .next()
        .expect("none loses values");
    assert!(
        lost.contains("(first seen message ") && lost.contains("; used by "),
        "{lost}"
    );
    // B+A carries the whole transcript too.
    for r in records.iter().filter(|r| r.strategy == "B+A") {
        assert!(m(r).needed_value_retention.is_none_or(|x| x == 1.0));
    }
    // The report has the transcript section, and the scenario tables stay out of it.
    let summary = compaction_eval::report::render_dir(&out).expect("report");
    assert_eq!(
        summary
            .transcripts
            .iter()
            .filter(|g| g.cut_rule.is_none())
            .count(),
        8
    );
    // One cut per run: the first write where there is one, else the final assistant message.
    let rules: Vec<Option<&str>> = summary
        .transcripts
        .iter()
        .filter(|g| g.strategy == "full")
        .map(|g| g.cut_rule.as_deref())
        .collect();
    assert_eq!(rules, [None, Some("first_write"), Some("final_assistant")]);
    assert!(summary.by_strategy_model.is_empty());
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(md.contains("## Real transcripts"), "{md}");
    assert!(md.contains("| full | offline | first_write |"), "{md}");
    assert!(!md.contains("## Ranking"));
    let csv = std::fs::read_to_string(out.join("runs.csv")).expect("runs.csv");
    assert!(csv.lines().nth(1).expect("a row").contains(",transcript,"));
}

#[test]
fn same_transcripts_and_seed_give_byte_identical_records() {
    let d = tempfile::tempdir().expect("tempdir").keep();
    let dir = d.join("few");
    std::fs::create_dir_all(&dir).expect("dir");
    for t in transcript::read_dir(&imported_dir())
        .expect("transcripts")
        .iter()
        .step_by(30)
    {
        t.write(&dir).expect("write");
    }
    let opts = eval::Options {
        dir,
        cuts: Some(2),
        write_rule: WriteRule::default(),
    };
    let strategies = ["none", "A", "B", "C", "D", "mask", "B+A"];
    eval::run(&offline_config(&d.join("one"), &strategies), &opts).expect("runs");
    eval::run(&offline_config(&d.join("two"), &strategies), &opts).expect("reruns");
    let first = std::fs::read(d.join("one/results.jsonl")).expect("first");
    assert!(!first.is_empty());
    assert_eq!(
        first,
        std::fs::read(d.join("two/results.jsonl")).expect("second")
    );
}

#[test]
fn the_cli_imports_lists_shows_and_runs_transcripts() {
    let d = tempfile::tempdir().expect("tempdir").keep();
    // Three runs of the shipped file, as a smaller τ-bench file.
    let few: Vec<Value> = raw_runs().into_iter().take(3).collect();
    let f = d.join("few.json");
    std::fs::write(&f, serde_json::to_string(&few).expect("json")).expect("write");
    let dir = d.join("t");
    let out = common::cli()
        .args(["transcripts", "import"])
        .arg(&f)
        .arg("--out")
        .arg(&dir)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(String::from_utf8_lossy(&out).contains("3 runs imported"));
    let list = common::cli()
        .args(["transcripts", "list"])
        .arg(&dir)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let list = String::from_utf8_lossy(&list).to_string();
    assert!(list.contains("task-000-trial-0\t"), "{list}");
    assert_eq!(list.lines().count(), 4);
    let show = common::cli()
        .args(["transcripts", "show"])
        .arg(&dir)
        .arg("task-000-trial-0")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let show = String::from_utf8_lossy(&show).to_string();
    assert!(
        show.contains("--- cut first-write@m") && show.contains("book_reservation"),
        "{show}"
    );
    common::cli()
        .args(["transcripts", "show"])
        .arg(&dir)
        .arg("task-999")
        .assert()
        .failure()
        .stderr(predicates::str::contains("no run `task-999`"));
    let run = d.join("run");
    common::cli()
        .args([
            "run",
            "--strategies",
            "none,C,exec:shell-example,gov:C",
            "--cuts",
            "2",
            "--no-cache",
            "--transcripts",
        ])
        .arg(&dir)
        .arg("--out")
        .arg(&run)
        .assert()
        .success()
        .stdout(predicates::str::contains("needed-value retention"))
        // Governed context needs declared originals, which imported logs do not have.
        .stderr(predicates::str::contains("gov:C left out"));
    let records =
        compaction_eval::runner::read_records(&run.join("results.jsonl")).expect("records");
    assert!(!records.is_empty() && records.iter().all(|r| r.model == "offline"));
    assert!(records.iter().all(|r| !r.strategy.starts_with("gov")));
    // The plug-in compacted the real history too (no errored cell, a text handoff).
    let plugin: Vec<&RunRecord> = records
        .iter()
        .filter(|r| r.strategy == "exec:shell-example")
        .collect();
    assert_eq!(
        plugin.len(),
        records.iter().filter(|r| r.strategy == "none").count()
    );
    assert!(
        plugin
            .iter()
            .all(|r| r.status == Status::Ok && r.metrics.restore_tokens > 0)
    );
    assert!(
        std::fs::read_to_string(run.join("report.html"))
            .expect("html")
            .contains("Real transcripts")
    );
}

/// What the local server answers: the `oracle` model the call the test expects, `textonly`
/// text; it keeps every request body it received.
#[derive(Default)]
struct Server {
    oracle: Mutex<Value>,
    bodies: Mutex<Vec<Value>>,
}

async fn chat(
    axum::extract::State(s): axum::extract::State<Arc<Server>>,
    axum::Json(body): axum::Json<Value>,
) -> axum::Json<Value> {
    s.bodies.lock().expect("lock").push(body.clone());
    let message = match body["model"].as_str() {
        Some("oracle") => {
            let c = s.oracle.lock().expect("lock").clone();
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "srv_1", "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]}}]})
        }
        _ => json!({"role": "assistant", "content": "Could you confirm that?"}),
    };
    axum::Json(json!({
        "id": "chatcmpl-test", "object": "chat.completion", "created": 1_700_000_000u32,
        "model": body["model"], "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    }))
}

fn start(state: Arc<Server>) -> u16 {
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
                .with_state(state);
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            tx.send(listener.local_addr().expect("addr").port())
                .expect("send port");
            axum::serve(listener, app).await.expect("serve");
        });
    });
    rx.recv().expect("port")
}

#[test]
fn next_action_agreement_runs_end_to_end_against_a_local_server() {
    // The first rewarded run with a write, cut before that write.
    let all = transcript::read_dir(&imported_dir()).expect("transcripts");
    let rule = WriteRule::default();
    let (t, cut) = all
        .iter()
        .filter(|t| t.reward == Some(1.0))
        .find_map(|t| {
            let c = cuts(t, &rule, Some(1)).into_iter().next()?;
            (c.rule == transcript::CutRule::FirstWrite).then(|| (t.clone(), c))
        })
        .expect("a rewarded run with a write");
    let (_, expected) = agree::expected_next(&t, &cut).expect("a next call");
    let d = tempfile::tempdir().expect("tempdir").keep();
    let dir = d.join("one");
    std::fs::create_dir_all(&dir).expect("dir");
    t.write(&dir).expect("write");
    // Also a run the source did not reward: it gets no live cell.
    let unrewarded = all
        .iter()
        .find(|t| t.reward == Some(0.0))
        .expect("a failed run");
    unrewarded.write(&dir).expect("write");

    let server = Arc::new(Server::default());
    // The oracle sends the expected call with its arguments re-spelt: other key order, spaces.
    let mut keys: Vec<(&String, &Value)> = expected.arguments.iter().collect();
    keys.reverse();
    let respelt = format!(
        "{{ {} }}",
        keys.iter()
            .map(|(k, v)| format!("\"{k}\" : {v}"))
            .collect::<Vec<_>>()
            .join(" , ")
    );
    *server.oracle.lock().expect("lock") = json!({"name": expected.name, "arguments": respelt});
    let port = start(server.clone());
    let model = |name: &str| {
        let mut m = compaction_eval::destination::live::ModelConfig::openai(name);
        m.name = name.to_string();
        m.base_url = format!("http://127.0.0.1:{port}/v1");
        m.api_key_env = None;
        m.retries = 0;
        m
    };
    // A model whose endpoint refuses connections: its cells are errored, the run goes on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let mut down = model("down");
    down.base_url = format!("http://{}/v1", closed.local_addr().expect("addr"));
    drop(closed);
    // A live summariser for B, served by the same endpoint.
    let strategies = d.join("strategies");
    std::fs::create_dir_all(&strategies).expect("dir");
    std::fs::write(
        strategies.join("B-live.toml"),
        "id = \"B-live\"\nkind = \"llm_summary\"\nsummarizer = \"textonly\"\n",
    )
    .expect("write");
    let out = d.join("run");
    let cfg = RunConfig {
        strategies: vec!["none".into(), "C".into(), "B-live".into()],
        models: vec!["oracle".into(), "textonly".into(), "down".into()],
        model_defs: [
            ("oracle", model("oracle")),
            ("textonly", model("textonly")),
            ("down", down),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect(),
        out: out.clone(),
        cache_dir: Some(d.join("cache")),
        strategy_dir: strategies.into(),
        scales: vec![compaction_eval::scenario::volume::Scale::Base],
        ..RunConfig::default()
    };
    let opts = eval::Options {
        dir: dir.clone(),
        cuts: Some(1),
        write_rule: rule,
    };
    let o = eval::run(&cfg, &opts).expect("runs");
    let records =
        compaction_eval::runner::read_records(&out.join("results.jsonl")).expect("records");
    let down: Vec<&RunRecord> = records.iter().filter(|r| r.model == "down").collect();
    assert_eq!(down.len(), 4);
    assert_eq!(o.errored, 4);
    assert!(down.iter().all(|r| r.status == Status::Errored
        && r.error_class == Some(compaction_eval::record::ErrorClass::Infrastructure)));
    let live: Vec<&RunRecord> = records
        .iter()
        .filter(|r| r.model != "offline" && r.model != "down")
        .collect();
    // full, none, C, B-live × oracle, textonly, on the rewarded run's one cut only.
    assert_eq!(live.len(), 8, "{records:#?}");
    assert!(live.iter().all(|r| r.scenario == t.id));
    for r in &live {
        let m = r.transcript.as_ref().expect("measures");
        assert_eq!(
            m.next_action_agrees,
            Some(r.model == "oracle"),
            "{} {}",
            r.strategy,
            r.model
        );
        assert!(
            m.expected_action
                .as_deref()
                .is_some_and(|a| a.starts_with(&expected.name))
        );
        let stats = r.diagnostics.live.as_ref().expect("live stats");
        assert_eq!(stats.calls, 1);
        assert!(r.metrics.total_tokens > 0);
    }
    // The summariser was asked once per cut (two runs, one cut each) and charged as compaction.
    let b: Vec<&RunRecord> = records
        .iter()
        .filter(|r| r.strategy == "B-live" && r.status == Status::Ok)
        .collect();
    assert_eq!(b.len(), 4);
    assert!(b.iter().all(|r| r.metrics.compaction_tokens == 110));
    // The destination got the system prompt unchanged, first.
    let bodies = server.bodies.lock().expect("lock").clone();
    assert_eq!(bodies.len(), 2 + 8);
    let agreement: Vec<&Value> = bodies.iter().filter(|b| b["tools"].is_array()).collect();
    assert_eq!(agreement.len(), 8);
    assert!(
        agreement
            .iter()
            .all(|b| b["messages"][0]["role"] == "system"
                && b["messages"][0]["content"].as_str() == t.system.as_deref())
    );
    // Agreement per strategy × model with its interval, in the report.
    let summary = compaction_eval::report::render_dir(&out).expect("report");
    let g = summary
        .transcripts
        .iter()
        .find(|g| g.strategy == "C" && g.model == "oracle" && g.cut_rule.is_none())
        .expect("C × oracle");
    assert_eq!(g.agreement.map(|a| (a.successes, a.n)), Some((1, 1)));
    assert!(g.agreement_ci.is_some_and(|(lo, hi)| lo > 0.0 && hi == 1.0));
    // A rerun is served from the cache.
    let out2 = d.join("run2");
    eval::run(&RunConfig { out: out2, ..cfg }, &opts).expect("reruns");
    assert_eq!(server.bodies.lock().expect("lock").len(), 10);
}
