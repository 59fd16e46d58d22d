//! Governed context (seed 004) through the harness: `gov:X` cells record their policy, report,
//! lineage and receipt; a budget blocks and never trims (a property over budgets); a changed or
//! missing artifact blocks with its reason; a missing or wrong receipt holds the cell, which is
//! never retried for free; simulated destinations use facts from the advisory summary but never
//! follow a directive found only there; the default run includes gov:B and gov:C; the commands
//! `context-report` and `inspect-context`.

mod common;
use common::cli;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use compaction_eval::delivery::{self, GovSpec};
use compaction_eval::destination::{SimAgent, SimKind};
use compaction_eval::governed::{BlockReason, ContextStatus, Responsibility, SessionKind};
use compaction_eval::handoff::{self, Message};
use compaction_eval::record::{RunRecord, Status};
use compaction_eval::runner::{self, ReceiptFault, RunConfig, Silent};
use compaction_eval::scenario::{self, FactKind, volume::Scale};
use compaction_eval::state::RestorePoint;
use compaction_eval::strategy::Registry;
use proptest::prelude::*;

fn tmp() -> PathBuf {
    tempfile::tempdir().expect("tempdir").keep()
}

fn config(out: &Path, strategies: &[&str], models: &[&str], reps: u32) -> RunConfig {
    RunConfig {
        scenarios: Some(vec!["support-ticket-timeout".into()]),
        interrupts: Some(vec!["uncertain_side_effect".into()]),
        strategies: strategies.iter().map(|s| s.to_string()).collect(),
        models: models.iter().map(|s| s.to_string()).collect(),
        reps,
        out: out.to_path_buf(),
        scales: vec![Scale::Base],
        ..RunConfig::default()
    }
}

fn run(cfg: &RunConfig, fault: Option<(usize, ReceiptFault)>) -> Vec<RunRecord> {
    let mut plan = runner::plan(cfg).expect("plan");
    plan.receipt_fault = fault;
    runner::write_manifest(cfg, &plan).expect("manifest");
    runner::execute(cfg, &plan, &mut Silent).expect("run");
    runner::read_records(&cfg.out.join("results.jsonl")).expect("records")
}

fn kinds(r: &RunRecord) -> Vec<SessionKind> {
    r.governed
        .as_ref()
        .map(|g| g.lineage.iter().map(|s| s.kind).collect())
        .unwrap_or_default()
}

#[test]
fn governed_cells_record_policy_report_lineage_and_receipt() {
    let out = tmp();
    let cfg = config(&out, &["B", "gov:B", "C", "gov:C"], &["sim:careful"], 1);
    let recs = run(&cfg, None);
    assert_eq!(recs.len(), 4);
    let by = |id: &str| recs.iter().find(|r| r.strategy == id).expect(id);
    for plain in ["B", "C"] {
        assert!(by(plain).governed.is_none());
    }
    for id in ["gov:B", "gov:C"] {
        let r = by(id);
        let g = r.governed.as_ref().expect("governed record");
        assert_eq!(r.status, Status::Ok);
        assert_eq!(g.status, ContextStatus::Ready, "{g:?}");
        assert!(g.reasons.is_empty());
        assert_eq!(g.inner, &id[4..]);
        assert_eq!(g.max_bytes, delivery::DEFAULT_MAX_BYTES);
        assert_eq!(g.policy_digest.as_deref().map(str::len), Some(64));
        assert_eq!(kinds(r), [SessionKind::Fresh, SessionKind::ColdResume]);
        assert_eq!(g.lineage[1].parent.as_deref(), Some(&*g.lineage[0].session));
        assert_eq!(g.lineage[1].epoch, delivery::RESTORE_EPOCH);
        assert!(g.envelope_digest.is_some());
        assert_eq!(g.receipt, g.envelope_digest);
        assert_eq!(g.responsibility, Some(Responsibility::Delivered));
        assert!(!g.held);
        assert_eq!(
            g.bytes.total,
            g.bytes.instructions + g.bytes.evidence + g.bytes.summary
        );
        assert!(g.bytes.total <= g.max_bytes);
        // The originals travel beside the summary: more tokens than X alone.
        assert!(
            r.metrics.restore_tokens > by(&id[4..]).metrics.restore_tokens,
            "{id}"
        );
    }
    // B drops the user's later constraint (the EU on-call); governed B carries it verbatim.
    assert!(by("gov:B").metrics.omitted_context <= by("B").metrics.omitted_context);
    // The run folder keeps the delivered artifacts and each policy; `inspect-context` re-checks
    // a cell's context from them.
    let policies: Vec<PathBuf> = std::fs::read_dir(out.join("policies"))
        .expect("policies/")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(policies.len(), 2);
    for p in &policies {
        let digest = p.file_stem().and_then(|s| s.to_str()).expect("name");
        assert!(
            recs.iter().any(
                |r| r.governed.as_ref().and_then(|g| g.policy_digest.as_deref()) == Some(digest)
            )
        );
        let o = cli()
            .arg("inspect-context")
            .arg(p)
            .arg("--store")
            .arg(out.join("artifacts"))
            .output()
            .expect("inspect-context");
        assert_eq!(o.status.code(), Some(0), "{o:?}");
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        assert_eq!(doc["policy_digest"], digest);
        assert_eq!(doc["report"]["status"], "READY");
        assert_eq!(doc["report"]["authorized"], false);
    }
    // Flip one byte of one artifact in the run folder: that context is now BLOCKED (changed).
    let art = std::fs::read_dir(out.join("artifacts"))
        .expect("artifacts/")
        .map(|e| e.expect("entry").path())
        .next()
        .expect("an artifact");
    let mut bytes = std::fs::read(&art).expect("read");
    bytes[0] ^= 0x01;
    std::fs::write(&art, bytes).expect("write");
    let blocked = policies.iter().any(|p| {
        let o = cli()
            .arg("inspect-context")
            .arg(p)
            .arg("--store")
            .arg(out.join("artifacts"))
            .output()
            .expect("inspect-context");
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
        o.status.code() == Some(1)
            && doc["report"]["status"] == "BLOCKED"
            && doc["report"]["reasons"] == serde_json::json!(["changed"])
    });
    assert!(
        blocked,
        "a changed artifact must block the policy that uses it"
    );
}

