//! Token counts of chat messages, framing included (the text counts are [`crate::tokens`]).
//!
//! Owns: the per-message framing and the reply priming a chat request adds. Must not: count text
//! itself (that is `crate::tokens`) or trim messages to a budget (strategies do).

use super::Message;
use crate::tokens::count_cached;

/// Tokens a chat API charges per message for its framing (role and separators), as OpenAI
/// documents for its chat formats.
const PER_MESSAGE: u64 = 3;
/// Tokens that prime the assistant's reply.
const REPLY_PRIMING: u64 = 3;

/// Tokens of one message, framing included.
pub fn count_message(m: &Message) -> u64 {
    let mut n = PER_MESSAGE + count_cached(&m.content);
    if let Some(tc) = &m.tool_call {
        n += count_cached(&tc.name) + count_cached(&tc.arguments);
    }
    n
}

/// Tokens of a list of messages, as a chat request would count them.
pub fn count_messages(messages: &[Message]) -> u64 {
    if messages.is_empty() {
        return 0;
    }
    messages.iter().map(count_message).sum::<u64>() + REPLY_PRIMING
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_counts_its_framing() {
        assert_eq!(count_messages(&[Message::user("hello world")]), 2 + 3 + 3);
    }
}
