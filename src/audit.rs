//! The model-free handoff audit: for every scenario × interrupt point × strategy, what the
//! handoff's text carries — critical facts by their detectors, injected directives (apart: carried
//! as an instruction, only quoted or marked, or dropped; judged locally by `provenance`), uncertain
//! operations with their key and status — its tokens at restore,
//! and the checkpoint rule checks. It reads only the handoff text and checkpoint, never the
//! strategy's id, and runs no destination. Owns [`rule_check`], the rules on a handoff as the
//! destination receives it, which a run, `check-handoff` and the audit all report.

use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use crate::handoff::Handoff;
use crate::provenance::{self, Presentation};
use crate::scenario::{FactKind, Scenario, normalize};
use crate::state::ObservedOutcome;
use crate::state::RestorePoint;
use crate::strategy::Registry;

/// One audited handoff.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AuditRow {
    pub scenario: String,
    pub interrupt: String,
    pub strategy: String,
    pub tokens_at_restore: u64,
    /// Critical facts that matter at this point.
    pub facts: usize,
    /// Facts whose detectors match the handoff text.
    pub carried: Vec<String>,
    /// Facts the text lacks.
    pub missing: Vec<String>,
    /// Of the missing facts, those whose source document the handoff names while it offers
    /// `retrieve`.
    pub retrievable: Vec<String>,
    /// Injected directives the handoff carries as an instruction somewhere (judged locally,
    /// `provenance`): a destination may follow them.
    pub injected_as_instruction: Vec<String>,
    /// Injected directives the handoff carries only quoted and attributed, or marked do-not-follow.
    pub injected_quoted: Vec<String>,
    /// Injected directives the handoff does not carry.
    pub injected_dropped: Vec<String>,
    /// Uncertain operations (timed-out writes) whose idempotency key and uncertain status the
    /// text keeps, of all uncertain operations.
    pub uncertain_kept: usize,
    pub uncertain_total: usize,
    /// Rule violations of the checkpoint (`rule at place: detail`); `None` when the handoff is
    /// not a checkpoint.
    pub rule_violations: Option<Vec<String>>,
    /// A handoff that could not be built (a failing plug-in).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A chain's audit (`audit --cycles N`; the row's handoff is the chain's last): which
    /// critical facts each compaction kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain: Option<ChainAudit>,
}

/// What each compaction of a chain kept of the critical facts of its last point.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ChainAudit {
    /// The chain's interrupt points, in order (the last is the row's).
    pub points: Vec<String>,
    pub facts: Vec<FactTrail>,
}

/// One critical fact through a chain.
#[derive(Debug, Clone, Serialize)]
pub struct FactTrail {
    pub fact: String,
    /// Per compaction: carried (`true`), absent (`false`), or `null` where the fact does not
    /// matter yet at that point.
    pub kept: Vec<Option<bool>>,
    /// The compaction (1-based) that first lost it after it mattered, if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_at: Option<u32>,
}

/// Which critical facts of the last of `points` each handoff of the chain `hs` carries.
pub fn chain_audit(points: &[Arc<RestorePoint>], hs: &[Handoff]) -> ChainAudit {
    let Some(last) = points.last() else {
        return ChainAudit::default();
    };
    let texts: Vec<String> = hs.iter().map(|h| normalize(&h.text)).collect();
    let facts = last
        .scenario
        .facts_at(&last.interrupt)
        .filter(|f| f.kind != FactKind::InjectedDirective)
        .map(|f| {
            let kept: Vec<Option<bool>> = points
                .iter()
                .zip(&texts)
                .map(|(p, t)| {
                    p.scenario
                        .facts_at(&p.interrupt)
                        .any(|g| g.id == f.id)
                        .then(|| f.detectors.iter().any(|d| d.matches(t)))
                })
                .collect();
            let lost_at = kept
                .iter()
                .position(|k| *k == Some(false))
                .map(|k| k as u32 + 1);
            FactTrail {
                fact: f.id.clone(),
                kept,
                lost_at,
            }
        })
        .collect();
    ChainAudit {
        points: points.iter().map(|p| p.interrupt.point.clone()).collect(),
        facts,
    }
}

