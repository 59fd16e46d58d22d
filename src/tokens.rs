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
/// reaches 200,000 entries). A long text is counted line by line ([`segments`]): handoffs of
/// one point repeat each other's lines (a checkpoint and its governed envelope, a transcript
/// and its masked copy), so most lines are counted once.
pub fn count_cached(text: &str) -> u64 {
    if text.len() < SEGMENTED_FROM {
        return count_memo(text);
    }
    segments(text).map(count_memo).sum()
}

/// The length from which [`count_cached`] counts a text by its segments.
const SEGMENTED_FROM: usize = 512;

/// `text` cut where `o200k_base`'s pre-tokeniser must end a piece: after a line break followed
/// by an ASCII letter or digit. Every piece holding that line break (a run of white space
/// ending in line breaks, or punctuation followed by line breaks and slashes) ends with it,
/// and none holds a line break together with the letter or digit after it, so the count of
/// `text` is the sum of its segments' counts (checked against [`count`] in the tests).
fn segments(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut cuts = bytes
        .iter()
        .enumerate()
        .filter(move |&(i, &b)| {
            b == b'\n' && bytes.get(i + 1).is_some_and(|c| c.is_ascii_alphanumeric())
        })
        .map(|(i, _)| i + 1)
        .chain(std::iter::once(text.len()));
    std::iter::from_fn(move || {
        let end = cuts.next()?;
        let piece = &text[start..end];
        start = end;
        Some(piece)
    })
}

fn count_memo(text: &str) -> u64 {
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
    fn a_text_counted_by_its_lines_counts_what_it_counts_whole() {
        let tricky = [
            "abc\nDef",
            "abc  \nDef",
            "x.\n/abc\nd",
            "end.\r\nNext\n\n12 items\n 3 more\n\tTab\nÉtat\n'quoted'\ndon't\nIt's",
            "a\u{a0}\nb\n\n\nC\n",
            "\nLeading\nlines\n",
        ];
        let mut texts: Vec<String> = tricky.iter().map(|t| t.repeat(200)).collect();
        for entry in std::fs::read_dir("scenarios").expect("the shipped scenarios") {
            let path = entry.expect("an entry").path();
            if path.extension().is_some_and(|e| e == "yaml") {
                texts.push(std::fs::read_to_string(&path).expect("a scenario"));
            }
        }
        assert!(texts.len() > 40);
        for t in &texts {
            assert!(t.len() >= SEGMENTED_FROM);
            assert_eq!(
                segments(t).map(count).sum::<u64>(),
                count(t),
                "{}",
                t.chars().take(80).collect::<String>()
            );
            assert_eq!(segments(t).collect::<String>(), *t);
            assert_eq!(count_cached(t), count(t));
        }
    }

    #[test]
    fn random_texts_counted_by_their_lines_count_what_they_count_whole() {
        // Texts nobody wrote: pieces drawn from white space, line breaks, punctuation, letters
        // of several scripts, digits and contractions, in any order.
        let alphabet = [
            "\n",
            "\n\n",
            "\r\n",
            " ",
            "  ",
            "\t",
            "\u{a0}",
            ".",
            "/",
            "-",
            "'s",
            "'",
            "\"",
            "a",
            "Word",
            "x1",
            "42",
            "2026-12-08",
            "é",
            "Ünïcode",
            "日本語",
            "🙂",
            "#",
            "* ",
            "> ",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 33) as usize
        };
        for _ in 0..300 {
            let mut t = String::new();
            while t.len() < SEGMENTED_FROM + next() % 2048 {
                t.push_str(alphabet[next() % alphabet.len()]);
            }
            assert_eq!(count_cached(&t), count(&t), "{t:?}");
        }
    }

    #[test]
    fn a_count_after_release_loads_the_tables_again_and_agrees() {
        let text = "Refund order #4411 once the carrier confirms the loss.";
        let before = (count(text), count_with("cl100k_base", text));
        release();
        assert_eq!((count(text), count_with("cl100k_base", text)), before);
    }
}
