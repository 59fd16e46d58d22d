//! Compaction chains (`--cycles`): a chain of one is today's handoff; each next compaction sees
//! only the previous handoff and the events since, so what one drops stays dropped, and what C
//! keeps (provenance, omissions, uncertain operations, hypotheses, quoted outside text) survives
//! every rebuild.

mod common;
use common::cli;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use compaction_eval::checkpoint::{Checkpoint, OperationStatus, StatementKind};
use compaction_eval::handoff::Handoff;
use compaction_eval::scenario::{self, Scenario};
use compaction_eval::state::RestorePoint;
use compaction_eval::strategy::{BUILTIN_IDS, Registry, chain};
use predicates::prelude::*;

fn shipped() -> Vec<Arc<Scenario>> {
    scenario::load_dir(Path::new("scenarios"))
        .expect("the shipped scenarios load")
        .into_iter()
        .map(Arc::new)
        .collect()
}

fn one(id: &str) -> Arc<Scenario> {
    Arc::new(
        scenario::load_file(&Path::new("scenarios").join(format!("{id}.yaml"))).expect("loads"),
    )
}

/// Each point of `s`, with the restore points of the longest chain ending there.
fn chains_of(s: &Arc<Scenario>, cycles: u32) -> Vec<Vec<Arc<RestorePoint>>> {
    s.interrupts
        .iter()
        .map(|p| {
            let at = Arc::new(RestorePoint::build(s.clone(), &p.point).expect("state"));
            chain::restore_points(&at, cycles).expect("chain points")
        })
        .collect()
}

fn build(reg: &Registry, id: &str, points: &[Arc<RestorePoint>]) -> Vec<Handoff> {
    build_for(
        reg,
        id,
        points,
        compaction_eval::strategy::usable_context(32_768),
    )
}

fn build_for(reg: &Registry, id: &str, points: &[Arc<RestorePoint>], window: u64) -> Vec<Handoff> {
    let st = reg.get_for(id, None, window).expect("strategy");
    chain::build_blocking(reg, st.as_ref(), points).expect("the chain builds")
}

fn doc(h: &Handoff) -> &Checkpoint {
    h.checkpoint.as_ref().expect("a checkpoint")
}

#[test]
fn a_chain_of_one_is_today_s_handoff_byte_for_byte() {
    let reg = Registry::builtin();
    for s in shipped() {
        for p in &s.interrupts {
            let at = Arc::new(RestorePoint::build(s.clone(), &p.point).expect("state"));
            for id in BUILTIN_IDS {
                let today = reg.handoff(id, &at).expect("builds");
                let chained = reg.chain(id, &at, 1).expect("chains");
                assert_eq!(chained.len(), 1);
                assert_eq!(
                    serde_json::to_string(&chained[0]).unwrap(),
                    serde_json::to_string(&today).unwrap(),
                    "{} {} {id}",
                    s.id,
                    p.point
                );
            }
        }
    }
}

#[test]
fn chain_ids_and_points_are_what_the_docs_say() {
    assert_eq!(chain::parse("C"), Ok(("C", 1)));
    assert_eq!(chain::parse("gov:C×3"), Ok(("gov:C", 3)));
    assert!(chain::parse("C×1").unwrap_err().contains("from 2 to"));
    assert!(chain::parse("C×x").is_err());
    assert_eq!(
        chain::expand(&["C".into(), "gov:B".into()], &[1, 3]).unwrap(),
        ["C", "C×3", "gov:B", "gov:B×3"]
    );
    assert!(
        chain::expand(&["C".into()], &[0])
            .unwrap_err()
            .contains("--cycles 0")
    );
    // support-ticket-timeout's points, by cut: the chain ends at the asked point and takes the
    // points before it, at most cycles − 1 of them.
    let s = one("support-ticket-timeout");
    let last = s.interrupts.last().unwrap().point.clone();
    let two = chain::points(&s, &last, 2).unwrap();
    let all = chain::points(&s, &last, 16).unwrap();
    assert_eq!(two.len(), 2);
    assert_eq!(two.last(), Some(&last));
    assert_eq!(&all[all.len() - 2..], &two[..]);
    let cut = |p: &str| s.event_index(&s.interrupt(p).unwrap().after).unwrap();
    assert!(all.windows(2).all(|w| cut(&w[0]) < cut(&w[1])), "{all:?}");
}

