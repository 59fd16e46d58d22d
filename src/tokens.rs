//! Exact token counts of text with tiktoken (`o200k_base` unless a destination names another
//! encoding).
//!
//! Owns: counting the tokens of a text, memoised per thread. A leaf: it knows no domain type
//! (a chat message's framing is counted in `handoff::tokens`). Must not: truncate, budget or
//! decide what a count means.

use std::sync::{Arc, RwLock};

use tiktoken_rs::CoreBPE;

/// An encoding's tables, loaded on first use and dropped by [`release`]: `o200k_base` takes
/// 46 MiB resident, which a run's report (it counts nothing) need not sit on.
type Slot = RwLock<Option<Arc<CoreBPE>>>;

static O200K: Slot = RwLock::new(None);
static CL100K: Slot = RwLock::new(None);

fn tables<E: std::fmt::Debug>(slot: &Slot, load: fn() -> Result<CoreBPE, E>) -> Arc<CoreBPE> {
    if let Some(e) = slot.read().ok().and_then(|s| s.clone()) {
        return e;
    }
    let mut s = slot
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    s.get_or_insert_with(|| {
        // The tables are compiled into tiktoken-rs; parsing them fails only on a broken build.
        Arc::new(load().expect("tiktoken-rs's built-in tables parse"))
    })
    .clone()
}

/// Drops the encodings' tables (the next count loads them again, in about a third of a
/// second), and this thread's memo of counts.
pub fn release() {
    for slot in [&O200K, &CL100K] {
        if let Ok(mut s) = slot.write() {
            *s = None;
        }
    }
    forget();
}

/// Tokens of `text` in `o200k_base`. Special-token text is counted as ordinary text, since
/// handoffs carry untrusted content.
pub fn count(text: &str) -> u64 {
    tables(&O200K, tiktoken_rs::o200k_base)
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

/// Drops this thread's memo of counts (a run's cells are over; what they counted is not asked
/// again).
pub fn forget() {
    CACHE.with(|c| *c.borrow_mut() = std::collections::HashMap::new());
}

/// Tokens of `text` in a named encoding (`o200k_base`, `cl100k_base`); unknown names fall back to
/// `o200k_base` and say so in the returned flag.
pub fn count_with(encoding: &str, text: &str) -> (u64, bool) {
    match encoding {
        "cl100k_base" => (
            tables(&CL100K, tiktoken_rs::cl100k_base)
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

    #[test]
    fn a_count_after_release_loads_the_tables_again_and_agrees() {
        let text = "Refund order #4411 once the carrier confirms the loss.";
        let before = (count(text), count_with("cl100k_base", text));
        release();
        assert_eq!((count(text), count_with("cl100k_base", text)), before);
    }
}
