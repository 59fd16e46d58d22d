//! The constraint rule reads the handoff the destination receives, whole: for every shipped
//! scenario (and benign variant) × interrupt point × strategy of the default run, at scale `base`
//! and at the default run's scale, no `constraint_missing` is reported for a constraint whose text (after the
//! canonical layout) appears in the delivered handoff; the same handoff with the sentence removed
//! gets the rule; a governed handoff whose originals carry a constraint its summary lacks gets
//! `summary_constraint_missing`, naming the summary; and A's findings are real (its window
//! dropped the constraint's message).

use std::path::Path;
use std::sync::Arc;

use compaction_eval::audit::rule_check;
use compaction_eval::checkpoint::rules::RuleViolation;
use compaction_eval::delivery::{self, GovSpec};
use compaction_eval::destination::layout::canonical;
use compaction_eval::handoff::{Handoff, render_text};
use compaction_eval::runner::{self, RunConfig};
use compaction_eval::scenario::volume::{RUN_SCALES, Scale, expand, volume_seed};
use compaction_eval::scenario::{self, Scenario};
use compaction_eval::state::RestorePoint;
use compaction_eval::strategy::{DEFAULT_CONTEXT_WINDOW, Registry, usable_context};
use compaction_eval::text::normalize;

/// What one handoff showed.
#[derive(Default)]
struct Tally {
    /// (constraint, handoff) pairs where the delivered handoff carries the constraint.
    carried: usize,
    /// ... where it does not.
    missing: usize,
    /// Carried pairs checked again with the sentence removed.
    removed: usize,
    /// Governed handoffs whose summary lacks a constraint the originals carry.
    summary_only: usize,
    /// A's findings, each with its message dropped by the window.
    a_dropped: usize,
    failures: Vec<String>,
}

impl Tally {
    fn add(&mut self, o: Tally) {
        self.carried += o.carried;
        self.missing += o.missing;
        self.removed += o.removed;
        self.summary_only += o.summary_only;
        self.a_dropped += o.a_dropped;
        self.failures.extend(o.failures);
    }
}

/// `text` without each occurrence of `sentence`, compared as the rule compares them (case and
/// runs of white space folded).
fn without(text: &str, sentence: &str) -> String {
    // The folded text, and for each of its bytes the span of the original it stands for.
    let fold = |t: &str| {
        let mut folded = String::new();
        let mut spans: Vec<(usize, usize)> = Vec::new();
        let mut space = false;
        for (i, c) in t.char_indices() {
            let end = i + c.len_utf8();
            if c.is_whitespace() {
                if space {
                    if let Some(last) = spans.last_mut() {
                        last.1 = end;
                    }
                } else if !folded.is_empty() {
                    folded.push(' ');
                    spans.push((i, end));
                }
                space = true;
                continue;
            }
            space = false;
            let before = folded.len();
            folded.push(c.to_lowercase().next().unwrap_or(c));
            spans.extend(std::iter::repeat_n((i, end), folded.len() - before));
        }
        (folded, spans)
    };
    let (folded, spans) = fold(text);
    let (pattern, _) = fold(sentence.trim());
    if pattern.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let (mut kept, mut from) = (0, 0);
    while let Some(i) = folded[from..].find(&pattern).map(|i| i + from) {
        let (start, end) = (spans[i].0, spans[i + pattern.len() - 1].1);
        out.push_str(&text[kept..start]);
        kept = end;
        from = i + pattern.len();
    }
    out.push_str(&text[kept..]);
    out
}

/// `h` with `sentence` removed from every part the destination reads.
fn lacking(h: &Handoff, sentence: &str) -> Handoff {
    let mut out = h.clone();
    for m in &mut out.messages {
        m.content = without(&m.content, sentence);
        if let Some(tc) = &mut m.tool_call {
            tc.arguments = without(&tc.arguments, sentence);
        }
    }
    out.text = render_text(&out.messages);
    if let Some(a) = &mut out.advisory {
        a.summary = without(&a.summary, sentence);
        a.authoritative = without(&a.authoritative, sentence);
    }
    out
}

