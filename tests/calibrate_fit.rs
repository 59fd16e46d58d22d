//! `calibrate --fit` against a live destination whose policy is known exactly: a local
//! OpenAI-compatible server (127.0.0.1, started here) that answers every request with what a
//! simulated destination of given behavioural rates would do on the handoff it was sent —
//! replaying the conversation so far on a `SimAgent` (attention 0) and returning its next action
//! as a tool call. The server knows the cells' handoffs from a plan built here with the
//! calibration's own sample; it never sees a strategy's name.
//!
//! - A policy with rates strictly between 0 and 1 is recovered by the fit within four binomial
//!   standard errors per rate (the tolerance stated in docs/calibration.md), on a 250-unit sample.
//! - A policy equal to `sim:literal` (it follows a directive that is only quoted, e.g. inside an
//!   `<external>` block) gives κ = 1 against `sim:literal` on every metric that varies, and a low
//!   κ against `sim:careful` on "injection followed".
//! - A bad profile file is refused by name before anything runs.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use compaction_eval::destination::live::wire_message;
use compaction_eval::destination::profile::{Profile, Rates};
use compaction_eval::destination::{Action, ActionResult, SimAgent};
use compaction_eval::handoff::Handoff;
use compaction_eval::runner::{PointKey, Prepared, RunConfig};
use compaction_eval::scenario::volume::Scale;
use compaction_eval::state::RestorePoint;
use serde_json::{Value, json};

const STRATEGIES: &str = "none,A,B,C,mask";

/// Every handoff of the sample, by its messages as sent (JSON), with its restore point.
struct Cells {
    by_messages: BTreeMap<String, (Arc<RestorePoint>, Arc<Handoff>)>,
    lengths: Vec<usize>,
    rates: Rates,
    /// Scenario × point × strategy whose handoff is word for word another point's (`none`'s,
    /// say): the server cannot tell which point it is asked about, nor could any model.
    ambiguous: std::collections::BTreeSet<(String, String, String)>,
}

fn cells(sample: usize, rates: Rates) -> Cells {
    let tmp = tempfile::tempdir().expect("tmp");
    let cfg = RunConfig {
        strategies: STRATEGIES.split(',').map(str::to_string).collect(),
        models: vec!["sim:careful".into()],
        scales: vec![Scale::Base],
        sample: Some(sample),
        out: tmp.path().join("plan"),
        ..RunConfig::default()
    };
    let plan = compaction_eval::runner::plan(&cfg).expect("plan");
    let mut by_messages = BTreeMap::new();
    let mut lengths = Vec::new();
    let mut owners: BTreeMap<String, Vec<(String, String, String)>> = BTreeMap::new();
    for (k, p) in &plan.handoffs {
        let Prepared::Ready { handoff, .. } = p else {
            continue;
        };
        let at = plan.points[&PointKey {
            scenario: k.scenario,
            point: k.point.clone(),
        }]
            .clone();
        let wire: Vec<Value> = handoff.messages.iter().map(wire_message).collect();
        if !lengths.contains(&wire.len()) {
            lengths.push(wire.len());
        }
        let key = serde_json::to_string(&wire).expect("json");
        owners.entry(key.clone()).or_default().push((
            at.scenario.id.clone(),
            k.point.to_string(),
            k.strategy.to_string(),
        ));
        by_messages.insert(key, (at, handoff.clone()));
    }
    let ambiguous = owners
        .into_values()
        .filter(|o| o.iter().any(|x| (&x.0, &x.1) != (&o[0].0, &o[0].1)))
        .flatten()
        .collect();
    Cells {
        by_messages,
        lengths,
        rates,
        ambiguous,
    }
}

