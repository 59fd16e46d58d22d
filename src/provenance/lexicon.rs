//! Matching helpers over the cue words of `data/lexicon.toml` (the `crate::lexicon` leaf): whether
//! a span holds a marker, a flag key with a negative value, a source word, an attribution to the
//! user or the agent. It owns no word of its own; it finds no span and reaches no verdict.

use crate::lexicon::{WordList, get as lex};

/// Whether `lower` holds a flag key with a negative value: `key="value"`, `key: value`,
/// `"key": value` (quotes optional).
pub(super) fn flag_marked(lower: &str) -> bool {
    lex().flag_keys.iter().any(|k| {
        lower.match_indices(k).any(|(i, _)| {
            let starts_word = lower[..i]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric() && c != '_');
            if !starts_word {
                return false;
            }
            let rest = lower[i + k.len()..].trim_start_matches(['"', '\'']);
            let Some(rest) = rest.trim_start().strip_prefix(['=', ':']) else {
                return false;
            };
            let value = rest.trim_start().trim_start_matches(['"', '\'']);
            lex().flag_negative.iter().any(|n| {
                value.starts_with(n)
                    && value[n.len()..]
                        .chars()
                        .next()
                        .is_none_or(|c| !c.is_alphanumeric())
            })
        })
    })
}

/// Whether any of `words` starts a word in `lower` (not inside one: "void" is not in "avoid").
pub(super) fn has_word(lower: &str, words: &WordList) -> bool {
    words.starts_word_in(lower)
}

/// Whether any of `words` occurs anywhere in `lower`.
pub(super) fn has_any(lower: &str, words: &WordList) -> bool {
    words.occurs_in(lower)
}

pub(super) fn has_source(lower: &str) -> bool {
    has_any(lower, &lex().source_words)
}

pub(super) fn own_attribution(lower: &str) -> bool {
    has_any(lower, &lex().own_words)
}
