//! A simulated destination's behaviour as named rates ([`Rates`]), the profile file that carries
//! them (`compaction-eval/profile/1`, TOML), and their fit to what a live model did.
//!
//! Each rate is the chance of one behaviour in one kind of situation the handoff puts the
//! destination in; the hand-set destinations are points in that space (`sim:careful`,
//! `sim:literal`, and `sim:follow` on τ-bench, whose only rate is `notices_missing`):
//!
//! | rate | situation | behaviour |
//! |---|---|---|
//! | `notices_missing` | a value a call needs is not in what it can see, and a source-run read (or the customer) had it | it recovers it first (re-reads, asks); otherwise it leaves the value out |
//! | `follows_instruction` | an injected directive presented as the agent's or the user's instruction | it carries it out |
//! | `follows_attributed` | an injected directive only quoted or attributed to an outside source, not marked | it carries it out |
//! | `rereads_visible` | a value a call needs is visible, and a source-run read returned it | it re-performs that read anyway |
//! | `asks_again` | a fact the handoff shows that the user could be asked for (its `when_lost` asks) | it asks the user again |
//! | `acts_on_hedged` | a hypothesis the handoff carries hedged | it acts on it as established |
//!
//! A rate of exactly 0 or 1 draws nothing, so a hand-set profile behaves as it always did; a rate
//! in between is drawn per situation from the cell's seed (its own stream, apart from the
//! distraction model's). Overrides ([`crate::provenance::overrides`]) use the two `follows_*`
//! rates by how they are presented, but are not situations of the fit.
//!
//! **The fit** ([`fit`]): every situation is an independent Bernoulli draw of its rate, so the
//! maximum-likelihood rate is the share of situations in which the live model behaved so
//! (events / situations), with a Wilson 95% interval; a rate with no situation keeps
//! `sim:careful`'s value and says so. Situations come from a simulated destination's reading of
//! the same handoff ([`crate::conversation::Situation`]); what the live model did comes from its
//! record and its conversation. Never by strategy name.
//!
//! Owns: [`Rates`], [`Profile`], their TOML form and its errors, [`fit`]. Must not: run a cell,
//! read a run folder, or look at a strategy's name.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The profile file's format line.
pub const FORMAT: &str = "compaction-eval/profile/1";

/// The prefix of a fitted (or hand-written) profile's destination id: `sim:fitted:PATH`.
pub const FITTED_PREFIX: &str = "sim:fitted:";

/// The behavioural rates of a simulated destination, each in `[0, 1]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rates {
    #[serde(default = "one")]
    pub notices_missing: f64,
    #[serde(default = "one")]
    pub follows_instruction: f64,
    #[serde(default)]
    pub follows_attributed: f64,
    #[serde(default)]
    pub rereads_visible: f64,
    #[serde(default)]
    pub asks_again: f64,
    #[serde(default)]
    pub acts_on_hedged: f64,
}

fn one() -> f64 {
    1.0
}

/// The rates' names, in the file's and the report's order.
pub const PARAMETERS: [&str; 6] = [
    "notices_missing",
    "follows_instruction",
    "follows_attributed",
    "rereads_visible",
    "asks_again",
    "acts_on_hedged",
];

impl Rates {
    /// `sim:careful`: recovers what it lacks, follows only what is presented as an instruction,
    /// trusts what it is shown, never asks again, never acts on a hedged hypothesis.
    pub const CAREFUL: Rates = Rates {
        notices_missing: 1.0,
        follows_instruction: 1.0,
        follows_attributed: 0.0,
        rereads_visible: 0.0,
        asks_again: 0.0,
        acts_on_hedged: 0.0,
    };

    /// `sim:literal`: `careful`, but it also follows a directive merely quoted or attributed.
    pub const LITERAL: Rates = Rates {
        follows_attributed: 1.0,
        ..Rates::CAREFUL
    };

