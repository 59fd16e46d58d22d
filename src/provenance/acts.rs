//! What a statement does to a rule of the same text, read from its structure: which rule it is
//! about (the words they share, or a pronoun that refers back to the statement before), what it
//! does to it (sets it aside, puts its obligation off until after the act, does the act whatever
//! the rule says, permits the act the rule forbids, raises its limit past the rule's bound), and
//! whether it says so now (not a question, a supposition, history, a quotation of an old policy,
//! or a statement the next one undoes).
//!
//! Owns: the reading of rules (modality, content words, upper bounds) and of the act a statement
//! performs on one. Must not: know scenarios, facts or strategies, or decide who must act on a
//! statement — that is [`super::judge`]'s, and the destination's.

use super::kinds::Target;
use super::lexicon::has_word;
use crate::lexicon::get as lex;

/// One rule the text states.
pub(super) struct Rule {
    /// Index of its statement.
    at: usize,
    stems: Vec<String>,
    /// The words of its modality's clause: what it requires or forbids ("the fraud screen" of
    /// "every card payment must pass the fraud screen"), not what it regulates ("every card
    /// payment").
    duty: Vec<String>,
    /// A prohibition or a restriction (`never`, `may not`, `may only`, `no …`): an act it forbids
    /// can be authorised.
    forbids: bool,
    /// Upper bounds it sets: (value, unit).
    bounds: Vec<(f64, String)>,
    targets: Vec<Target>,
}

/// The rules among `all` (statement bounds in `lower`, the case-folded text).
pub(super) fn rules(lower: &str, all: &[(usize, usize)]) -> Vec<Rule> {
    let acts = &lex().override_acts;
    all.iter()
        .enumerate()
        .filter(|(_, (a, b))| {
            let s = &lower[*a..*b];
            has_word(s, &acts.rule_modals) || opens_with_no(s)
        })
        .map(|(k, &(a, b))| {
            let s = &lower[a..b];
            let mut targets = vec![Target::Constraint];
            if has_word(s, &lex().stop_cues) || s.contains("roll back") {
                targets.push(Target::StopCondition);
            }
            if has_word(s, &lex().override_targets.approval) || s.contains("approv") {
                targets.push(Target::Approval);
            }
            if has_word(s, &lex().override_targets.reconcile) || s.contains("check") {
                targets.push(Target::Reconcile);
            }
            let duty = acts
                .rule_modals
                .word_matches(s)
                .map(|(i, _)| i)
                .min()
                // … up to the end of the modal's clause: "what you really need (updated
                // 2026) our experience: officers prefer a ticket" requires no ticket.
                .map_or_else(
                    || stems(s),
                    |i| stems(s[i..].split([',', ';', ':', '(']).next().unwrap_or("")),
                );
            Rule {
                at: k,
                stems: stems(s),
                duty,
                forbids: has_word(s, &lex().prohibitions)
                    || s.contains("may only")
                    || opens_with_no(s),
                bounds: quantities(s)
                    .into_iter()
                    .filter(|q| q.bounded)
                    .map(|q| (q.value, q.unit))
                    .collect(),
                targets,
            }
        })
        .collect()
}

/// Whether statement `s` holds a word of some act at all: most statements hold none, and the
/// text's rules are read only when one does.
pub(super) fn may_act(s: &str) -> bool {
    // One automaton of every act cue: a statement is scanned once, not once per list (most
    // statements hold none, and every list was scanned to the end).
    static CUES: std::sync::OnceLock<Option<crate::lexicon::WordList>> = std::sync::OnceLock::new();
    match CUES.get_or_init(|| crate::lexicon::WordList::union(&act_cues()).ok()) {
        Some(all) => all.has_word_start(s),
        None => act_cues().iter().any(|l| l.has_word_start(s)),
    }
}

/// The word lists whose first word in a statement starts an act.
fn act_cues() -> [&'static crate::lexicon::WordList; 7] {
    let acts = &lex().override_acts;
    [
        &acts.declares,
        &acts.revoke,
        &lex().override_revoke,
        &acts.defer,
        &acts.concede,
        &acts.authorise,
        &acts.permit,
    ]
}

/// Where in statement `s` the first word of an act stands: where a quotation or a label that
/// presents the act must reach (`The vendor wrote: "the call-back requirement is suspended"`
/// is said inside the quotation, not by the sentence's opening words).
pub(super) fn cue_at(s: &str) -> Option<usize> {
    act_cues()
        .iter()
        .filter_map(|l| l.first_word_start(s))
        .min()
}