/// Identifier-like words of a text (a letter and a digit, five characters or more): the values a
/// handoff carries or loses.
fn salient(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
        .filter(|w| {
            w.len() >= 5
                && w.chars().any(|c| c.is_ascii_digit())
                && w.chars().any(|c| c.is_alphabetic())
        })
        .map(str::to_string)
        .collect()
}

/// What the events of `at` after index `from` show, with the task and the approvals (which a
/// compaction reads from the approval system, not the history): a value there may come back.
fn seen_since(at: &RestorePoint, from: usize) -> String {
    let mut t: Vec<String> = at.state.events[from + 1..]
        .iter()
        .map(|e| {
            let call = e
                .call
                .as_ref()
                .map(|c| {
                    format!(
                        "{} {}",
                        serde_json::to_string(&c.args).unwrap(),
                        c.result_text
                    )
                })
                .unwrap_or_default();
            format!("{} {call}", e.text)
        })
        .collect();
    t.push(at.state.task.objective.clone());
    t.push(
        serde_json::to_string(
            &at.state
                .task
                .tools
                .iter()
                .map(|x| (&x.name, &x.description, &x.parameters))
                .collect::<Vec<_>>(),
        )
        .unwrap(),
    );
    for a in &at.state.approvals {
        t.push(format!("{} {}", a.id, a.action));
    }
    t.join("\n")
}