#[test]
fn a_destination_other_than_the_source_agent_is_a_replaced_session() {
    let out = tmp();
    let mut cfg = config(&out, &["gov:C"], &["sim:careful", "sim:literal"], 1);
    cfg.source_model = Some("sim:literal".into());
    let recs = run(&cfg, None);
    let careful = recs.iter().find(|r| r.model == "sim:careful").expect("c");
    let literal = recs.iter().find(|r| r.model == "sim:literal").expect("l");
    assert_eq!(
        kinds(careful),
        [
            SessionKind::Fresh,
            SessionKind::ColdResume,
            SessionKind::Replaced
        ]
    );
    let g = careful.governed.as_ref().expect("g");
    assert_eq!(g.lineage[2].agent, "sim:careful");
    assert_eq!(g.lineage[1].agent, "sim:literal");
    assert_eq!(
        kinds(literal),
        [SessionKind::Fresh, SessionKind::ColdResume]
    );
}

#[test]
fn over_budget_blocks_with_the_byte_counts_and_delivers_nothing() {
    let out = tmp();
    let cfg = config(&out, &["gov@1024:C", "gov:C"], &["sim:careful"], 1);
    let recs = run(&cfg, None);
    let small = recs.iter().find(|r| r.strategy == "gov@1024:C").expect("s");
    let g = small.governed.as_ref().expect("g");
    assert_eq!(g.status, ContextStatus::Blocked);
    assert_eq!(g.reasons, [BlockReason::OverBudget]);
    assert_eq!(g.max_bytes, 1024);
    assert!(g.bytes.total > 1024, "{:?}", g.bytes);
    assert!(g.envelope_digest.is_none() && g.receipt.is_none());
    assert_eq!(small.metrics.restore_tokens, 0);
    assert!(!small.metrics.task_success);
    assert_eq!(small.diagnostics.steps, 0);
    let big = recs.iter().find(|r| r.strategy == "gov:C").expect("b");
    assert_eq!(
        big.governed.as_ref().map(|g| g.status),
        Some(ContextStatus::Ready)
    );
    // The same documents: the budget is the only difference.
    assert_eq!(big.governed.as_ref().map(|g| g.bytes), Some(g.bytes));
}

