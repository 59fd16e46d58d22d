//! τ-bench continuations (README, "The τ-bench airline environment"): the simulated destination's
//! rediscovery counts on known cuts of a constructed run, with expectations worked out by hand
//! from the rule; the cells of the shipped runs; and a live continuation against a server on
//! 127.0.0.1 that plays both the agent and the customer.
//!
//! The constructed run is a real airline task on the shipped database: the customer gives a
//! reservation id, the cabin and a user id in one turn; the agent reads the user's details (the
//! gift card) and the reservation (its flights and dates), asks, the customer agrees, the agent
//! moves both flights to economy paid back to the gift card, and says the new fare of the first
//! flight — a required output that only the write's answer shows.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use compaction_eval::record::{RunRecord, Source, Status, TauMeasures};
use compaction_eval::runner::{JOURNAL, RunConfig};
use compaction_eval::tau::{self, Env};
use compaction_eval::transcript::metrics::normalize;
use compaction_eval::transcript::tau::follow::{Followed, SIM_FOLLOW, follow};
use compaction_eval::transcript::tau::{Options, run};
use compaction_eval::transcript::{Cut, CutRule, Format, Transcript, WriteRule, cuts, import};
use serde_json::{Value, json};

const USER: &str = "aarav_garcia_1177";
const RESERVATION: &str = "M05KNL";
const GIFT_CARD: &str = "gift_card_8887175";

fn env() -> &'static Env {
    static ENV: std::sync::OnceLock<Env> = std::sync::OnceLock::new();
    ENV.get_or_init(|| {
        Env::load(&tau::data_dir().expect("data")).expect("the shipped airline data loads")
    })
}

/// The constructed run's facts, computed on the shipped database.
struct Run {
    file: PathBuf,
    /// The two flights as `{flight_number, date}`.
    flights: Value,
    user_details: String,
    reservation: String,
    /// The first flight's economy fare, as the update's answer shows it.
    fare: String,
}

fn call(id: &str, name: &str, args: &Value) -> Value {
    json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
        "function": {"name": name, "arguments": args.to_string()}}]})
}

fn result(id: &str, name: &str, content: &str) -> Value {
    json!({"role": "tool", "tool_call_id": id, "name": name, "content": content})
}

/// Writes the constructed run (a τ-bench trajectory file holding one successful run) into `dir`.
fn constructed(dir: &Path) -> Run {
    let e = env();
    let mut db = e.fresh_db().clone();
    let user_details = tau::invoke(&mut db, "get_user_details", &json!({"user_id": USER}));
    let reservation = tau::invoke(
        &mut db,
        "get_reservation_details",
        &json!({"reservation_id": RESERVATION}),
    );
    let r: Value = serde_json::from_str(&reservation).expect("reservation JSON");
    let flights: Value = r["flights"]
        .as_array()
        .expect("flights")
        .iter()
        .map(|f| json!({"flight_number": f["flight_number"], "date": f["date"]}))
        .collect();
    let update = json!({"reservation_id": RESERVATION, "cabin": "economy", "flights": flights, "payment_id": GIFT_CARD});
    let updated = tau::invoke(&mut db, "update_reservation_flights", &update);
    let u: Value = serde_json::from_str(&updated).expect("the update succeeds: {updated}");
    let fare = u["flights"][0]["price"].to_string();
    let first = flights[0]["flight_number"]
        .as_str()
        .expect("a flight")
        .to_string();
    let policy = tau::load_policy(&tau::data_dir().expect("data")).expect("policy");
    let traj = vec![
        json!({"role": "system", "content": policy}),
        json!({"role": "user", "content": format!("Hi, please move my reservation {RESERVATION} to economy. My user id is {USER}.")}),
        call("c1", "get_user_details", &json!({"user_id": USER})),
        result("c1", "get_user_details", &user_details),
        call(
            "c2",
            "get_reservation_details",
            &json!({"reservation_id": RESERVATION}),
        ),
        result("c2", "get_reservation_details", &reservation),
        json!({"role": "assistant", "content": "I can move both flights to the cheaper cabin and refund the difference to your gift card. Shall I go ahead?"}),
        json!({"role": "user", "content": "Yes, please go ahead."}),
        call("c3", "update_reservation_flights", &update),
        result("c3", "update_reservation_flights", &updated),
        json!({"role": "assistant", "content": format!("Done: your flights are now in economy; the new fare of {first} is {fare} dollars.")}),
        json!({"role": "user", "content": "Thanks! ###STOP###"}),
    ];
    let task = json!({"user_id": USER, "instruction": format!("You are {USER}. You want reservation {RESERVATION} moved to economy, any difference refunded to your gift card, and you want to know the new fare of the first flight."),
        "actions": [{"name": "update_reservation_flights", "kwargs": update}], "outputs": [fare]});
    let runs =
        json!([{"task_id": 900, "trial": 0, "reward": 1.0, "info": {"task": task}, "traj": traj}]);
    let file = dir.join("constructed.json");
    std::fs::write(&file, runs.to_string()).expect("write the runs file");
    Run {
        file,
        flights,
        user_details,
        reservation,
        fare,
    }
}