#[test]
fn what_a_compaction_drops_is_absent_from_the_next_for_every_built_in() {
    // A, mask and B+A keep what fits the window: a small one makes them drop.
    let reg = Registry::builtin();
    let mut checked: std::collections::BTreeMap<&str, usize> = Default::default();
    for s in shipped() {
        for points in chains_of(&s, 2) {
            if points.len() < 2 {
                continue;
            }
            let (first, second) = (&points[0], &points[1]);
            let before = salient(
                &first
                    .state
                    .events
                    .iter()
                    .map(|e| e.text.as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
            let again = salient(&seen_since(second, first.state.cut));
            for id in BUILTIN_IDS {
                let hs = build_for(&reg, id, &points, 400);
                let (kept1, kept2) = (salient(&hs[0].text), salient(&hs[1].text));
                for v in before.difference(&kept1) {
                    if again.contains(v) {
                        continue;
                    }
                    *checked.entry(id).or_default() += 1;
                    assert!(
                        !kept2.contains(v),
                        "{id} {} {}: `{v}` was dropped at the first compaction and is back at the second",
                        s.id,
                        second.interrupt.point
                    );
                }
            }
        }
    }
    for id in BUILTIN_IDS {
        assert!(
            checked.get(id).copied().unwrap_or(0) > 0,
            "{id} dropped nothing anywhere: the check is vacuous ({checked:?})"
        );
    }
}

#[test]
fn c_keeps_provenance_omissions_and_uncertain_operations_through_two_rebuilds() {
    let reg = Registry::builtin();
    let (mut statements, mut omissions, mut uncertain) = (0, 0, 0);
    for s in shipped() {
        for points in chains_of(&s, 3) {
            if points.len() < 3 {
                continue;
            }
            for id in ["C", "D"] {
                let hs = build(&reg, id, &points);
                let (first, last) = (doc(&hs[0]), doc(&hs[2]));
                for st in &first.statements {
                    // An approval is restated as the approval system shows it now.
                    if st.origin == "approver" {
                        continue;
                    }
                    assert!(
                        last.statements.contains(st),
                        "{id} {}: statement {st:?} lost or changed across two rebuilds",
                        s.id
                    );
                    statements += 1;
                }
                for o in &first.derivation.omissions {
                    assert!(
                        last.derivation.omissions.contains(o),
                        "{id} {}: {o:?}",
                        s.id
                    );
                    omissions += 1;
                }
                for op in first
                    .operations
                    .iter()
                    .filter(|o| o.status == OperationStatus::Unknown)
                {
                    let now = last
                        .operations
                        .iter()
                        .find(|o| o.origin_ref == op.origin_ref)
                        .unwrap_or_else(|| panic!("{id} {}: {} lost", s.id, op.origin_ref));
                    if now.status == OperationStatus::Unknown {
                        uncertain += 1;
                        assert_eq!(now, op);
                        let key = op.idempotency_key.as_deref().unwrap_or(&op.tool);
                        assert!(
                            last.stop_conditions.iter().any(|c| c.contains(key)),
                            "{id} {}: the stop condition of {key} was lost",
                            s.id
                        );
                    } else {
                        // Settled only by a lookup the source run made since.
                        let key = op.idempotency_key.as_deref().expect("a key");
                        let looked = points[2].state.events[points[0].state.cut + 1..]
                            .iter()
                            .any(|e| e.call.as_ref().is_some_and(|c| c.result_text.contains(key)));
                        assert!(looked, "{id} {}: {key} settled without a lookup", s.id);
                    }
                }
                assert!(
                    last.derivation
                        .transformations
                        .iter()
                        .filter(|t| t.kind == "rebuilt_from_checkpoint")
                        .count()
                        == 2
                );
            }
        }
    }
    assert!(
        statements > 100 && omissions > 0 && uncertain > 0,
        "{statements} {omissions} {uncertain}"
    );
}

#[test]
fn a_hypothesis_stays_a_hypothesis_and_outside_text_stays_quoted_across_three() {
    let reg = Registry::builtin();
    let (mut hypotheses, mut external) = (0, 0);
    for s in shipped() {
        for points in chains_of(&s, 4) {
            if points.len() < 4 {
                continue;
            }
            for id in ["C", "D"] {
                let hs = build(&reg, id, &points);
                let first = doc(&hs[0]);
                for (k, h) in hs.iter().enumerate() {
                    // No step of the chain upgrades a provenance or breaks a seed-003 rule that
                    // the same compaction made once (from the whole history, restored against
                    // the same world) does not.
                    let judged = chain::judged_at(&points[k], k, points.len());
                    let at = &*judged;
                    let once = reg.get(id).unwrap().build_blocking(&at.state).unwrap();
                    let single = reg.restore(once, &at.world).expect("single");
                    let up = |x: &Handoff| compaction_eval::upgrades::provenance_upgrades(at, x);
                    let (chained, alone) = (up(h), up(&single));
                    assert!(
                        chained.iter().all(|u| alone.contains(u)),
                        "{id} {} step {k}: {chained:?} against {alone:?}",
                        s.id
                    );
                    let rules = |x: &Handoff| compaction_eval::audit::rule_check(x, x, at).len();
                    assert!(
                        rules(h) <= rules(&single),
                        "{id} {} step {k}: {:?}",
                        s.id,
                        compaction_eval::audit::rule_check(h, h, at)
                    );
                }
                let last = doc(&hs[3]);
                for st in first
                    .statements
                    .iter()
                    .filter(|x| x.kind == StatementKind::Hypothesis)
                {
                    hypotheses += 1;
                    let now = last
                        .statements
                        .iter()
                        .find(|x| x.origin_ref == st.origin_ref && x.text == st.text)
                        .expect("kept");
                    assert_eq!(now.kind, StatementKind::Hypothesis);
                    assert_eq!(now.verification, st.verification);
                    assert!(hs[3].text.contains(&st.text));
                }
                for r in first.resources.iter().filter(|r| r.external) {
                    external += 1;
                    let now = last
                        .resources
                        .iter()
                        .find(|x| x.key == r.key)
                        .expect("kept");
                    assert!(now.external && now.source == r.source);
                    // Quoted and attributed in the text, never among the steps.
                    if let Some(ex) = &now.excerpt {
                        let at = hs[3].text.find(ex.as_str()).expect("the excerpt is shown");
                        let open = hs[3].text[..at]
                            .rfind("<external")
                            .expect("inside <external>");
                        assert!(hs[3].text[open..at].find("</external").is_none());
                    }
                    for step in last.next_steps.iter().chain(&last.stop_conditions) {
                        if let Some(ex) = &r.excerpt {
                            assert!(!step.contains(ex.as_str()), "{id} {}: {step}", s.id);
                        }
                    }
                }
            }
        }
    }
    assert!(hypotheses > 0 && external > 0, "{hypotheses} {external}");
}

fn strategies_with(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("strategies");
    std::fs::create_dir_all(dir.join("examples")).expect("mkdir");
    std::fs::copy(
        "strategies/examples/checkpoint.py",
        dir.join("examples/checkpoint.py"),
    )
    .expect("copy");
    for (name, text) in files {
        std::fs::write(dir.join(name), text).expect("write");
    }
    (tmp, dir)
}

const OLD: &str = "id = \"exec:old\"\nkind = \"exec\"\nprogram = \"python3\"\nargs = [\"examples/checkpoint.py\"]\nreads = \"compaction-eval/state/3\"\n";
const NEW: &str = "id = \"exec:new\"\nkind = \"exec\"\nprogram = \"python3\"\nargs = [\"examples/checkpoint.py\"]\nreads = \"compaction-eval/state/4\"\n";

#[test]
fn a_plugin_gets_its_previous_handoff_and_an_old_one_runs_single_shot_only() {
    let (_keep, dir) = strategies_with(&[("old.toml", OLD), ("new.toml", NEW)]);
    let reg = Registry::load(&dir).expect("loads");
    let s = one("support-ticket-timeout");
    let points = chains_of(&s, 3).pop().expect("a point");
    assert_eq!(points.len(), 3);
    // The state document of the second compaction: the previous handoff and the events since.
    let st = reg.get("exec:new").expect("strategy");
    let hs = chain::build_blocking(&reg, st.as_ref(), &points).expect("the chain builds");
    assert_eq!(hs.len(), 3);
    let (first, last) = (doc(&hs[0]), doc(&hs[2]));
    // The example carries its previous checkpoint forward: what it said first, it still says.
    for x in &first.statements {
        assert!(last.statements.contains(x), "{x:?}");
    }
    assert_eq!(
        last.envelope.source_event_range.0,
        first.envelope.source_event_range.0
    );
    let since = points[1].state.since(points[0].state.cut);
    let prev = compaction_eval::plugin::protocol::PreviousHandoff {
        after: points[0].state.after.clone(),
        text: hs[0].text.clone(),
        checkpoint: hs[0].checkpoint.clone(),
    };
    let input = compaction_eval::plugin::protocol::state_input_after(
        Some(prev),
        &since,
        None,
        compaction_eval::plugin::protocol::InputFormat::State4,
    )
    .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&input).unwrap();
    assert_eq!(v["format"], "compaction-eval/state/4");
    assert_eq!(
        v["previous_handoff"]["after"],
        points[0].state.after.as_str()
    );
    assert_eq!(v["events"].as_array().unwrap().len(), since.events.len());
    assert!(since.events.len() < points[1].state.events.len());
    // The document is what the published types (and so the shipped schema) describe.
    let back: compaction_eval::plugin::protocol::StateDocument =
        serde_json::from_value(v.clone()).expect("a state/4 document");
    assert!(
        back.previous_handoff
            .is_some_and(|p| p.checkpoint.is_some())
    );

    // Format 3 runs at one compaction as before, and is refused in a chain before anything runs,
    // naming its file and `reads`.
    let old = reg.get("exec:old").unwrap();
    assert!(chain::build_blocking(&reg, old.as_ref(), &points[2..]).is_ok());
    let e = chain::build_blocking(&reg, old.as_ref(), &points)
        .unwrap_err()
        .to_string();
    assert!(e.contains("compaction-eval/state/4"), "{e}");
    let out = tempfile::tempdir().unwrap();
    cli()
        .args([
            "run",
            "--scale",
            "base",
            "--scenarios",
            "support-ticket-timeout",
        ])
        .arg("--strategy-dir")
        .arg(&dir)
        .args(["--strategies", "exec:old", "--cycles", "1,2", "--out"])
        .arg(out.path().join("run"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("old.toml").and(predicate::str::contains("`reads`")));
    assert!(!out.path().join("run").exists());

    // `plugin-input --cycles` prints what the chain's last compaction reads.
    let plugin_input = |strategy: &str| {
        let mut c = cli();
        c.args(["plugin-input", "--scenario", "support-ticket-timeout"])
            .args(["--interrupt", &points[2].interrupt.point])
            .args(["--strategy", strategy, "--cycles", "3"])
            .arg("--strategy-dir")
            .arg(&dir);
        c
    };
    let printed = plugin_input("exec:new").output().expect("plugin-input");
    assert!(
        printed.status.success(),
        "{}",
        String::from_utf8_lossy(&printed.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&printed.stdout).expect("json");
    assert_eq!(v["format"], "compaction-eval/state/4");
    assert_eq!(
        v["previous_handoff"]["after"],
        points[1].state.after.as_str()
    );
    assert_eq!(v["previous_handoff"]["text"], hs[1].text.as_str());
    let since = points[2].state.since(points[1].state.cut);
    assert_eq!(v["events"].as_array().unwrap().len(), since.events.len());
    plugin_input("exec:old")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("compaction-eval/state/4"));
}

fn records(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("results.jsonl"))
        .expect("results")
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["metrics"]["first_action_ms"] = serde_json::Value::Null;
            v["metrics"]["completion_ms"] = serde_json::Value::Null;
            v
        })
        .collect()
}