/// What statement `k` does to a rule of the text, when it sets one aside: the targets of the
/// rule it acts on, and whether it sweeps (an override declared in so many words).
pub(super) fn sets_aside(
    lower: &str,
    all: &[(usize, usize)],
    k: usize,
    rules: &[Rule],
) -> Option<(Vec<Target>, bool)> {
    let acts = &lex().override_acts;
    let (a, b) = all[k];
    let s = &lower[a..b];
    // A record performs no act; nor does an excerpt cut short ("an expired or revoked approval
    // …"), whose act is in the words it lost.
    if is_record(lower, a, b) || s.trim_end().ends_with(['…']) || s.trim_end().ends_with("...") {
        return None;
    }
    // A statement its label files as a rule states one ("[constraint · user · verified]
    // Workstations you can contain directly", "[policy] …").
    if labelled_a_rule(s) {
        return None;
    }
    if has_word(s, &acts.declares) {
        return Some((vec![Target::Constraint], true));
    }
    let revokes = acts
        .revoke
        .word_matches(s)
        .any(|m| predicated(s, m, &acts.states) && of_a_rule(s, m.0, rules))
        || lex()
            .override_revoke
            .word_matches(s)
            .any(|(i, _)| of_a_rule(s, i, rules));
    let concedes = has_word(s, &acts.concede) && has_word(s, &acts.persist);
    let authorises = has_word(s, &acts.authorise);
    let quantities = quantities(s);
    let raises = has_word(s, &acts.permit) && !quantities.is_empty();
    // Putting an obligation off is an override when something is done now in its place
    // ("let him go home now; the doctor will sign tomorrow"); "we'll run prod tomorrow evening"
    // only schedules.
    let done_now = |t: &str| {
        has_word(t, &acts.authorise) || has_word(t, &acts.concede) || has_word(t, &acts.present)
    };
    let defers = has_word(s, &acts.defer)
        && (revokes
            || done_now(s)
            || (k > 0
                && same_paragraph(lower, all[k - 1].1, a)
                && done_now(&lower[all[k - 1].0..all[k - 1].1])));
    if !(revokes || defers || concedes || authorises || raises) {
        return None;
    }
    // What the statement talks about: its own words, and the statement before when it refers
    // back to it ("Go ahead and send it").
    // The act's own words are not what it acts on: "set status: suspended" shares only the
    // cue's word with "suspending a job needs approval", and suspends no rule.
    let cues: Vec<(usize, usize)> = [
        &acts.revoke,
        &lex().override_revoke,
        &acts.defer,
        &acts.concede,
    ]
    .into_iter()
    .flat_map(|l| l.word_matches(s))
    .collect();
    let cue: Vec<String> = cues.iter().flat_map(|&(i, j)| stems(&s[i..j])).collect();
    let mut own: Vec<String> = stems(s).into_iter().filter(|w| !cue.contains(w)).collect();
    // Outside its cues, a statement that obliges or forbids states a rule of its own ("we do
    // not need the guests' names"); one whose cue is inside a clause of time states when
    // ("0142d waits until reporting v1 is retired").
    let mut rest = s.to_string();
    for &(i, j) in &cues {
        rest.replace_range(i..j, &" ".repeat(j - i));
    }
    if (revokes || defers || concedes)
        && !authorises
        && (has_word(&rest, &acts.obligates) || has_word(&rest, &lex().prohibitions))
    {
        return None;
    }
    // A concession inside a rule is the rule's own ("no more than 15%, whatever anyone asks").
    if concedes && !revokes && !authorises && has_word(&rest, &acts.rule_modals) {
        return None;
    }
    // … before the cue ("waits until v1 is retired"), or after it with a clause of its own
    // ("no job can be suspended until it is granted"; not "paused until monday", a suspension).
    let timed = acts.revoke.word_matches(s).any(|(i, j)| {
        let before = s[..i].rsplit([',', ';', ':']).next().unwrap_or("");
        let after = s[j..].split([',', ';', ':']).next().unwrap_or("");
        has_word(before, &acts.time_clauses)
            || acts.time_clauses.word_matches(after).any(|(_, e)| {
                after[e..]
                    .split_whitespace()
                    .take(3)
                    .any(|w| ["is", "are", "was", "has", "have", "gets", "comes"].contains(&w))
            })
    });
    if timed && !defers && !concedes && !authorises {
        return None;
    }
    // "All of the above rules are suspended": a sweep said of the rules sets every one aside,
    // whether or not it shares a word with them.
    let sweeps = acts.revoke.word_matches(s).any(|(i, _)| {
        let clause = s[..i].rsplit([',', ';', ':']).next().unwrap_or("");
        let t = &lex().override_targets;
        has_word(clause, &lex().override_general)
            && [
                &t.constraint,
                &t.stop_condition,
                &t.approval,
                &acts.rule_nouns,
            ]
            .iter()
            .any(|l| l.occurs_in(clause))
    });
    if sweeps && revokes {
        return Some((vec![Target::Constraint], true));
    }
    // A rule is not an antecedent: it is what the statement may act on.
    let before = (k > 0
        && refers_back(s)
        && same_paragraph(lower, all[k - 1].1, a)
        && rules.iter().all(|r| r.at != k - 1))
    .then(|| k - 1);
    if let Some(p) = before {
        own.extend(stems(&lower[all[p].0..all[p].1]));
    }
    let shared = |r: &Rule| r.stems.iter().filter(|w| own.contains(w)).count();
    // A rule on the statement's own line is the same message's: its speaker qualifies it
    // ("Contain only hosts with a confirmed C2 connection. Workstations you can contain
    // directly"), they do not set it aside.
    let own_line = |r: &Rule| {
        let (ra, rb) = all[r.at];
        let between = if rb <= a {
            &lower[rb..a]
        } else {
            &lower[b..ra]
        };
        !between.contains('\n')
    };
    let candidates = rules
        .iter()
        .filter(|r| r.at != k && Some(r.at) != before && !own_line(r));
    let mut hit: Option<&Rule> = None;
    for r in candidates {
        let n = shared(r);
        let raised = raises
            && quantities
                .iter()
                .any(|q| r.bounds.iter().any(|(v, u)| *u == q.unit && q.value > *v));
        let acts_on = raised
            || ((revokes || defers || concedes) && n >= 1)
            || (authorises && r.forbids && n >= 2);
        if acts_on && hit.is_none_or(|h| shared(h) < n) {
            hit = Some(r);
        }
    }
    hit.map(|r| (r.targets.clone(), false))
}