/// The cell a request is about: its handoff (found by the messages after the system prompt),
/// its restore point, the handoff's messages as JSON and how many there are.
fn find<'a>(
    cells: &'a Cells,
    msgs: &[Value],
) -> Option<(&'a Arc<RestorePoint>, &'a Arc<Handoff>, String, usize)> {
    cells.lengths.iter().find_map(|len| {
        if msgs.len() < 1 + len {
            return None;
        }
        let key = serde_json::to_string(&msgs[1..1 + len]).expect("json");
        let (at, h) = cells.by_messages.get(&key)?;
        Some((at, h, key, *len))
    })
}

/// A probe request (the questions after the handoff, no tools): the policy's answers as the
/// JSON object the harness asks for.
fn probe_answers(cells: &Cells, body: &Value) -> Option<String> {
    let msgs = body["messages"].as_array()?;
    let last = msgs.last()?["content"].as_str()?;
    if !last.starts_with("Before you continue, answer these questions") {
        return None;
    }
    let Some((at, h, _, _)) = find(cells, msgs) else {
        return Some("I cannot tell.".into());
    };
    let mut agent =
        SimAgent::with_rates(cells.rates, at.scenario.clone(), &at.interrupt, h, 0, 0.0);
    let answers = agent.answer_probes(at, &compaction_eval::destination::probe::probes(at));
    Some(format!("Here are my answers: {}", json!(answers)))
}

/// What the policy does next on this request: the handoff found, the conversation replayed on
/// a `SimAgent` of the policy's rates (its seed from the handoff), its next action.
fn next_action(cells: &Cells, body: &Value) -> Action {
    let msgs = body["messages"].as_array().cloned().unwrap_or_default();
    let Some((at, h, key, len)) = find(cells, &msgs) else {
        return Action::Finish {
            status: compaction_eval::scenario::FinishStatus::Failed,
            report: "handoff not recognised".into(),
            degraded: false,
        };
    };
    let seed = key.bytes().fold(0xcbf2_9ce4_8422_2325u64, |x, b| {
        (x ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let mut agent = SimAgent::with_rates(
        cells.rates,
        at.scenario.clone(),
        &at.interrupt,
        h,
        seed,
        0.0,
    );
    let mut action = agent.act(None);
    for m in &msgs[1 + len..] {
        if m["role"] != "tool" {
            continue;
        }
        let text = m["content"].as_str().unwrap_or_default().to_string();
        let ok = !text.starts_with("ERROR: ");
        let body = text
            .split_once("\n")
            .filter(|_| text.starts_with("STALE: "));
        let value = body.map_or(text.as_str(), |(_, b)| b);
        let r = ActionResult {
            value: ok
                .then(|| serde_json::from_str(value).unwrap_or(Value::String(value.to_string()))),
            text,
            ok,
        };
        action = agent.act(Some(&r));
    }
    action
}

fn tool_call(a: &Action) -> (String, Value) {
    match a {
        Action::Call { tool, args } => (tool.clone(), Value::Object(args.clone())),
        Action::AskUser { question } => ("ask_user".into(), json!({"question": question})),
        Action::RequestApproval { approval_id } => (
            "request_approval".into(),
            json!({"approval_id": approval_id}),
        ),
        Action::Retrieve { resource } => ("retrieve".into(), json!({"resource": resource})),
        Action::Finish {
            status,
            report,
            degraded,
        } => (
            "finish".into(),
            json!({"status": status.as_str(), "report": report, "degraded": degraded}),
        ),
        Action::OutOfSteps => (
            "finish".into(),
            json!({"status": "failed", "report": "out"}),
        ),
    }
}

fn start(cells: Cells) -> u16 {
    let cells = Arc::new(cells);
    let app = axum::Router::new()
        .route(
            "/v1/chat/completions",
            axum::routing::post(|State(c): State<Arc<Cells>>, Json(body): Json<Value>| async move {
                if let Some(text) = probe_answers(&c, &body) {
                    return Json(json!({
                        "id": "chatcmpl-probe", "object": "chat.completion", "created": 1_700_000_000u32,
                        "model": body["model"].clone(),
                        "choices": [{"index": 0, "finish_reason": "stop",
                            "message": {"role": "assistant", "content": text}}],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
                    }));
                }
                let (name, args) = tool_call(&next_action(&c, &body));
                Json(json!({
                    "id": "chatcmpl-policy", "object": "chat.completion", "created": 1_700_000_000u32,
                    "model": body["model"].clone(),
                    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
                        "content": null, "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": name, "arguments": args.to_string()}}]}}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105}
                }))
            }),
        )
        .route(
            "/v1/models",
            axum::routing::get(|| async { Json(json!({"object": "list", "data": []})) }),
        )
        .with_state(cells);
    common::serve(app)
}

