//! What a scenario exercises and what it is made of: the feature coverage `scenarios list` shows
//! (an injection and its carrier, a stale resource, a hypothesis, an uncertain write, an approval
//! that is pending or lapses, a stop condition that arrives mid-run) and the structural
//! fingerprint that tells a new scenario from a renamed copy of another (pseudo-replication).
//!
//! Owns: reading these off a parsed scenario. Must not: validate (that is `validate`), judge
//! realism, or read any text for meaning beyond naming an injection's carrier for display.

use std::collections::BTreeMap;

use crate::spec::{ApprovalStatus, EventKind, FactKind, Fault, Perturbation, Scenario};

/// The features of one scenario.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Where the injected payload sits, when there is one (`tool error`, `email`, `web page`, …).
    pub injection: Option<String>,
    /// A `stale_resource` fact or a perturbation that revises a resource or a record.
    pub stale_resource: bool,
    /// A `hypothesis` fact with a `when_promoted` consequence.
    pub hypothesis: bool,
    /// A write whose outcome the source never saw (a timeout or a lost response).
    pub uncertain_write: bool,
    /// An approval that is pending, expires, or changes state at restore.
    pub approval: bool,
    /// A stop condition that arrives after the first interrupt point (points on both sides).
    pub mid_run_stop: bool,
}

impl Coverage {
    /// The short labels of the features present, in a fixed order.
    pub fn labels(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(c) = &self.injection {
            out.push(format!("injection({c})"));
        }
        for (on, name) in [
            (self.stale_resource, "stale"),
            (self.hypothesis, "hypothesis"),
            (self.uncertain_write, "uncertain-write"),
            (self.approval, "approval"),
            (self.mid_run_stop, "mid-run-stop"),
        ] {
            if on {
                out.push(name.to_string());
            }
        }
        out
    }
}

/// The coverage of a scenario.
pub fn coverage(s: &Scenario) -> Coverage {
    let has_kind = |k: FactKind| s.facts.iter().any(|f| f.kind == k);
    let perturbs = || s.interrupts.iter().flat_map(|i| &i.perturb);
    let first_cut = s
        .interrupts
        .iter()
        .filter_map(|i| s.event_index(&i.after))
        .min();
    Coverage {
        injection: s.injection.as_ref().map(|inj| carrier(s, &inj.payload)),
        stale_resource: has_kind(FactKind::StaleResource)
            || perturbs().any(|p| p.resource.is_some() || p.collection.is_some()),
        hypothesis: s
            .facts
            .iter()
            .any(|f| f.kind == FactKind::Hypothesis && !f.when_promoted.is_empty()),
        uncertain_write: s.events.iter().any(|e| {
            matches!(
                e.fault,
                Some(Fault::TimeoutAfterCommit | Fault::TimeoutBeforeCommit)
            )
        }) || perturbs().any(|p| p.lose_response.is_some()),
        approval: s.world.approvals.iter().any(|a| {
            a.status == ApprovalStatus::Pending
                || a.expires_at.is_some()
                || a.on_request != ApprovalStatus::Granted
        }) || s.events.iter().any(|e| {
            e.approval
                .as_ref()
                .is_some_and(|a| a.expires_at.is_some() || a.status != ApprovalStatus::Granted)
        }) || perturbs().any(|p| p.approval.is_some()),
        mid_run_stop: s.facts.iter().any(|f| {
            f.kind == FactKind::StopCondition
                && s.event_index(&f.source)
                    .zip(first_cut)
                    .is_some_and(|(src, cut)| src > cut)
        }),
    }
}

/// A display name for where an injected payload sits: a service's error output, or the kind of
/// outside document that carries it, named from its declared `source` (else its key).
fn carrier(s: &Scenario, payload: &str) -> String {
    let in_error = s
        .events
        .iter()
        .any(|e| e.error.as_deref().is_some_and(|t| t.contains(payload)))
        || s.world
            .tools
            .iter()
            .flat_map(|t| &t.check)
            .any(|c| c.fail_output.contains(payload) || c.pass_output.contains(payload));
    if in_error {
        return "tool error".into();
    }
    let Some((key, r)) = s
        .world
        .resources
        .iter()
        .find(|(_, r)| r.text.contains(payload))
    else {
        return "tool result".into();
    };
    let label = r.source.as_deref().unwrap_or(key).to_lowercase();
    const KINDS: [(&str, &str); 12] = [
        ("calendar", "calendar invite"),
        ("invite", "calendar invite"),
        ("email", "email"),
        ("web page", "web page"),
        ("pdf", "PDF excerpt"),
        ("fax", "PDF excerpt"),
        ("ticket", "ticket comment"),
        ("comment", "ticket comment"),
        ("vendored", "code comment"),
        ("repository", "code comment"),
        ("api", "API response"),
        ("report", "report"),
    ];
    KINDS
        .iter()
        .find(|(k, _)| label.contains(k))
        .map_or_else(|| "document".to_string(), |(_, v)| v.to_string())
}

