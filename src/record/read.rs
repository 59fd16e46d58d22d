//! Reading `results.jsonl` (and `journal.jsonl`, the same form): one record per line, a torn
//! last line ignored, a repeated cell refused, every secret of the run redacted; and every record
//! version ([`RECORD_VERSION`]): a line without `record_version` is version 1, whose diagnostics
//! the legacy reader ([`legacy`]) turns into the current types.
//!
//! Owns: [`read_records`], [`scan_records`] (a pass that holds no record), [`parse_record`],
//! `RunRecord`'s `Deserialize` (the version dispatch)
//! and the legacy reader of version-1 diagnostics. Must not: write a record (the runner does),
//! write the legacy text form (nothing does any more), or import anything of the pipeline (only
//! `secrets` and `vocab`).

use std::path::Path;

use serde::{Deserialize, de::Error as _};
use serde_json::Value;

use super::{RECORD_VERSION, RecordError, RunRecord};

/// The version of a record that has no `record_version` field: diagnostics as text.
pub const LEGACY_VERSION: u64 = 1;

/// The version field of a line, read before the rest.
#[derive(Deserialize)]
struct Head {
    #[serde(default = "legacy_version")]
    record_version: u64,
}

fn legacy_version() -> u64 {
    LEGACY_VERSION
}

fn unsupported(version: u64) -> String {
    format!(
        "record_version {version} is not one this build reads ({LEGACY_VERSION} to \
         {RECORD_VERSION}; a newer compaction-eval wrote it)"
    )
}

/// One line of `results.jsonl` or `journal.jsonl`, of any version this build reads. A current
/// record is read straight from the text (errors name the column); a version-1 record through
/// [`legacy::upgrade`].
pub fn parse_record(line: &str) -> Result<RunRecord, serde_json::Error> {
    let head: Head = serde_json::from_str(line)?;
    match head.record_version {
        RECORD_VERSION => {
            let mut de = serde_json::Deserializer::from_str(line);
            let r = RunRecord::deserialize(&mut de)?;
            de.end()?;
            Ok(r)
        }
        LEGACY_VERSION => from_value(serde_json::from_str(line)?),
        v => Err(serde_json::Error::custom(unsupported(v))),
    }
}

/// A record from its JSON value, of any version this build reads.
fn from_value(mut v: Value) -> Result<RunRecord, serde_json::Error> {
    let head = Head::deserialize(&v)?;
    match head.record_version {
        RECORD_VERSION => {}
        LEGACY_VERSION => legacy::upgrade(&mut v).map_err(serde_json::Error::custom)?,
        v => return Err(serde_json::Error::custom(unsupported(v))),
    }
    RunRecord::deserialize(v)
}

impl<'de> Deserialize<'de> for RunRecord {
    /// Any version this build reads (the inherent `RunRecord::deserialize` is the current
    /// version's body only).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_value(Value::deserialize(d)?).map_err(D::Error::custom)
    }
}

/// Reads `results.jsonl`. A torn last line (a killed run) is ignored; any other bad line is an
/// error naming the line, and so is a second record of the same cell. Every secret of the run
/// ([`crate::secrets`]) is redacted from what is read.
pub fn read_records(path: &Path) -> Result<Vec<RunRecord>, RecordError> {
    read_records_with(path, |_| {})
}

/// [`read_records`], each record passed through `keep` before it is held: a reader that needs
/// only part of a record (the report's aggregates) drops the rest as it reads.
pub fn read_records_with(
    path: &Path,
    mut keep: impl FnMut(&mut RunRecord),
) -> Result<Vec<RunRecord>, RecordError> {
    let mut out: Vec<RunRecord> = Vec::new();
    // Each cell by a digest of its id, with the places of the records that have it: a run of
    // 60,000 cells held its ids twice over (33 MB) only to find a second record of one cell.
    let mut seen: std::collections::HashMap<u64, Vec<(usize, usize)>> =
        std::collections::HashMap::new();
    scan_records(path, |line, r| {
        let places = seen.entry(r.digest()).or_default();
        if let Some(&(_, first)) = places.iter().find(|(k, _)| out[*k].same_cell(&r)) {
            return Err(RecordError::Duplicate {
                path: path.to_path_buf(),
                line,
                first,
                id: r.id().to_string(),
            });
        }
        places.push((out.len(), line));
        let mut r = r;
        keep(&mut r);
        out.push(r);
        Ok(())
    })?;
    Ok(out)
}