#[test]
fn run_cycles_works_with_resume_shards_and_merge() {
    let root = tempfile::tempdir().unwrap();
    let scenarios = root.path().join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    std::fs::copy(
        "scenarios/support-ticket-timeout.yaml",
        scenarios.join("support-ticket-timeout.yaml"),
    )
    .unwrap();
    let run = |out: &Path, extra: &[&str]| {
        cli()
            .arg("--scenario-dir")
            .arg(&scenarios)
            .args([
                "run",
                "--scale",
                "base",
                "--strategies",
                "B,C",
                "--cycles",
                "1,3",
            ])
            .args(["--models", "sim:careful", "--out"])
            .arg(out)
            .args(extra)
            .assert()
            .success();
    };
    let whole = root.path().join("whole");
    run(&whole, &[]);
    let all = records(&whole);
    let strategies: BTreeSet<&str> = all
        .iter()
        .map(|r| r["strategy"].as_str().unwrap())
        .collect();
    assert_eq!(strategies, BTreeSet::from(["B", "B×3", "C", "C×3"]));
    for r in &all {
        let chained = r["strategy"].as_str().unwrap().ends_with("×3");
        assert_eq!(r["metrics"]["chain"].is_object(), chained, "{r}");
        if chained {
            let ch = &r["metrics"]["chain"];
            assert_eq!(ch["cycles"], 3);
            let n = ch["compactions"].as_u64().unwrap();
            assert!((1..=3).contains(&n));
            assert_eq!(ch["steps"].as_array().unwrap().len() as u64, n);
            // The chain draws as its single-shot cell does.
            let single = all
                .iter()
                .find(|x| {
                    x["scenario"] == r["scenario"]
                        && x["interrupt"] == r["interrupt"]
                        && x["rep"] == r["rep"]
                        && x["strategy"] == r["strategy"].as_str().unwrap().trim_end_matches("×3")
                })
                .unwrap();
            assert_eq!(single["seed"], r["seed"]);
        }
    }
    // Shards merged equal the whole run.
    let shards: Vec<PathBuf> = (1..=2).map(|k| root.path().join(format!("s{k}"))).collect();
    for (k, d) in shards.iter().enumerate() {
        run(d, &["--shard", &format!("{}/2", k + 1)]);
    }
    let merged = root.path().join("merged");
    cli()
        .arg("merge")
        .arg(&merged)
        .args(&shards)
        .assert()
        .success();
    assert_eq!(records(&merged), all);
    // A run cut short and resumed equals the whole run.
    let part = root.path().join("part");
    run(&part, &["--limit", "5"]);
    assert_eq!(records(&part).len(), 5);
    run(&part, &["--resume"]);
    assert_eq!(records(&part), all);
    let report = std::fs::read_to_string(whole.join("report.md")).unwrap();
    assert!(
        report.contains("## Compaction chains"),
        "the report has no chain section"
    );
}