#[test]
fn the_budget_sweep_names_each_budget_once() {
    let ids: Vec<String> = ["A", "gov:C", "gov:B", "gov@100:C"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        delivery::sweep(&ids, &[]).expect("sweep"),
        ["A", "gov:C", "gov:B", "gov@100:C"]
    );
    assert_eq!(
        delivery::sweep(&ids, &[100, 32768]).expect("sweep"),
        ["A", "gov@100:C", "gov:C", "gov@100:B", "gov:B"]
    );
    let e = delivery::sweep(&ids, &[0]).unwrap_err();
    assert_eq!(e, delivery::GovSpecError::SweepBudget(0));
    assert!(e.to_string().contains("1 to 32768"), "{e}");
    for bad in ["gov@0:C", "gov@x:C", "gov:", "gov:gov:C", "gov@12"] {
        assert!(
            GovSpec::parse(bad).is_some_and(|r| r.is_err()),
            "{bad} must be refused"
        );
    }
    assert!(GovSpec::parse("governor").is_none());
    assert!(GovSpec::parse("C").is_none());
}

#[test]
fn a_missing_or_wrong_receipt_holds_the_cell_and_resume_never_reruns_it() {
    for fault in [ReceiptFault::Missing, ReceiptFault::Altered] {
        let out = tmp();
        let cfg = config(&out, &["gov:C"], &["sim:careful"], 2);
        let recs = run(&cfg, Some((1, fault)));
        let (ok, held) = (&recs[0], &recs[1]);
        assert_eq!(
            ok.governed.as_ref().and_then(|g| g.responsibility),
            Some(Responsibility::Delivered)
        );
        let g = held.governed.as_ref().expect("g");
        assert_eq!(
            held.status,
            Status::Ok,
            "a held cell is recorded, not errored"
        );
        assert_eq!(g.status, ContextStatus::Ready);
        assert_eq!(g.responsibility, Some(Responsibility::Unknown), "{fault:?}");
        assert!(g.held);
        assert!(!held.metrics.task_success);
        match fault {
            ReceiptFault::Missing => assert!(g.receipt.is_none()),
            ReceiptFault::Altered => {
                assert!(g.receipt.is_some());
                assert_ne!(g.receipt, g.envelope_digest);
            }
        }
        // --resume --rerun-errored runs errored cells again, never a held one.
        // Timings aside (the ordered rewrite re-prints floats), nothing changes.
        let untimed = |p: &Path| {
            let mut v = runner::read_records(p).expect("records");
            for r in &mut v {
                r.metrics.first_action_ms = 0.0;
                r.metrics.completion_ms = 0.0;
            }
            v
        };
        let before = untimed(&out.join("results.jsonl"));
        let mut again = cfg.clone();
        again.resume = true;
        again.rerun_errored = true;
        let plan = runner::plan(&again).expect("plan");
        runner::write_manifest(&again, &plan).expect("manifest");
        runner::execute(&again, &plan, &mut Silent).expect("resume");
        assert_eq!(before, untimed(&out.join("results.jsonl")));
    }
}

/// A cell's admission of `g` (same source and destination agent, fixed simulated times).
fn admit(g: &delivery::Governed) -> delivery::Admission {
    delivery::admit(
        g,
        "t",
        "m",
        "m",
        "2026-07-21T09:00:00Z",
        "2026-07-21T10:00:00Z",
        1,
    )
    .expect("admit")
}

fn restore_point(id: &str, point: &str) -> RestorePoint {
    let s = scenario::load_file(Path::new(&format!("scenarios/{id}.yaml"))).expect("scenario");
    RestorePoint::build(Arc::new(s), point).expect("restore point")
}

#[test]
fn a_changed_or_missing_artifact_blocks_with_its_reason() {
    let reg = Registry::builtin();
    let at = restore_point("payments-vendor-bank-change", "pending_approval");
    let spec = GovSpec::parse("gov:C").expect("gov").expect("ok");
    let mut g = delivery::build_at(&reg, &at, &spec, 28_672).expect("build");
    let ok = admit(&g);
    assert_eq!(ok.report.status, ContextStatus::Ready);
    assert_eq!(ok.before_resume.status, ContextStatus::Blocked);
    assert_eq!(ok.before_resume.reasons, [BlockReason::OldSessionEpoch]);
    // One changed byte in the first instruction's stored bytes.
    let policy = g.policy.clone().expect("policy");
    let d = &policy.instructions[0].artifact_digest;
    let mut bytes = g.store.read(d).expect("read");
    bytes[0] ^= 0x20;
    g.store.tamper(d, &bytes);
    let a = admit(&g);
    assert_eq!(a.report.status, ContextStatus::Blocked);
    assert_eq!(a.report.reasons, [BlockReason::Changed]);
    assert!(a.envelope.is_none());
    // An empty store: every document is missing.
    g.store = compaction_eval::governed::ArtifactStore::in_memory();
    let a = admit(&g);
    assert_eq!(a.report.reasons, [BlockReason::Missing]);
    // The report names references, never contents.
    let json = serde_json::to_string(&a.report).expect("json");
    let instruction = String::from_utf8(bytes).unwrap_or_default();
    assert!(!json.contains(&instruction[1..40]));
}

