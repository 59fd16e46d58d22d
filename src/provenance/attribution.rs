//! The verdict on one span: whether it marks what it holds as not to be followed, and whether a
//! statement is attributed to an outside source or is the agent's or user's own. It reads the span
//! it is given and looks nowhere else.

use crate::text::fold_case;

use super::Presentation;
use super::lexicon::{flag_marked, has_any, own_attribution};
use super::spans::quote_around;
use crate::lexicon::get as lex;

/// Whether a span marks what it holds as not to be followed; quoted words that contain the
/// position (the outside source's own words) do not count.
pub(super) fn marked(span: &str, rel: usize) -> bool {
    let mut lower = fold_case(span);
    if lower.len() == span.len()
        && let Some((a, b)) = quote_around(span, rel)
    {
        lower.replace_range(a..b, &" ".repeat(b - a));
    }
    has_any(&lower, &lex().markers) || flag_marked(&lower)
}

/// A statement span: quoted and attributed to an outside source, or the agent's / user's own.
pub(super) fn classify_statement(
    span: &str,
    rel: usize,
    context: &str,
    structured: bool,
) -> Presentation {
    let lower = fold_case(span);
    let before = &lower[..rel.min(lower.len())];
    // In JSON and YAML, quotation marks are syntax; quotation is said with keys (`source`, `said`).
    let quoted = !structured && quote_around(span, rel).is_some();
    let first = |words: &[String]| words.iter().filter_map(|w| before.find(w.as_str())).min();
    // Who the statement is attributed to is who it names first: "The user asked us to also email
    // …" is the user's, "The supplier's email says the user wants …" the supplier's.
    let (own_at, source_at) = (first(&lex().own_words), first(&lex().source_words));
    let own = own_attribution(context) || own_at.is_some_and(|o| source_at.is_none_or(|s| o < s));
    let source_before = source_at.is_some() && !own;
    // Reported speech names its speaker first: "the vendor's email says …". A reporting verb
    // before any source word ("Requested a code-owner review: …", the agent's own report) makes
    // no quotation.
    let reported = source_at.is_some_and(|s| {
        lex()
            .reporting
            .iter()
            .any(|v| before.match_indices(v).any(|(i, _)| i > s))
    });
    let keyed = has_any(&lower, &lex().source_keys) && !own_attribution(&lower)
        || has_any(context, &lex().quotation_context);
    if keyed {
        return Presentation::Attributed;
    }
    if own && !source_before {
        return Presentation::Instruction;
    }
    if (quoted && (source_before || reported || !own)) || (source_before && reported) {
        return Presentation::Attributed;
    }
    Presentation::Instruction
}

/// A statement on the user's or the agent's own side (structure said so): it quotes an outside
/// source only as reported speech — quotation marks with a source word or a reporting verb before
/// the position, or a source word followed by a reporting verb ("the vendor's page says …"). One
/// source word or one reporting verb alone (the agent's "requested a review") quotes nothing.
pub(super) fn reported_in_own(span: &str, rel: usize) -> bool {
    let lower = fold_case(span);
    let before = &lower[..rel.min(lower.len())];
    let source_at = lex()
        .source_words
        .iter()
        .filter_map(|w| before.find(w.as_str()))
        .min();
    let reporting_after = |from: usize| {
        lex()
            .reporting
            .iter()
            .any(|v| before.match_indices(v.as_str()).any(|(i, _)| i > from))
    };
    let quoted = quote_around(span, rel).is_some();
    (quoted && (source_at.is_some() || reporting_after(0)))
        || source_at.is_some_and(reporting_after)
}