#[test]
fn handoff_and_audit_show_a_chain() {
    let out = cli()
        .args(["handoff", "--scenario", "support-ticket-timeout"])
        .args([
            "--interrupt",
            "mid_implementation",
            "--strategy",
            "C",
            "--cycles",
            "3",
            "--json",
        ])
        .output()
        .expect("handoff");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["cycles"], 3);
    let earlier = v["chain"].as_array().expect("the chain's earlier handoffs");
    assert_eq!(earlier.len(), 2);
    assert!(earlier.iter().all(|h| {
        h["text"]
            .as_str()
            .is_some_and(|t| t.contains("<checkpoint"))
    }));
    // The last handoff is what the library's chain gives.
    let s = one("support-ticket-timeout");
    let at = Arc::new(RestorePoint::build(s, "mid_implementation").unwrap());
    let chained = Registry::builtin().chain("C", &at, 3).unwrap();
    assert_eq!(v["text"].as_str(), Some(chained[2].text.as_str()));

    let dir = tempfile::tempdir().unwrap();
    let out = cli()
        .args([
            "audit",
            "--scenarios",
            "support-ticket-timeout",
            "--strategies",
            "B,C",
        ])
        .args(["--cycles", "3", "--out"])
        .arg(dir.path())
        .output()
        .expect("audit");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("audit.json")).unwrap())
            .unwrap();
    assert!(
        rows.iter()
            .all(|r| ["B×3", "C×3"].contains(&r["strategy"].as_str().unwrap()))
    );
    let trail = |strategy: &str| -> Vec<&serde_json::Value> {
        rows.iter()
            .filter(|r| r["strategy"] == strategy && r["interrupt"] == "mid_implementation")
            .flat_map(|r| r["chain"]["facts"].as_array().unwrap())
            .collect()
    };
    // B loses facts along its chain and says at which compaction; the table names them.
    let lost: Vec<_> = trail("B×3")
        .into_iter()
        .filter(|f| f["lost_at"].is_u64())
        .collect();
    assert!(!lost.is_empty());
    for f in &lost {
        let k = f["lost_at"].as_u64().unwrap() as usize;
        assert_eq!(f["kept"][k - 1], false);
        assert!(
            f["kept"].as_array().unwrap()[..k - 1]
                .iter()
                .all(|x| x != false)
        );
    }
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("B×3: lost"), "{table}");
}

