//! The cue words, as data: `data/lexicon.toml`, compiled into the binary and parsed once. Every
//! judgement that reads English words (provenance's verdicts and overrides, the constraint and stop
//! cues, hedges, the reconcile-first reading) takes its lists from here, so the whole vocabulary a
//! simulated destination or a checker reads is one file a user can open, and a change to it is one
//! diff. It owns the lists and nothing else: it finds no span and reaches no verdict.

use std::ops::Deref;
use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use serde::Deserialize;

/// The lexicon file's text, as shipped in the repository.
pub const SOURCE: &str = include_str!("../data/lexicon.toml");

/// Every list of `data/lexicon.toml` (the file documents each).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lexicon {
    pub markers: WordList,
    pub flag_keys: WordList,
    pub flag_negative: WordList,
    pub source_words: WordList,
    pub reporting: WordList,
    pub own_words: WordList,
    pub source_keys: WordList,
    pub quotation_context: WordList,
    pub hedges: WordList,
    pub verified: WordList,
    pub user_attribution: WordList,
    pub uncertain_write: WordList,
    pub reconcile_first: WordList,
    pub constraint_cues: WordList,
    pub stop_cues: WordList,
    pub override_revoke: WordList,
    pub override_naming: WordList,
    pub obligation_cues: WordList,
    pub exception_cues: WordList,
    pub prohibitions: WordList,
    pub override_general: WordList,
    pub override_historical: WordList,
    pub override_still_holds: WordList,
    pub condition_openers: WordList,
    pub condition_inner: WordList,
    pub quoted_condition: WordList,
    pub own_parties: WordList,
    pub outside_parties: WordList,
    pub speaker_roles: WordList,
    pub message_kinds: WordList,
    pub origin_keys: WordList,
    pub author_attributes: WordList,
    pub quotation_elements: WordList,
    pub override_targets: OverrideTargets,
    pub override_acts: OverrideActs,
}

/// The words of what a statement does to a rule (`src/provenance/acts.rs`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OverrideActs {
    pub rule_modals: WordList,
    pub obligates: WordList,
    pub revoke: WordList,
    pub states: WordList,
    pub present: WordList,
    pub persist: WordList,
    pub rule_nouns: WordList,
    pub time_clauses: WordList,
    pub defer: WordList,
    pub concede: WordList,
    pub authorise: WordList,
    pub max_bound: WordList,
    pub permit: WordList,
    pub past_anchors: WordList,
    pub retractions: WordList,
    pub hypothetical: WordList,
    pub declares: WordList,
}

/// The words that name each kind of thing an override can target.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OverrideTargets {
    pub constraint: WordList,
    pub stop_condition: WordList,
    pub approval: WordList,
    pub reconcile: WordList,
}

/// One list of cue words, with one automaton that finds all of them in a single pass over a text.
///
/// Why: every judgement asks "does any word of this list occur here?" of every statement of every
/// handoff, and searching word by word made those questions most of a run's CPU time. The list's
/// words and order are as in the file; matching is on case-folded text, as before.
#[derive(Debug)]
pub struct WordList {
    words: Vec<String>,
    any: AhoCorasick,
    /// The same words without leading spaces (a word-start search needs no leading space).
    starts: AhoCorasick,
    /// The longest of them, in bytes.
    longest_start: usize,
}

impl WordList {
    fn new(words: Vec<String>) -> Result<WordList, String> {
        let build = |ws: Vec<&str>| {
            AhoCorasick::new(ws)
                .map_err(|e| format!("data/lexicon.toml: a word list does not compile: {e}"))
        };
        let any = build(words.iter().map(String::as_str).collect())?;
        let starts = build(words.iter().map(|w| w.trim_start()).collect())?;
        let longest_start = words
            .iter()
            .map(|w| w.trim_start().len())
            .max()
            .unwrap_or(0);
        Ok(WordList {
            words,
            any,
            starts,
            longest_start,
        })
    }

    /// One list of every word of `lists` (its searches find what searching each would).
    pub fn union(lists: &[&WordList]) -> Result<WordList, String> {
        WordList::new(lists.iter().flat_map(|l| l.words.iter().cloned()).collect())
    }

    /// Whether any word occurs anywhere in `lower`.
    pub fn occurs_in(&self, lower: &str) -> bool {
        self.any.is_match(lower)
    }

    /// Whether any word (as written, leading spaces included) starts a word in `lower`.
    pub fn starts_word_in(&self, lower: &str) -> bool {
        self.any
            .find_overlapping_iter(lower)
            .any(|m| starts_word(lower, m.start()))
    }

    /// Every stretch of `lower` (byte ranges) where a word of the list starts a word.
    pub fn word_matches<'a>(&'a self, lower: &'a str) -> impl Iterator<Item = (usize, usize)> + 'a {
        self.any
            .find_overlapping_iter(lower)
            .filter(|m| starts_word(lower, m.start()))
            .map(|m| (m.start(), m.end()))
    }

    /// The first position in `lower` where a word of the list (leading spaces trimmed) starts a
    /// word: "void" is not found in "avoid".
    pub fn first_word_start(&self, lower: &str) -> Option<usize> {
        let mut first: Option<usize> = None;
        // Overlapping matches come in the order they end, and none is longer than the longest
        // word: once one ends that far past the first start found, none found later starts
        // before it.
        for m in self.starts.find_overlapping_iter(lower) {
            if first.is_some_and(|f| m.end() >= f + self.longest_start) {
                break;
            }
            if starts_word(lower, m.start()) && first.is_none_or(|f| m.start() < f) {
                first = Some(m.start());
            }
        }
        first
    }