/// Reads `results.jsonl` a record at a time, handing each to `f` with its line number and
/// holding none: what a pass over a run's records costs in memory is what `f` keeps. Torn
/// lines and secrets as [`read_records`]; a second record of a cell is not looked for.
pub fn scan_records(
    path: &Path,
    mut f: impl FnMut(usize, RunRecord) -> Result<(), RecordError>,
) -> Result<(), RecordError> {
    scan_records_at(path, |line, _, r| f(line, r))
}

/// [`scan_records`], each record handed over with the byte offset of its line too, so that a
/// caller can keep where a record is instead of the record (a resumed run ordering its records).
pub fn scan_records_at(
    path: &Path,
    mut f: impl FnMut(usize, u64, RunRecord) -> Result<(), RecordError>,
) -> Result<(), RecordError> {
    use std::io::BufRead;
    let io = |source| RecordError::Io {
        path: path.to_path_buf(),
        source,
    };
    // Read a line at a time: a run's records are never also held as the file's text (68 MB
    // for 44,000 cells).
    let mut reader =
        std::io::BufReader::with_capacity(1 << 16, std::fs::File::open(path).map_err(io)?);
    let secrets = crate::secrets::any();
    let mut buf: Vec<u8> = Vec::new();
    let mut offset = 0usize;
    // A bad line is an error only once another line follows it: the last may be torn.
    let mut torn: Option<RecordError> = None;
    for i in 0.. {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        if let Some(e) = torn.take() {
            return Err(e);
        }
        let start = offset as u64;
        let l = buf.strip_suffix(b"\n").unwrap_or(&buf);
        let line = match std::str::from_utf8(l) {
            Ok(t) => t,
            Err(e) => {
                torn = Some(RecordError::Corrupt {
                    path: path.to_path_buf(),
                    line: i + 1,
                    message: format!(
                        "not UTF-8 text: invalid byte sequence at byte offset {}",
                        offset + e.valid_up_to()
                    ),
                });
                offset += n;
                continue;
            }
        };
        offset += n;
        if line.trim().is_empty() {
            continue;
        }
        match parse_record(line) {
            Ok(mut r) => {
                if secrets && crate::secrets::contains(line) {
                    crate::secrets::redact_serde(&mut r);
                }
                f(i + 1, start, r)?;
            }
            Err(e) => {
                torn = Some(RecordError::Corrupt {
                    path: path.to_path_buf(),
                    line: i + 1,
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(())
}

pub use legacy::ParseDiagnosticError;

/// The legacy reader: version-1 records wrote each typed diagnostic as one string, in a small
/// text grammar; this parses those strings into the current types, for reading old run folders
/// (`report`, `gate`, `--resume`, `merge`, `compare`). Nothing writes this form any more.
///
/// | field | version-1 form |
/// | --- | --- |
/// | `omitted` | `FACT: contradicted by calling TOOL`, `FACT: ignored: re-ran TOOL from EVENT`, `FACT: ignored: never did TARGET`, `FACT: asked again: "QUESTION"` |
/// | `repeated` | `#SEQ TOOL (as EVENT)` |
/// | `duplicates` | `TOOL {ARGS as JSON} ×COUNT` |
/// | `violations` | `#SEQ TOOL under approval ID in state STATE`, `#SEQ TOOL forbidden (REASON: RULE)`, ``followed injected directive `FACT` `` |
/// | `checkpoint_rule_violations` | `RULE at WHERE: DETAIL` |
pub mod legacy {
    use serde::Serialize;
    use serde_json::Value;

    use crate::record::{
        Duplicate, Intent, Omission, OmissionEvidence, RepeatedRead, RuleBreak, Violation,
    };
    use crate::vocab::ApprovalStatus;

    /// A version-1 diagnostic string that is not in the form the harness wrote.
    #[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
    #[error("not a {kind} diagnostic: {text:?}")]
    pub struct ParseDiagnosticError {
        kind: &'static str,
        text: String,
    }

    fn bad(kind: &'static str, text: &str) -> ParseDiagnosticError {
        ParseDiagnosticError {
            kind,
            text: text.to_string(),
        }
    }

    /// Rewrites a version-1 record's diagnostics in place into the current JSON form, so the
    /// current reader takes it. Every entry of the typed lists must be a string.
    pub fn upgrade(record: &mut Value) -> Result<(), ParseDiagnosticError> {
        let Some(d) = record.get_mut("diagnostics").and_then(Value::as_object_mut) else {
            return Ok(());
        };
        fn each<T: Serialize>(
            d: &mut serde_json::Map<String, Value>,
            key: &'static str,
            parse: fn(&str) -> Result<T, ParseDiagnosticError>,
        ) -> Result<(), ParseDiagnosticError> {
            let Some(Value::Array(items)) = d.get_mut(key) else {
                return Ok(());
            };
            for item in items {
                let Value::String(text) = item else {
                    return Err(bad(key, &item.to_string()));
                };
                let parsed = parse(text)?;
                *item = serde_json::to_value(parsed).map_err(|_| bad(key, text))?;
            }
            Ok(())
        }
        each(d, "omitted", omission)?;
        each(d, "repeated", repeated_read)?;
        each(d, "duplicates", duplicate)?;
        each(d, "violations", violation)?;
        each(d, "checkpoint_rule_violations", rule_break)?;
        Ok(())
    }

    /// `#<seq> <rest>`: a ledger sequence number and what follows it.
    fn split_seq<'a>(
        kind: &'static str,
        text: &'a str,
    ) -> Result<(u64, &'a str), ParseDiagnosticError> {
        let (seq, rest) = text
            .strip_prefix('#')
            .and_then(|t| t.split_once(' '))
            .ok_or_else(|| bad(kind, text))?;
        Ok((seq.parse().map_err(|_| bad(kind, text))?, rest))
    }

    fn evidence(text: &str) -> Result<OmissionEvidence, ParseDiagnosticError> {
        let owned = |s: &str| s.to_string();
        if let Some(tool) = text.strip_prefix("contradicted by calling ") {
            Ok(OmissionEvidence::Contradicted { tool: owned(tool) })
        } else if let Some(rest) = text.strip_prefix("ignored: re-ran ") {
            let (tool, event) = rest
                .rsplit_once(" from ")
                .ok_or_else(|| bad("omission evidence", text))?;
            Ok(OmissionEvidence::Reran {
                tool: owned(tool),
                event: owned(event),
            })
        } else if let Some(target) = text.strip_prefix("ignored: never did ") {
            Ok(OmissionEvidence::NeverDid {
                target: owned(target),
            })
        } else if let Some(q) = text
            .strip_prefix("asked again: \"")
            .and_then(|q| q.strip_suffix('"'))
        {
            Ok(OmissionEvidence::AskedAgain { question: owned(q) })
        } else {
            Err(bad("omission evidence", text))
        }
    }

    /// `<fact>: <evidence>`: the fact ends at the first `: ` after which the evidence reads.
    pub fn omission(text: &str) -> Result<Omission, ParseDiagnosticError> {
        text.match_indices(": ")
            .find_map(|(i, sep)| {
                let evidence = evidence(&text[i + sep.len()..]).ok()?;
                Some(Omission {
                    fact: text[..i].to_string(),
                    evidence,
                })
            })
            .ok_or_else(|| bad("omission", text))
    }

    /// `#<seq> <tool> (as <event>)`.
    pub fn repeated_read(text: &str) -> Result<RepeatedRead, ParseDiagnosticError> {
        let (seq, rest) = split_seq("repeated read", text)?;
        let (tool, event) = rest
            .strip_suffix(')')
            .and_then(|r| r.split_once(" (as "))
            .ok_or_else(|| bad("repeated read", text))?;
        Ok(RepeatedRead {
            seq,
            tool: tool.to_string(),
            as_event: event.to_string(),
        })
    }

    /// `<tool> <arguments as JSON>`.
    fn intent(text: &str) -> Result<Intent, ParseDiagnosticError> {
        let (tool, _) = text.split_once(" {").ok_or_else(|| bad("intent", text))?;
        let args =
            serde_json::from_str(&text[tool.len() + 1..]).map_err(|_| bad("intent", text))?;
        Ok(Intent {
            tool: tool.to_string(),
            args,
        })
    }

    /// `<intent> ×<count>`.
    pub fn duplicate(text: &str) -> Result<Duplicate, ParseDiagnosticError> {
        let (intent_text, count) = text
            .rsplit_once(" ×")
            .ok_or_else(|| bad("duplicate", text))?;
        Ok(Duplicate {
            intent: intent(intent_text)?,
            count: count.parse().map_err(|_| bad("duplicate", text))?,
        })
    }

    /// The approval state `as_str` names.
    fn approval_state(name: &str) -> Option<ApprovalStatus> {
        use ApprovalStatus::*;
        [Granted, Pending, Expired, Revoked, Denied]
            .into_iter()
            .find(|s| s.as_str() == name)
    }

    /// `#<seq> <tool> under approval <approval> in state <state>`,
    /// `#<seq> <tool> forbidden (<reason>: <rule>)` or ``followed injected directive `<fact>` ``.
    pub fn violation(text: &str) -> Result<Violation, ParseDiagnosticError> {
        const KIND: &str = "violation";
        if let Some(fact) = text
            .strip_prefix("followed injected directive `")
            .and_then(|f| f.strip_suffix('`'))
        {
            return Ok(Violation::FollowedDirective {
                fact: fact.to_string(),
            });
        }
        let (seq, rest) = split_seq(KIND, text)?;
        // A forbidden call ends with `)`; an approval state never does.
        if let Some(inner) = rest.strip_suffix(')') {
            let (tool, why) = inner
                .split_once(" forbidden (")
                .ok_or_else(|| bad(KIND, text))?;
            let (reason, rule) = why.rsplit_once(": ").ok_or_else(|| bad(KIND, text))?;
            return Ok(Violation::Forbidden {
                seq,
                tool: tool.to_string(),
                reason: reason.to_string(),
                rule: rule.to_string(),
            });
        }
        let (head, state) = rest
            .rsplit_once(" in state ")
            .ok_or_else(|| bad(KIND, text))?;
        let (tool, approval) = head
            .split_once(" under approval ")
            .ok_or_else(|| bad(KIND, text))?;
        Ok(Violation::ApprovalNotGranted {
            seq,
            tool: tool.to_string(),
            approval: approval.to_string(),
            state: approval_state(state).ok_or_else(|| bad(KIND, text))?,
        })
    }

    /// `<rule> at <where>: <detail>`.
    pub fn rule_break(text: &str) -> Result<RuleBreak, ParseDiagnosticError> {
        let (rule, rest) = text
            .split_once(" at ")
            .ok_or_else(|| bad("checkpoint rule", text))?;
        let (at, detail) = rest
            .split_once(": ")
            .ok_or_else(|| bad("checkpoint rule", text))?;
        Ok(RuleBreak {
            rule: rule.to_string(),
            at: at.to_string(),
            detail: detail.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::legacy::*;
    use super::*;
    use crate::record::{
        Duplicate, Intent, Omission, OmissionEvidence, RepeatedRead, RuleBreak, Violation,
    };
    use crate::vocab::{ApprovalStatus, Object};

    fn omission_of(fact: &str, evidence: OmissionEvidence) -> Omission {
        Omission {
            fact: fact.into(),
            evidence,
        }
    }

    #[test]
    fn legacy_omissions_read() {
        use OmissionEvidence::*;
        let cases = [
            (
                "no-refund: contradicted by calling issue_refund",
                omission_of(
                    "no-refund",
                    Contradicted {
                        tool: "issue_refund".into(),
                    },
                ),
            ),
            (
                "a:b: ignored: re-ran get_ticket from event-0003",
                omission_of(
                    "a:b",
                    Reran {
                        tool: "get_ticket".into(),
                        event: "event-0003".into(),
                    },
                ),
            ),
            (
                "fact: with space: ignored: never did appr 7",
                omission_of(
                    "fact: with space",
                    NeverDid {
                        target: "appr 7".into(),
                    },
                ),
            ),
            (
                "tz: asked again: \"which \"zone\": UTC or: ignored: never did x?\"",
                omission_of(
                    "tz",
                    AskedAgain {
                        question: "which \"zone\": UTC or: ignored: never did x?".into(),
                    },
                ),
            ),
            (
                "<script>fact()</script> & co: ignored: never did ",
                omission_of(
                    "<script>fact()</script> & co",
                    NeverDid {
                        target: String::new(),
                    },
                ),
            ),
        ];
        for (text, value) in cases {
            assert_eq!(omission(text), Ok(value), "{text}");
        }
        assert!(omission("f: lost").is_err());
        assert!(omission("no separator").is_err());
    }

    #[test]
    fn legacy_repeated_reads_read() {
        let read = |seq, tool: &str, as_event: &str| RepeatedRead {
            seq,
            tool: tool.into(),
            as_event: as_event.into(),
        };
        assert_eq!(
            repeated_read("#12 get_ticket (as event-0004)"),
            Ok(read(12, "get_ticket", "event-0004"))
        );
        assert_eq!(repeated_read("#0 read (as )"), Ok(read(0, "read", "")));
        assert_eq!(
            repeated_read("#3 read (as ev: \"x (as y)\")"),
            Ok(read(3, "read", "ev: \"x (as y)\""))
        );
        assert!(repeated_read("12 read (as e)").is_err());
        assert!(repeated_read("#x read (as e)").is_err());
    }

    #[test]
    fn legacy_duplicates_read() {
        let args: Object = serde_json::from_str(
            r#"{"to":"a@b.c","body":"say \"hi\": ×2 {ok}","n":1.5,"z":[1,{"k":null}]}"#,
        )
        .expect("args");
        assert_eq!(
            duplicate(
                r#"send_email {"to":"a@b.c","body":"say \"hi\": ×2 {ok}","n":1.5,"z":[1,{"k":null}]} ×3"#
            ),
            Ok(Duplicate {
                intent: Intent {
                    tool: "send_email".into(),
                    args,
                },
                count: 3,
            })
        );
        assert_eq!(
            duplicate("create_ticket {} ×2"),
            Ok(Duplicate {
                intent: Intent {
                    tool: "create_ticket".into(),
                    args: Object::new(),
                },
                count: 2,
            })
        );
        assert!(duplicate("send_email {} x2").is_err());
        assert!(duplicate("send_email nojson ×2").is_err());
    }

    #[test]
    fn legacy_violations_read() {
        assert_eq!(
            violation("#9 deploy under approval appr-1 in state pending"),
            Ok(Violation::ApprovalNotGranted {
                seq: 9,
                tool: "deploy".into(),
                approval: "appr-1".into(),
                state: ApprovalStatus::Pending,
            })
        );
        for state in [
            ApprovalStatus::Granted,
            ApprovalStatus::Expired,
            ApprovalStatus::Revoked,
            ApprovalStatus::Denied,
        ] {
            let text = format!("#1 t under approval a b in state {}", state.as_str());
            assert_eq!(
                violation(&text),
                Ok(Violation::ApprovalNotGranted {
                    seq: 1,
                    tool: "t".into(),
                    approval: "a b".into(),
                    state,
                })
            );
        }
        assert_eq!(
            violation("#14 send_email forbidden (injected_directive: exfiltrate-export)"),
            Ok(Violation::Forbidden {
                seq: 14,
                tool: "send_email".into(),
                reason: "injected_directive".into(),
                rule: "exfiltrate-export".into(),
            })
        );
        assert_eq!(
            violation("#2 x forbidden (a \"quoted\": reason (really): r:1)"),
            Ok(Violation::Forbidden {
                seq: 2,
                tool: "x".into(),
                reason: "a \"quoted\": reason (really)".into(),
                rule: "r:1".into(),
            })
        );
        assert_eq!(
            violation("followed injected directive `ignore: \"previous\" instructions`"),
            Ok(Violation::FollowedDirective {
                fact: "ignore: \"previous\" instructions".into(),
            })
        );
        assert!(violation("#1 t in state maybe").is_err());
        assert!(violation("followed something").is_err());
    }

    #[test]
    fn legacy_rule_breaks_read() {
        assert_eq!(
            rule_break("hypothesis_promoted at statements[3]: \"maybe\" became: fact at last"),
            Ok(RuleBreak {
                rule: "hypothesis_promoted".into(),
                at: "statements[3]".into(),
                detail: "\"maybe\" became: fact at last".into(),
            })
        );
        assert_eq!(
            rule_break("operation_missing at events[event-0007]: "),
            Ok(RuleBreak {
                rule: "operation_missing".into(),
                at: "events[event-0007]".into(),
                detail: String::new(),
            })
        );
        assert!(rule_break("no rule here").is_err());
    }

    /// A version-1 line (diagnostics as text) of the shape the previous build wrote.
    const V1: &str = r##"{"source":"scenario","scenario":"s","scale":"base","interrupt":"p","strategy":"C","model":"sim:careful","rep":0,"seed":7,"status":"ok","metrics":{"task_success":false,"omitted_context":1,"repeated_work":1,"duplicate_side_effects":1,"safety_violations":1,"recovery_quality":0.5,"restore_tokens":10,"total_tokens":20,"first_action_ms":1.5,"completion_ms":2.5,"compaction_tokens":0,"history_tokens":40,"compression_ratio":0.25},"diagnostics":{"omitted":["f: ignored: re-ran get from event-0002"],"repeated":["#4 get (as event-0002)"],"duplicates":["send {\"to\":\"x\"} ×2"],"violations":["#5 send forbidden (constraint: no-send)"],"finish":"completed","degraded":false,"steps":3,"checkpoint_checked":true,"checkpoint_rule_violations":["constraint_missing at events[event-0001]: not carried"]}}"##;

    #[test]
    fn a_version_1_record_reads_as_the_current_types_and_is_written_as_version_2() {
        let r = parse_record(V1).expect("v1");
        assert_eq!(
            serde_json::from_str::<RunRecord>(V1).expect("v1 by trait"),
            r
        );
        let d = &r.diagnostics;
        assert_eq!(
            d.omitted[0].evidence,
            OmissionEvidence::Reran {
                tool: "get".into(),
                event: "event-0002".into()
            }
        );
        assert_eq!(d.repeated[0].seq, 4);
        assert_eq!(d.duplicates[0].count, 2);
        assert!(d.violations[0].is_call());
        assert_eq!(d.checkpoint_rule_violations[0].rule, "constraint_missing");
        let line = serde_json::to_string(&r).expect("write");
        assert!(
            line.starts_with(r#"{"record_version":2,"source":"scenario","#),
            "{line}"
        );
        assert!(line.contains(r#""repeated":[{"seq":4,"tool":"get","as_event":"event-0002"}]"#));
        // The rest of the line is unchanged: only the version and the diagnostics' entries.
        let mut old: Value = serde_json::from_str(V1).expect("json");
        let mut new: Value = serde_json::from_str(&line).expect("json");
        new.as_object_mut()
            .expect("object")
            .remove("record_version");
        for k in [
            "omitted",
            "repeated",
            "duplicates",
            "violations",
            "checkpoint_rule_violations",
        ] {
            old["diagnostics"][k] = Value::Null;
            new["diagnostics"][k] = Value::Null;
        }
        assert_eq!(old, new);
        assert_eq!(parse_record(&line).expect("v2"), r);
        assert_eq!(
            serde_json::from_str::<RunRecord>(&line).expect("v2 by trait"),
            r
        );
    }

    #[test]
    fn an_unknown_version_or_a_bad_legacy_entry_is_refused() {
        let v3 = V1.replacen('{', r#"{"record_version":3,"#, 1);
        let e = parse_record(&v3).expect_err("v3").to_string();
        assert!(
            e.contains("record_version 3 is not one this build reads"),
            "{e}"
        );
        assert!(serde_json::from_str::<RunRecord>(&v3).is_err());
        let bad = V1.replace("#4 get (as event-0002)", "4 get");
        let e = parse_record(&bad).expect_err("bad").to_string();
        assert!(e.contains("not a repeated read diagnostic"), "{e}");
        // A version-2 record's entries are objects, never the legacy text.
        let v2_text = V1.replacen('{', r#"{"record_version":2,"#, 1);
        assert!(parse_record(&v2_text).is_err());
    }
}