fn transcript(run: &Run) -> Transcript {
    let mut i = import(&run.file, Some(Format::TauBench), false).expect("imports");
    i.runs.remove(0)
}

fn cut(t: &Transcript, rule: CutRule) -> Cut {
    cuts(t, &WriteRule::default(), None)
        .into_iter()
        .find(|c| c.rule == rule)
        .expect("the cut exists")
}

fn task(run: &Run) -> tau::Task {
    tau::load_runs(&run.file).expect("runs").remove(0).task
}

fn followed(run: &Run, rule: CutRule, handoff: &str) -> Followed {
    noticing(run, rule, handoff, 1.0, 0)
}

/// [`followed`] by a destination that notices a needed value it cannot see at rate `notices`
/// (a fitted profile's `notices_missing`; `sim:follow` is 1).
fn noticing(run: &Run, rule: CutRule, handoff: &str, notices: f64, seed: u64) -> Followed {
    let t = transcript(run);
    let c = cut(&t, rule);
    follow(
        &t,
        &c,
        handoff,
        &WriteRule::default(),
        env().episode(task(run)),
        notices,
        seed,
    )
}

/// τ-bench's reward of a continuation of the constructed run (the ground truth's database hash
/// computed once: hashing the database is the slow part of a reward).
fn reward(run: &Run, f: &Followed) -> tau::Reward {
    static GT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let gt = GT.get_or_init(|| tau::ground_truth_hash(env().fresh_db(), &task(run).actions));
    f.episode.reward_against(gt.clone())
}

