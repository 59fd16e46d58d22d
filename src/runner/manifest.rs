//! Comparing run manifests: which keys of two `manifest.json` files differ in what decides a
//! run's cells and their results (for `--resume` and `merge`).
//!
//! Owns: the list of keys that may differ between runs of the same matrix (output folder,
//! concurrency, cache, limit, resume flags, the digest, cell counts) and the flattened
//! comparison. Must not: read or write files, or decide what a mismatch means (the runner refuses
//! to resume, `merge` refuses to merge).

use serde_json::Value;

/// Keys that do not change which cells a run holds or what their records say.
const INDEPENDENT: &[&str] = &[
    "digest",
    // The same value as `config.seed`, named once.
    "seed",
    "cells",
    "config.out",
    // The folders' spelling: their files' content is compared under `scenario_digests` and
    // `strategy_digests`, keyed by the path inside the folder.
    "config.scenario_dir",
    "config.strategy_dir",
    "config.resume",
    "config.rerun_errored",
    "config.limit",
    "config.concurrency",
    "config.cache_dir",
    "config.no_cache",
];

/// Keys that may differ between the shards of one run (besides [`INDEPENDENT`]).
pub const SHARD_KEYS: &[&str] = &["config.shard"];

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, x, out);
            }
        }
        _ => out.push((prefix.to_string(), v.clone())),
    }
}

/// The keys (dotted paths) whose values differ between two manifests, ignoring the keys that do
/// not decide the run's cells, `extra_ignored`, and top-level sections only one of them has;
/// sorted.
pub fn differences(a: &Value, b: &Value, extra_ignored: &[&str]) -> Vec<String> {
    let ignored = |k: &str| {
        INDEPENDENT
            .iter()
            .chain(extra_ignored)
            .any(|i| k == *i || k.starts_with(&format!("{i}.")))
    };
    let (mut fa, mut fb) = (Vec::new(), Vec::new());
    flatten("", a, &mut fa);
    flatten("", b, &mut fb);
    let ma: std::collections::BTreeMap<String, Value> = fa.into_iter().collect();
    let mb: std::collections::BTreeMap<String, Value> = fb.into_iter().collect();
    // A section only one manifest has (written by another version) is not a difference of
    // configuration.
    let section = |k: &str| k.split('.').next().unwrap_or_default().to_string();
    let in_both = |k: &str| a.get(section(k)).is_some() && b.get(section(k)).is_some();
    let mut keys: Vec<String> = ma
        .keys()
        .chain(mb.keys())
        .filter(|k| !ignored(k) && in_both(k))
        .filter(|k| ma.get(*k) != mb.get(*k))
        .cloned()
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_keys_that_decide_the_cells_count() {
        let a = json!({"seed": 1, "config": {"seed": 1, "out": "a", "strategies": ["A"], "concurrency": 2,
            "model_defs": {"m": {"request_timeout_s": 5.0}}}, "digest": "x"});
        let b = json!({"seed": 2, "config": {"seed": 2, "out": "b", "strategies": ["A", "B"], "concurrency": 4,
            "model_defs": {"m": {"request_timeout_s": 6.0}}, "shard": {"index": 1, "count": 2}},
            "digest": "y"});
        assert_eq!(
            differences(&a, &b, &[]),
            vec![
                "config.model_defs.m.request_timeout_s",
                "config.seed",
                "config.shard.count",
                "config.shard.index",
                "config.strategies",
            ]
        );
        assert_eq!(differences(&a, &a, &[]), Vec::<String>::new());
        let mut newer = a.clone();
        newer["interrupts"] = json!({"s": ["p"]});
        assert_eq!(differences(&a, &newer, &[]), Vec::<String>::new());
        assert!(
            !differences(&a, &b, SHARD_KEYS)
                .iter()
                .any(|k| k.starts_with("config.shard"))
        );
    }
}