/// Audits one handoff.
pub fn audit_handoff(at: &RestorePoint, h: &Handoff) -> AuditRow {
    let s = &at.scenario;
    let text = normalize(&h.text);
    let offers_retrieve = h.extra_tools.iter().any(|t| t.name == "retrieve");
    let mut row = AuditRow {
        scenario: s.id.clone(),
        interrupt: at.interrupt.point.clone(),
        strategy: h.strategy.clone(),
        tokens_at_restore: h.tokens_at_restore,
        // The rules as a run reports them (the constraint rule reads the handoff whole).
        rule_violations: h.checkpoint.as_ref().map(|_| {
            rule_check(h, h, at)
                .into_iter()
                .map(|v| format!("{} at {}: {}", v.rule, v.at, v.detail))
                .collect()
        }),
        ..Default::default()
    };
    for f in s.facts_at(&at.interrupt) {
        // An injected directive is not a fact to carry: it is reported apart.
        if f.kind == FactKind::InjectedDirective {
            if !f.detectors.iter().any(|d| d.matches(&text)) {
                row.injected_dropped.push(f.id.clone());
                continue;
            }
            let verdicts: Vec<Presentation> = f
                .detectors
                .iter()
                .flat_map(|d| d.phrases())
                .flat_map(|p| provenance::judge_all(&h.text, p))
                .collect();
            if verdicts.contains(&Presentation::Instruction) {
                row.injected_as_instruction.push(f.id.clone());
            } else {
                row.injected_quoted.push(f.id.clone());
            }
            continue;
        }
        row.facts += 1;
        if f.detectors.iter().any(|d| d.matches(&text)) {
            row.carried.push(f.id.clone());
        } else {
            row.missing.push(f.id.clone());
            if offers_retrieve
                && s.source_resource(&f.source)
                    .is_some_and(|k| h.text.contains(&k))
            {
                row.retrievable.push(f.id.clone());
            }
        }
    }
    for e in &at.state.events {
        let Some(c) = &e.call else { continue };
        if c.outcome == ObservedOutcome::TimedOut && at.state.is_write(c) {
            row.uncertain_total += 1;
            let key_kept = c
                .idempotency_key
                .as_ref()
                .is_none_or(|k| text.contains(&normalize(k)));
            let status_kept = ["unknown", "timed out", "timeout"]
                .iter()
                .any(|w| text.contains(w));
            if key_kept && status_kept {
                row.uncertain_kept += 1;
            }
        }
    }
    row
}

/// Seed 003 §9.2's rules on the handoff `own` a strategy built, as the destination receives it
/// (`delivered`: `own` itself, or the governed rendering that holds `own` as its advisory
/// summary). A checkpoint gets every rule, a text the rules checkable on text; the constraint
/// rule reads `delivered` whole, after the destination's canonical layout, and a constraint only
/// the compactor's own part of a governed handoff lacks is `summary_constraint_missing`.
pub fn rule_check(
    own: &Handoff,
    delivered: &Handoff,
    at: &RestorePoint,
) -> Vec<crate::checkpoint::rules::RuleViolation> {
    use crate::checkpoint::rules::{Received, check_received};
    use crate::destination::layout::canonical;
    let whole = canonical(&delivered.text);
    let summary = delivered.advisory.as_ref().map(|a| canonical(&a.summary));
    let name = format!(
        "the advisory summary (strategy `{}`'s handoff)",
        own.strategy
    );
    let received = Received {
        whole: &whole,
        summary: summary.as_deref().map(|s| (name.as_str(), s)),
    };
    check_received(own.checkpoint.as_ref(), &own.text, &received, at)
}

/// Audits every scenario × interrupt point × strategy.
pub fn audit(
    scenarios: &[Arc<Scenario>],
    registry: &Registry,
    strategies: &[String],
) -> Result<Vec<AuditRow>, crate::strategy::StrategyError> {
    audit_chained(scenarios, registry, strategies, 1)
}

/// [`audit`] of chains of `cycles` compactions (`audit --cycles N`): each row audits the chain's
/// last handoff, under the chain's id (`C×3`), with [`chain_audit`]; `cycles` 1 is [`audit`].
pub fn audit_chained(
    scenarios: &[Arc<Scenario>],
    registry: &Registry,
    strategies: &[String],
    cycles: u32,
) -> Result<Vec<AuditRow>, crate::strategy::StrategyError> {
    use crate::strategy::chain;
    crate::secrets::load_run([]);
    let mut rows = Vec::new();
    for s in scenarios {
        for it in &s.interrupts {
            let at = Arc::new(RestorePoint::build(s.clone(), &it.point)?);
            let points = chain::restore_points(&at, cycles)?;
            for base in strategies {
                let id = &chain::id(base, cycles);
                let error = |message: String| AuditRow {
                    scenario: s.id.clone(),
                    interrupt: it.point.clone(),
                    strategy: id.clone(),
                    error: Some(crate::secrets::redact(&message).into_owned()),
                    ..Default::default()
                };
                let built = registry.get(base).and_then(|st| {
                    let hs = chain::build_blocking(registry, st.as_ref(), &points)?;
                    let audited = (cycles > 1).then(|| chain_audit(&points, &hs));
                    let mut h = hs.into_iter().last().ok_or_else(|| {
                        crate::strategy::StrategyError::Chain {
                            id: id.clone(),
                            message: "the chain is empty".into(),
                        }
                    })?;
                    h.strategy = id.clone();
                    Ok((h, audited))
                });
                match built.map(|(h, audited)| (audit_handoff(&at, &h), h, audited)) {
                    // A handoff carrying a secret is not audited (nor quoted anywhere).
                    Ok((_, h, _))
                        if serde_json::to_string(&h)
                            .is_ok_and(|t| crate::secrets::contains(&t)) =>
                    {
                        rows.push(error(format!(
                            "strategy `{id}`: output contains a secret of this run (the handoff was discarded)"
                        )))
                    }
                    Ok((mut row, _, audited)) => {
                        row.chain = audited;
                        rows.push(row)
                    }
                    Err(crate::strategy::StrategyError::Plugin(e)) => {
                        rows.push(error(e.to_string()))
                    }
                    Err(e) => return Err(e),
                }
            }
        }
    }
    Ok(rows)
}

