//! The native τ-bench airline environment against the reference implementation: every output
//! of the 120 shipped runs replayed (the fixture holds what the reference Python answers), the
//! reward on constructed episodes, the end of an episode, argument errors worded as the
//! reference words them, Python's number printing, and `tau replay` end to end.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use compaction_eval::tau::{self, Env, Task, pyfmt};
use serde_json::{Value, json};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn data() -> PathBuf {
    repo().join("data/tau-bench-airline")
}

fn runs_file() -> PathBuf {
    data().join(tau::RUNS_FILE)
}

fn fixture() -> PathBuf {
    repo().join("tests/fixtures/tau-bench/reference-replay.tasks-00-29.jsonl")
}

fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| Env::load(&data()).expect("the shipped data loads"))
}

fn tasks() -> &'static [Task] {
    static TASKS: OnceLock<Vec<Task>> = OnceLock::new();
    TASKS.get_or_init(|| tau::load_tasks(&data()).expect("the shipped tasks load"))
}

fn fixture_lines() -> Vec<Value> {
    std::fs::read_to_string(fixture())
        .expect("fixture is readable")
        .lines()
        .map(|l| serde_json::from_str(l).expect("fixture line is JSON"))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// (a) fidelity

#[test]
fn replaying_the_shipped_runs_gives_the_reference_outputs_and_r_actions() {
    let runs = tau::load_runs(&runs_file()).expect("runs load");
    let expected = fixture_lines();
    assert_eq!(runs.len(), 120);
    assert_eq!(expected.len(), runs.len());
    let replayed = tau::replay_all(env(), &runs);

    let (mut calls, mut same, mut r_same) = (0, 0, 0);
    let mut differences = Vec::new();
    for (got, want) in replayed.iter().zip(&expected) {
        assert_eq!(got.task_id, want["task_id"].as_i64().unwrap_or(-1));
        assert_eq!(got.trial, want["trial"].as_i64().unwrap_or(-1));
        let want_calls = want["calls"].as_array().expect("calls");
        assert_eq!(
            got.calls.len(),
            want_calls.len(),
            "run {}: number of calls",
            want["run"]
        );
        // Call ids repeat within some runs, so calls are matched by position and id together.
        for (g, w) in got.calls.iter().zip(want_calls) {
            calls += 1;
            assert_eq!(g.call_id, w["call_id"].as_str().unwrap_or_default());
            assert_eq!(g.tool, w["tool"].as_str().unwrap_or_default());
            if g.output == w["output"].as_str().unwrap_or_default() {
                same += 1;
            } else if differences.len() < 5 {
                differences.push(format!(
                    "run {} call {} ({}):\n  got  {}\n  want {}",
                    want["run"],
                    g.call_id,
                    g.tool,
                    g.output.chars().take(300).collect::<String>(),
                    w["output"]
                        .as_str()
                        .unwrap_or_default()
                        .chars()
                        .take(300)
                        .collect::<String>()
                ));
            }
        }
        if got.replayed_r_actions == want["replayed_r_actions"].as_f64().unwrap_or(-1.0) {
            r_same += 1;
        } else {
            differences.push(format!(
                "run {}: replayed_r_actions {} (reference {})",
                want["run"], got.replayed_r_actions, want["replayed_r_actions"]
            ));
        }
    }
    eprintln!(
        "tau fidelity: {same}/{calls} outputs identical, {r_same}/{} replayed_r_actions equal",
        replayed.len()
    );
    assert_eq!(calls, 810);
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    assert_eq!(same, 810);
    assert_eq!(r_same, 120);
}

#[test]
fn replaying_the_edge_cases_gives_what_the_reference_gives() {
    // Runs built to hit every refusal, Python exception and number format of the tools; the
    // reference file is what the reference implementation answered for each call.
    let fixtures = repo().join("tests/fixtures/tau-bench");
    let runs = tau::load_runs(&fixtures.join("edge-cases.runs.json")).expect("runs load");
    let expected: Vec<Value> = std::fs::read_to_string(fixtures.join("edge-cases.reference.jsonl"))
        .expect("reference is readable")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let replayed = tau::replay_all(env(), &runs);
    assert_eq!(replayed.len(), expected.len());
    let (mut calls, mut same) = (0, 0);
    let mut differences = Vec::new();
    for (got, want) in replayed.iter().zip(&expected) {
        let want_calls = want["calls"].as_array().expect("calls");
        assert_eq!(got.calls.len(), want_calls.len());
        for (g, w) in got.calls.iter().zip(want_calls) {
            calls += 1;
            let w_out = w["output"].as_str().unwrap_or_default();
            if g.output == w_out {
                same += 1;
            } else {
                differences.push(format!(
                    "{} {}: got {:?}, reference {:?}",
                    g.call_id, g.tool, g.output, w_out
                ));
            }
        }
        assert_eq!(
            got.replayed_r_actions,
            want["replayed_r_actions"].as_f64().unwrap_or(-1.0),
            "task {}",
            got.task_id
        );
    }
    eprintln!("tau edge cases: {same}/{calls} outputs identical");
    assert!(calls > 300, "{calls} calls");
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

#[test]
fn the_data_hash_is_the_references() {
    // Measured with τ-bench's `consistent_hash(to_hashable(load_data()))` on the shipped data.
    assert_eq!(
        env().fresh_db().hash(),
        "4587e6b48ad2b2c4f3e1fecb40aabec7bb2286513273b8f8cec3f5865222f290"
    );
    let v = json!({"b": [1, 2.0, {"z": null, "a": true}], "a": "it's", "c": [], "d": {},
                   "e": [1], "f": "é\u{a0}\n", "g": 1e-5, "h": -0.0});
    // Python: str(to_hashable(v)) and its SHA-256.
    assert_eq!(
        pyfmt::hashable_text(&v),
        r#"(('a', "it's"), ('b', (1, 2.0, (('a', True), ('z', None)))), ('c', ()), ('d', ()), ('e', (1,)), ('f', 'é\xa0\n'), ('g', 1e-05), ('h', -0.0))"#
    );
    assert_eq!(
        pyfmt::consistent_hash(&v),
        "d8a5c257897a5148bff1bf28f1aea966f5695afb6f110c6b4614509f01f38a02"
    );
}

#[test]
fn numbers_and_text_print_as_python_prints_them() {
    for (x, want) in [
        (1.0, "1.0"),
        (1e-5, "1e-05"),
        (0.0001, "0.0001"),
        (1e16, "1e+16"),
        (1234567890123456.0, "1234567890123456.0"),
        (-0.0, "-0.0"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1.5e300, "1.5e+300"),
        (f64::INFINITY, "inf"),
    ] {
        assert_eq!(pyfmt::float_repr(x), want, "{x:e}");
    }
    assert_eq!(
        pyfmt::json_dumps(&json!({"a": "é😀\u{7f}\"", "b": [1, 2.5], "c": {}, "d": null})),
        r#"{"a": "\u00e9\ud83d\ude00\u007f\"", "b": [1, 2.5], "c": {}, "d": null}"#
    );
    assert_eq!(pyfmt::str_repr("it's"), r#""it's""#);
    assert_eq!(pyfmt::str_repr(r#"it's "x""#), r#"'it\'s "x"'"#);
}

// ---------------------------------------------------------------------------------------------
// (b) the reward

fn task(i: usize) -> Task {
    tasks()[i].clone()
}

/// Steps every ground-truth action of `t` and says every required output.
fn play_ground_truth(t: &Task) -> tau::Episode {
    let mut ep = env().episode(t.clone());
    for a in &t.actions {
        ep.step(&a.name, &Value::Object(a.kwargs.clone()));
    }
    if !t.outputs.is_empty() {
        ep.respond(&format!("Here you are: {}.", t.outputs.join(" and ")));
    }
    ep
}

#[test]
fn every_tasks_ground_truth_earns_reward_1() {
    assert_eq!(tasks().len(), 50);
    for (i, t) in tasks().iter().enumerate() {
        let r = play_ground_truth(t).reward();
        assert!(r.r_actions, "task {i}: {r:?}");
        assert_eq!(r.reward, 1.0, "task {i}: {r:?}");
    }
    // And doing nothing earns 0 on a task that writes.
    let r = env().episode(task(25)).reward();
    assert!(!r.r_actions);
    assert_eq!(r.reward, 0.0);
}

#[test]
fn the_same_booking_in_the_wrong_cabin_gets_r_actions_0() {
    let t = task(25);
    let mut kwargs = t.actions[0].kwargs.clone();
    assert_eq!(kwargs["cabin"], "economy");
    // Business on HAT069 + HAT258 on 2024-05-24: 333 + 417, paid in full so the booking
    // succeeds and only the cabin differs from the ground truth.
    kwargs.insert("cabin".into(), json!("business"));
    kwargs.insert(
        "payment_methods".into(),
        json!([{"payment_id": "credit_card_9074831", "amount": 750}]),
    );
    let mut ep = env().episode(t.clone());
    let out = ep.step("book_reservation", &Value::Object(kwargs)).output;
    assert!(out.starts_with(r#"{"reservation_id": "HATHAT""#), "{out}");
    assert!(out.contains(r#""cabin": "business""#), "{out}");
    let r = ep.reward();
    assert!(!r.r_actions);
    assert_ne!(r.data_hash, r.gt_data_hash);
    assert_eq!(r.reward, 0.0);

    // The ground-truth booking with the amount as a float (290.0): accepted (290.0 == 290),
    // yet a different database for τ-bench's hash.
    let mut kwargs = t.actions[0].kwargs.clone();
    kwargs.insert(
        "payment_methods".into(),
        json!([{"payment_id": "credit_card_9074831", "amount": 290.0}]),
    );
    let mut ep = env().episode(t.clone());
    let out = ep.step("book_reservation", &Value::Object(kwargs)).output;
    assert!(out.contains(r#""amount": 290.0"#), "{out}");
    assert_eq!(ep.reward().reward, 0.0);
}

#[test]
fn a_required_output_the_agent_never_says_gets_r_outputs_0() {
    let t = task(2);
    assert_eq!(t.outputs, vec!["23553".to_string()]);
    let mut ep = env().episode(t.clone());
    for a in &t.actions {
        ep.step(&a.name, &Value::Object(a.kwargs.clone()));
    }
    ep.respond("Your reservations are updated.");
    ep.respond("The total is 23 553 dollars."); // not the output: a space is not a comma
    let r = ep.reward();
    assert!(r.r_actions);
    assert_eq!(r.r_outputs, Some(false));
    assert_eq!(r.outputs, vec![("23553".to_string(), false)]);
    assert_eq!(r.reward, 0.0);

    // Commas in the agent's words are ignored, case too.
    ep.respond("The TOTAL is $23,553.");
    let r = ep.reward();
    assert_eq!(r.r_outputs, Some(true));
    assert_eq!(r.reward, 1.0);
    assert!(tau::output_said("abc", &["xx A,B,C yy"]));
    assert!(
        !tau::output_said("a,b", &["a,b"]),
        "the output's own commas are kept"
    );
}

// ---------------------------------------------------------------------------------------------
// (c) the end of an episode

#[test]
fn transfer_to_human_agents_ends_the_episode() {
    let mut ep = env().episode(task(0));
    let o = ep.step("get_user_details", &json!({"user_id": "mia_li_3668"}));
    assert!(!o.done);
    assert!(!ep.is_done());
    let o = ep.step("think", &json!({"thought": "nothing to do"}));
    assert_eq!(o.output, "");
    assert!(!o.done);
    let o = ep.step(
        "transfer_to_human_agents",
        &json!({"summary": "the customer asks for a human"}),
    );
    assert_eq!(o.output, "Transfer successful");
    assert!(o.done);
    assert!(ep.is_done());
    assert!(tau::ends_episode("transfer_to_human_agents"));
    assert!(!tau::ends_episode("cancel_reservation"));
}

// ---------------------------------------------------------------------------------------------
// (d) refusals worded as the reference words them

fn call(tool: &str, args: Value) -> String {
    env().episode(task(0)).step(tool, &args).output
}

#[test]
fn refusals_are_worded_as_the_reference_words_them() {
    assert_eq!(
        call("get_user_details", json!({"user_id": "nobody_0000"})),
        "Error: user not found"
    );
    // The reference says "user" for a missing reservation here.
    assert_eq!(
        call(
            "get_reservation_details",
            json!({"reservation_id": "ZZZZZZ"})
        ),
        "Error: user not found"
    );
    assert_eq!(
        call("cancel_reservation", json!({"reservation_id": "ZZZZZZ"})),
        "Error: reservation not found"
    );
    assert_eq!(
        call(
            "update_reservation_passengers",
            json!({"reservation_id": "ZZZZZZ", "passengers": []})
        ),
        "Error: reservation not found"
    );
    assert_eq!(
        call(
            "send_certificate",
            json!({"user_id": "nobody_0000", "amount": 100})
        ),
        "Error: user not found"
    );

    // Task 11's booking: 375, paid 128 (gift card) + 247 (card).
    let t = task(11);
    let book = |payments: Value| {
        let mut kwargs = t.actions[0].kwargs.clone();
        kwargs.insert("payment_methods".into(), payments);
        env()
            .episode(t.clone())
            .step("book_reservation", &Value::Object(kwargs))
            .output
    };
    assert_eq!(
        book(json!([{"payment_id": "gift_card_8516878", "amount": 200},
                    {"payment_id": "credit_card_3563913", "amount": 175}])),
        "Error: not enough balance in payment method gift_card_8516878"
    );
    assert_eq!(
        book(json!([{"payment_id": "gift_card_8516878", "amount": 128},
                    {"payment_id": "credit_card_3563913", "amount": 246}])),
        "Error: payment amount does not add up, total price is 375, but paid 374"
    );
    assert_eq!(
        book(json!([{"payment_id": "credit_card_0000000", "amount": 375}])),
        "Error: payment method credit_card_0000000 not found"
    );
    assert!(book(t.actions[0].kwargs["payment_methods"].clone()).starts_with('{'));

    // A reservation of mei_hernandez_8984 (economy, 4 flights), changed with her certificate.
    assert_eq!(
        call(
            "update_reservation_baggages",
            json!({"reservation_id": "R9QDGB", "total_baggages": 2, "nonfree_baggages": 1,
                   "payment_id": "certificate_7502997"})
        ),
        "Error: certificate cannot be used to update reservation"
    );
    assert_eq!(
        call(
            "update_reservation_flights",
            json!({"reservation_id": "R9QDGB", "cabin": "economy",
                   "flights": [{"flight_number": "HAT999", "date": "2024-05-28"}],
                   "payment_id": "certificate_7502997"})
        ),
        "Error: flight HAT999 not found"
    );
}

#[test]
fn python_exceptions_are_answered_with_pythons_words() {
    assert_eq!(
        call("get_user_details", json!({})),
        "Error: GetUserDetails.invoke() missing 1 required positional argument: 'user_id'"
    );
    assert_eq!(
        call(
            "get_user_details",
            json!({"user_id": "mia_li_3668", "verbose": true})
        ),
        "Error: GetUserDetails.invoke() got an unexpected keyword argument 'verbose'"
    );
    assert_eq!(
        call(
            "update_reservation_flights",
            json!({"cabin": "economy", "payment_id": "x"})
        ),
        "Error: UpdateReservationFlights.invoke() missing 2 required positional arguments: \
         'reservation_id' and 'flights'"
    );
    assert_eq!(
        call("get_user_details", json!({"user_id": ["mia_li_3668"]})),
        "Error: unhashable type: 'list'"
    );
    let mut kwargs = task(0).actions[0].kwargs.clone();
    kwargs.insert("flights".into(), json!([{"flight_number": "HAT136"}]));
    assert_eq!(
        call("book_reservation", Value::Object(kwargs)),
        "Error: 'date'"
    );
    assert_eq!(
        call("fly_me_to_the_moon", json!({})),
        "Unknown action fly_me_to_the_moon"
    );
    for (expression, want) in [
        ("(350 - 122) * 2 + (499 - 127) * 2", "1200.0"),
        ("498 * 1.5", "747.0"),
        ("100 / 7", "14.29"),
        ("2.675", "2.67"),
        ("1/0", "Error: division by zero"),
        ("2 +", "Error: invalid syntax (<string>, line 1)"),
        ("(1 + 2", "Error: '(' was never closed (<string>, line 1)"),
        ("2 * $3", "Error: invalid characters in expression"),
    ] {
        assert_eq!(call("calculate", json!({ "expression": expression })), want);
    }
}

#[test]
fn send_certificate_prints_the_amount_as_python_does() {
    let mut ep = env().episode(task(0));
    let out = ep
        .step(
            "send_certificate",
            &json!({"user_id": "mia_li_3668", "amount": 1e-5}),
        )
        .output;
    assert_eq!(
        out,
        "Certificate certificate_3221322 added to user mia_li_3668 with amount 1e-05."
    );
    let user = ep.step("get_user_details", &json!({"user_id": "mia_li_3668"}));
    assert!(
        user.output.contains(
            r#""certificate_3221322": {"source": "certificate", "amount": 1e-05, "id": "certificate_3221322"}"#
        ),
        "{}",
        user.output
    );
}

// ---------------------------------------------------------------------------------------------
// Loading errors name the file and the field

#[test]
fn a_broken_data_file_is_named_with_its_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let env_dir = dir.path().join("env");
    std::fs::create_dir(&env_dir).expect("mkdir");
    for f in ["flights.json", "reservations.json"] {
        std::fs::copy(data().join("env").join(f), env_dir.join(f)).expect("copy");
    }
    let mut users: Value = serde_json::from_str(
        &std::fs::read_to_string(data().join("env/users.json")).expect("users"),
    )
    .expect("users JSON");
    users["mia_li_3668"]
        .as_object_mut()
        .expect("a user")
        .remove("payment_methods");
    std::fs::write(env_dir.join("users.json"), users.to_string()).expect("write");
    let e = Env::load(dir.path()).expect_err("a user without payment methods");
    assert_eq!(
        e.to_string(),
        format!(
            "{}: users.mia_li_3668: missing field `payment_methods`",
            env_dir.join("users.json").display()
        )
    );
    std::fs::remove_file(env_dir.join("flights.json")).expect("rm");
    let e = Env::load(dir.path()).expect_err("no flights file");
    assert!(e.to_string().contains("flights.json: cannot read"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// (e) the command line

#[test]
fn tau_replay_writes_one_line_per_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("replay.jsonl");
    let fixtures = repo().join("tests/fixtures/tau-bench");
    let assert = assert_cmd::Command::cargo_bin("compaction-eval")
        .expect("binary")
        .args(["tau", "replay"])
        .arg(fixtures.join("edge-cases.runs.json"))
        .arg("--out")
        .arg(&out)
        .arg("--data")
        .arg(data())
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    assert!(
        stderr.contains("12 runs, 330 calls replayed; r_actions=1 in 3 runs"),
        "{stderr}"
    );
    let written = std::fs::read_to_string(&out).expect("output written");
    let lines: Vec<Value> = written
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let reference: Vec<Value> =
        std::fs::read_to_string(fixtures.join("edge-cases.reference.jsonl"))
            .expect("reference")
            .lines()
            .map(|l| serde_json::from_str(l).expect("JSON line"))
            .collect();
    assert_eq!(lines, reference);
    let keys: Vec<&str> = lines[0]
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["task_id", "trial", "replayed_r_actions", "calls"]);
    // Nothing but the output is left in the folder (the temporary file was renamed).
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["replay.jsonl"]);

    // An unreadable runs file is refused, naming it.
    let missing = dir.path().join("missing.json");
    let assert = assert_cmd::Command::cargo_bin("compaction-eval")
        .expect("binary")
        .args(["tau", "replay"])
        .arg(&missing)
        .arg("--out")
        .arg(dir.path().join("x.jsonl"))
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    assert!(stderr.contains("missing.json: cannot read"), "{stderr}");
}
