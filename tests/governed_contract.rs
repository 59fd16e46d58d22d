//! The governed-context contract of seed 004 (`src/governed/`), tested as a library: one test per
//! policy validation rule with the exact failing input and the exact error; the artifact store's
//! integrity (a flipped byte → `changed`, a deleted file → `missing`); session lineage and its
//! idempotence; the context report (`NOT_CONFIGURED` / `READY` / `BLOCKED`, never document contents,
//! always `authorized: false`); delivery (exact bytes, never truncated — a property test over budgets),
//! the envelope digest and the receipt (`UNKNOWN` when missing or wrong). Fast, no network.

use std::path::PathBuf;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use compaction_eval::governed::{
    ArtifactRef, ArtifactStore, BlockReason, CheckStatus, ContextEnvelope, ContextPolicy,
    ContextReport, ContextStatus, ENVELOPE_FORMAT, EnvelopeError, HandoffIdentity, InspectError,
    Lineage, LineageError, POLICY_FORMAT, ReadError, Responsibility, Role, SessionKind, SummaryRef,
    assemble, check_receipt, context_report, digest, envelope_digest, inspect_file, is_digest,
    validate,
};
use proptest::prelude::*;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// Helpers

/// A valid digest made of one repeated hex character.
fn dg(c: char) -> String {
    c.to_string().repeat(64)
}

/// The seed's example policy, with fixed digests.
fn seed_policy() -> Value {
    json!({
        "format": "coding-context-policy/1",
        "instructions": [{ "name": "governing-rules", "artifactDigest": dg('a') }],
        "retainedEvidence": [{ "name": "reference", "artifactDigest": dg('b') }],
        "summary": null,
        "maxBytes": 8192
    })
}

/// `seed_policy()` with one top-level field replaced.
fn with(field: &str, value: Value) -> Value {
    let mut v = seed_policy();
    v[field] = value;
    v
}

/// The errors of validating `v`, displayed (`` `path`: message ``).
fn errors(v: &Value) -> Vec<String> {
    match validate(v) {
        Ok(p) => panic!("expected errors, the policy validated: {p:?}"),
        Err(e) => e.iter().map(ToString::to_string).collect(),
    }
}

fn one_error(v: &Value) -> String {
    let e = errors(v);
    assert_eq!(e.len(), 1, "{e:#?}");
    e[0].clone()
}

const AUTHORITY: &str = "a policy cannot claim permissions or authority: fields claiming permissions \
                         or authority are refused (permissions, approvals and validation stay with the \
                         existing mechanisms)";

fn refs(prefix: &str, n: usize) -> Value {
    Value::Array(
        (0..n)
            .map(|i| json!({ "name": format!("{prefix}-{i}"), "artifactDigest": digest(format!("{prefix}{i}").as_bytes()) }))
            .collect(),
    )
}

fn tmp() -> PathBuf {
    tempfile::tempdir().expect("tempdir").keep()
}

/// A policy over published documents (instructions, evidence, optional summary) and its store.
fn published(
    store: &mut ArtifactStore,
    instructions: &[&[u8]],
    evidence: &[&[u8]],
    summary: Option<&[u8]>,
    max_bytes: u64,
) -> ContextPolicy {
    let mut named = |prefix: &str, docs: &[&[u8]]| -> Vec<ArtifactRef> {
        docs.iter()
            .enumerate()
            .map(|(i, b)| ArtifactRef {
                name: format!("{prefix}-{i}"),
                artifact_digest: store.publish(b).expect("publish"),
            })
            .collect()
    };
    let instructions = named("instruction", instructions);
    let retained_evidence = named("evidence", evidence);
    let mut policy = ContextPolicy {
        format: POLICY_FORMAT.to_string(),
        instructions,
        retained_evidence,
        summary: None,
        max_bytes,
    };
    if let Some(s) = summary {
        policy.summary = Some(SummaryRef {
            artifact_digest: store.publish(s).expect("publish"),
            based_on: policy.originals(),
        });
    }
    policy
}

fn lineage_for(policy: &ContextPolicy) -> Lineage {
    Lineage::fresh(
        "run-1",
        "agent-a",
        "assignment-1",
        &policy.digest(),
        "2026-07-21T09:00:00Z",
    )
}

fn handoff() -> HandoffIdentity {
    HandoffIdentity {
        task: "support-ticket-timeout/step-3".into(),
        plan_digest: dg('c'),
        definition: "scenarios/support-ticket-timeout.yaml".into(),
        incoming_artifact_digest: dg('d'),
    }
}

// ---------------------------------------------------------------------------------------------
// Digests