    /// Whether a word of the list (leading spaces trimmed) starts a word somewhere in `lower`:
    /// [`WordList::first_word_start`] is some, found without looking further.
    pub fn has_word_start(&self, lower: &str) -> bool {
        self.starts
            .find_overlapping_iter(lower)
            .any(|m| starts_word(lower, m.start()))
    }
}

fn starts_word(lower: &str, i: usize) -> bool {
    lower[..i]
        .chars()
        .next_back()
        .is_none_or(|c| !c.is_alphanumeric())
}

impl Deref for WordList {
    type Target = [String];
    fn deref(&self) -> &[String] {
        &self.words
    }
}

impl<'de> Deserialize<'de> for WordList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<WordList, D::Error> {
        WordList::new(Vec::<String>::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// Parses a lexicon document; every word is lowercase (the lists are matched on case-folded text).
pub fn parse(text: &str) -> Result<Lexicon, String> {
    let lex: Lexicon = toml::from_str(text).map_err(|e| format!("data/lexicon.toml: {e}"))?;
    if let Some(w) = lex.all().find(|w| w.is_empty() || w.to_lowercase() != **w) {
        return Err(format!(
            "data/lexicon.toml: the word {w:?} is empty or not lowercase (lists are matched on case-folded text)"
        ));
    }
    Ok(lex)
}

impl Lexicon {
    /// Every word of every list.
    pub fn all(&self) -> impl Iterator<Item = &String> {
        [
            &self.markers,
            &self.flag_keys,
            &self.flag_negative,
            &self.source_words,
            &self.reporting,
            &self.own_words,
            &self.source_keys,
            &self.quotation_context,
            &self.hedges,
            &self.verified,
            &self.user_attribution,
            &self.uncertain_write,
            &self.reconcile_first,
            &self.constraint_cues,
            &self.stop_cues,
            &self.override_revoke,
            &self.override_naming,
            &self.obligation_cues,
            &self.exception_cues,
            &self.prohibitions,
            &self.override_general,
            &self.override_historical,
            &self.override_still_holds,
            &self.condition_openers,
            &self.condition_inner,
            &self.quoted_condition,
            &self.own_parties,
            &self.outside_parties,
            &self.speaker_roles,
            &self.message_kinds,
            &self.origin_keys,
            &self.author_attributes,
            &self.quotation_elements,
            &self.override_targets.constraint,
            &self.override_targets.stop_condition,
            &self.override_targets.approval,
            &self.override_targets.reconcile,
            &self.override_acts.rule_modals,
            &self.override_acts.revoke,
            &self.override_acts.defer,
            &self.override_acts.concede,
            &self.override_acts.authorise,
            &self.override_acts.max_bound,
            &self.override_acts.permit,
            &self.override_acts.past_anchors,
            &self.override_acts.retractions,
            &self.override_acts.hypothetical,
            &self.override_acts.declares,
        ]
        .into_iter()
        .flat_map(|l| l.iter())
    }
}

static LEXICON: LazyLock<Lexicon> = LazyLock::new(|| match parse(SOURCE) {
    Ok(l) => l,
    // The file is compiled in and `tests` parse it: a broken lexicon cannot reach a user's run.
    Err(e) => panic!("{e}"),
});

/// The lexicon every judgement reads.
pub fn get() -> &'static Lexicon {
    &LEXICON
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_lexicon_parses_and_every_list_has_words() {
        let l = parse(SOURCE).expect("data/lexicon.toml parses");
        assert!(l.markers.len() > 10 && l.hedges.len() > 10 && !l.stop_cues.is_empty());
    }

    #[test]
    fn the_first_word_start_found_early_is_the_first_of_all_matches() {
        // Overlapping words of different lengths, inside words and at their starts.
        let words = [
            "void",
            "avoid",
            "is void",
            "no longer",
            "longer required",
            "o",
        ];
        let list = WordList::new(words.iter().map(|w| w.to_string()).collect()).expect("list");
        let union = WordList::union(&[&list, &list]).expect("union");
        // A shorter word found first, a longer one that starts before it found after.
        let nested =
            WordList::new(vec!["longer".into(), "no longer required".into()]).expect("list");
        assert_eq!(nested.first_word_start("x no longer required"), Some(2));
        let pieces = [
            "a", "void", " ", "is", "no", "longer", "required", "o", "-", "avoid",
        ];
        let mut state = 7_u64;
        for _ in 0..2000 {
            let mut t = String::new();
            for _ in 0..12 {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                t.push_str(pieces[(state >> 33) as usize % pieces.len()]);
            }
            let every = list
                .starts
                .find_overlapping_iter(&t)
                .map(|m| m.start())
                .filter(|&i| starts_word(&t, i))
                .min();
            assert_eq!(list.first_word_start(&t), every, "{t}");
            assert_eq!(list.has_word_start(&t), every.is_some(), "{t}");
            assert_eq!(union.first_word_start(&t), every, "{t}");
        }
    }

    #[test]
    fn an_unknown_list_or_an_uppercase_word_is_refused() {
        let bad = SOURCE.replace("markers = [", "markerz = [");
        assert!(parse(&bad).unwrap_err().contains("markerz"));
        let bad = SOURCE.replacen("  \"do not follow\",", "  \"Do not follow\",", 1);
        assert!(parse(&bad).unwrap_err().contains("Do not follow"));
    }
}