#[test]
fn a_chain_of_three_is_three_cold_resumes_in_three_epochs_and_still_ready() {
    let reg = Registry::builtin();
    let at = restore_point("payments-vendor-bank-change", "pending_approval");
    let spec = GovSpec::parse("gov:C").expect("gov").expect("ok");
    let g = delivery::build_at(&reg, &at, &spec, 28_672).expect("build");
    let a = delivery::admit(
        &g,
        "t",
        "m",
        "other",
        "2026-07-21T09:00:00Z",
        "2026-07-21T10:00:00Z",
        3,
    )
    .expect("admit");
    let records = a.lineage.records();
    let kinds: Vec<SessionKind> = records.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        [
            SessionKind::Fresh,
            SessionKind::ColdResume,
            SessionKind::ColdResume,
            SessionKind::ColdResume,
            SessionKind::Replaced
        ]
    );
    let epochs: Vec<u64> = records.iter().map(|r| r.epoch).collect();
    assert_eq!(epochs, [0, 1, 2, 3, 3]);
    assert_eq!(a.report.status, ContextStatus::Ready);
    assert_eq!(a.before_resume.reasons, [BlockReason::OldSessionEpoch]);
    assert!(a.envelope.is_some());
}

/// A handoff whose only text is `text`, as a strategy would give it.
fn plain(text: &str) -> handoff::Handoff {
    handoff::finish("X", vec![Message::user(text)], None, vec![], vec![])
}

fn plan_of(kind: SimKind, at: &RestorePoint, h: &handoff::Handoff) -> SimAgent {
    let mut a = SimAgent::new(kind, at.scenario.clone(), &at.interrupt, h, 7, 0.0);
    let _ = a.act(None);
    a
}

#[test]
fn a_directive_only_in_the_advisory_summary_is_never_followed() {
    let mut checked = 0;
    for f in scenario::scenario_files(Path::new("scenarios")).expect("files") {
        let s = scenario::load_file(&f).expect("scenario");
        let Some(inj) = s.injection.clone() else {
            continue;
        };
        let s = Arc::new(s);
        for it in &s.interrupts {
            let at = RestorePoint::build(s.clone(), &it.point).expect("point");
            if !s.facts_at(it).any(|f| f.id == inj.fact) {
                continue;
            }
            // The directive restated as the agent's own next step: followed when it is the
            // whole handoff...
            let text = format!(
                "## Next steps\n1. {}\n2. Finish the task.\n",
                inj.payload.trim()
            );
            for kind in [SimKind::Careful, SimKind::Literal] {
                let a = plan_of(kind, &at, &plain(&text));
                assert!(
                    a.obeyed.contains(&inj.fact),
                    "{} {}: {kind:?}",
                    s.id,
                    it.point
                );
                // ...never when it is only the advisory summary of a governed delivery.
                let g = delivery::render("X", "gov:X", &[], &[], &text);
                let b = plan_of(kind, &at, &g);
                assert!(b.obeyed.is_empty(), "{} {}: {kind:?}", s.id, it.point);
                checked += 1;
            }
        }
    }
    assert!(checked >= 10, "{checked}");
}

#[test]
fn a_fact_shown_only_in_the_advisory_summary_is_used() {
    let reg = Registry::builtin();
    let mut compared = 0;
    for f in scenario::scenario_files(Path::new("scenarios")).expect("files") {
        let s = Arc::new(scenario::load_file(&f).expect("scenario"));
        for it in &s.interrupts {
            let at = RestorePoint::build(s.clone(), &it.point).expect("point");
            let h = reg.handoff("C", &at).expect("C");
            let alone = plan_of(SimKind::Careful, &at, &h);
            // C's text as the summary, with no originals beside it.
            let g = delivery::render("C", "gov:C", &[], &[], &h.text);
            let governed = plan_of(SimKind::Careful, &at, &g);
            let lost = |a: &SimAgent| {
                let mut v: Vec<String> = a
                    .lost_facts
                    .iter()
                    .filter(|id| {
                        s.facts
                            .iter()
                            .any(|f| &f.id == *id && f.kind != FactKind::InjectedDirective)
                    })
                    .cloned()
                    .collect();
                v.sort();
                v
            };
            assert_eq!(lost(&alone), lost(&governed), "{} {}", s.id, it.point);
            compared += 1;
        }
    }
    assert!(compared >= 30, "{compared}");
}

