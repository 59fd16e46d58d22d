//! Exact token counts of text with tiktoken (`o200k_base` unless a destination names another
//! encoding).
//!
//! Owns: counting the tokens of a text, memoised per thread. A leaf: it knows no domain type
//! (a chat message's framing is counted in `handoff::tokens`). Must not: truncate, budget or
//! decide what a count means.

/// Tokens of `text` in `o200k_base`. Special-token text is counted as ordinary text, since
/// handoffs carry untrusted content.
pub fn count(text: &str) -> u64 {
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(text)
        .len() as u64
}

thread_local! {
    /// Counts of texts seen on this thread. Cells of one matrix see the same tool results over and
    /// over; counting each distinct text once per thread keeps token accounting off the hot path.
    static CACHE: std::cell::RefCell<std::collections::HashMap<u64, u64>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// [`count`], memoised per thread by a hash of the text (bounded: the memo is dropped when it
/// reaches 200,000 entries).
pub fn count_cached(text: &str) -> u64 {
    let key = crate::text::digest(text) ^ (text.len() as u64).rotate_left(32);
    CACHE.with(|c| {
        if let Some(n) = c.borrow().get(&key) {
            return *n;
        }
        let n = count(text);
        let mut m = c.borrow_mut();
        if m.len() >= 200_000 {
            m.clear();
        }
        m.insert(key, n);
        n
    })
}

/// Tokens of `text` in a named encoding (`o200k_base`, `cl100k_base`); unknown names fall back to
/// `o200k_base` and say so in the returned flag.
pub fn count_with(encoding: &str, text: &str) -> (u64, bool) {
    match encoding {
        "cl100k_base" => (
            tiktoken_rs::cl100k_base_singleton()
                .encode_ordinary(text)
                .len() as u64,
            true,
        ),
        "o200k_base" => (count(text), true),
        _ => (count(text), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_exact_and_special_tokens_are_ordinary_text() {
        assert_eq!(count("hello world"), 2);
        assert!(count("<|endoftext|>") > 1);
    }
}