#[test]
fn digest_is_bare_lowercase_sha256() {
    assert_eq!(
        digest(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert!(is_digest(&digest(b"")));
    assert!(!is_digest(&dg('A')));
    assert!(!is_digest(&format!("sha256:{}", dg('a'))));
    assert!(!is_digest(&dg('a')[..63]));
    assert!(!is_digest(&dg('g')));
}

// ---------------------------------------------------------------------------------------------
// Policy validation: one test per rule

#[test]
fn the_seed_example_policy_is_valid() {
    let p = validate(&seed_policy()).expect("valid");
    assert_eq!(p.format, "coding-context-policy/1");
    assert_eq!(p.instructions[0].name, "governing-rules");
    assert_eq!(p.retained_evidence[0].artifact_digest, dg('b'));
    assert_eq!(p.summary, None);
    assert_eq!(p.max_bytes, 8192);
    assert_eq!(p.check(), Ok(()));
    // The typed value serializes back to the seed's field names.
    assert_eq!(serde_json::to_value(&p).unwrap(), seed_policy());
    assert_eq!(p.originals(), vec![dg('a'), dg('b')]);
}

#[test]
fn rule_closed_record_unknown_top_level_field() {
    assert_eq!(
        one_error(&with("notes", json!("x"))),
        "`notes`: unknown field: a policy is a closed record with only `format`, `instructions`, \
         `retainedEvidence`, `summary`, `maxBytes`"
    );
}

#[test]
fn rule_closed_record_unknown_reference_field() {
    let mut v = seed_policy();
    v["retainedEvidence"][0]["note"] = json!("kept for later");
    assert_eq!(
        one_error(&v),
        "`retainedEvidence[0].note`: unknown field: a reference is a closed record with only \
         `name`, `artifactDigest`"
    );
}

#[test]
fn rule_closed_record_unknown_summary_field() {
    let v = with(
        "summary",
        json!({ "artifactDigest": dg('e'), "basedOn": [dg('a'), dg('b')], "model": "x" }),
    );
    assert_eq!(
        one_error(&v),
        "`summary.model`: unknown field: the summary is a closed record with only \
         `artifactDigest`, `basedOn`"
    );
}

#[test]
fn rule_fields_claiming_permissions_or_authority_are_refused_at_every_level() {
    let v = with("permissions", json!(["write"]));
    assert_eq!(one_error(&v), format!("`permissions`: {AUTHORITY}"));

    let mut v = seed_policy();
    v["instructions"][0]["approvedBy"] = json!("lead");
    assert_eq!(
        one_error(&v),
        format!("`instructions[0].approvedBy`: {AUTHORITY}")
    );

    let v = with(
        "summary",
        json!({ "artifactDigest": dg('e'), "basedOn": [dg('a'), dg('b')], "AllowedTools": ["shell"] }),
    );
    assert_eq!(
        one_error(&v),
        format!("`summary.AllowedTools`: {AUTHORITY}")
    );

    for field in [
        "authority",
        "authorized",
        "approval",
        "grants",
        "scope",
        "role",
        "toolPermissions",
        "capabilities",
    ] {
        let v = with(field, json!(true));
        assert_eq!(one_error(&v), format!("`{field}`: {AUTHORITY}"), "{field}");
    }
}

#[test]
fn rule_all_five_top_level_fields_are_required() {
    for field in [
        "format",
        "instructions",
        "retainedEvidence",
        "summary",
        "maxBytes",
    ] {
        let mut v = seed_policy();
        v.as_object_mut().unwrap().remove(field);
        let hint = if field == "summary" {
            " (use null for no summary)"
        } else {
            ""
        };
        assert_eq!(
            one_error(&v),
            format!("`{field}`: required field is missing{hint}")
        );
    }
    assert_eq!(
        errors(&json!({})),
        vec![
            "`format`: required field is missing",
            "`instructions`: required field is missing",
            "`retainedEvidence`: required field is missing",
            "`summary`: required field is missing (use null for no summary)",
            "`maxBytes`: required field is missing",
        ]
    );
}

#[test]
fn rule_reference_fields_are_required() {
    let v = with("instructions", json!([{ "name": "governing-rules" }]));
    assert_eq!(
        one_error(&v),
        "`instructions[0].artifactDigest`: required field is missing"
    );
    let v = with("summary", json!({ "artifactDigest": dg('e') }));
    assert_eq!(
        one_error(&v),
        "`summary.basedOn`: required field is missing"
    );
}

#[test]
fn rule_format_is_exactly_coding_context_policy_1() {
    assert_eq!(
        one_error(&with("format", json!("coding-context-policy/2"))),
        "`format`: must be exactly `coding-context-policy/1`, found `coding-context-policy/2`"
    );
    assert_eq!(
        one_error(&with("format", json!("Coding-Context-Policy/1"))),
        "`format`: must be exactly `coding-context-policy/1`, found `Coding-Context-Policy/1`"
    );
    assert_eq!(
        one_error(&with("format", json!(1))),
        "`format`: must be the string `coding-context-policy/1`, found a number"
    );
}

#[test]
fn rule_instructions_hold_1_to_16_references() {
    assert_eq!(
        one_error(&with("instructions", json!([]))),
        "`instructions`: must hold 1–16 references, found 0"
    );
    assert_eq!(
        one_error(&with("instructions", refs("i", 17))),
        "`instructions`: must hold 1–16 references, found 17"
    );
    assert!(validate(&with("instructions", refs("i", 16))).is_ok());
    assert!(validate(&with("instructions", refs("i", 1))).is_ok());
}

#[test]
fn rule_retained_evidence_holds_0_to_16_references() {
    assert_eq!(
        one_error(&with("retainedEvidence", refs("e", 17))),
        "`retainedEvidence`: must hold 0–16 references, found 17"
    );
    assert!(validate(&with("retainedEvidence", json!([]))).is_ok());
    assert!(validate(&with("retainedEvidence", refs("e", 16))).is_ok());
}

#[test]
fn rule_names_are_nonblank() {
    let v = with(
        "instructions",
        json!([{ "name": "", "artifactDigest": dg('a') }]),
    );
    assert_eq!(one_error(&v), "`instructions[0].name`: must not be blank");
    let v = with(
        "retainedEvidence",
        json!([{ "name": " \t\n ", "artifactDigest": dg('b') }]),
    );
    assert_eq!(
        one_error(&v),
        "`retainedEvidence[0].name`: must not be blank"
    );
}

#[test]
fn rule_names_are_at_most_128_characters_counted_as_characters() {
    // 128 two-byte characters (256 bytes) are fine; 129 are not.
    let ok = with(
        "instructions",
        json!([{ "name": "é".repeat(128), "artifactDigest": dg('a') }]),
    );
    assert!(validate(&ok).is_ok());
    let v = with(
        "instructions",
        json!([{ "name": "x".repeat(129), "artifactDigest": dg('a') }]),
    );
    assert_eq!(
        one_error(&v),
        "`instructions[0].name`: must be at most 128 characters, found 129"
    );
}

#[test]
fn rule_names_are_unique_across_instructions_and_evidence() {
    let v = with(
        "retainedEvidence",
        json!([{ "name": "governing-rules", "artifactDigest": dg('b') }]),
    );
    assert_eq!(
        one_error(&v),
        "`retainedEvidence[0].name`: name `governing-rules` is already used by \
         `instructions[0].name`: names must be unique across instructions and retainedEvidence"
    );
    let v = with(
        "instructions",
        json!([
            { "name": "rules", "artifactDigest": dg('a') },
            { "name": "rules", "artifactDigest": dg('c') }
        ]),
    );
    assert_eq!(
        one_error(&v),
        "`instructions[1].name`: name `rules` is already used by `instructions[0].name`: names \
         must be unique across instructions and retainedEvidence"
    );
}

#[test]
fn rule_digests_are_lowercase_sha256_without_prefix() {
    let upper = dg('A');
    let v = with(
        "instructions",
        json!([{ "name": "governing-rules", "artifactDigest": upper }]),
    );
    assert_eq!(
        one_error(&v),
        format!(
            "`instructions[0].artifactDigest`: must be lowercase: a SHA-256 digest is 64 lowercase \
             hex characters, found `{upper}`"
        )
    );
    let prefixed = format!("sha256:{}", dg('a'));
    let v = with(
        "instructions",
        json!([{ "name": "governing-rules", "artifactDigest": prefixed }]),
    );
    assert_eq!(
        one_error(&v),
        format!(
            "`instructions[0].artifactDigest`: must be a bare lowercase SHA-256 digest (64 lowercase \
             hex characters) without the `sha256:` prefix, found `sha256:{}`",
            dg('a')
        )
    );
    let v = with(
        "retainedEvidence",
        json!([{ "name": "reference", "artifactDigest": "abc123" }]),
    );
    assert_eq!(
        one_error(&v),
        "`retainedEvidence[0].artifactDigest`: must be a lowercase SHA-256 digest (64 lowercase hex \
         characters), found `abc123` (6 characters)"
    );
    let v = with(
        "summary",
        json!({ "artifactDigest": dg('E'), "basedOn": [dg('a'), dg('b')] }),
    );
    assert_eq!(
        one_error(&v),
        format!(
            "`summary.artifactDigest`: must be lowercase: a SHA-256 digest is 64 lowercase hex \
             characters, found `{}`",
            dg('E')
        )
    );
    let v = with(
        "summary",
        json!({ "artifactDigest": dg('e'), "basedOn": [dg('a'), dg('B')] }),
    );
    assert_eq!(
        one_error(&v),
        format!(
            "`summary.basedOn[1]`: must be lowercase: a SHA-256 digest is 64 lowercase hex \
             characters, found `{}`",
            dg('B')
        )
    );
}

#[test]
fn rule_summary_may_be_null_or_a_digest_with_based_on() {
    assert!(validate(&with("summary", Value::Null)).is_ok());
    let v = with(
        "summary",
        json!({ "artifactDigest": dg('e'), "basedOn": [dg('b'), dg('a')] }),
    );
    let p = validate(&v).expect("valid");
    assert_eq!(
        p.summary,
        Some(SummaryRef {
            artifact_digest: dg('e'),
            based_on: vec![dg('b'), dg('a')]
        })
    );
    assert_eq!(
        one_error(&with("summary", json!("a summary"))),
        "`summary`: must be null or an object {artifactDigest, basedOn}, found a string"
    );
}

#[test]
fn rule_based_on_names_every_unique_original() {
    let v = with(
        "summary",
        json!({ "artifactDigest": dg('e'), "basedOn": [dg('a')] }),
    );
    assert_eq!(
        one_error(&v),
        format!(
            "`summary.basedOn`: does not name the original `{}` (`retainedEvidence[0]`): basedOn \
             must name every unique original instruction and retainedEvidence digest",
            dg('b')
        )
    );
    // An original referenced twice is named once.
    let mut v = with(
        "summary",
        json!({ "artifactDigest": dg('e'), "basedOn": [dg('a'), dg('b')] }),
    );
    v["retainedEvidence"] = json!([
        { "name": "reference", "artifactDigest": dg('b') },
        { "name": "reference-again", "artifactDigest": dg('a') }
    ]);
    assert!(validate(&v).is_ok());
}

#[test]
fn rule_based_on_names_only_originals() {
    let v = with(
        "summary",
        json!({ "artifactDigest": dg('e'), "basedOn": [dg('a'), dg('b'), dg('f')] }),
    );
    assert_eq!(
        one_error(&v),
        format!(
            "`summary.basedOn[2]`: `{}` is not an original: basedOn names only instruction and \
             retainedEvidence digests",
            dg('f')
        )
    );
}

#[test]
fn rule_based_on_has_no_duplicates() {
    let v = with(
        "summary",
        json!({ "artifactDigest": dg('e'), "basedOn": [dg('a'), dg('b'), dg('a')] }),
    );
    assert_eq!(
        one_error(&v),
        format!(
            "`summary.basedOn[2]`: `{}` is listed more than once",
            dg('a')
        )
    );
}

#[test]
fn rule_max_bytes_is_an_integer_from_1_to_32768() {
    for (value, found) in [
        (json!(0), "0"),
        (json!(32769), "32769"),
        (json!(-1), "-1"),
        (json!(1.5), "the fraction 1.5"),
        (json!(8192.0), "the fraction 8192.0"),
        (json!("8192"), "a string"),
        (Value::Null, "null"),
    ] {
        assert_eq!(
            one_error(&with("maxBytes", value.clone())),
            format!("`maxBytes`: must be an integer from 1 to 32768 (bytes), found {found}"),
            "{value}"
        );
    }
    assert_eq!(validate(&with("maxBytes", json!(1))).unwrap().max_bytes, 1);
    assert_eq!(
        validate(&with("maxBytes", json!(32768))).unwrap().max_bytes,
        32768
    );
}

#[test]
fn rule_wrong_json_types_name_the_field_and_the_expected_type() {
    assert_eq!(
        errors(&json!([1, 2])),
        vec!["`policy`: a policy must be a JSON object, found an array"]
    );
    assert_eq!(
        one_error(&with("instructions", json!("governing-rules"))),
        "`instructions`: must be an array of references {name, artifactDigest}, found a string"
    );
    assert_eq!(
        one_error(&with("retainedEvidence", json!(["reference"]))),
        "`retainedEvidence[0]`: must be an object {name, artifactDigest}, found a string"
    );
    assert_eq!(
        one_error(&with(
            "instructions",
            json!([{ "name": 7, "artifactDigest": dg('a') }])
        )),
        "`instructions[0].name`: must be a string, found a number"
    );
    assert_eq!(
        one_error(&with(
            "instructions",
            json!([{ "name": "governing-rules", "artifactDigest": null }])
        )),
        "`instructions[0].artifactDigest`: must be a string (a lowercase SHA-256 digest), found null"
    );
    assert_eq!(
        one_error(&with(
            "summary",
            json!({ "artifactDigest": dg('e'), "basedOn": dg('a') })
        )),
        "`summary.basedOn`: must be an array of original digests, found a string"
    );
}

#[test]
fn every_error_is_collected_in_document_order() {
    // The summary comes first in the document but refers to the lists after it.
    let v: Value = serde_json::from_str(&format!(
        r#"{{
            "summary": {{ "artifactDigest": "{e}", "basedOn": ["{f}"] }},
            "format": "coding-context-policy/0",
            "instructions": [{{ "name": " ", "artifactDigest": "{a}" }}],
            "retainedEvidence": [{{ "name": "r", "artifactDigest": "{upper}" }}],
            "grantTools": true
        }}"#,
        e = dg('e'),
        f = dg('f'),
        a = dg('a'),
        upper = dg('B'),
    ))
    .unwrap();
    assert_eq!(
        errors(&v),
        vec![
            format!(
                "`summary.basedOn[0]`: `{}` is not an original: basedOn names only instruction and \
                 retainedEvidence digests",
                dg('f')
            ),
            format!(
                "`summary.basedOn`: does not name the original `{}` (`instructions[0]`): basedOn \
                 must name every unique original instruction and retainedEvidence digest",
                dg('a')
            ),
            "`format`: must be exactly `coding-context-policy/1`, found `coding-context-policy/0`"
                .to_string(),
            "`instructions[0].name`: must not be blank".to_string(),
            format!(
                "`retainedEvidence[0].artifactDigest`: must be lowercase: a SHA-256 digest is 64 \
                 lowercase hex characters, found `{}`",
                dg('B')
            ),
            format!("`grantTools`: {AUTHORITY}"),
            "`maxBytes`: required field is missing".to_string(),
        ]
    );
}

