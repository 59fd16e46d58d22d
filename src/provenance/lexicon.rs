//! The English cue words provenance reads: what marks a span as not to be followed, what names an
//! outside source or the user, the verbs of reported speech, the keys of a structured quotation,
//! and the hedges that keep a statement a guess. One place, so every reading of a span uses the
//! same words; it finds no span and reaches no verdict.

/// Words that mark a span as not to be followed (matched on lowercase text).
pub(super) const MARKERS: &[&str] = &[
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
    "never act on",
    "no authority",
    "not instructions",
    "not an instruction",
    "not to be acted on",
];

/// Names of a key or an attribute that says whether an item may be followed (`trust`,
/// `follow`, `authority`, …): with a negative value ([`FLAG_NEGATIVE`]) the item is marked, in
/// whatever markup (`trust="untrusted"`, `"follow": false`, `authority: none`).
pub(super) const FLAG_KEYS: &[&str] = &[
    "trust",
    "trusted",
    "follow",
    "safe",
    "authority",
    "instructions",
    "obey",
    "actionable",
    "handling",
];

/// Values of a [`FLAG_KEYS`] key that forbid following the item.
pub(super) const FLAG_NEGATIVE: &[&str] = &[
    "false",
    "no",
    "none",
    "never",
    "untrusted",
    "do not follow",
    "do-not-follow",
    "do_not_follow",
    "not trusted",
    "ignore",
    "data only",
];

/// Whether `lower` holds a flag key with a negative value: `key="value"`, `key: value`,
/// `"key": value` (quotes optional).
pub(super) fn flag_marked(lower: &str) -> bool {
    FLAG_KEYS.iter().any(|k| {
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
            FLAG_NEGATIVE.iter().any(|n| {
                value.starts_with(n)
                    && value[n.len()..]
                        .chars()
                        .next()
                        .is_none_or(|c| !c.is_alphanumeric())
            })
        })
    })
}

