//! A plug-in compactor sees what the source agent saw and no more: its input names neither the
//! scenario nor the experimental condition, it cannot read the scenario files (an "answer-key"
//! plug-in finds nothing), and it cannot write into run folders or the scenario folder.
//!
//! Owns: these properties, checked with small plug-ins written into temp strategy folders. Must
//! not: depend on the shipped examples (`tests/plugins.rs` runs them) or on other worktrees; the
//! file-system checks are skipped, with the reason printed, where the platform gives plug-ins no
//! private view (no namespaces).

mod common;
use common::cli;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use compaction_eval::plugin::{self, protocol::StateDocument};
use compaction_eval::runner::{self, RunConfig, Silent};
use compaction_eval::scenario;
use compaction_eval::state::RestorePoint;
use compaction_eval::strategy::Registry;

fn write_strategy(dir: &Path, name: &str, body: &str) {
    std::fs::write(dir.join(format!("{name}.toml")), body).expect("write strategy");
}

/// A TOML basic string (JSON string escapes are valid TOML ones).
fn toml_str(s: &str) -> String {
    serde_json::to_string(s).expect("string")
}

/// Every string value of a JSON document.
fn strings<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a str>) {
    match v {
        serde_json::Value::String(s) => out.push(s),
        serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// Whether the platform hides folders from plug-ins; prints why not.
fn private_view(what: &str) -> bool {
    let p = plugin::protections();
    if p.hide && p.read_only {
        true
    } else {
        eprintln!(
            "skipped {what}: this platform gives plug-ins no private view ({}; protections: {:?})",
            plugin::isolation().describe(),
            p.words()
        );
        false
    }
}

#[test]
fn the_input_names_neither_the_scenario_nor_the_condition() {
    let mut documents = 0;
    for s in scenario::load_dir(Path::new("scenarios")).expect("scenarios") {
        let s = Arc::new(s);
        let points: Vec<String> = s.interrupts.iter().map(|i| i.point.clone()).collect();
        for point in &points {
            let at = RestorePoint::build(s.clone(), point).expect("restore point");
            let v = serde_json::to_value(StateDocument::from_state(&at.state, None)).expect("json");
            let mut top: Vec<&str> = v
                .as_object()
                .expect("object")
                .keys()
                .map(|k| k.as_str())
                .collect();
            top.sort();
            assert_eq!(
                top,
                [
                    "after",
                    "approvals",
                    "events",
                    "format",
                    "resources",
                    "task",
                    "tools"
                ],
                "{} {point}",
                s.id
            );
            let mut task: Vec<&str> = v["task"]
                .as_object()
                .expect("task")
                .keys()
                .map(|k| k.as_str())
                .collect();
            task.sort();
            assert_eq!(task, ["governed", "objective"], "{} {point}", s.id);
            assert_eq!(v["format"], "compaction-eval/state/3");
            assert_eq!(v["task"]["objective"], s.objective.as_str());
            assert!(!v["events"].as_array().expect("events").is_empty());
            assert!(!v["tools"].as_array().expect("tools").is_empty());
            // No value anywhere is the scenario's id, title or domain or an interrupt point's
            // name (the condition); event ids and the agent's own texts are what it saw.
            let mut values = Vec::new();
            strings(&v, &mut values);
            for bad in [&s.id, &s.title, &s.domain].into_iter().chain(&points) {
                assert!(
                    !values.contains(&bad.as_str()),
                    "{} {point}: the input holds `{bad}`",
                    s.id
                );
            }
            documents += 1;
        }
    }
    assert!(documents >= 8, "{documents}");

    // `plugin-input` prints that document.
    let out = cli()
        .args(["plugin-input", "--scenario", "support-ticket-timeout"])
        .args(["--interrupt", "uncertain_side_effect"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let doc: serde_json::Value = serde_json::from_slice(&out).expect("json");
    for key in ["scenario", "interrupt", "id", "title", "domain", "point"] {
        assert!(doc.get(key).is_none(), "plugin-input prints `{key}`");
    }
    let text = String::from_utf8_lossy(&out);
    assert!(!text.contains("uncertain_side_effect") && !text.contains("support-ticket-timeout"));
    assert!(doc["task"]["objective"].is_string() && doc["after"] == "event-0022");
}

/// The folders a run of `cfg` hides from plug-ins, as `runner::plan` passes them.
fn registry_for(strategies: &Path, cfg: &RunConfig) -> Registry {
    Registry::load(strategies)
        .expect("registry")
        .with_hidden(runner::plugin_hidden(cfg))
}

#[test]
fn a_run_hides_its_scenario_folder_run_folders_and_cache() {
    let cfg = RunConfig {
        scenario_dir: "scen".into(),
        out: "reports/x".into(),
        cache_dir: Some("cache".into()),
        ..RunConfig::default()
    };
    let hidden = runner::plugin_hidden(&cfg);
    let abs = std::path::absolute("reports").expect("absolute");
    for want in [
        PathBuf::from("scen"),
        PathBuf::from("reports/x"),
        abs,
        PathBuf::from("cache"),
    ] {
        assert!(hidden.contains(&want), "{want:?} in {hidden:?}");
    }
}

#[test]
fn an_answer_key_plugin_finds_no_scenario_file() {
    if !private_view("the answer-key test") {
        return;
    }
    let scenarios = std::fs::canonicalize("scenarios").expect("scenarios");
    let yaml = scenarios.join("support-ticket-timeout.yaml");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("key")).expect("mkdir");
    // Looks everywhere a plug-in could: up from its working directory, at the path it guessed
    // (given on its command line), at paths named in its input or environment.
    std::fs::write(
        dir.path().join("key/answer.sh"),
        r#"found=
look() { for f in "$1"/*.yaml "$1"/scenarios/*.yaml; do [ -r "$f" ] && found="$found $f"; done; }
d=$PWD
while :; do look "$d"; [ "$d" = / ] && break; d=${d%/*}; [ -n "$d" ] || d=/; done
look "$1"; [ -r "$2" ] && found="$found $2"
for p in $(cat | grep -o '"/[^"]*"' | tr -d '"') $(env | cut -d= -f2-); do
  [ -d "$p" ] && look "$p"; [ -f "$p" ] && found="$found $p"
done
echo "FOUND:[$found]"
for f in $found; do cat "$f"; done
"#,
    )
    .expect("write plug-in");
    write_strategy(
        dir.path(),
        "answer",
        &format!(
            "id = \"exec:answer\"\nkind = \"exec\"\nprogram = \"sh\"\nargs = [\"key/answer.sh\", {}, {}]\nenv = [\"HOME\", \"PWD\"]\n",
            toml_str(&scenarios.to_string_lossy()),
            toml_str(&yaml.to_string_lossy()),
        ),
    );
    let cfg = RunConfig {
        scenario_dir: scenarios.clone().into(),
        out: dir.path().join("reports/run"),
        ..RunConfig::default()
    };
    let s = Arc::new(scenario::load_file(&yaml).expect("loads"));
    let at = RestorePoint::build(s, "uncertain_side_effect").expect("state");
    let h = registry_for(dir.path(), &cfg)
        .handoff("exec:answer", &at)
        .expect("handoff");
    assert!(h.text.contains("FOUND:[]"), "{}", h.text);
    for answer in ["no-direct-email", "continuation:", "interrupts:"] {
        assert!(!h.text.contains(answer), "`{answer}` reached the handoff");
    }
}

#[test]
fn a_writer_plugin_changes_no_run_folder_and_no_scenario_file() {
    if !private_view("the writer test") {
        return;
    }
    let root = tempfile::tempdir().expect("tempdir");
    let (scen, strat, reports) = (
        root.path().join("scenarios"),
        root.path().join("strategies"),
        root.path().join("reports"),
    );
    for d in [&scen, &strat, &reports.join("old")] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    let yaml = scen.join("support-ticket-timeout.yaml");
    std::fs::copy("scenarios/support-ticket-timeout.yaml", &yaml).expect("copy");
    let old = reports.join("old/results.jsonl");
    std::fs::write(&old, "{\"old\": true}\n").expect("old run");
    let out = reports.join("new");
    let script = r#"printf '{"forged": true}\n' >> "$1"; printf 'pwned\n' >> "$2"; printf 'x' > "${2%/*}/forged.yaml"; printf '{"forged": true}\n' >> "$3"; echo tried"#;
    write_strategy(
        &strat,
        "writer",
        &format!(
            "id = \"exec:writer\"\nkind = \"exec\"\nprogram = \"sh\"\nargs = [\"-c\", {}, \"writer\", {}, {}, {}]\n",
            toml_str(script),
            toml_str(&old.to_string_lossy()),
            toml_str(&yaml.to_string_lossy()),
            toml_str(&out.join("results.jsonl").to_string_lossy()),
        ),
    );
    let before = (
        std::fs::read(&old).expect("old"),
        std::fs::read(&yaml).expect("yaml"),
    );
    let cfg = RunConfig {
        scenario_dir: scen.clone().into(),
        strategy_dir: strat.clone().into(),
        scenarios: Some(vec!["support-ticket-timeout".into()]),
        interrupts: Some(vec!["uncertain_side_effect".into()]),
        strategies: vec!["exec:writer".into()],
        models: vec!["sim:careful".into()],
        reps: 1,
        out: out.clone(),
        scales: vec![scenario::volume::Scale::Base],
        attention: 0.0,
        ..RunConfig::default()
    };
    let plan = runner::plan(&cfg).expect("plan");
    runner::execute(&cfg, &plan, &mut Silent).expect("run");
    assert_eq!(
        std::fs::read(&old).expect("old"),
        before.0,
        "old run changed"
    );
    assert_eq!(
        std::fs::read(&yaml).expect("yaml"),
        before.1,
        "scenario changed"
    );
    assert!(!scen.join("forged.yaml").exists());
    let recs = runner::read_records(&out.join("results.jsonl")).expect("records");
    assert_eq!(recs.len(), 1, "only the run's own record");
    let text = std::fs::read_to_string(out.join("results.jsonl")).expect("results");
    assert!(!text.contains("forged"));
}

#[test]
fn a_plugin_sees_its_own_folder_read_only_and_writes_only_its_scratch() {
    if !private_view("the scratch test") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("mine")).expect("mkdir");
    std::fs::write(dir.path().join("mine/helper.txt"), "helper").expect("helper");
    std::fs::write(dir.path().join("other-secret.txt"), "secret").expect("secret");
    std::fs::write(
        dir.path().join("mine/peek.sh"),
        r#"echo "cwd=$PWD tmp=$TMPDIR"
ls -A . | tr '\n' ' '; echo
cat mine/helper.txt; echo
cat other-secret.txt 2>/dev/null || echo no-secret
echo x > mine/new 2>/dev/null || echo own-read-only
echo x > scratch && echo scratch-writable
echo x > "$TMPDIR/t" && echo tmpdir-writable
echo x > /etc/compaction-eval-probe 2>/dev/null || echo root-read-only
"#,
    )
    .expect("plug-in");
    write_strategy(
        dir.path(),
        "peek",
        "id = \"exec:peek\"\nkind = \"exec\"\nprogram = \"sh\"\nargs = [\"mine/peek.sh\"]\n",
    );
    let s = Arc::new(
        scenario::load_file(Path::new("scenarios/support-ticket-timeout.yaml")).expect("loads"),
    );
    let at = RestorePoint::build(s, "uncertain_side_effect").expect("state");
    let h = Registry::load(dir.path())
        .expect("registry")
        .handoff("exec:peek", &at)
        .expect("handoff");
    for want in [
        "mine \n",
        "helper",
        "no-secret",
        "own-read-only",
        "scratch-writable",
        "tmpdir-writable",
        "root-read-only",
    ] {
        assert!(h.text.contains(want), "`{want}` in {}", h.text);
    }
    assert!(!dir.path().join("scratch").exists() && !dir.path().join("mine/new").exists());
    assert!(!Path::new("/etc/compaction-eval-probe").exists());
}

/// Names a compactor must never receive: the ledger's truth and the scenario's annotations.
const UNSEEN: &[&str] = &[
    "ledger",
    "reconciled_by",
    "timeout_after_commit",
    "timeout_before_commit",
    "fact",
    "facts",
    "detector",
    "detectors",
    "when_lost",
    "continuation",
    "success",
    "forbidden",
    "collection",
    "resource_prefix",
    "passes",
    "pass_output",
    "fail_output",
    "committed",
];

/// Every property name and every `enum`/`const` value anywhere in a JSON Schema.
fn schema_names(v: &serde_json::Value, path: &str, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                if k == "properties"
                    && let Some(props) = x.as_object()
                {
                    for name in props.keys() {
                        out.push((format!("{path}/properties"), name.clone()));
                    }
                }
                if k == "enum" || k == "const" {
                    for e in x.as_array().cloned().unwrap_or_else(|| vec![x.clone()]) {
                        if let Some(s) = e.as_str() {
                            out.push((format!("{path}/{k}"), s.to_string()));
                        }
                    }
                }
                schema_names(x, &format!("{path}/{k}"), out);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                schema_names(x, &format!("{path}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// Every object key outside call arguments, and every `outcome` value, of a state document.
fn document_names(v: &serde_json::Value, path: &str, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                out.push((path.to_string(), k.clone()));
                if k == "outcome" {
                    out.push((format!("{path}/outcome"), x.as_str().unwrap_or("").into()));
                }
                // Arguments are what the agent itself sent; their keys are the scenario's.
                if k != "args" && k != "parameters" && k != "governed" {
                    document_names(x, &format!("{path}/{k}"), out);
                }
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                document_names(x, &format!("{path}/{i}"), out);
            }
        }
        serde_json::Value::String(s)
            if s == "timeout_after_commit" || s == "timeout_before_commit" =>
        {
            out.push((path.to_string(), s.clone()));
        }
        _ => {}
    }
}

#[test]
fn the_state_a_plugin_receives_holds_only_what_the_agent_saw() {
    let schema: serde_json::Value = serde_json::from_str(
        &compaction_eval::plugin::protocol::schemas()
            .into_iter()
            .find(|(n, _)| *n == "state.schema.json")
            .expect("state schema")
            .1,
    )
    .expect("schema parses");
    let mut names = Vec::new();
    schema_names(&schema, "#", &mut names);
    let bad: Vec<_> = names
        .iter()
        .filter(|(_, n)| UNSEEN.contains(&n.as_str()))
        .collect();
    assert!(
        bad.is_empty(),
        "the state schema names unseen fields: {bad:?}"
    );
    assert!(
        names
            .iter()
            .any(|(p, n)| n == "timed_out" && p.ends_with("enum")),
        "outcome is an enum with `timed_out`"
    );

    let scenarios = scenario::load_dir(Path::new("scenarios")).expect("scenarios");
    let mut documents = 0;
    for s in scenarios {
        let s = Arc::new(s);
        for it in &s.interrupts {
            let at = RestorePoint::build(s.clone(), &it.point).expect("restore point");
            let doc = compaction_eval::plugin::protocol::StateDocument::from_state(&at.state, None);
            let v = serde_json::to_value(&doc).expect("document serialises");
            let mut names = Vec::new();
            document_names(&v, "#", &mut names);
            let bad: Vec<_> = names
                .iter()
                .filter(|(_, n)| UNSEEN.contains(&n.as_str()))
                .collect();
            assert!(
                bad.is_empty(),
                "{} {}: unseen fields {bad:?}",
                s.id,
                it.point
            );
            for (p, n) in names.iter().filter(|(p, _)| p.ends_with("/outcome")) {
                assert!(
                    ["ok", "error", "timed_out"].contains(&n.as_str()),
                    "{} {}: outcome {n} at {p}",
                    s.id,
                    it.point
                );
            }
            documents += 1;
        }
    }
    assert!(documents >= 8);
}