#[test]
fn check_applies_the_same_rules_to_a_typed_policy() {
    let mut p = validate(&seed_policy()).unwrap();
    p.max_bytes = 0;
    p.retained_evidence[0].name = "governing-rules".into();
    let e: Vec<String> = p
        .check()
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        e,
        vec![
            "`retainedEvidence[0].name`: name `governing-rules` is already used by \
             `instructions[0].name`: names must be unique across instructions and retainedEvidence",
            "`maxBytes`: must be an integer from 1 to 32768 (bytes), found 0",
        ]
    );
}

#[test]
fn policy_digest_is_stable_and_changes_with_any_field() {
    let p = validate(&seed_policy()).unwrap();
    assert_eq!(p.digest(), validate(&seed_policy()).unwrap().digest());
    assert_eq!(p.digest(), digest(&serde_json::to_vec(&p).unwrap()));
    let mut q = p.clone();
    q.max_bytes = 8191;
    assert_ne!(p.digest(), q.digest());
}

#[test]
fn inspect_file_names_the_file_and_the_errors() {
    let dir = tmp();
    let good = dir.join("policy.json");
    std::fs::write(&good, serde_json::to_string_pretty(&seed_policy()).unwrap()).unwrap();
    assert_eq!(inspect_file(&good).unwrap().max_bytes, 8192);

    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        "{\n  \"format\": \"coding-context-policy/1\",\n  \"maxBytes\": 0,\n}",
    )
    .unwrap();
    let e = inspect_file(&bad).unwrap_err();
    assert!(
        matches!(
            e,
            InspectError::Syntax {
                line: 4,
                column: 1,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        format!("{}:4:1: not valid JSON: trailing comma", bad.display())
    );

    // A field named twice is refused at the second name (serde_json alone would keep the last value).
    let twice = dir.join("twice.json");
    std::fs::write(
        &twice,
        format!(
            "{{\"format\": \"coding-context-policy/1\", \"instructions\": [{{\"name\": \"r\", \"artifactDigest\": \"{}\"}}],\n\"retainedEvidence\": [], \"summary\": null, \"maxBytes\": 8192,\n\"maxBytes\": 32768}}",
            dg('a')
        ),
    )
    .unwrap();
    assert_eq!(
        inspect_file(&twice).unwrap_err().to_string(),
        format!(
            "{}:3:10: not valid JSON: duplicate field `maxBytes` (a policy names each field once)",
            twice.display()
        )
    );

    let invalid = dir.join("invalid.json");
    std::fs::write(&invalid, with("maxBytes", json!(0)).to_string()).unwrap();
    assert_eq!(
        inspect_file(&invalid).unwrap_err().to_string(),
        format!(
            "{}: the policy is invalid (1 error):\n  `maxBytes`: must be an integer from 1 to 32768 \
             (bytes), found 0",
            invalid.display()
        )
    );

    let missing = dir.join("nope.json");
    let e = inspect_file(&missing).unwrap_err();
    assert!(
        e.to_string()
            .starts_with(&format!("cannot read policy file {}: ", missing.display())),
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------------
// The artifact store

#[test]
fn publish_is_content_addressed_and_idempotent() {
    let mut s = ArtifactStore::in_memory();
    let d = s.publish(b"abc").unwrap();
    assert_eq!(d, digest(b"abc"));
    assert_eq!(s.publish(b"abc").unwrap(), d);
    assert_eq!(s.read(&d).unwrap(), b"abc");
    assert!(s.contains(&d));
    assert!(!s.contains(&digest(b"abd")));
    assert!(matches!(
        s.read(&digest(b"abd")),
        Err(ReadError::Missing { .. })
    ));
}

#[test]
fn folder_store_names_files_by_digest_only_and_refuses_other_values() {
    let dir = tmp().join("artifacts");
    let mut s = ArtifactStore::open(&dir).unwrap();
    let d = s.publish(b"Reviewed reference material.").unwrap();
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec![d.clone()]);
    // Idempotent: nothing rewritten when present and intact.
    let before = std::fs::metadata(dir.join(&d)).unwrap().modified().unwrap();
    s.publish(b"Reviewed reference material.").unwrap();
    assert_eq!(
        std::fs::metadata(dir.join(&d)).unwrap().modified().unwrap(),
        before
    );
    let traversal = "../../etc/passwd"; // hostile input: the store must refuse it
    for value in [traversal, "policy.json", &dg('A'), ""] {
        let e = s.read(value).unwrap_err();
        assert!(matches!(e, ReadError::NotADigest { .. }), "{value}: {e:?}");
        assert_eq!(
            e.to_string(),
            format!("`{value}` is not an artifact digest (64 lowercase hex characters)")
        );
        assert!(!s.contains(value));
    }
    // A second handle on the same folder sees the artifact.
    assert_eq!(
        ArtifactStore::open(&dir).unwrap().read(&d).unwrap(),
        b"Reviewed reference material."
    );
}

#[test]
fn a_flipped_byte_on_disk_is_changed_and_blocks_the_report() {
    let dir = tmp().join("artifacts");
    let mut s = ArtifactStore::open(&dir).unwrap();
    let policy = published(
        &mut s,
        &[b"Preserve required approvals. Validate all declared outputs before acceptance."],
        &[b"Reviewed reference material."],
        None,
        8192,
    );
    let lineage = lineage_for(&policy);
    assert_eq!(
        context_report(Some(&policy), &s, Some(&lineage), 0).status,
        ContextStatus::Ready
    );

    let d = policy.instructions[0].artifact_digest.clone();
    let path = dir.join(&d);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[0] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();

    let e = s.read(&d).unwrap_err();
    let ReadError::Changed { actual, .. } = &e else {
        panic!("expected Changed, got {e:?}")
    };
    assert_eq!(actual, &digest(&bytes));
    assert_eq!(
        e.to_string(),
        format!(
            "artifact {d} has changed ({}): its bytes now hash to {actual}",
            path.display()
        )
    );
    let r = context_report(Some(&policy), &s, Some(&lineage), 0);
    assert_eq!(r.status, ContextStatus::Blocked);
    assert_eq!(r.reasons, vec![BlockReason::Changed]);
    assert_eq!(r.checks[0].status, CheckStatus::Changed);
    assert_eq!(r.checks[0].bytes, None);
    assert_eq!(r.checks[1].status, CheckStatus::Ok);

    // Publishing the original bytes again repairs the file.
    s.publish(b"Preserve required approvals. Validate all declared outputs before acceptance.")
        .unwrap();
    assert_eq!(
        context_report(Some(&policy), &s, Some(&lineage), 0).status,
        ContextStatus::Ready
    );
}

#[test]
fn a_deleted_file_is_missing_and_blocks_the_report() {
    let dir = tmp().join("artifacts");
    let mut s = ArtifactStore::open(&dir).unwrap();
    let policy = published(&mut s, &[b"rules"], &[b"evidence"], None, 8192);
    let d = policy.retained_evidence[0].artifact_digest.clone();
    std::fs::remove_file(dir.join(&d)).unwrap();
    let e = s.read(&d).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("artifact {d} is missing ({})", dir.join(&d).display())
    );
    let r = context_report(Some(&policy), &s, Some(&lineage_for(&policy)), 0);
    assert_eq!(
        (r.status, r.reasons.clone()),
        (ContextStatus::Blocked, vec![BlockReason::Missing])
    );
    assert_eq!(r.checks[1].role, Role::Evidence);
    assert_eq!(r.checks[1].status, CheckStatus::Missing);
}

#[test]
fn an_unreadable_artifact_blocks_the_report_as_unreadable() {
    let dir = tmp().join("artifacts");
    let mut s = ArtifactStore::open(&dir).unwrap();
    let policy = published(&mut s, &[b"rules"], &[], None, 8192);
    let d = policy.instructions[0].artifact_digest.clone();
    // A folder where the artifact's file should be: it exists but cannot be read as a file.
    std::fs::remove_file(dir.join(&d)).unwrap();
    std::fs::create_dir(dir.join(&d)).unwrap();
    let e = s.read(&d).unwrap_err();
    assert!(matches!(e, ReadError::Unreadable { .. }), "{e:?}");
    assert!(
        e.to_string().starts_with(&format!(
            "artifact {d} is unreadable ({}): ",
            dir.join(&d).display()
        )),
        "{e}"
    );
    let r = context_report(Some(&policy), &s, Some(&lineage_for(&policy)), 0);
    assert_eq!(r.reasons, vec![BlockReason::Unreadable]);
}

#[test]
fn in_memory_tampering_is_changed() {
    let mut s = ArtifactStore::in_memory();
    let policy = published(&mut s, &[b"rules"], &[], None, 8192);
    let d = policy.instructions[0].artifact_digest.clone();
    s.tamper(&d, b"rulez");
    assert!(matches!(s.read(&d), Err(ReadError::Changed { .. })));
    let r = context_report(Some(&policy), &s, Some(&lineage_for(&policy)), 0);
    assert_eq!(r.reasons, vec![BlockReason::Changed]);
}

#[test]
fn export_copies_the_named_artifacts_checked() {
    let mut s = ArtifactStore::in_memory();
    let a = s.publish(b"first").unwrap();
    let b = s.publish(b"second").unwrap();
    let _c = s.publish(b"not delivered").unwrap();
    let run = tmp().join("run").join("artifacts");
    s.export(&[a.clone(), b.clone()], &run).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(&run)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut want = vec![a.clone(), b.clone()];
    want.sort();
    assert_eq!(names, want);
    assert_eq!(
        ArtifactStore::open(&run).unwrap().read(&b).unwrap(),
        b"second"
    );

    s.tamper(&a, b"firsT");
    let e = s.export(std::slice::from_ref(&a), &tmp()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "cannot export artifact: artifact {a} has changed: its bytes now hash to {}",
            digest(b"firsT")
        )
    );
}