#[test]
fn a_tau_bench_run_cut_twice_is_compacted_twice() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tau");
    cli()
        .args([
            "run",
            "--tau",
            "airline",
            "--tasks",
            "0-9",
            "--strategies",
            "C,B",
        ])
        .args(["--cycles", "1,2", "--out"])
        .arg(&out)
        .assert()
        .success();
    let all = records(&out);
    let mut twice = 0;
    for r in all
        .iter()
        .filter(|r| r["strategy"] == "C×2" || r["strategy"] == "B×2")
    {
        let ch = &r["metrics"]["chain"];
        let steps = ch["steps"].as_array().unwrap();
        assert_eq!(ch["compactions"].as_u64().unwrap() as usize, steps.len());
        assert_eq!(steps.last().unwrap()["interrupt"], r["interrupt"]);
        if steps.len() == 2 {
            twice += 1;
            assert_ne!(steps[0]["interrupt"], steps[1]["interrupt"]);
        }
        let base = r["strategy"].as_str().unwrap().trim_end_matches("×2");
        let single = all
            .iter()
            .find(|x| {
                x["strategy"] == base
                    && x["scenario"] == r["scenario"]
                    && x["interrupt"] == r["interrupt"]
                    && x["model"] == r["model"]
            })
            .expect("the single-shot cell");
        assert_eq!(single["seed"], r["seed"]);
        assert!(single["metrics"]["chain"].is_null());
    }
    assert!(twice > 0, "no run of these tasks is cut twice");
}
