//! The English cue words provenance reads: what marks a span as not to be followed, what names an
//! outside source or the user, the verbs of reported speech, the keys of a structured quotation,
//! and the hedges that keep a statement a guess. One place, so every reading of a span uses the
//! same words; it finds no span and reaches no verdict.

/// Words that mark a span as not to be followed (matched on lowercase text).
pub(super) const MARKERS: [&str; 27] = [
    "untrusted",
    "do not follow",
    "don't follow",
    "not to be followed",
    "not be followed",
    "must not be followed",
    "do not carry",
    "don't carry",
    "do not act on",
    "do not obey",
    "must be ignored",
    "should be ignored",
    "ignore it",
    "ignored",
    "injected",
    "injection",
    "suspicious",
    "not authorised",
    "not authorized",
    "unauthorised",
    "unauthorized",
    "do_not_follow",
    "not from the",
    "will not follow",
    "won't follow",
    "not follow",
    "phishing",
];

/// Keys and attribute values that mark a structured item (JSON, YAML, XML attributes).
pub(super) const FLAG_MARKERS: [&str; 8] = [
    "\"trusted\": false",
    "trusted: false",
    "\"follow\": false",
    "follow: false",
    "follow=\"no\"",
    "follow=\"false\"",
    "trust=\"untrusted\"",
    "\"safe\": false",
];

/// Words that name an outside source of a statement.
pub(super) const SOURCE_WORDS: [&str; 44] = [
    "email",
    "e-mail",
    "mail from",
    "page",
    "website",
    "web site",
    "site",
    "post",
    "forum",
    "document",
    "pdf",
    "message",
    "newsletter",
    "notice",
    "bulletin",
    "comment",
    "vendor",
    "supplier",
    "third-party",
    "third party",
    "external",
    "tool result",
    "tool output",
    "footer",
    "sender",
    "attachment",
    "invoice",
    "review",
    "letter",
    "feed",
    "readme",
    "log ",
    "banner",
    "whatsapp",
    "sms",
    "announcement",
    "article",
    "memo from",
    "ticket comment",
    "reply",
    "according to",
    "quoted from",
    "wiki",
    "issue tracker",
];

/// Verbs of reported speech: "X says …", "X asked …".
pub(super) const REPORTING: [&str; 16] = [
    " says",
    " said",
    " say ",
    " asks",
    " asked",
    " writes",
    " wrote",
    " reads",
    " read:",
    " requests",
    " requested",
    " claims",
    " mentions",
    " instructs",
    " tells",
    " states",
];

/// Words that attribute a statement to the user or the agent itself.
pub(super) const OWN_WORDS: [&str; 12] = [
    "the user",
    "(user)",
    "user:",
    "user said",
    "user_said",
    "user asked",
    "as the user",
    "operator",
    "origin\": \"user",
    "origin: user",
    "source: user",
    "i will",
];

/// Keys of a structured item that attribute it to an outside source.
pub(super) const SOURCE_KEYS: [&str; 12] = [
    "\"source\"",
    "source:",
    "\"from\"",
    "from:",
    "\"said\"",
    "said:",
    "\"quote\"",
    "quote:",
    "kind: external",
    "\"kind\": \"external\"",
    "quoted_from",
    "type: web",
];

/// Words that keep a statement a guess rather than an established fact.
pub const HEDGES: [&str; 24] = [
    "hypothesis",
    "unverified",
    "not verified",
    "not yet verified",
    "unconfirmed",
    "not confirmed",
    "to be confirmed",
    "needs confirming",
    "to confirm",
    "to verify",
    "verify before",
    "revalidate",
    "probably",
    "likely",
    "possibly",
    "maybe",
    "might ",
    "may be",
    "could be",
    "suspect",
    "guess",
    "seems",
    "appears to",
    "assumption",
];

pub(super) fn has_any(lower: &str, words: &[&str]) -> bool {
    words.iter().any(|w| lower.contains(w))
}

pub(super) fn has_source(lower: &str) -> bool {
    has_any(lower, &SOURCE_WORDS)
}

pub(super) fn own_attribution(lower: &str) -> bool {
    has_any(lower, &OWN_WORDS)
}