#[test]
fn opening_a_file_as_a_store_is_refused() {
    let f = tmp().join("file");
    std::fs::write(&f, "x").unwrap();
    let e = ArtifactStore::open(&f).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{} is not a folder: an artifact store needs a folder",
            f.display()
        )
    );
}

// ---------------------------------------------------------------------------------------------
// Session lineage

#[test]
fn fresh_lineage_has_one_fresh_record_in_epoch_0() {
    let l = Lineage::fresh("run-1", "agent-a", "assignment-1", &dg('9'), "t0");
    let r = &l.records()[0];
    assert_eq!(l.records().len(), 1);
    assert_eq!(
        (r.kind, r.epoch, r.parent.as_deref()),
        (SessionKind::Fresh, 0, None)
    );
    assert_eq!(l.epoch(), 0);
    assert_eq!(r.session.len(), 16);
    // Deterministic: the same inputs give the same records; no clock, no randomness.
    assert_eq!(
        Lineage::fresh("run-1", "agent-a", "assignment-1", &dg('9'), "t0"),
        l
    );
    assert_ne!(
        Lineage::fresh("run-2", "agent-a", "assignment-1", &dg('9'), "t0").records()[0].session,
        r.session
    );
    let v = serde_json::to_value(r).unwrap();
    assert_eq!(
        v,
        json!({
            "session": r.session, "kind": "FRESH", "run": "run-1", "agent": "agent-a",
            "assignment": "assignment-1", "policyDigest": dg('9'), "epoch": 0, "parent": null,
            "createdAt": "t0"
        })
    );
}