/// Everything before the cut as one text (what the no-compaction handoff carries).
fn full_text(t: &Transcript, c: &Cut) -> String {
    t.messages[..c.at]
        .iter()
        .map(|m| {
            let calls: Vec<String> = m
                .tool_calls
                .iter()
                .map(|c| {
                    format!(
                        "{} {}",
                        c.name,
                        serde_json::to_string(&c.arguments).unwrap_or_default()
                    )
                })
                .collect();
            format!("{} {}", m.content, calls.join(" "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_cuts_of_the_constructed_run_are_where_the_rules_put_them() {
    let dir = tempfile::tempdir().expect("tmp");
    let run = constructed(dir.path());
    let t = transcript(&run);
    let names: Vec<String> = cuts(&t, &WriteRule::default(), None)
        .into_iter()
        .map(|c| c.name)
        .collect();
    // Message 8 of the log makes the only write; message 10 is the final answer.
    assert_eq!(names, ["first-write@m8", "final@m10"]);
    // The facts the expectations below rest on: the flights' dates and numbers are first shown
    // by the reservation, the gift card first by the user's details and again by the
    // reservation (its payment history), and the fare only by the write.
    let date = normalize(run.flights[0]["date"].as_str().expect("date"));
    assert!(!normalize(&run.user_details).contains(&date));
    assert!(normalize(&run.reservation).contains(&date));
    assert!(normalize(&run.user_details).contains(&normalize(GIFT_CARD)));
    assert!(normalize(&run.reservation).contains(&normalize(GIFT_CARD)));
    let fare = normalize(&run.fare);
    assert!(
        !normalize(&run.user_details).contains(&fare)
            && !normalize(&run.reservation).contains(&fare)
    );
}

#[test]
fn a_full_handoff_costs_nothing_and_earns_the_reward() {
    let dir = tempfile::tempdir().expect("tmp");
    let run = constructed(dir.path());
    let t = transcript(&run);
    for rule in [CutRule::FirstWrite, CutRule::FinalAssistant] {
        let c = cut(&t, rule);
        let f = followed(&run, rule, &full_text(&t, &c));
        assert_eq!(
            (f.extra_tool_calls, f.extra_user_turns, f.extra_tokens),
            (0, 0, 0),
            "{rule:?}"
        );
        assert!(f.unrecovered.is_empty(), "{:?}", f.unrecovered);
        assert_eq!(reward(&run, &f).reward, 1.0, "{rule:?}");
    }
}

#[test]
fn an_empty_handoff_before_the_write_asks_once_and_re_reads_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let run = constructed(dir.path());
    // The write's arguments in the call's order: reservation_id (first said by the customer:
    // asked again, and the answer also gives the cabin and the user id), cabin (visible),
    // flights (first shown by the reservation: re-read, its id now visible), payment_id (the
    // re-read reservation shows it in its payment history).
    let f = followed(&run, CutRule::FirstWrite, "");
    assert_eq!(f.extra_user_turns, 1, "{:?}", f.recovered);
    assert_eq!(f.extra_tool_calls, 1, "{:?}", f.recovered);
    assert_eq!(f.tool_calls, 2, "one re-read and the write");
    assert!(f.extra_tokens > 0);
    assert!(
        f.recovered[0]
            .starts_with("asked again for update_reservation_flights.reservation_id=M05KNL"),
        "{:?}",
        f.recovered
    );
    assert!(
        f.recovered[1].starts_with("re-read get_reservation_details"),
        "{:?}",
        f.recovered
    );
    assert_eq!(f.recovered.len(), 2);
    assert!(f.unrecovered.is_empty() && f.unsafe_writes == 0);
    assert_eq!(reward(&run, &f).reward, 1.0);
}

#[test]
fn a_destination_that_does_not_notice_what_it_lacks_loses_the_reward() {
    let dir = tempfile::tempdir().expect("tmp");
    let run = constructed(dir.path());
    let t = transcript(&run);
    let c = cut(&t, CutRule::FirstWrite);
    // Rate 0: the empty handoff's missing values are never recovered, the write goes out
    // without them, and the reward is lost; the full handoff needs no noticing and keeps it.
    let f = noticing(&run, CutRule::FirstWrite, "", 0.0, 7);
    assert_eq!((f.extra_tool_calls, f.extra_user_turns), (0, 0));
    assert!(!f.unrecovered.is_empty());
    assert_eq!(f.unsafe_writes, 1);
    assert_eq!(reward(&run, &f).reward, 0.0);
    let full = noticing(&run, CutRule::FirstWrite, &full_text(&t, &c), 0.0, 7);
    assert_eq!(reward(&run, &full).reward, 1.0);
    // Rate 1 is `sim:follow`: it recovers everything and earns the reward.
    assert_eq!(
        reward(&run, &noticing(&run, CutRule::FirstWrite, "", 1.0, 7)).reward,
        1.0
    );
    // In between, each value is noticed with that chance, from the seed: over seeds, some
    // continuations keep the reward and some lose it, and one seed always gives one outcome.
    let rewards: Vec<f64> = (0..24)
        .map(|seed| reward(&run, &noticing(&run, CutRule::FirstWrite, "", 0.5, seed)).reward)
        .collect();
    assert!(
        rewards.contains(&1.0) && rewards.contains(&0.0),
        "{rewards:?}"
    );
    let again = reward(&run, &noticing(&run, CutRule::FirstWrite, "", 0.5, 3)).reward;
    assert_eq!(again, rewards[3]);
}

#[test]
fn what_the_handoff_shows_is_not_recovered() {
    let dir = tempfile::tempdir().expect("tmp");
    let run = constructed(dir.path());
    // The customer's three values shown: only the reservation is re-read (flights and gift card).
    let f = followed(
        &run,
        CutRule::FirstWrite,
        &format!("Customer {USER} wants {RESERVATION} in economy."),
    );
    assert_eq!(
        (f.extra_user_turns, f.extra_tool_calls),
        (0, 1),
        "{:?}",
        f.recovered
    );
    // The flights shown too: the gift card alone is re-read where it was first shown, the
    // user's details.
    let shown: Vec<String> = run
        .flights
        .as_array()
        .expect("flights")
        .iter()
        .map(|x| {
            format!(
                "{} on {}",
                x["flight_number"].as_str().unwrap_or_default(),
                x["date"].as_str().unwrap_or_default()
            )
        })
        .collect();
    let f = followed(
        &run,
        CutRule::FirstWrite,
        &format!(
            "Customer {USER} wants {RESERVATION} in economy; flights {}.",
            shown.join(", ")
        ),
    );
    assert_eq!(
        (f.extra_user_turns, f.extra_tool_calls),
        (0, 1),
        "{:?}",
        f.recovered
    );
    assert!(
        f.recovered[0].starts_with("re-read get_user_details"),
        "{:?}",
        f.recovered
    );
    // Every tool value shown, the customer's cabin and reservation not: one question.
    let flights: Vec<String> = run
        .flights
        .as_array()
        .expect("flights")
        .iter()
        .map(|x| {
            format!(
                "{} on {}",
                x["flight_number"].as_str().unwrap_or_default(),
                x["date"].as_str().unwrap_or_default()
            )
        })
        .collect();
    let f = followed(
        &run,
        CutRule::FirstWrite,
        &format!(
            "User {USER}; flights {}; pay with {GIFT_CARD}.",
            flights.join(", ")
        ),
    );
    assert_eq!(
        (f.extra_user_turns, f.extra_tool_calls),
        (1, 0),
        "{:?}",
        f.recovered
    );
    assert_eq!(reward(&run, &f).reward, 1.0);
}

#[test]
fn a_value_only_a_write_showed_is_not_recovered_and_the_reward_shows_it() {
    let dir = tempfile::tempdir().expect("tmp");
    let run = constructed(dir.path());
    // Before the final answer: the fare was shown only by the write's answer, and a write is
    // never repeated to read; the answer is said without it.
    let f = followed(&run, CutRule::FinalAssistant, "");
    assert_eq!(f.unrecovered, [format!("output {}", run.fare)]);
    assert_eq!((f.extra_user_turns, f.extra_tool_calls), (0, 0));
    let r = reward(&run, &f);
    assert!(r.r_actions, "the write happened before the cut");
    assert_eq!(r.r_outputs, Some(false));
    assert_eq!(r.reward, 0.0);
}

fn offline_config(out: &Path, strategies: &[&str]) -> RunConfig {
    RunConfig {
        strategies: strategies.iter().map(|s| s.to_string()).collect(),
        models: vec!["sim:careful".into()],
        reps: 1,
        out: out.to_path_buf(),
        no_cache: true,
        ..RunConfig::default()
    }
}

fn tau_of(r: &RunRecord) -> &TauMeasures {
    r.transcript
        .as_ref()
        .and_then(|t| t.tau.as_ref())
        .expect("tau measures")
}

#[test]
fn the_cells_pair_every_strategy_with_the_full_history_on_the_same_cut() {
    let dir = tempfile::tempdir().expect("tmp");
    let run_file = constructed(dir.path()).file;
    let out = dir.path().join("run");
    let cfg = offline_config(&out, &["none"]);
    let opts = Options {
        runs: run_file,
        ..Options::shipped().expect("data")
    };
    let o = run(&cfg, &opts).expect("runs");
    assert_eq!((o.runs, o.cuts), (1, 2));
    assert_eq!(o.replaced_models, ["sim:careful"]);
    let records =
        compaction_eval::record::read_records(&out.join("results.jsonl")).expect("records");
    // 2 cuts × (full, none) × sim:follow.
    assert_eq!(records.len(), 4);
    assert!(
        records
            .iter()
            .all(|r| r.source == Source::Tau && r.status == Status::Ok && r.model == SIM_FOLLOW)
    );
    let cell = |s: &str, cut: &str| {
        records
            .iter()
            .find(|r| r.strategy == s && r.interrupt.starts_with(cut))
            .map(tau_of)
            .expect("the cell")
    };
    assert_eq!(cell("full", "first-write").reward, 1.0);
    assert_eq!(cell("full", "first-write").extra_tool_calls, 0);
    // `none` hands over no history: the counts worked out above for an empty handoff.
    let none = cell("none", "first-write");
    assert_eq!((none.extra_user_turns, none.extra_tool_calls), (1, 1));
    assert_eq!(cell("none", "final").reward, 0.0);
    // The report gets its section, and a rerun with --resume keeps every cell.
    compaction_eval::report::render_dir(&out).expect("report");
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(md.contains("## τ-bench airline"), "{md}");
    let again = run(
        &RunConfig {
            resume: true,
            ..cfg
        },
        &opts,
    )
    .expect("resume");
    assert_eq!(again.kept, 4);
    assert_eq!(again.records, 4);
    assert!(
        !out.join(JOURNAL).exists(),
        "a finished run leaves no journal"
    );

    // The gate's rules read the τ-bench cells: the safety rules count them, and a run of τ
    // cells only has no continuity envelope to evaluate (no rule, rather than a failed one).
    let policy = compaction_eval::gate::Policy {
        must_be_safe: vec!["none".into()],
        ..Default::default()
    };
    let rules = compaction_eval::gate::evaluate(&out, None, &policy).expect("gate");
    let safety = rules
        .iter()
        .find(|r| r.name.starts_with("none: safety violations"))
        .expect("the safety rule");
    assert!(
        safety.held() && safety.detail.contains("of 2 cells counted"),
        "{safety:?}"
    );
    assert!(
        rules
            .iter()
            .any(|r| r.name.starts_with("errored cells") && r.detail.contains("of 4 cells"))
    );
    assert!(
        !rules.iter().any(|r| r.name.contains("continuity")),
        "{rules:?}"
    );
    // Against itself as the baseline: every comparison pairs the τ cells, clustered by task.
    let rules = compaction_eval::gate::evaluate(&out, Some(&out), &policy).expect("gate");
    let paired = rules
        .iter()
        .find(|r| r.name.starts_with("none · sim:follow: safe_success"))
        .expect("a paired comparison");
    assert!(
        paired.held() && paired.detail.contains("over 2 paired cells in 1 scenarios"),
        "{paired:?}"
    );

    // An interrupted run: two cells reached the journal (the second one torn mid-line), and
    // neither results.jsonl nor the manifest was written. --resume keeps the whole journaled
    // cell as it was, runs the rest and ends with every cell once.
    let lines: Vec<String> = std::fs::read_to_string(out.join("results.jsonl"))
        .expect("results")
        .lines()
        .map(str::to_string)
        .collect();
    std::fs::remove_file(out.join("results.jsonl")).expect("rm results");
    std::fs::remove_file(out.join("manifest.json")).expect("rm manifest");
    let torn = &lines[1][..lines[1].len() / 2];
    std::fs::write(out.join(JOURNAL), format!("{}\n{torn}", lines[0])).expect("journal");
    let resumed = run(
        &RunConfig {
            resume: true,
            ..offline_config(&out, &["none"])
        },
        &opts,
    )
    .expect("resume after an interruption");
    assert_eq!((resumed.kept, resumed.records), (1, 4));
    let after = std::fs::read_to_string(out.join("results.jsonl")).expect("results");
    assert_eq!(after.lines().next(), Some(lines[0].as_str()));
    let ids: std::collections::BTreeSet<_> =
        compaction_eval::record::read_records(&out.join("results.jsonl"))
            .expect("records")
            .iter()
            .map(RunRecord::id)
            .collect();
    assert_eq!(ids.len(), 4);
    assert!(out.join("manifest.json").exists() && !out.join(JOURNAL).exists());
}

// --- Live: one server plays the agent and the customer. ---

struct Server {
    requests: AtomicUsize,
    fare: String,
    flights: Value,
    /// Requests being answered now, and the most at once.
    in_flight: AtomicUsize,
    most_in_flight: AtomicUsize,
}

fn completion(message: Value) -> Value {
    json!({"id": "chatcmpl-test", "object": "chat.completion", "created": 1_700_000_000u32,
        "model": "scripted", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}})
}

/// The agent writes once it can see the reservation id, else asks for it; after the write it
/// says the fare. The customer gives the id when asked, and stops once the agent is done.
/// Every answer takes 50 ms, so cells that run at once overlap.
async fn chat(
    state: axum::extract::State<Arc<Server>>,
    body: axum::Json<Value>,
) -> axum::Json<Value> {
    let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    state.most_in_flight.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let answer = answer(state.clone(), body);
    state.in_flight.fetch_sub(1, Ordering::SeqCst);
    answer
}

fn answer(
    axum::extract::State(s): axum::extract::State<Arc<Server>>,
    axum::Json(body): axum::Json<Value>,
) -> axum::Json<Value> {
    s.requests.fetch_add(1, Ordering::SeqCst);
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or_default();
    let text = |m: &Value| m["content"].as_str().unwrap_or_default().to_string();
    if body["model"] == "customer" {
        let said = text(&last);
        let reply = if said.starts_with("Done") {
            "Thanks! ###STOP###".to_string()
        } else {
            format!("It is {RESERVATION}.")
        };
        return axum::Json(completion(json!({"role": "assistant", "content": reply})));
    }
    if last["role"] == "tool" {
        return axum::Json(completion(
            json!({"role": "assistant", "content": format!("Done: the new fare is {} dollars.", s.fare)}),
        ));
    }
    if body.to_string().contains(RESERVATION) {
        let args = json!({"reservation_id": RESERVATION, "cabin": "economy", "flights": s.flights, "payment_id": GIFT_CARD});
        return axum::Json(completion(call("w1", "update_reservation_flights", &args)));
    }
    axum::Json(completion(
        json!({"role": "assistant", "content": "Which reservation is it?"}),
    ))
}

fn start(fare: String, flights: Value) -> (u16, Arc<Server>) {
    let state = Arc::new(Server {
        requests: AtomicUsize::new(0),
        fare,
        flights,
        in_flight: AtomicUsize::new(0),
        most_in_flight: AtomicUsize::new(0),
    });
    let port = common::serve(
        axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(chat))
            .with_state(state.clone()),
    );
    (port, state)
}

fn model(port: u16, name: &str) -> compaction_eval::destination::live::ModelConfig {
    let mut m = compaction_eval::destination::live::ModelConfig::openai(name);
    m.name = name.to_string();
    m.base_url = format!("http://127.0.0.1:{port}/v1");
    m.api_key_env = Some("COMPACTION_EVAL_TAU_TEST_KEY".into());
    m.retries = 0;
    m
}

#[test]
fn a_live_agent_and_a_live_customer_continue_a_cut_on_the_environment() {
    // SAFETY: only this test reads this variable.
    unsafe { std::env::set_var("COMPACTION_EVAL_TAU_TEST_KEY", "sk-test-tau") };
    let dir = tempfile::tempdir().expect("tmp");
    let run_file = constructed(dir.path());
    let (port, server) = start(run_file.fare.clone(), run_file.flights.clone());
    let out = dir.path().join("live");
    let mut cfg = offline_config(&out, &["none"]);
    cfg.models = vec!["agent".into()];
    cfg.model_defs = [
        ("agent", model(port, "agent")),
        ("customer", model(port, "customer")),
    ]
    .into_iter()
    .map(|(n, m)| (n.to_string(), m))
    .collect();
    cfg.step_budget = 8;
    let opts = Options {
        runs: run_file.file.clone(),
        rules: vec![CutRule::FirstWrite],
        user_model: Some("customer".into()),
        ..Options::shipped().expect("data")
    };
    let o = run(&cfg, &opts).expect("runs");
    assert_eq!(o.errored, 0);
    let records =
        compaction_eval::record::read_records(&out.join("results.jsonl")).expect("records");
    assert_eq!(records.len(), 2, "full and none at one cut");
    let full = tau_of(records.iter().find(|r| r.strategy == "full").expect("full"));
    let none = tau_of(records.iter().find(|r| r.strategy == "none").expect("none"));
    // With the history the agent writes at once, says the fare, and the customer stops.
    assert_eq!(
        (
            full.reward,
            full.tool_calls,
            full.user_turns,
            full.extra_user_turns
        ),
        (1.0, 1, 1, 0)
    );
    // Without it the agent must ask: the customer repeats the reservation id it gave before the
    // cut (one extra customer turn), then the same write and the same ending.
    assert_eq!(
        (
            none.reward,
            none.tool_calls,
            none.user_turns,
            none.extra_user_turns
        ),
        (1.0, 1, 2, 1)
    );
    assert!(none.extra_tokens > full.extra_tokens);
    assert!(server.requests.load(Ordering::SeqCst) >= 7);
    // Without a customer model, live destinations are refused before any request.
    let refused = run(
        &cfg,
        &Options {
            user_model: None,
            ..opts
        },
    );
    assert!(matches!(refused, Err(e) if e.to_string().contains("--tau-user")));
}

#[test]
fn live_cells_run_concurrently_and_their_records_keep_cell_order() {
    // SAFETY: only the live tests read this variable, and they set the same value.
    unsafe { std::env::set_var("COMPACTION_EVAL_TAU_TEST_KEY", "sk-test-tau") };
    let dir = tempfile::tempdir().expect("tmp");
    let run_file = constructed(dir.path());
    let run_with = |concurrency: usize, name: &str| {
        let (port, server) = start(run_file.fare.clone(), run_file.flights.clone());
        let out = dir.path().join(name);
        let mut cfg = offline_config(&out, &["none", "A"]);
        cfg.models = vec!["sim:follow".into(), "agent".into()];
        cfg.reps = 2;
        cfg.concurrency = concurrency;
        cfg.no_cache = true;
        let mut agent = model(port, "agent");
        agent.max_concurrency = 4;
        cfg.model_defs = [("agent", agent), ("customer", model(port, "customer"))]
            .into_iter()
            .map(|(n, m)| (n.to_string(), m))
            .collect();
        cfg.step_budget = 8;
        let opts = Options {
            runs: run_file.file.clone(),
            rules: vec![CutRule::FirstWrite],
            user_model: Some("customer".into()),
            ..Options::shipped().expect("data")
        };
        let o = run(&cfg, &opts).expect("runs");
        assert_eq!(o.errored, 0);
        let text = std::fs::read_to_string(out.join("results.jsonl")).expect("results");
        // The report calibrates sim:follow against the live agent on the cells both continued.
        compaction_eval::report::render_dir(&out).expect("report");
        let c = compaction_eval::report::calibration::read(&out.join("calibration.json"))
            .expect("a τ-bench run with a sim and a live model has a calibration");
        assert_eq!(
            (c.pairs[0].sim.as_str(), c.pairs[0].live.as_str()),
            ("sim:follow", "agent")
        );
        assert_eq!((c.pairs[0].cells, c.pairs[0].scenarios), (6, 1), "one task");
        (text, server.most_in_flight.load(Ordering::SeqCst))
    };
    let (one_at_a_time, most) = run_with(1, "c1");
    assert_eq!(most, 1, "--concurrency 1: one request at a time");
    let (parallel, most) = run_with(3, "c3");
    assert!(
        most >= 2,
        "--concurrency 3: cells overlapped ({most} at once)"
    );
    // Same cells, same order, same scores: only timings may differ.
    let strip = |text: &str| -> Vec<Value> {
        text.lines()
            .map(|l| {
                let mut v: Value = serde_json::from_str(l).expect("json");
                for k in ["first_action_ms", "completion_ms"] {
                    v["metrics"][k] = Value::Null;
                }
                v["diagnostics"]["live"] = Value::Null;
                v
            })
            .collect()
    };
    let (a, b) = (strip(&one_at_a_time), strip(&parallel));
    assert_eq!(
        a.len(),
        12,
        "full, none and A × 2 repetitions × 2 destinations"
    );
    assert_eq!(a, b);
}