/// The structure of a scenario with every name and value taken out: the reference run's event
/// kinds in order (a call by its tool's effect and fault), each interrupt point's cut position,
/// perturbation kinds, continuation step kinds and recovery kinds, the fact kinds with their
/// edit kinds, the forbidden rules' shapes and the success predicates' kinds. Two scenarios
/// with the same fingerprint differ only in names or values.
pub fn fingerprint(s: &Scenario) -> String {
    let effect = |tool: &str| {
        s.world
            .tools
            .iter()
            .find(|t| t.name == tool)
            .map_or("harness", |t| t.effect.as_str())
    };
    let mut out = String::new();
    for e in &s.events {
        let k = match e.kind() {
            Some(EventKind::User) => "u".to_string(),
            Some(EventKind::Assistant(t)) => format!("a:{}", t.as_str()),
            Some(EventKind::Call) => format!(
                "c:{}{}",
                effect(e.call.as_deref().unwrap_or("")),
                e.fault
                    .map(|f| format!("!{}", f.as_str()))
                    .unwrap_or_default()
            ),
            Some(EventKind::Approval) => "ap".to_string(),
            None => "?".to_string(),
        };
        out.push_str(&k);
        out.push(' ');
    }
    out.push('|');
    for it in &s.interrupts {
        let cut = s.event_index(&it.after).unwrap_or(0);
        let perturb: Vec<&str> = it.perturb.iter().map(perturbation_kind).collect();
        let steps: Vec<String> = it
            .continuation
            .iter()
            .map(|st| match (&st.call, &st.finish) {
                (Some(t), _) => format!("c:{}", effect(t)),
                (_, Some(f)) => format!("f:{}", f.as_str()),
                _ if st.ask.is_some() => "ask".into(),
                _ if st.request_approval.is_some() => "req".into(),
                _ => "ret".into(),
            })
            .collect();
        out.push_str(&format!(
            " {cut}[{}]({}){{{}}}",
            perturb.join(","),
            steps.join(","),
            it.recovery.len()
        ));
    }
    out.push('|');
    let mut facts: BTreeMap<String, usize> = BTreeMap::new();
    for f in &s.facts {
        let key = format!(
            "{}:{}/{}/{}",
            f.kind.as_str(),
            f.when_lost.len(),
            f.when_obeyed.len(),
            f.when_promoted.len()
        );
        *facts.entry(key).or_default() += 1;
    }
    for (k, n) in facts {
        out.push_str(&format!(" {k}x{n}"));
    }
    out.push('|');
    let mut tools: Vec<&str> = s.world.tools.iter().map(|t| t.effect.as_str()).collect();
    tools.sort_unstable();
    out.push_str(&tools.join(","));
    out.push('|');
    let mut rules: Vec<String> = s
        .forbidden
        .iter()
        .map(|f| format!("{}:{}:{}", f.reason, effect(&f.call), f.until.len()))
        .collect();
    rules.sort();
    out.push_str(&rules.join(","));
    out.push_str(&format!("|{}", s.success.len()));
    out
}

fn perturbation_kind(p: &Perturbation) -> &'static str {
    if p.approval.is_some() {
        "approval"
    } else if p.policy_version.is_some() {
        "policy"
    } else if p.capability.is_some() {
        "capability"
    } else if p.resource.is_some() {
        "resource"
    } else if p.add.is_some() {
        "add"
    } else if p.collection.is_some() {
        "record"
    } else if p.advance_minutes.is_some() {
        "clock"
    } else {
        "lose"
    }
}

/// Pairs of scenarios (by id) whose fingerprints are equal: each pair differs only in names or
/// values.
pub fn replicated_pairs(all: &[Scenario]) -> Vec<(String, String)> {
    let prints: Vec<String> = all.iter().map(fingerprint).collect();
    let mut out = Vec::new();
    for i in 0..all.len() {
        for j in i + 1..all.len() {
            if prints[i] == prints[j] {
                out.push((all[i].id.clone(), all[j].id.clone()));
            }
        }
    }
    out
}

/// A fixed, deterministic sample of `k` scenarios (indexes into `all`) that covers every feature
/// present in `all`: scenarios are ordered by a hash of `seed` and their id; the first that adds
/// the most uncovered features is taken until every feature is covered, then the rest of the
/// order fills the sample. For tests that iterate over scenarios and would otherwise grow with
/// the suite; same `all`, `k` and `seed`, same sample.
pub fn covering_sample(all: &[Scenario], k: usize, seed: u64) -> Vec<usize> {
    use std::hash::{Hash, Hasher};
    let key = |s: &Scenario| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        seed.hash(&mut h);
        s.id.hash(&mut h);
        h.finish()
    };
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.sort_by_key(|&i| (key(&all[i]), i));
    let features = |s: &Scenario| -> Vec<&'static str> {
        let c = coverage(s);
        let mut f = Vec::new();
        for (on, name) in [
            (c.injection.is_some(), "injection"),
            (c.stale_resource, "stale"),
            (c.hypothesis, "hypothesis"),
            (c.uncertain_write, "uncertain"),
            (c.approval, "approval"),
            (c.mid_run_stop, "stop"),
        ] {
            if on {
                f.push(name);
            }
        }
        f
    };
    let feats: Vec<Vec<&str>> = all.iter().map(features).collect();
    let mut uncovered: std::collections::BTreeSet<&str> = feats.iter().flatten().copied().collect();
    let mut picked: Vec<usize> = Vec::new();
    while !uncovered.is_empty() && picked.len() < k {
        let best = order
            .iter()
            .filter(|i| !picked.contains(i))
            .max_by_key(|&&i| {
                let gain = feats[i].iter().filter(|f| uncovered.contains(*f)).count();
                // Ties go to the earlier scenario in the seeded order.
                (gain, std::cmp::Reverse(order.iter().position(|&x| x == i)))
            })
            .copied();
        let Some(i) = best else { break };
        for f in &feats[i] {
            uncovered.remove(f);
        }
        picked.push(i);
    }
    for &i in &order {
        if picked.len() >= k {
            break;
        }
        if !picked.contains(&i) {
            picked.push(i);
        }
    }
    picked.sort_unstable();
    picked
}