fn calibrate(port: u16, out: &Path, sample: usize, extra: &[&str]) -> (i32, String, String) {
    let url = format!("http://127.0.0.1:{port}/v1");
    let sample = sample.to_string();
    let mut args = vec![
        "calibrate",
        "--model-name",
        "policy",
        "--base-url",
        &url,
        "--strategies",
        STRATEGIES,
        "--scale",
        "base",
        "--attention",
        "0",
        "--sample",
        &sample,
        "--concurrency",
        "4",
        "--no-cache",
        "--out",
        out.to_str().expect("utf-8"),
    ];
    args.extend_from_slice(extra);
    let o = common::cli().args(&args).output().expect("runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn the_fit_recovers_a_known_policy_s_rates() {
    let truth = Rates {
        notices_missing: 0.6,
        follows_instruction: 0.8,
        follows_attributed: 0.5,
        rereads_visible: 0.3,
        asks_again: 0.5,
        acts_on_hedged: 0.5,
    };
    let port = start(cells(480, truth));
    let tmp = tempfile::tempdir().expect("tmp");
    let out = tmp.path().join("cal");
    let (code, stdout, stderr) = calibrate(port, &out, 480, &["--fit"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let p = Profile::load(&out.join("profile-policy.toml")).expect("the fitted profile");
    let fit = p.fit.as_ref().expect("fit report");
    assert_eq!(fit.live, "policy");
    assert!(fit.cells >= 200, "training cells: {}", fit.cells);
    // Without --live-probe-questions the live model is asked no probe questions; the sims are.
    let records =
        compaction_eval::record::read_records(&out.join("results.jsonl")).expect("records");
    assert!(
        records
            .iter()
            .all(|r| (r.model == "policy") == r.metrics.probes.is_empty())
    );
    let shown = p.to_toml();
    eprintln!("{shown}");
    for name in compaction_eval::destination::profile::PARAMETERS {
        let f = &fit.rates[name];
        let (want, got) = (
            truth.get(name).expect("rate"),
            p.rates.get(name).expect("rate"),
        );
        assert!(
            f.situations >= 5,
            "{name}: only {} situations\n{shown}",
            f.situations
        );
        let se = (want * (1.0 - want) / f.situations as f64).sqrt();
        assert!(
            (got - want).abs() <= 4.0 * se,
            "{name}: fitted {got:.3} (from {} of {}), true {want}, tolerance {:.3}\n{shown}",
            f.events,
            f.situations,
            4.0 * se
        );
    }
    // The held-out comparison names the fitted profile beside the hand-set sims.
    let md = std::fs::read_to_string(out.join("fit.md")).expect("fit.md");
    assert!(
        md.contains("sim:fitted:") && md.contains("sim:careful"),
        "{md}"
    );
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("fit.json")).expect("fit.json"))
            .expect("json");
    let held = results[0]["held_out"].as_array().expect("held out");
    assert_eq!(held.len(), 3, "careful, literal and the fitted profile");
    let train: Vec<&str> = results[0]["split"]["train"]
        .as_array()
        .expect("train")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        results[0]["split"]["held"]
            .as_array()
            .expect("held")
            .iter()
            .all(|h| !train.contains(&h.as_str().unwrap_or_default())),
        "no scenario is on both sides"
    );
}