/// Writes `audit.csv` and `audit.json` into `dir`.
pub fn write(dir: &Path, rows: &[AuditRow]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_string_pretty(rows).unwrap_or_default();
    crate::durable::write(
        &dir.join("audit.json"),
        crate::secrets::redact_text(&json).as_bytes(),
    )?;
    let mut w = csv::Writer::from_writer(Vec::new());
    let header = [
        "scenario",
        "interrupt",
        "strategy",
        "tokens_at_restore",
        "facts",
        "carried",
        "missing",
        "retrievable",
        "injected_as_instruction",
        "injected_quoted",
        "injected_dropped",
        "uncertain_kept",
        "uncertain_total",
        "rule_violations",
        "error",
    ];
    w.write_record(header).map_err(std::io::Error::other)?;
    for r in rows {
        w.write_record([
            r.scenario.clone(),
            r.interrupt.clone(),
            r.strategy.clone(),
            r.tokens_at_restore.to_string(),
            r.facts.to_string(),
            r.carried.join(" "),
            r.missing.join(" "),
            r.retrievable.join(" "),
            r.injected_as_instruction.join(" "),
            r.injected_quoted.join(" "),
            r.injected_dropped.join(" "),
            r.uncertain_kept.to_string(),
            r.uncertain_total.to_string(),
            r.rule_violations
                .as_ref()
                .map(|v| v.len().to_string())
                .unwrap_or_else(|| "n/a".into()),
            r.error.clone().unwrap_or_default(),
        ])
        .map_err(std::io::Error::other)?;
    }
    let csv = w
        .into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    crate::durable::write(
        &dir.join("audit.csv"),
        crate::secrets::redact_text(&String::from_utf8_lossy(&csv)).as_bytes(),
    )
}

/// The terminal table of `audit`: a header, then one line per row with its tokens, carried facts,
/// kept uncertain operations, bare injected directives, rule violations (`-` without a
/// checkpoint) and the missing facts (or the plug-in's error).
pub fn table(rows: &[AuditRow]) -> String {
    use std::fmt::Write as _;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "{:<34} {:<22} {:<20} {:>7} {:>7} {:>9} {:>8} {:>6}  missing",
        "scenario", "interrupt", "strategy", "tokens", "carried", "uncertain", "injected", "rules"
    );
    for r in rows {
        let _ = writeln!(
            t,
            "{:<34} {:<22} {:<20} {:>7} {:>7} {:>9} {:>8} {:>6}  {}",
            r.scenario,
            r.interrupt,
            r.strategy,
            r.tokens_at_restore,
            format!("{}/{}", r.carried.len(), r.facts),
            format!("{}/{}", r.uncertain_kept, r.uncertain_total),
            r.injected_as_instruction.len(),
            r.rule_violations
                .as_ref()
                .map(|v| v.len().to_string())
                .unwrap_or_else(|| "-".into()),
            match &r.error {
                Some(e) => format!("ERROR: {e}"),
                None => r
                    .missing
                    .iter()
                    .map(|m| if r.retrievable.contains(m) {
                        format!("{m} (retrievable)")
                    } else {
                        m.clone()
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            }
        );
    }
    // A chain's losses: which fact which compaction lost.
    for r in rows {
        let Some(c) = &r.chain else { continue };
        let lost: Vec<String> = c
            .facts
            .iter()
            .filter_map(|f| {
                let k = f.lost_at?;
                Some(format!(
                    "{} at compaction {k} ({})",
                    f.fact,
                    c.points.get(k as usize - 1).map_or("", String::as_str)
                ))
            })
            .collect();
        if !lost.is_empty() {
            let _ = writeln!(
                t,
                "{} · {} · {}: lost {}",
                r.scenario,
                r.interrupt,
                r.strategy,
                lost.join(", ")
            );
        }
    }
    t
}