#[test]
fn repeating_a_resume_in_the_same_epoch_adds_no_record() {
    let mut l = Lineage::fresh("run-1", "agent-a", "assignment-1", &dg('9'), "t0");
    let first = l.cold_resume(1, "agent-a", "t1").unwrap().clone();
    assert_eq!(first.kind, SessionKind::ColdResume);
    assert_eq!(
        first.parent.as_deref(),
        Some(l.records()[0].session.as_str())
    );
    assert_eq!(first.policy_digest, dg('9'));
    let again = l.cold_resume(1, "agent-a", "t2").unwrap().clone();
    assert_eq!(again, first);
    assert_eq!(l.records().len(), 2);
    assert_eq!(l.epoch(), 1);
    assert_eq!(serde_json::to_value(&again).unwrap()["kind"], "COLD_RESUME");
}

#[test]
fn repeating_a_replacement_adds_no_record_and_self_replacement_is_an_error() {
    let mut l = Lineage::fresh("run-1", "agent-a", "assignment-1", &dg('9'), "t0");
    let r = l.replace(0, "agent-b", "t1").unwrap().clone();
    assert_eq!(r.kind, SessionKind::Replaced);
    assert_eq!(r.agent, "agent-b");
    assert_eq!(r.parent.as_deref(), Some(l.records()[0].session.as_str()));
    assert_eq!(l.replace(0, "agent-b", "t2").unwrap(), &r);
    assert_eq!(l.records().len(), 2);
    assert_eq!(serde_json::to_value(&r).unwrap()["kind"], "REPLACED");

    let mut m = Lineage::fresh("run-1", "agent-a", "assignment-1", &dg('9'), "t0");
    let e = m.replace(0, "agent-a", "t1").unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "agent `agent-a` already holds session {}: a replacement needs a different agent",
            m.records()[0].session
        )
    );
    assert_eq!(m.records().len(), 1);
}