fn carries(text: &str, sentence: &str) -> bool {
    normalize(&canonical(text)).contains(&normalize(sentence))
}

/// The findings of `rule` about the constraint `sentence` of event `id`.
fn about<'v>(
    v: &'v [RuleViolation],
    rule: &str,
    id: &str,
    sentence: &str,
) -> Vec<&'v RuleViolation> {
    v.iter()
        .filter(|x| {
            x.rule == rule && x.at == format!("events[{id}]") && x.detail.contains(sentence)
        })
        .collect()
}

/// Every check on one handoff: `own` as the strategy built it, `delivered` as the destination
/// receives it.
fn check_one(own: &Handoff, delivered: &Handoff, at: &RestorePoint, cell: &str) -> Tally {
    let mut t = Tally::default();
    let v = rule_check(own, delivered, at);
    let governed = delivered.advisory.is_some();
    for (id, sentence) in at.graded_constraints() {
        let missing = about(&v, "constraint_missing", &id, &sentence);
        if !carries(&delivered.text, &sentence) {
            t.missing += 1;
            if missing.is_empty() {
                t.failures.push(format!(
                    "{cell}: \"{sentence}\" is not in the handoff, yet no constraint_missing"
                ));
            }
            if own.strategy == "A" {
                if own.dropped_events.contains(&id) {
                    t.a_dropped += 1;
                } else {
                    t.failures.push(format!(
                        "{cell}: A lacks \"{sentence}\" although its window kept {id}"
                    ));
                }
            }
            continue;
        }
        t.carried += 1;
        if !missing.is_empty() {
            t.failures.push(format!(
                "{cell}: \"{sentence}\" is in the handoff, yet {:?}",
                missing[0]
            ));
        }
        let summary_lacks = delivered
            .advisory
            .as_ref()
            .is_some_and(|a| !carries(&a.summary, &sentence));
        let flagged = about(&v, "summary_constraint_missing", &id, &sentence);
        match (summary_lacks, flagged.first()) {
            (true, Some(f)) if f.detail.contains("advisory summary") => t.summary_only += 1,
            (true, Some(f)) => t.failures.push(format!(
                "{cell}: summary_constraint_missing does not name the summary: {}",
                f.detail
            )),
            (true, None) => t.failures.push(format!(
                "{cell}: the summary lacks \"{sentence}\", yet no summary_constraint_missing"
            )),
            (false, Some(f)) => t.failures.push(format!(
                "{cell}: the summary carries \"{sentence}\", yet {f:?}"
            )),
            (false, None) => {}
        }
        // The same handoff without the sentence still gets the rule (and only that one).
        let cut = lacking(delivered, &sentence);
        if carries(&cut.text, &sentence) {
            t.failures
                .push(format!("{cell}: the test could not remove \"{sentence}\""));
            continue;
        }
        let own_cut = if governed { own.clone() } else { cut.clone() };
        let w = rule_check(&own_cut, &cut, at);
        t.removed += 1;
        if about(&w, "constraint_missing", &id, &sentence).is_empty() {
            t.failures.push(format!(
                "{cell}: without \"{sentence}\" the handoff gets no constraint_missing"
            ));
        }
        if !about(&w, "summary_constraint_missing", &id, &sentence).is_empty() {
            t.failures.push(format!(
                "{cell}: without \"{sentence}\" the finding is also the summary's"
            ));
        }
    }
    t
}

/// The default run's strategies, built as a run builds them for the default simulated window.
fn check_scenario(registry: &Registry, s: Scenario, scale: Scale) -> Tally {
    let budget = usable_context(DEFAULT_CONTEXT_WINDOW);
    let s = Arc::new(s);
    let mut t = Tally::default();
    for it in &s.interrupts {
        let at = RestorePoint::build(s.clone(), &it.point).expect("restore point");
        for id in RunConfig::default().strategies {
            let cell = format!("{} @{scale} {} {id}", s.id, it.point);
            let (own, delivered) = match GovSpec::parse(&id) {
                Some(spec) => {
                    let g =
                        delivery::build_at(registry, &at, &spec.expect("a governed id"), budget)
                            .expect("governed handoff");
                    (g.inner.as_ref().clone(), g.delivered.as_ref().clone())
                }
                None => {
                    let h = registry
                        .get_for(&id, None, budget)
                        .and_then(|x| x.build_blocking(&at.state))
                        .and_then(|h| registry.restore(h, &at.world))
                        .expect("handoff");
                    (h.clone(), h)
                }
            };
            t.add(check_one(&own, &delivered, &at, &cell));
        }
    }
    t
}