    /// The rate named `name` (one of [`PARAMETERS`]).
    pub fn get(&self, name: &str) -> Option<f64> {
        Some(match name {
            "notices_missing" => self.notices_missing,
            "follows_instruction" => self.follows_instruction,
            "follows_attributed" => self.follows_attributed,
            "rereads_visible" => self.rereads_visible,
            "asks_again" => self.asks_again,
            "acts_on_hedged" => self.acts_on_hedged,
            _ => return None,
        })
    }

    fn set(&mut self, name: &str, v: f64) {
        match name {
            "notices_missing" => self.notices_missing = v,
            "follows_instruction" => self.follows_instruction = v,
            "follows_attributed" => self.follows_attributed = v,
            "rereads_visible" => self.rereads_visible = v,
            "asks_again" => self.asks_again = v,
            "acts_on_hedged" => self.acts_on_hedged = v,
            _ => {}
        }
    }

    /// The first rate outside `[0, 1]` (or not a number), by name.
    fn out_of_range(&self) -> Option<(&'static str, f64)> {
        PARAMETERS.iter().find_map(|p| {
            let v = self.get(p)?;
            (!(0.0..=1.0).contains(&v)).then_some((*p, v))
        })
    }
}

/// A profile file: the rates, and how they were fitted when they were.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub format: String,
    /// What the profile stands for (free text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub rates: Rates,
    /// Present when [`fit`] wrote the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<FitReport>,
}

/// How a profile was fitted: the live model, the training split, and per rate its situations,
/// events and interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitReport {
    pub live: String,
    /// Training cells (live cells with a simulated reading of the same handoff).
    pub cells: usize,
    /// Scenarios of the training split.
    pub scenarios: Vec<String>,
    pub rates: BTreeMap<String, RateFit>,
}

/// One rate's fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateFit {
    pub situations: usize,
    pub events: usize,
    /// Wilson 95% interval of the rate (`[0, 1]` when there was no situation).
    pub low: f64,
    pub high: f64,
    /// `true` when no situation arose: the rate is `sim:careful`'s, not fitted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub kept_default: bool,
}

/// A profile file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("{path}: cannot read the profile: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

impl Profile {
    /// A profile of these rates, without a fit.
    pub fn new(name: &str, rates: Rates) -> Profile {
        Profile {
            format: FORMAT.into(),
            name: Some(name.into()),
            rates,
            fit: None,
        }
    }

    /// Reads and checks a profile file: its format line, no unknown key (a misspelt rate is
    /// refused, never silently defaulted), every rate in `[0, 1]`.
    pub fn load(path: &Path) -> Result<Profile, ProfileError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ProfileError::Read {
            path: shown.clone(),
            source,
        })?;
        Profile::parse(&text).map_err(|message| ProfileError::Invalid {
            path: shown,
            message,
        })
    }

    /// [`Profile::load`] on text; the error names the field and what is wrong with it.
    pub fn parse(text: &str) -> Result<Profile, String> {
        let p: Profile = toml::from_str(text).map_err(|e| {
            let m = e.message().to_string();
            match e.span() {
                Some(s) => {
                    let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
                    format!("line {line}: {m}")
                }
                None => m,
            }
        })?;
        if p.format != FORMAT {
            return Err(format!(
                "format = {:?}: this build reads {FORMAT:?}",
                p.format
            ));
        }
        if let Some((name, v)) = p.rates.out_of_range() {
            return Err(format!(
                "rates.{name} = {v}: a rate is a probability, between 0 and 1"
            ));
        }
        Ok(p)
    }

    /// The profile as TOML.
    pub fn to_toml(&self) -> String {
        let mut out = format!(
            "# A simulated destination's behavioural rates (docs/calibration.md, \"Fitted simulated destinations\").\n# Run it with --models sim:fitted:PATH.\n{}",
            toml::to_string(self).unwrap_or_default()
        );
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out
    }
}

/// A destination id's profile path, when it names one (`sim:fitted:PATH`).
pub fn fitted_path(model: &str) -> Option<&str> {
    model.strip_prefix(FITTED_PREFIX).filter(|p| !p.is_empty())
}

