//! Reading one strategy file (`strategies/*.toml`): its TOML parsed with the setting's name in
//! every error, in the file's terms (a whole number, a number, text; never a Rust type), and
//! every setting range-checked before the strategy is built.
//!
//! Owns: the ranges of the settings and their messages. Must not: build a strategy (the
//! registry does) or read the folder (the registry lists it).

use super::StrategyConfig;

/// The largest plug-in output accepted from a configuration (a plug-in may print at most this
/// much; the default is 4 MiB).
const MAX_OUTPUT_BYTES: u64 = 256 * 1024 * 1024;
/// The longest plug-in time limit, in seconds.
const MAX_TIMEOUT_S: f64 = 1e6;

/// Parses a strategy file's text: the error names the setting (`timeout_s: ...`) and its line.
pub(super) fn parse(text: &str) -> Result<StrategyConfig, String> {
    let cfg: StrategyConfig = crate::text::parse_toml(text)?;
    check(&cfg)?;
    Ok(cfg)
}

/// Every setting in its range, or the first that is not, named as the file names it.
pub(super) fn check(c: &StrategyConfig) -> Result<(), String> {
    let bad = |key: &str, why: String| Err(format!("`{key}` {why}"));
    if c.id.trim().is_empty() {
        return bad(
            "id",
            "must not be empty: it is the strategy's name on the command line".into(),
        );
    }
    if c.id.chars().any(|ch| ch.is_control() || ch == ',') {
        return bad(
            "id",
            format!(
                "{:?} holds a comma or a control character (ids are listed with commas)",
                c.id
            ),
        );
    }
    if c.id.contains(super::chain::MARK) {
        return bad(
            "id",
            format!(
                "{:?} holds `{}`, which marks a compaction chain (`C{}3` is C compacted three times; use --cycles)",
                c.id,
                super::chain::MARK,
                super::chain::MARK
            ),
        );
    }
    if let Some(n) = c.trigger_tokens {
        if matches!(
            c.kind,
            super::StrategyKind::Transcript | super::StrategyKind::None
        ) {
            return bad(
                "trigger_tokens",
                "applies to a compacting strategy: a transcript or an empty handoff has nothing to compact".into(),
            );
        }
        if n == 0 {
            return bad(
                "trigger_tokens",
                "must be a whole number of tokens above 0 (leave it out to always compact)".into(),
            );
        }
    }
    if let Some(k) = c.external_keep
        && !(k.is_finite() && (0.0..=1.0).contains(&k))
    {
        return bad(
            "external_keep",
            format!("is a probability: from 0 to 1, not {k}"),
        );
    }
    if let Some(t) = c.timeout_s
        && (!t.is_finite() || t <= 0.0 || t > MAX_TIMEOUT_S)
    {
        return bad(
            "timeout_s",
            format!("must be a number of seconds above 0 (and at most {MAX_TIMEOUT_S}), not {t}"),
        );
    }
    if let Some(n) = c.max_output_bytes
        && (n == 0 || n as u64 > MAX_OUTPUT_BYTES)
    {
        return bad(
            "max_output_bytes",
            format!("must be from 1 to {MAX_OUTPUT_BYTES} bytes, not {n}"),
        );
    }
    for (key, value) in [
        ("token_budget", c.token_budget.map(|v| v as u128)),
        ("excerpt_chars", c.excerpt_chars.map(|v| v as u128)),
    ] {
        if value == Some(0) {
            return bad(key, "must be at least 1".into());
        }
    }
    if c.program.as_deref().is_some_and(|p| p.trim().is_empty()) {
        return bad("program", "must name a program, not be empty".into());
    }
    if let Some(r) = &c.reads
        && crate::plugin::protocol::InputFormat::parse(r).is_none()
    {
        return bad(
            "reads",
            format!(
                "names the input format {r:?}, which this release does not serve; it serves {}",
                crate::plugin::protocol::STATE_FORMATS
                    .map(|f| format!("{f:?}"))
                    .join(" and ")
            ),
        );
    }
    if let Some(name) = c.env.iter().find(|v| v.is_empty() || v.contains('=')) {
        return bad("env", format!("lists variable names; {name:?} is not one"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text).expect_err("rejected")
    }

    #[test]
    fn out_of_range_settings_are_rejected_naming_the_setting() {
        let base = "id = \"S\"\nkind = \"summary\"\n";
        for (extra, key, words) in [
            ("external_keep = -1\n", "external_keep", "from 0 to 1"),
            ("external_keep = 1.5\n", "external_keep", "from 0 to 1"),
            ("token_budget = 0\n", "token_budget", "at least 1"),
            (
                "keep_last_tool_outputs = 1.5\n",
                "keep_last_tool_outputs",
                "whole number",
            ),
            ("recent_events = -2\n", "recent_events", "whole number"),
            ("max_output_bytes = 0\n", "max_output_bytes", "from 1 to"),
            ("timeout_s = 0\n", "timeout_s", "above 0"),
            (
                "excerpt_chars = \"many\"\n",
                "excerpt_chars",
                "whole number",
            ),
        ] {
            let e = err(&format!("{base}{extra}"));
            assert!(e.contains(key) && e.contains(words), "{extra}: {e}");
            for rust in ["usize", "u64", "f64", "Option"] {
                assert!(!e.contains(rust), "{extra}: {e}");
            }
        }
        let e = err("id = \"\"\nkind = \"summary\"\n");
        assert!(e.contains("`id` must not be empty"), "{e}");
        let e = err("id = \"S×2\"\nkind = \"summary\"\n");
        assert!(e.contains("marks a compaction chain"), "{e}");
        let e = err("id = \"S\"\nkind = \"sumary\"\n");
        assert!(e.contains("kind") && e.contains("unknown value"), "{e}");
        let e = err("id = \"S\"\nkind = \"summary\"\ntoken_budgte = 3\n");
        assert!(e.contains("token_budgte"), "{e}");
        assert!(parse(&format!("{base}external_keep = 0.25\ntoken_budget = 300\n")).is_ok());
    }
}