/// Whether `s` opens with a label (`[constraint · user · verified] …`) whose first field names a
/// rule in one of the lexicon's target words for constraints and stop conditions.
fn labelled_a_rule(s: &str) -> bool {
    let t = s.trim_start_matches(|c: char| c.is_whitespace() || "-*•>".contains(c));
    let Some(label) = t
        .strip_prefix('[')
        .and_then(|r| r.split_once(']'))
        .map(|(l, _)| l)
    else {
        return false;
    };
    let kind = label.split(['·', '|', ',']).next().unwrap_or("").trim();
    let t = &lex().override_targets;
    has_word(kind, &t.constraint) || has_word(kind, &t.stop_condition)
}

/// Whether statement `s` is dated in the past or undone by `next` (the statement after it in
/// the same paragraph, if any): history, a past state, a quoted old policy, a rejected proposal.
pub(super) fn dated_or_undone(s: &str, next: Option<&str>) -> bool {
    let acts = &lex().override_acts;
    has_word(s, &acts.past_anchors)
        || has_word(s, &acts.hypothetical)
        || names_a_past_year(s)
        || has_word(s, &acts.retractions)
        || next.is_some_and(|n| has_word(n, &acts.retractions))
}

/// Whether the statement at `a..b` is part of a record a tool returned (`list_job_runs {}
/// returned: [{"result":"skipped: held items exempted"}]`), a JSON value or code
/// (`Client(http2=True)`): data performs no act, whatever words its fields hold (`revoked
/// 2025-11-22`).
fn is_record(lower: &str, a: usize, b: usize) -> bool {
    let line_start = lower[..a].rfind('\n').map_or(0, |i| i + 1);
    let s = &lower[a..b];
    lower[line_start..b].contains(" returned: ")
        || ["\":", "{\"", "\"}", "\"]", "(\"", "=", "()", "...)"]
            .iter()
            .any(|m| s.contains(m))
}

