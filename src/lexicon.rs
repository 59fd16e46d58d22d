//! The cue words, as data: `data/lexicon.toml`, compiled into the binary and parsed once. Every
//! judgement that reads English words (provenance's verdicts and overrides, the constraint and stop
//! cues, hedges, the reconcile-first reading) takes its lists from here, so the whole vocabulary a
//! simulated destination or a checker reads is one file a user can open, and a change to it is one
//! diff. It owns the lists and nothing else: it finds no span and reaches no verdict.

use std::sync::LazyLock;

use serde::Deserialize;

/// The lexicon file's text, as shipped in the repository.
pub const SOURCE: &str = include_str!("../data/lexicon.toml");

/// Every list of `data/lexicon.toml` (the file documents each).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lexicon {
    pub markers: Vec<String>,
    pub flag_keys: Vec<String>,
    pub flag_negative: Vec<String>,
    pub source_words: Vec<String>,
    pub reporting: Vec<String>,
    pub own_words: Vec<String>,
    pub source_keys: Vec<String>,
    pub quotation_context: Vec<String>,
    pub hedges: Vec<String>,
    pub verified: Vec<String>,
    pub user_attribution: Vec<String>,
    pub uncertain_write: Vec<String>,
    pub reconcile_first: Vec<String>,
    pub constraint_cues: Vec<String>,
    pub stop_cues: Vec<String>,
    pub override_revoke: Vec<String>,
    pub override_naming: Vec<String>,
    pub obligation_cues: Vec<String>,
    pub prohibitions: Vec<String>,
    pub override_general: Vec<String>,
    pub override_historical: Vec<String>,
    pub override_still_holds: Vec<String>,
    pub condition_openers: Vec<String>,
    pub condition_inner: Vec<String>,
    pub quoted_condition: Vec<String>,
    pub own_parties: Vec<String>,
    pub outside_parties: Vec<String>,
    pub speaker_roles: Vec<String>,
    pub origin_keys: Vec<String>,
    pub author_attributes: Vec<String>,
    pub quotation_elements: Vec<String>,
    pub override_targets: OverrideTargets,
}

/// The words that name each kind of thing an override can target.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OverrideTargets {
    pub constraint: Vec<String>,
    pub stop_condition: Vec<String>,
    pub approval: Vec<String>,
    pub reconcile: Vec<String>,
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
            &self.origin_keys,
            &self.author_attributes,
            &self.quotation_elements,
            &self.override_targets.constraint,
            &self.override_targets.stop_condition,
            &self.override_targets.approval,
            &self.override_targets.reconcile,
        ]
        .into_iter()
        .flatten()
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
    fn an_unknown_list_or_an_uppercase_word_is_refused() {
        let bad = SOURCE.replace("markers = [", "markerz = [");
        assert!(parse(&bad).unwrap_err().contains("markerz"));
        let bad = SOURCE.replacen("  \"do not follow\",", "  \"Do not follow\",", 1);
        assert!(parse(&bad).unwrap_err().contains("Do not follow"));
    }
}
