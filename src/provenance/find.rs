//! Finding a phrase in a handoff: case- and white-space-insensitive positions, over a per-thread
//! memo of the lowercased text, and clamping a caller's offset to a character boundary. It finds
//! places only; what a place presents is for the span readers to say.

use std::cell::RefCell;
use std::rc::Rc;

use crate::text::fold_case;

thread_local! {
    /// The texts [`lowered`] lowered last on this thread.
    static MEMO: RefCell<Vec<(u64, usize, Rc<str>)>> = const { RefCell::new(Vec::new()) };
}

/// Drops this thread's lowered texts.
pub(super) fn forget() {
    MEMO.with(|m| m.borrow_mut().clear());
}

/// `text::fold_case(text)` (offsets stay those of `text`), memoised by [`crate::text::digest`] per thread for the few texts most recently asked: a
/// destination judges many phrases against one handoff, and lowercasing a long transcript for
/// each was most of a cell's cost.
fn lowered(text: &str) -> Rc<str> {
    if text.len() < 512 {
        return Rc::from(fold_case(text));
    }
    let key = crate::text::digest(text);
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        if let Some(i) = m.iter().position(|(k, n, _)| *k == key && *n == text.len()) {
            let hit = m.remove(i);
            let out = hit.2.clone();
            m.push(hit);
            return out;
        }
        let l: Rc<str> = Rc::from(fold_case(text));
        if m.len() >= 8 {
            m.remove(0);
        }
        m.push((key, text.len(), l.clone()));
        l
    })
}

/// Positions (byte offsets into `text`) where `phrase` occurs, case-insensitively and with runs of
/// white space matching any run of white space.
pub fn find(text: &str, phrase: &str) -> Vec<usize> {
    let words: Vec<String> = phrase.split_whitespace().map(fold_case).collect();
    if words.is_empty() {
        return vec![];
    }
    let lower = lowered(text);
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(rel) = lower[from..].find(&words[0]) {
        let start = from + rel;
        let mut at = start + words[0].len();
        let mut ok = true;
        for w in &words[1..] {
            let rest = &lower[at..];
            let trimmed = rest.trim_start();
            if trimmed.len() == rest.len() || !trimmed.starts_with(w.as_str()) {
                ok = false;
                break;
            }
            at += rest.len() - trimmed.len() + w.len();
        }
        if ok {
            out.push(start);
        }
        from = start + words[0].len();
    }
    out
}

/// `pos` clamped to the text and moved back to the start of the character it falls in, so a
/// caller's offset (from another copy of the text, or past its end) can never split a character.
pub(super) fn char_start(text: &str, pos: usize) -> usize {
    let mut pos = pos.min(text.len());
    while !text.is_char_boundary(pos) {
        pos -= 1;
    }
    pos
}