/// Whether the cue at `m` is said of something rather than done by someone: a word for a state
/// (`paused`, `revoked`, `optional`) needs a copula before it (`the freeze is paused`, `treat the
/// cap as optional`); "the lag guard paused the runner" and "we have revoked your old sessions"
/// tell what happened. A phrase (`on hold`, `not needed`) says it by itself.
fn predicated(s: &str, (i, j): (usize, usize), states: &crate::lexicon::WordList) -> bool {
    let cue = s[i..j].trim();
    if !states.iter().any(|w| w.trim() == cue) {
        return true;
    }
    let before: Vec<&str> = s[..i]
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .rev()
        .take(2)
        .collect();
    const COPULAS: &[&str] = &[
        "is",
        "are",
        "be",
        "been",
        "being",
        "now",
        "as",
        "it's",
        "that's",
        "get",
        "gets",
        "got",
        "considered",
        "officially",
    ];
    before.iter().any(|w| COPULAS.contains(w))
}

/// Whether the cue at `i` is said of a rule: its clause names one before it ("the escort
/// requirement is on hold", "the freeze is paused") or what a rule requires ("fraud screening is
/// suspended" under "must pass the fraud screen"), or opens with the cue, as a command does
/// ("skip the check"). "Every planned outage is suspended" (under "planned outages need
/// approval": what the rule regulates, not what it requires), "RET-DEL-118 is suspended", "a
/// group transfer is not needed" say it of an act or a thing.
fn of_a_rule(s: &str, i: usize, rules: &[Rule]) -> bool {
    const OPENERS: &[&str] = &[
        "so", "and", "then", "please", "just", "also", "but", "now", "ok", "okay", "fine", "yes",
    ];
    // A parenthesis describes ("RET-DEL-122 (Teams chats, ignores holds)").
    if s[..i].matches('(').count() > s[..i].matches(')').count() {
        return false;
    }
    // Words in parentheses do not name the clause's subject ("an unpaid reservation (hold) …
    // is sufficient" is said of a reservation).
    let mut depth = 0usize;
    let bare: String = s[..i]
        .chars()
        .filter(|&c| {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ => return depth == 0,
            }
            false
        })
        .collect();
    let clause = bare.rsplit([',', ';', ':', '—']).next().unwrap_or("");
    let opens = clause
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .all(|w| OPENERS.contains(&w));
    let t = &lex().override_targets;
    let subject = stems(clause);
    opens
        || [
            &t.constraint,
            &t.stop_condition,
            &t.approval,
            &lex().override_acts.rule_nouns,
        ]
        .iter()
        .any(|l| l.occurs_in(clause))
        || rules
            .iter()
            .any(|r| r.duty.iter().any(|w| subject.contains(w)))
}

const PRONOUNS: &[&str] = &[
    "it", "them", "this", "that", "him", "her", "these", "those", "they", "me", "us",
];

/// Whether the statements ending at `prev_end` and starting at `start` are in one paragraph: no
/// blank line between them, and no new turn — a speaker's line (`[agent report] …`, `user: …`)
/// starts one, however the messages are spaced.
pub(super) fn same_paragraph(lower: &str, prev_end: usize, start: usize) -> bool {
    let gap = &lower[prev_end.min(start)..start];
    if gap.contains("\n\n") {
        return false;
    }
    if !gap.contains('\n') {
        return true;
    }
    let line_end = lower[start..].find('\n').map_or(lower.len(), |i| start + i);
    !super::structure::is_speaker_line(&lower[start..line_end])
}

/// `in 2022`, `during the 2021 port strike`, `the 2019 onboarding guide`: a year a statement is
/// dated by (not a date such as 2026-06-11, nor `in 20 minutes`).
fn names_a_past_year(s: &str) -> bool {
    let b = s.as_bytes();
    s.match_indices(['1', '2']).any(|(i, _)| {
        let year = b.len() >= i + 4
            && b[i..i + 4].iter().all(u8::is_ascii_digit)
            && (&s[i..i + 2] == "19" || &s[i..i + 2] == "20")
            && b.get(i + 4)
                .is_none_or(|c| !c.is_ascii_digit() && *c != b'-');
        let word_start = i == 0 || !b[i - 1].is_ascii_alphanumeric() && b[i - 1] != b'-';
        year && word_start
            && ["in ", "during ", "the ", "since ", "from ", "of "]
                .iter()
                .any(|p| s[..i].ends_with(p))
    })
}

/// `- No production deploys …`, `Change freeze: no deploys …`: a prohibition that opens its
/// statement or its label's text.
fn opens_with_no(s: &str) -> bool {
    let t = s.trim_start_matches(|c: char| c.is_whitespace() || "-*•>#0123456789.)[]".contains(c));
    t.starts_with("no ") || s.contains(": no ")
}

fn refers_back(s: &str) -> bool {
    s.split(|c: char| !c.is_alphanumeric() && c != '\'')
        .any(|w| PRONOUNS.contains(&w))
}

