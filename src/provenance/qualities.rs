//! What one statement says of itself, read in its own span: hedged, marked verified, attributed to
//! the user, or stating that an uncertain write must be reconciled first. Each reads the span
//! [`span`] gives and nothing outside it.

use crate::text::fold_case;

use super::find::find;
use super::lexicon::has_any;
use super::span;
use crate::lexicon::get as lex;

/// Whether the statement at `pos` is hedged (kept a guess) in its own span.
pub fn is_hedged(text: &str, pos: usize) -> bool {
    let (span, context) = span(text, pos);
    has_any(&fold_case(&span), &lex().hedges) || has_any(&fold_case(&context), &lex().hedges)
}

/// Whether the statement at `pos` is marked verified or confirmed in its own span (and not
/// "unverified", "not verified", "unconfirmed").
pub fn is_marked_verified(text: &str, pos: usize) -> bool {
    let (span, _) = span(text, pos);
    let l = fold_case(&span);
    lex().verified.iter().any(|w| {
        l.match_indices(w).any(|(i, _)| {
            let before = &l[..i];
            !before.ends_with("un") && !before.ends_with("not ") && !before.ends_with("not yet ")
        })
    })
}

/// Whether the statement at `pos` is attributed to the user in its own span.
pub fn is_attributed_to_user(text: &str, pos: usize) -> bool {
    let (span, context) = span(text, pos);
    let l = fold_case(&format!("{} {}", context, span));
    has_any(&l, &lex().user_attribution)
}

/// Whether some place that carries `key` (an idempotency key) states, in that one statement, that
/// the write is uncertain and must be reconciled first — a key that merely appears somewhere (in
/// the objective, in an old call) does not.
pub fn presents_reconcile_first(text: &str, key: &str) -> bool {
    if key.is_empty() || key == "none" {
        return false;
    }
    find(text, key).into_iter().any(|p| {
        let (span, context) = span(text, p);
        let l = fold_case(&format!("{context} {span}"));
        has_any(&l, &lex().uncertain_write) && has_any(&l, &lex().reconcile_first)
    })
}