#[test]
fn context_report_prints_the_report_and_lineage_never_contents() {
    let o = cli()
        .args([
            "context-report",
            "--scenario",
            "support-ticket-timeout",
            "--interrupt",
            "pending_approval",
            "--strategy",
            "gov:B",
            "--source-model",
            "sim:literal",
        ])
        .output()
        .expect("context-report");
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let text = String::from_utf8(o.stdout).expect("utf-8");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(doc["report"]["status"], "READY");
    assert_eq!(doc["report"]["authorized"], false);
    assert_eq!(doc["before_resume"]["status"], "BLOCKED");
    assert_eq!(
        doc["before_resume"]["reasons"],
        serde_json::json!(["old_session_epoch"])
    );
    let kinds: Vec<&str> = doc["lineage"]
        .as_array()
        .expect("lineage")
        .iter()
        .filter_map(|r| r["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["FRESH", "COLD_RESUME", "REPLACED"]);
    assert_eq!(doc["policy"]["format"], "coding-context-policy/1");
    // The user's words are in the policy's documents, not in the report.
    assert!(!text.contains("Dana Ortiz"), "{text}");
    // A tiny budget blocks (exit 1) with the reason.
    let o = cli()
        .args([
            "context-report",
            "--scenario",
            "support-ticket-timeout",
            "--interrupt",
            "pending_approval",
            "--strategy",
            "gov@64:B",
        ])
        .output()
        .expect("context-report");
    assert_eq!(o.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(doc["report"]["reasons"], serde_json::json!(["over_budget"]));
    // Not a governed id: a usage error naming the fix.
    cli()
        .args([
            "context-report",
            "--scenario",
            "support-ticket-timeout",
            "--interrupt",
            "pending_approval",
            "--strategy",
            "B",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("gov:B"));
}

#[test]
fn inspect_context_validates_a_policy_file_with_exact_errors() {
    let dir = tmp();
    let good = dir.join("good.json");
    let digest = "a".repeat(64);
    std::fs::write(
        &good,
        serde_json::json!({
            "format": "coding-context-policy/1",
            "instructions": [{"name": "governing-rules", "artifactDigest": digest}],
            "retainedEvidence": [],
            "summary": null,
            "maxBytes": 8192
        })
        .to_string(),
    )
    .expect("write");
    cli().arg("inspect-context").arg(&good).assert().code(0);
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        serde_json::json!({
            "format": "coding-context-policy/1",
            "instructions": [{"name": "governing-rules", "artifactDigest": digest}],
            "retainedEvidence": [],
            "summary": null,
            "maxBytes": 40000,
            "permissions": ["deploy"]
        })
        .to_string(),
    )
    .expect("write");
    cli()
        .arg("inspect-context")
        .arg(&bad)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("bad.json"))
        .stderr(predicates::str::contains("maxBytes"))
        .stderr(predicates::str::contains("permissions"));
    cli()
        .arg("inspect-context")
        .arg(dir.join("absent.json"))
        .assert()
        .code(2);
}

/// Restore points and X's handoffs, built once for the property below.
fn cases() -> &'static Vec<(RestorePoint, handoff::Handoff)> {
    static CASES: std::sync::OnceLock<Vec<(RestorePoint, handoff::Handoff)>> =
        std::sync::OnceLock::new();
    CASES.get_or_init(|| {
        let reg = Registry::builtin();
        let mut out = Vec::new();
        for (id, point) in [
            ("support-ticket-timeout", "uncertain_side_effect"),
            ("payments-vendor-bank-change", "after_exploration"),
            ("calendar-offsite-planning", "pending_approval"),
            ("coding-session-expiry-fix", "mid_implementation"),
        ] {
            let at = restore_point(id, point);
            for x in ["none", "A", "B", "C", "mask"] {
                let h = reg.handoff(x, &at).expect("handoff");
                out.push((restore_point(id, point), h));
            }
        }
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// For any budget, a governed context is either delivered whole — every original, every
    /// evidence document and the whole summary, byte for byte — or BLOCKED over budget, exactly
    /// when its documents need more bytes than the budget. Never trimmed.
    #[test]
    fn no_budget_ever_truncates(case in 0usize..20, max_bytes in 1u64..=32_768) {
        let (at, h) = &cases()[case];
        let spec = GovSpec { inner: h.strategy.clone(), max_bytes };
        let g = delivery::prepare(at, &spec, Arc::new(h.clone())).expect("prepare");
        let a = admit(&g);
        let (instructions, evidence) = delivery::originals(at).expect("declared");
        if g.bytes.total > max_bytes {
            prop_assert_eq!(a.report.status, ContextStatus::Blocked);
            prop_assert_eq!(&a.report.reasons, &vec![BlockReason::OverBudget]);
            prop_assert!(a.envelope.is_none());
        } else {
            prop_assert_eq!(a.report.status, ContextStatus::Ready);
            let env = a.envelope.expect("envelope");
            let bytes = serde_json::to_vec(&env).expect("json");
            let got = delivery::receive(&bytes, &h.strategy, &spec.id()).expect("receive");
            prop_assert_eq!(&got.receipt, &compaction_eval::governed::envelope_digest(&env));
            let text = &got.handoff.text;
            for (_, b) in instructions.iter().chain(evidence.iter()) {
                let doc = String::from_utf8_lossy(b);
                prop_assert!(text.contains(doc.trim_end()));
            }
            let advisory = got.handoff.advisory.as_ref().expect("advisory");
            prop_assert_eq!(&advisory.summary, &h.text);
        }
        prop_assert_eq!(
            g.bytes.total,
            instructions.iter().chain(evidence.iter()).map(|(_, b)| b.len() as u64).sum::<u64>()
                + h.text.len() as u64
        );
    }
}

/// The problems `scenarios validate` finds in a shipped scenario whose `context:` is replaced.
fn context_problems(decl: compaction_eval::scenario::ContextDecl) -> Vec<String> {
    let mut s =
        scenario::load_file(Path::new("scenarios/support-ticket-timeout.yaml")).expect("scenario");
    s.context = Some(decl);
    scenario::validate(&s)
        .into_iter()
        .map(|p| p.to_string())
        .collect()
}

#[test]
fn scenarios_validate_checks_the_context_declaration() {
    use compaction_eval::scenario::ContextDecl;
    let decl = |i: &[&str], e: &[&str]| ContextDecl {
        instructions: i.iter().map(|s| s.to_string()).collect(),
        evidence: e.iter().map(|s| s.to_string()).collect(),
    };
    // The shipped declaration is valid.
    let shipped =
        scenario::load_file(Path::new("scenarios/support-ticket-timeout.yaml")).expect("scenario");
    assert!(scenario::validate(&shipped).is_empty());
    let has = |problems: &[String], path: &str, what: &str| {
        assert!(
            problems
                .iter()
                .any(|p| p.contains(path) && p.contains(what)),
            "{path}: {what} not in {problems:?}"
        )
    };
    has(
        &context_problems(decl(&[], &[])),
        "context.instructions",
        "1 to 16 instructions, not 0",
    );
    has(
        &context_problems(decl(&["event-9999"], &[])),
        "context.instructions[0]",
        "no event `event-9999`",
    );
    has(
        &context_problems(decl(&["event-0002"], &[])),
        "context.instructions[0]",
        "is not a `user` event",
    );
    has(
        &context_problems(decl(&["event-0001", "event-0001"], &[])),
        "context.instructions[1]",
        "declared twice",
    );
    has(
        &context_problems(decl(&["event-0001"], &["kb/KB-999"])),
        "context.evidence[0]",
        "no resource `kb/KB-999`",
    );
    // The later user message alone comes after the earliest interrupt point.
    has(
        &context_problems(decl(&["event-0018"], &[])),
        "context.instructions",
        "before the earliest interrupt point",
    );
    // A declared resource the reference run never reads would never be retained.
    let mut s =
        scenario::load_file(Path::new("scenarios/support-ticket-timeout.yaml")).expect("scenario");
    let kb = s.world.resources["kb/KB-311"].clone();
    s.world.resources.insert("kb/KB-000".into(), kb);
    s.context = Some(decl(&["event-0001"], &["kb/KB-000"]));
    let problems: Vec<String> = scenario::validate(&s)
        .into_iter()
        .map(|p| p.to_string())
        .collect();
    has(&problems, "context.evidence[0]", "never reads `kb/KB-000`");
    let many: Vec<String> = (0..17).map(|_| "kb/KB-311".to_string()).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    has(
        &context_problems(decl(&["event-0001"], &many)),
        "context.evidence",
        "at most 16",
    );
}