/// The maximum-likelihood rates from `(parameter, behaved)` observations, one per situation:
/// per parameter `events / situations`, with its Wilson 95% interval; a parameter with no
/// situation keeps `sim:careful`'s rate (`kept_default`).
pub fn fit(observations: &[(String, bool)]) -> (Rates, BTreeMap<String, RateFit>) {
    let mut rates = Rates::CAREFUL;
    let mut report = BTreeMap::new();
    for p in PARAMETERS {
        let (n, k) = observations
            .iter()
            .filter(|(q, _)| q == p)
            .fold((0usize, 0usize), |(n, k), (_, y)| {
                (n + 1, k + usize::from(*y))
            });
        let f = if n == 0 {
            RateFit {
                situations: 0,
                events: 0,
                low: 0.0,
                high: 1.0,
                kept_default: true,
            }
        } else {
            rates.set(p, k as f64 / n as f64);
            let (low, high) = wilson(k, n);
            RateFit {
                situations: n,
                events: k,
                low,
                high,
                kept_default: false,
            }
        };
        report.insert(p.to_string(), f);
    }
    (rates, report)
}

/// The Wilson score interval (95%) of `k` successes in `n` trials.
pub fn wilson(k: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.959_963_984_540_054_f64;
    let (nf, p) = (n as f64, k as f64 / n as f64);
    let d = 1.0 + z * z / nf;
    let c = (p + z * z / (2.0 * nf)) / d;
    let h = z * ((p * (1.0 - p) / nf + z * z / (4.0 * nf * nf)).sqrt()) / d;
    ((c - h).max(0.0), (c + h).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_round_trips_and_defaults_to_careful() {
        let p = Profile::parse(
            "format = \"compaction-eval/profile/1\"\n[rates]\nfollows_attributed = 0.25\n",
        )
        .expect("parses");
        assert_eq!(
            p.rates,
            Rates {
                follows_attributed: 0.25,
                ..Rates::CAREFUL
            }
        );
        assert_eq!(Profile::parse(&p.to_toml()).expect("round trip"), p);
    }

    #[test]
    fn an_unknown_rate_a_bad_value_and_a_bad_format_are_refused_by_name() {
        let e = Profile::parse(
            "format = \"compaction-eval/profile/1\"\n[rates]\nfollows_atributed = 0.5\n",
        )
        .expect_err("misspelt");
        assert!(
            e.contains("follows_atributed") && e.contains("line 3"),
            "{e}"
        );
        let e =
            Profile::parse("format = \"compaction-eval/profile/1\"\n[rates]\nasks_again = 1.5\n")
                .expect_err("range");
        assert!(e.contains("rates.asks_again = 1.5"), "{e}");
        let e = Profile::parse("format = \"x/2\"\n[rates]\n").expect_err("format");
        assert!(e.contains("compaction-eval/profile/1"), "{e}");
    }

    #[test]
    fn the_fit_is_the_share_of_situations_with_the_behaviour() {
        let mut obs = Vec::new();
        for i in 0..40 {
            obs.push(("follows_attributed".to_string(), i % 4 != 0));
        }
        obs.push(("rereads_visible".to_string(), false));
        let (r, rep) = fit(&obs);
        assert_eq!(r.follows_attributed, 0.75);
        assert_eq!(r.rereads_visible, 0.0);
        assert_eq!(r.notices_missing, 1.0, "no situation: careful's rate");
        assert!(rep["notices_missing"].kept_default);
        let f = &rep["follows_attributed"];
        assert_eq!((f.situations, f.events), (40, 30));
        assert!(
            f.low < 0.75 && f.high > 0.75 && f.high - f.low < 0.3,
            "{f:?}"
        );
    }

    #[test]
    fn wilson_matches_a_known_value() {
        // 30 of 40: Wilson 95% ≈ [0.5981, 0.8582].
        let (l, h) = wilson(30, 40);
        assert!(
            (l - 0.5981).abs() < 1e-3 && (h - 0.8582).abs() < 1e-3,
            "{l} {h}"
        );
    }
}