#[test]
fn the_constraint_rule_reads_the_delivered_handoff_whole() {
    let registry = Registry::from_source(&RunConfig::default().strategy_dir).expect("strategies");
    // As a run selects them: every file's scenario and the benign variants.
    let scenarios = runner::select_scenarios(&RunConfig::default()).expect("scenarios");
    let mut jobs: Vec<(Scenario, Scale)> = Vec::new();
    for s in scenarios {
        for scale in [Scale::Base].into_iter().chain(RUN_SCALES) {
            if scale != Scale::Base && s.volume.is_none() {
                continue;
            }
            let seed = volume_seed(compaction_eval::DEFAULT_SEED, &s.id, scale);
            jobs.push((expand(&s, scale, seed).expect("expands"), scale));
        }
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let total = std::sync::Mutex::new(Tally::default());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while let Some((s, scale)) = jobs
                    .get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                    .cloned()
                {
                    let t = check_scenario(&registry, s, scale);
                    total.lock().expect("tally").add(t);
                }
            });
        }
    });
    let t = total.into_inner().expect("tally");
    eprintln!(
        "constraints carried {}, missing {} (A: {} dropped by the window), rechecked without the sentence {}, only the governed summary lacks {}",
        t.carried, t.missing, t.a_dropped, t.removed, t.summary_only
    );
    assert!(
        t.failures.is_empty(),
        "{} failures, the first:\n{}",
        t.failures.len(),
        t.failures[..t.failures.len().min(20)].join("\n")
    );
    // Not vacuous: each kind of finding occurs on the shipped suite.
    assert!(
        t.carried > 0 && t.removed == t.carried,
        "{} {}",
        t.carried,
        t.removed
    );
    assert!(t.missing > 0 && t.a_dropped > 0 && t.summary_only > 0);
}

/// The cell of the issue: gov:B restores the user's sentence in its originals.
#[test]
fn gov_b_carries_the_constraint_its_originals_restore() {
    let registry = Registry::from_source(&RunConfig::default().strategy_dir).expect("strategies");
    let s = scenario::load_file(Path::new(
        "scenarios/accounting-month-end-accrual-close.yaml",
    ))
    .expect("loads");
    let at = RestorePoint::build(Arc::new(s), "after_exploration").expect("state");
    let spec = GovSpec::parse("gov:B").expect("governed").expect("valid");
    let g = delivery::build_at(
        &registry,
        &at,
        &spec,
        usable_context(DEFAULT_CONTEXT_WINDOW),
    )
    .expect("governed");
    let sentence = "Never send ledger data outside the finance team.";
    let v = rule_check(&g.inner, &g.delivered, &at);
    let rules = |v: &[RuleViolation]| {
        v.iter()
            .filter(|x| x.detail.contains(sentence))
            .map(|x| x.rule)
            .collect::<Vec<_>>()
    };
    assert_eq!(rules(&v), ["summary_constraint_missing"], "{v:#?}");
    // B alone lacks it: there the destination lacks it.
    assert_eq!(
        rules(&rule_check(&g.inner, &g.inner, &at)),
        ["constraint_missing"]
    );
    let cut = lacking(&g.delivered, sentence);
    assert_eq!(
        rules(&rule_check(&g.inner, &cut, &at)),
        ["constraint_missing"]
    );
}

#[test]
fn removal_folds_case_and_white_space_as_the_rule_does() {
    assert_eq!(
        without("a. Never  send\nLedger data. b", "never send ledger data."),
        "a.  b"
    );
    assert_eq!(without("nothing here", "absent"), "nothing here");
}