#[test]
fn records_are_never_changed_only_appended() {
    let mut l = Lineage::fresh("run-1", "agent-a", "assignment-1", &dg('9'), "t0");
    let mut seen = l.records().to_vec();
    type Step = fn(&mut Lineage) -> Result<(), LineageError>;
    let steps: [Step; 7] = [
        |l| l.cold_resume(1, "agent-a", "t1").map(drop),
        |l| l.cold_resume(1, "agent-a", "t1b").map(drop),
        |l| l.replace(1, "agent-b", "t2").map(drop),
        |l| l.replace(1, "agent-b", "t2b").map(drop),
        |l| l.cold_resume(0, "agent-b", "t3").map(drop),
        |l| l.cold_resume(3, "agent-b", "t4").map(drop),
        |l| l.replace(3, "agent-b", "t5").map(drop),
    ];
    for step in steps {
        let _ = step(&mut l);
        assert!(l.records().len() >= seen.len());
        assert_eq!(&l.records()[..seen.len()], &seen[..], "a record changed");
        seen = l.records().to_vec();
    }
    let kinds: Vec<SessionKind> = l.records().iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        vec![
            SessionKind::Fresh,
            SessionKind::ColdResume,
            SessionKind::Replaced,
            SessionKind::ColdResume
        ]
    );
    // Every record's parent is the one before it.
    for w in l.records().windows(2) {
        assert_eq!(w[1].parent.as_deref(), Some(w[0].session.as_str()));
    }
    assert_eq!(l.current(1).unwrap().agent, "agent-b");
    assert_eq!(l.current(2), None);
    assert_eq!(l.current(3).unwrap().kind, SessionKind::ColdResume);
}

#[test]
fn lineage_errors() {
    let mut l = Lineage::fresh("run-1", "agent-a", "assignment-1", &dg('9'), "t0");
    l.cold_resume(2, "agent-a", "t1").unwrap();
    assert_eq!(
        l.cold_resume(1, "agent-a", "t2").unwrap_err(),
        LineageError::OlderEpoch {
            requested: 1,
            current: 2
        }
    );
    assert_eq!(
        l.replace(1, "agent-b", "t2").unwrap_err().to_string(),
        "epoch 1 is older than the lineage's current epoch 2: sessions never go back"
    );
    assert_eq!(
        l.replace(3, "agent-b", "t2").unwrap_err().to_string(),
        "epoch 3 has no session (the latest is in epoch 2): a governed resume must come before a \
         replacement"
    );
    let resumed = l.records()[1].session.clone();
    assert_eq!(
        l.cold_resume(2, "agent-z", "t2").unwrap_err().to_string(),
        format!(
            "epoch 2 was already resumed by agent `agent-a` (session {resumed}); a repeated resume \
             cannot name agent `agent-z`"
        )
    );
    let mut m = Lineage::fresh("run-1", "agent-a", "assignment-1", &dg('9'), "t0");
    let fresh = m.records()[0].session.clone();
    assert_eq!(
        m.cold_resume(0, "agent-a", "t1").unwrap_err().to_string(),
        format!(
            "a cold resume needs a new coordinator epoch: epoch 0 already has session {fresh} (FRESH)"
        )
    );
    assert_eq!(m.verify_policy(&dg('9')), Ok(()));
    assert_eq!(
        m.verify_policy(&dg('8')).unwrap_err().to_string(),
        format!(
            "the lineage is bound to policy {}; policy {} cannot resume it",
            dg('9'),
            dg('8')
        )
    );
    assert_eq!(l.records().len(), 2);
    assert_eq!(m.records().len(), 1);
}

// ---------------------------------------------------------------------------------------------
// The context report

#[test]
fn no_policy_is_not_configured() {
    let s = ArtifactStore::in_memory();
    let r = context_report(None, &s, None, 0);
    assert_eq!(r.status, ContextStatus::NotConfigured);
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(
        v,
        json!({
            "status": "NOT_CONFIGURED", "reasons": [], "policyDigest": null, "checks": [],
            "totalBytes": 0, "maxBytes": null, "epoch": 0, "lineage": [], "authorized": false
        })
    );
}

#[test]
fn ready_report_lists_references_bytes_and_lineage() {
    let mut s = ArtifactStore::in_memory();
    let policy = published(&mut s, &[b"0123456789"], &[b"abcde"], Some(b"xyz"), 18);
    let l = lineage_for(&policy);
    let r = context_report(Some(&policy), &s, Some(&l), 0);
    assert_eq!(r.status, ContextStatus::Ready);
    assert!(r.reasons.is_empty());
    assert_eq!(r.total_bytes, 18);
    assert_eq!(r.max_bytes, Some(18));
    assert_eq!(r.policy_digest, Some(policy.digest()));
    assert_eq!(r.lineage, l.records());
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["status"], "READY");
    assert_eq!(
        v["checks"],
        json!([
            { "role": "instruction", "name": "instruction-0", "artifactDigest": digest(b"0123456789"), "bytes": 10, "status": "ok" },
            { "role": "evidence", "name": "evidence-0", "artifactDigest": digest(b"abcde"), "bytes": 5, "status": "ok" },
            { "role": "summary", "name": null, "artifactDigest": digest(b"xyz"), "bytes": 3, "status": "ok" },
        ])
    );
}

#[test]
fn the_summary_counts_toward_the_budget_and_over_budget_blocks() {
    let mut s = ArtifactStore::in_memory();
    let policy = published(&mut s, &[b"0123456789"], &[b"abcde"], Some(b"xyz"), 17);
    let l = lineage_for(&policy);
    let r = context_report(Some(&policy), &s, Some(&l), 0);
    assert_eq!(
        (r.status, r.reasons.clone(), r.total_bytes),
        (ContextStatus::Blocked, vec![BlockReason::OverBudget], 18)
    );
    assert_eq!(
        serde_json::to_value(&r).unwrap()["reasons"],
        json!(["over_budget"])
    );
    // Every check is still ok: nothing was trimmed, the budget blocks instead.
    assert!(r.checks.iter().all(|c| c.status == CheckStatus::Ok));
}

#[test]
fn a_configured_summary_needs_its_exact_bytes_and_cannot_stand_in_for_originals() {
    let mut s = ArtifactStore::in_memory();
    let policy = published(&mut s, &[b"rules"], &[], Some(b"summary of rules"), 8192);
    let l = lineage_for(&policy);
    let summary = policy.summary.clone().unwrap().artifact_digest;
    let mut without_summary = s.clone();
    without_summary.tamper(&summary, b"another summary");
    let r = context_report(Some(&policy), &without_summary, Some(&l), 0);
    assert_eq!(r.reasons, vec![BlockReason::Changed]);
    assert_eq!(r.checks[1].role, Role::Summary);

    // The summary is available, the original is not: still blocked.
    let mut only_summary = ArtifactStore::in_memory();
    only_summary.publish(b"summary of rules").unwrap();
    let r = context_report(Some(&policy), &only_summary, Some(&l), 0);
    assert_eq!(r.reasons, vec![BlockReason::Missing]);
    assert_eq!(r.checks[1].status, CheckStatus::Ok);
}