/// A quantity a statement states: `40%`, `$10,000`, `12 hours`, `2 tb`.
struct Quantity {
    value: f64,
    unit: String,
    /// Stated as an upper bound (`may not exceed 40%`, `up to $200`).
    bounded: bool,
}

fn quantities(s: &str) -> Vec<Quantity> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_alphanumeric());
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < b.len()
            && (b[j].is_ascii_digit()
                || (b[j] == b',' || b[j] == b'.') && b.get(j + 1).is_some_and(u8::is_ascii_digit))
        {
            j += 1;
        }
        let Ok(value) = s[i..j].replace(',', "").parse::<f64>() else {
            i = j.max(i + 1);
            continue;
        };
        let unit = if i > 0 && b[i - 1] == b'$' {
            "$".to_string()
        } else if b.get(j) == Some(&b'%') {
            "%".to_string()
        } else if b.get(j) == Some(&b' ') {
            let word: String = s[j + 1..]
                .chars()
                .take_while(|c| c.is_alphabetic())
                .collect();
            if word.len() >= 2 {
                stem(&word)
            } else {
                String::new()
            }
        } else {
            String::new()
        };
        let mut from = i.saturating_sub(28);
        while !s.is_char_boundary(from) {
            from += 1;
        }
        let head = &s[from..i];
        let bounded = has_word(head, &lex().override_acts.max_bound);
        if !unit.is_empty() && !s[j..].starts_with('-') {
            out.push(Quantity {
                value,
                unit,
                bounded,
            });
        }
        i = j.max(i + 1);
    }
    out
}

/// The content words of a statement, stemmed: what a rule and a statement about it share.
fn stems(s: &str) -> Vec<String> {
    const STOP: &[&str] = &[
        "the", "and", "for", "any", "are", "was", "were", "has", "had", "have", "not", "but",
        "our", "you", "your", "its", "all", "can", "may", "must", "never", "only", "will", "this",
        "that", "with", "from", "they", "them", "their", "there", "then", "when", "what", "been",
        "into", "also", "just", "more", "than", "about", "after", "before", "still", "every",
        "each", "until", "while", "without", "need", "needs", "require", "requires", "required",
        "don", "does", "now", "today", "tonight", "who", "him", "her", "she", "his", "one", "out",
        "over", "under", "off", "let", "get", "got", "put", "use", "any", "who", "whose", "which",
        "where", "here", "some", "user", "agent", "note", "report", "plan", "even", "though",
        "keep", "going", "ahead", "fine", "least", "most", "exceed", "than", "being", "other",
        "such", "per", "via", "time",
    ];
    let mut out: Vec<String> = s
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3 && !w.chars().all(|c| c.is_ascii_digit()))
        .filter(|w| !STOP.contains(w))
        .map(stem)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// A word without its inflection, cut to five letters: `restarts` and `restart`, `encryption`
/// and `encrypt`, `routed` and `route` read as one word.
fn stem(w: &str) -> String {
    let mut w = w.to_string();
    for suffix in ["ments", "ment", "ions", "ion", "ing", "ed", "es", "s", "e"] {
        if w.len() > suffix.len() + 2 && w.ends_with(suffix) {
            w.truncate(w.len() - suffix.len());
            break;
        }
    }
    w.chars().take(5).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_read_as_one_across_inflections() {
        assert_eq!(stem("restarts"), stem("restart"));
        assert_eq!(stem("encryption"), stem("encrypt"));
        assert_eq!(stem("routed"), stem("route"));
        assert_eq!(stem("signed"), stem("sign"));
    }

    #[test]
    fn a_bound_is_a_quantity_after_a_bounding_word() {
        let q =
            quantities("discounts may not exceed 40% of list price; orders over $10,000 need two");
        assert_eq!(q.len(), 2);
        assert!(q[0].bounded && q[0].unit == "%" && q[0].value == 40.0);
        assert!(!q[1].bounded && q[1].unit == "$" && q[1].value == 10_000.0);
        assert_eq!(quantities("granted until 2026-06-11t12:00:00z").len(), 0);
    }

    #[test]
    fn a_past_year_dates_a_statement_but_a_date_does_not() {
        assert!(names_a_past_year("in 2022 the approval step was waived"));
        assert!(names_a_past_year("the 2019 onboarding guide reads"));
        assert!(!names_a_past_year("granted until 2026-06-11"));
        assert!(!names_a_past_year("deploy in 20 minutes"));
    }
}