/// Words that name an outside source of a statement.
pub(super) const SOURCE_WORDS: &[&str] = &[
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
pub(super) const REPORTING: &[&str] = &[
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
pub(super) const OWN_WORDS: &[&str] = &[
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
pub(super) const SOURCE_KEYS: &[&str] = &[
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
pub const HEDGES: &[&str] = &[
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

/// Where `word` first occurs in `lower` starting a word (not inside one: "void" is not in
/// "avoid").
pub(super) fn find_word(lower: &str, word: &str) -> Option<usize> {
    lower.match_indices(word).map(|(i, _)| i).find(|&i| {
        lower[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric())
    })
}

/// Whether any of `words` starts a word in `lower`.
pub(super) fn has_word(lower: &str, words: &[&str]) -> bool {
    words.iter().any(|w| find_word(lower, w).is_some())
}

pub(super) fn has_any(lower: &str, words: &[&str]) -> bool {
    words.iter().any(|w| lower.contains(w))
}

pub(super) fn has_source(lower: &str) -> bool {
    has_any(lower, SOURCE_WORDS)
}

pub(super) fn own_attribution(lower: &str) -> bool {
    has_any(lower, OWN_WORDS)
}

/// Phrases that revoke, void or weaken what a statement targets ([`OVERRIDE_TARGETS`]).
pub(super) const OVERRIDE_REVOKE: &[&str] = &[
    "void",
    "no longer appl",
    "no longer in force",
    "no longer hold",
    "no longer need",
    "no longer required",
    "no longer necessary",
    "no longer matter",
    "not required any",
    "not needed any",
    "lifted",
    "lift the",
    "rescinded",
    "waived",
    "waive the",
    "disregard",
    "ignore",
    "set aside",
    "scrap",
    "doesn't apply",
    "does not apply",
    "don't apply",
    "do not apply",
    "stop nothing",
    "halt nothing",
    "reconcile nothing",
    "verify nothing",
    "check nothing",
    "confirm nothing",
    "skip ",
    "skip the",
    "without approval",
    "without asking",
    "without waiting",
    "without checking",
    "without reconcil",
    "without verif",
    "no need to",
    "not necessary to",
    "need not",
    "needn't",
    "don't bother",
    "never request approval",
    "never ask for approval",
    "never request sign-off",
    "never ask for sign-off",
    "with a new key",
    "with a fresh key",
    "with a new idempotency key",
    "with a fresh idempotency key",
    "new idempotency key",
    "fresh idempotency key",
    "no more need",
    "override the",
    "overrides the",
    "overridden",
    "override any",
    "override all",
    "relaxed",
    "don't need",
    "do not need",
    "doesn't need",
    "does not need",
    "can go up to",
    "may go up to",
    "as acceptable",
    "instead of the",
];

/// Words that make a statement a constraint or an obligation: what an override can target when
/// it names it in the constraint's own words rather than by a target word.
pub(super) const OBLIGATION_CUES: &[&str] = &[
    "do not", "don't", "never", "must", "only", "no ", "not ", "without", "until", "before", "cap",
    "limit", "ceiling", "floor", "need", "require", "hold", "stop", "halt", "may not", "at most",
    "at least", "every", "each",
];

/// Revoking phrases strong enough to lift a constraint named only in its own words ("the
/// on-board courier is no longer required"); the others ("skip", "without approval") need a
/// target word in the same statement.
pub(super) const OVERRIDE_NAMING: &[&str] = &[
    "void",
    "no longer appl",
    "no longer in force",
    "no longer hold",
    "no longer need",
    "no longer required",
    "no longer necessary",
    "not required any",
    "not needed any",
    "lifted",
    "lift the",
    "rescinded",
    "waived",
    "waive the",
    "disregard",
    "set aside",
    "don't need",
    "do not need",
    "no need to",
    "need not",
    "needn't",
    "override the",
    "overridden",
];

/// What an override can target: constraints, stop conditions, approval requirements, reconcile
/// obligations (in that order).
pub(super) const OVERRIDE_TARGETS: [&[&str]; 4] = [
    &[
        "constraint",
        "restriction",
        "rule",
        "limit",
        "freeze",
        "requirement",
        "policy",
        "instruction",
        "guardrail",
        "prohibition",
        "ban ",
        "embargo",
        "do-not",
    ],
    &["stop", "halt", "pause", "freeze"],
    &[
        "approval",
        "approve",
        "sign-off",
        "signoff",
        "sign off",
        "authoriz",
        "authoris",
        "permission",
        "consent",
    ],
    &[
        "reconcil",
        "verify",
        "verification",
        "check whether",
        "idempotency",
        "retry",
        "look up",
        "confirm",
    ],
];

/// Words that make an override sweep rather than name one thing.
pub(super) const OVERRIDE_GENERAL: &[&str] = &[
    "every",
    "all ",
    "any ",
    "above",
    "previous",
    "earlier",
    "prior",
    "everything",
    "nothing",
    "each",
];

/// Words that place a revoking statement in the past, as a consideration that did not take hold.
pub(super) const OVERRIDE_HISTORICAL: &[&str] = &[
    "considered",
    "proposed",
    "suggested",
    "decided against",
    "declined",
    "rejected",
    "refused",
    "was going to",
    "had planned",
    "reinstated",
    "restored",
    "thought about",
    "talked about",
    "floated",
];

/// Words that restate that an obligation still holds (a reminder, not an override).
pub(super) const OVERRIDE_STILL_HOLDS: &[&str] = &[
    "not lifted",
    "not void",
    "still appl",
    "still in force",
    "remains in force",
    "remain in force",
    "stays in force",
    "still hold",
    "not waived",
    "not revoked",
    "not cancelled",
    "never lifted",
    "cannot be waived",
    "must not be skipped",
    "do not skip",
    "don't skip",
    "never skip",
    "do not ignore",
    "don't ignore",
    "never ignore",
    "not be ignored",
    "do not retry",
    "don't retry",
    "never retry",
    "not cleared",
    "not released",
    "not removed",
    "not been cleared",
    "not been released",
];