#[test]
fn a_newer_coordinator_epoch_blocks_until_a_governed_resume() {
    let mut s = ArtifactStore::in_memory();
    let policy = published(&mut s, &[b"rules"], &[b"evidence"], None, 8192);
    let mut l = lineage_for(&policy);
    // The engine restarted: coordinator epoch 1, no session in it yet.
    let r = context_report(Some(&policy), &s, Some(&l), 1);
    assert_eq!(
        (r.status, r.reasons.clone()),
        (ContextStatus::Blocked, vec![BlockReason::OldSessionEpoch])
    );
    assert_eq!(
        serde_json::to_value(&r).unwrap()["reasons"],
        json!(["old_session_epoch"])
    );
    assert!(assemble(&policy, &s, &l, 1, handoff()).is_err());
    l.cold_resume(1, "agent-a", "t1").unwrap();
    assert_eq!(
        context_report(Some(&policy), &s, Some(&l), 1).status,
        ContextStatus::Ready
    );
    // No lineage at all: no session in any epoch.
    assert_eq!(
        context_report(Some(&policy), &s, None, 0).reasons,
        vec![BlockReason::OldSessionEpoch]
    );
}

#[test]
fn every_reason_found_is_listed_once_in_order() {
    let mut s = ArtifactStore::in_memory();
    let policy = published(
        &mut s,
        &[b"aaaaaaaaaa", b"bbbbbbbbbb", b"cccccccccc"],
        &[b"dddddddddd", b"eeeeeeeeee"],
        None,
        10,
    );
    let l = lineage_for(&policy);
    let mut broken = ArtifactStore::in_memory();
    broken.publish(b"cccccccccc").unwrap();
    broken.publish(b"eeeeeeeeee").unwrap();
    broken.publish(b"aaaaaaaaaa").unwrap();
    broken.tamper(&digest(b"aaaaaaaaaa"), b"A");
    broken.publish(b"dddddddddd").unwrap();
    broken.tamper(&digest(b"dddddddddd"), b"D");
    let r = context_report(Some(&policy), &broken, Some(&l), 4);
    assert_eq!(
        r.reasons,
        vec![
            BlockReason::Missing,
            BlockReason::Changed,
            BlockReason::OverBudget,
            BlockReason::OldSessionEpoch
        ]
    );
    assert_eq!(r.total_bytes, 20);
    let statuses: Vec<CheckStatus> = r.checks.iter().map(|c| c.status).collect();
    assert_eq!(
        statuses,
        vec![
            CheckStatus::Changed,
            CheckStatus::Missing,
            CheckStatus::Ok,
            CheckStatus::Changed,
            CheckStatus::Ok
        ]
    );
}