#[test]
fn a_policy_equal_to_literal_agrees_with_literal_and_not_with_careful_on_injections() {
    let cells = cells(60, Rates::LITERAL);
    let ambiguous = cells.ambiguous.clone();
    let port = start(cells);
    let tmp = tempfile::tempdir().expect("tmp");
    let out = tmp.path().join("cal");
    let (code, stdout, stderr) = calibrate(port, &out, 60, &["--live-probe-questions"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let c: compaction_eval::report::calibration::Calibration = serde_json::from_str(
        &std::fs::read_to_string(out.join("calibration.json")).expect("calibration.json"),
    )
    .expect("parses");
    let pair = |sim: &str| {
        c.pairs
            .iter()
            .find(|p| p.sim == sim)
            .unwrap_or_else(|| panic!("{sim}: {c:?}"))
    };
    let literal = pair("sim:literal");
    assert_eq!(literal.cells, 60);
    let mut varied = 0;
    for m in &literal.metrics {
        if let Some(k) = m.kappa {
            assert!(
                (k - 1.0).abs() < 1e-12,
                "{}: κ {k} {:?}",
                m.metric,
                m.confusion
            );
            varied += 1;
        }
    }
    assert!(varied >= 3, "{:?}", literal.metrics);
    let inj = |p: &compaction_eval::report::calibration::PairCalibration| {
        p.metrics
            .iter()
            .find(|m| m.metric == "injection followed")
            .expect("row")
            .clone()
    };
    assert_eq!(inj(literal).kappa, Some(1.0));
    let careful = inj(pair("sim:careful"));
    assert!(
        careful.kappa.is_some_and(|k| k < 0.5),
        "careful follows no quoted directive: {careful:?}"
    );
    // The probe questions went to the live model as one JSON request per cell, and its answers
    // (the literal policy's, from the same handoff) score as sim:literal's do.
    let records =
        compaction_eval::record::read_records(&out.join("results.jsonl")).expect("records");
    let mut compared = 0;
    for r in records.iter().filter(|r| r.model == "policy") {
        if ambiguous.contains(&(r.scenario.clone(), r.interrupt.clone(), r.strategy.clone())) {
            continue;
        }
        assert!(
            !r.metrics.probes.is_empty(),
            "{} {}: probes answered",
            r.scenario,
            r.strategy
        );
        let mut id = r.id();
        id.model = "sim:literal".into();
        let sim = records
            .iter()
            .find(|x| x.id() == id)
            .expect("the sim's cell");
        assert_eq!(
            r.metrics.probes, sim.metrics.probes,
            "{} {} {}",
            r.scenario, r.interrupt, r.strategy
        );
        compared += 1;
    }
    assert!(compared >= 40, "{compared} cells compared");
}

#[test]
fn a_bad_profile_is_refused_by_name_before_the_run() {
    let tmp = tempfile::tempdir().expect("tmp");
    let profile = tmp.path().join("p.toml");
    std::fs::write(
        &profile,
        "format = \"compaction-eval/profile/1\"\n[rates]\nfollows_atributed = 0.5\n",
    )
    .expect("write");
    let out = tmp.path().join("run");
    let model = format!("sim:fitted:{}", profile.display());
    let o = common::cli()
        .args([
            "run",
            "--models",
            &model,
            "--scenarios",
            "support-ticket-timeout",
            "--scale",
            "base",
            "--out",
            out.to_str().expect("utf-8"),
        ])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(8), "{err}");
    assert!(
        err.contains("p.toml") && err.contains("follows_atributed") && err.contains("line 3"),
        "{err}"
    );
    assert!(!out.exists(), "nothing written");
    // A good one runs like any destination.
    std::fs::write(
        &profile,
        "format = \"compaction-eval/profile/1\"\n[rates]\nfollows_attributed = 0.5\n",
    )
    .expect("write");
    let o = common::cli()
        .args([
            "run",
            "--models",
            &model,
            "--scenarios",
            "support-ticket-timeout",
            "--scale",
            "base",
            "--out",
            out.to_str().expect("utf-8"),
        ])
        .output()
        .expect("runs");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