#[test]
fn a_report_never_contains_document_contents_and_is_never_authorized() {
    let secret_rule = "ZEBRA-QUOKKA-7731: never deploy on Fridays";
    let secret_evidence = "PANGOLIN-4412 reviewed the ledger";
    let secret_summary = "AXOLOTL-9090 summary of the run";
    let mut s = ArtifactStore::in_memory();
    let policy = published(
        &mut s,
        &[secret_rule.as_bytes()],
        &[secret_evidence.as_bytes()],
        Some(secret_summary.as_bytes()),
        8192,
    );
    let l = lineage_for(&policy);
    for epoch in [0, 1] {
        let r = context_report(Some(&policy), &s, Some(&l), epoch);
        let text = serde_json::to_string(&r).unwrap();
        for secret in [secret_rule, secret_evidence, secret_summary] {
            assert!(!text.contains(secret), "{text}");
            assert!(!text.contains(&BASE64.encode(secret)), "{text}");
            assert!(
                !text.contains("ZEBRA") && !text.contains("PANGOLIN") && !text.contains("AXOLOTL")
            );
        }
        assert!(text.contains("\"authorized\":false"), "{text}");
    }
    // `authorized` cannot be anything but false.
    let r = context_report(Some(&policy), &s, Some(&l), 0);
    let mut v = serde_json::to_value(&r).unwrap();
    assert_eq!(
        serde_json::from_value::<ContextReport>(v.clone()).unwrap(),
        r
    );
    v["authorized"] = json!(true);
    let e = serde_json::from_value::<ContextReport>(v).unwrap_err();
    assert!(
        e.to_string()
            .contains("a context report is never authorized: `authorized` must be false"),
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------------
// Delivery

#[test]
fn a_ready_context_assembles_the_exact_bytes_with_an_advisory_summary() {
    let rules = "Preserve required approvals. Validate all declared outputs before acceptance.";
    let mut s = ArtifactStore::in_memory();
    let policy = published(
        &mut s,
        &[rules.as_bytes()],
        &[b"Reviewed reference material."],
        Some(b"The run had reached step 3."),
        8192,
    );
    let l = lineage_for(&policy);
    let e = assemble(&policy, &s, &l, 0, handoff()).unwrap();
    assert_eq!(e.format, ENVELOPE_FORMAT);
    assert_eq!(e.format, "coding-context-envelope/1");
    assert_eq!(&e.session, l.current(0).unwrap());
    let v = serde_json::to_value(&e).unwrap();
    assert_eq!(
        v["originals"],
        json!([{ "name": "instruction-0", "artifactDigest": digest(rules.as_bytes()), "bytes": BASE64.encode(rules) }])
    );
    assert_eq!(v["retainedEvidence"][0]["name"], "evidence-0");
    assert_eq!(v["summary"]["advisory"], json!(true));
    assert_eq!(v["summary"]["basedOn"], json!(policy.originals()));
    assert_eq!(
        v["handoff"],
        json!({
            "task": "support-ticket-timeout/step-3", "planDigest": dg('c'),
            "definition": "scenarios/support-ticket-timeout.yaml", "incomingArtifactDigest": dg('d')
        })
    );
    assert_eq!(v["session"]["kind"], "FRESH");
    let d = e.decode().unwrap();
    assert_eq!(d.originals[0].text, rules);
    assert_eq!(d.retained_evidence[0].text, "Reviewed reference material.");
    assert_eq!(d.summary.unwrap().text, "The run had reached step 3.");
    // The envelope round-trips through JSON (what an adapter receives) with the same digest.
    let back: ContextEnvelope = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(envelope_digest(&back), envelope_digest(&e));
    let mut not_advisory = v;
    not_advisory["summary"]["advisory"] = json!(false);
    let err = serde_json::from_value::<ContextEnvelope>(not_advisory).unwrap_err();
    assert!(err.to_string().contains("`advisory` must be true"), "{err}");
}

#[test]
fn a_blocked_context_returns_the_report_instead_of_an_envelope() {
    let mut s = ArtifactStore::in_memory();
    let policy = published(&mut s, &[b"0123456789"], &[], None, 9);
    let r = assemble(&policy, &s, &lineage_for(&policy), 0, handoff()).unwrap_err();
    assert_eq!(
        (r.status, r.reasons, r.total_bytes, r.max_bytes),
        (
            ContextStatus::Blocked,
            vec![BlockReason::OverBudget],
            10,
            Some(9)
        )
    );
}

#[test]
fn the_envelope_digest_is_stable_and_changes_with_one_byte() {
    let build = |rule: &[u8]| {
        let mut s = ArtifactStore::in_memory();
        let policy = published(&mut s, &[rule], &[b"evidence"], Some(b"summary"), 8192);
        assemble(&policy, &s, &lineage_for(&policy), 0, handoff()).unwrap()
    };
    let a = envelope_digest(&build(b"Validate all declared outputs."));
    assert!(is_digest(&a));
    assert_eq!(
        a,
        envelope_digest(&build(b"Validate all declared outputs."))
    );
    assert_ne!(
        a,
        envelope_digest(&build(b"Validate all declared outputs!"))
    );
    let mut e = build(b"Validate all declared outputs.");
    e.handoff.task.push('x');
    assert_ne!(a, envelope_digest(&e));
}

#[test]
fn decoding_checks_every_document_against_its_digest() {
    let mut s = ArtifactStore::in_memory();
    let policy = published(&mut s, &[b"rules"], &[b"evidence"], None, 8192);
    let mut e = assemble(&policy, &s, &lineage_for(&policy), 0, handoff()).unwrap();
    e.retained_evidence[0].bytes = BASE64.encode(b"evidencE");
    assert_eq!(
        e.decode().unwrap_err(),
        EnvelopeError::DigestMismatch {
            name: "evidence-0".into(),
            digest: digest(b"evidence"),
            actual: digest(b"evidencE")
        }
    );
    e.retained_evidence[0].bytes = "not base64!".into();
    assert!(matches!(e.decode(), Err(EnvelopeError::Base64 { .. })));
    e.format = "coding-context-envelope/2".into();
    assert_eq!(
        e.decode().unwrap_err().to_string(),
        "the envelope's format is `coding-context-envelope/2`, not `coding-context-envelope/1`"
    );
}

#[test]
fn a_missing_or_wrong_receipt_leaves_responsibility_unknown() {
    let mut s = ArtifactStore::in_memory();
    let policy = published(&mut s, &[b"rules"], &[], None, 8192);
    let e = assemble(&policy, &s, &lineage_for(&policy), 0, handoff()).unwrap();
    let expected = envelope_digest(&e);
    assert_eq!(
        check_receipt(&expected, Some(&expected)),
        Responsibility::Delivered
    );
    assert_eq!(check_receipt(&expected, None), Responsibility::Unknown);
    assert_eq!(
        check_receipt(&expected, Some(&expected.to_uppercase())),
        Responsibility::Unknown
    );
    let mut other = e.clone();
    other.originals[0].name.push('!');
    assert_eq!(
        check_receipt(&expected, Some(&envelope_digest(&other))),
        Responsibility::Unknown
    );
    assert_eq!(check_receipt(&expected, Some("")), Responsibility::Unknown);
    assert_eq!(
        serde_json::to_value([Responsibility::Delivered, Responsibility::Unknown]).unwrap(),
        json!(["DELIVERED", "UNKNOWN"])
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// For any budget and any artifact sizes: an envelope whose decoded bytes are exactly the published
    /// bytes, or `BLOCKED` `over_budget` exactly when the total is over `maxBytes` — never truncation.
    #[test]
    fn assemble_never_truncates(
        max_bytes in 1u64..=32768,
        instructions in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..6000), 1..4),
        evidence in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..6000), 0..4),
        summary in prop::option::of(prop::collection::vec(any::<u8>(), 0..6000)),
    ) {
        let mut s = ArtifactStore::in_memory();
        let ins: Vec<&[u8]> = instructions.iter().map(Vec::as_slice).collect();
        let evs: Vec<&[u8]> = evidence.iter().map(Vec::as_slice).collect();
        let policy = published(&mut s, &ins, &evs, summary.as_deref(), max_bytes);
        prop_assert_eq!(policy.check(), Ok(()));
        let total: u64 = ins.iter().chain(&evs).map(|b| b.len() as u64).sum::<u64>()
            + summary.as_ref().map_or(0, |b| b.len() as u64);
        match assemble(&policy, &s, &lineage_for(&policy), 0, handoff()) {
            Ok(e) => {
                prop_assert!(total <= max_bytes);
                let d = e.decode_bytes().unwrap();
                let got: Vec<&[u8]> = d.originals.iter().map(|(_, _, b)| b.as_slice()).collect();
                prop_assert_eq!(got, ins);
                let got: Vec<&[u8]> = d.retained_evidence.iter().map(|(_, _, b)| b.as_slice()).collect();
                prop_assert_eq!(got, evs);
                prop_assert_eq!(d.summary, summary);
            }
            Err(r) => {
                prop_assert!(total > max_bytes);
                prop_assert_eq!(r.status, ContextStatus::Blocked);
                prop_assert_eq!(r.reasons, vec![BlockReason::OverBudget]);
                prop_assert_eq!(r.total_bytes, total);
            }
        }
    }
}

#[test]
fn a_lineage_read_back_from_its_records_is_checked() {
    let mut l = Lineage::fresh("run-1", "agent-a", "assignment-1", &dg('9'), "t0");
    l.cold_resume(1, "agent-a", "t1").unwrap();
    l.replace(1, "agent-b", "t2").unwrap();
    let json = serde_json::to_string(&l).unwrap();
    let records: Vec<compaction_eval::governed::SessionRecord> =
        serde_json::from_str(&json).unwrap();
    assert_eq!(Lineage::from_records(records.clone()).unwrap(), l);

    // A record edited after the fact no longer has the id its contents give.
    let mut other = Lineage::fresh("run-1", "agent-a", "assignment-1", &dg('9'), "t0");
    other.cold_resume(1, "agent-a", "t1").unwrap();
    let other_id = other.replace(1, "agent-c", "t2").unwrap().session.clone();
    let mut edited = records.clone();
    edited[2].agent = "agent-c".into();
    assert_eq!(
        Lineage::from_records(edited).unwrap_err().to_string(),
        format!(
            "session record 2 does not continue the lineage: its id is {}, its contents give {other_id}",
            records[2].session
        )
    );
    let mut dropped = records.clone();
    dropped.remove(1);
    assert_eq!(
        Lineage::from_records(dropped).unwrap_err().to_string(),
        format!(
            "session record 1 does not continue the lineage: its parent is not the session before it ({})",
            records[0].session
        )
    );
    assert!(Lineage::from_records(records[1..].to_vec()).is_err());
    assert!(Lineage::from_records(Vec::new()).is_err());
}
