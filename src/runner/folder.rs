//! The run folder's files besides records: `manifest.json` (the configuration, digests and matrix
//! order that make a run reproducible), `continuity.jsonl`, and the governed handoffs' artifacts
//! and policies.
//!
//! Owns: what those files hold and that a resumed run matches its folder's manifest. Must not:
//! write records (the journal and `execute` do).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::error::io;
use super::journal::write_atomic;
use super::prepare::Prepared;
use super::{Plan, RunConfig, RunError, manifest};
use crate::destination::live::ModelConfig;
use crate::scenario;
use crate::shipped::{Set, Source};

fn file_digest(path: &Path) -> String {
    std::fs::read(path)
        .map(|b| crate::world::sha256_digest(&b))
        .unwrap_or_else(|_| "unreadable".into())
}

/// `file`'s path inside `dir`, with `/` between its parts whatever the platform.
fn inside(dir: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(dir).unwrap_or(file);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The keys a resumed run takes from its folder's manifest rather than from its own arguments:
/// how the user spelled the folders and that this call resumed say nothing about the run's
/// cells, and keeping them makes a resume with nothing left to do rewrite no byte.
const KEPT_ON_RESUME: &[&str] = &["out", "resume", "scenario_dir", "strategy_dir"];

/// A live model as the manifest records it: name, endpoint and limits, never the key (only the
/// name of its variable).
fn live_model_entry(c: &ModelConfig) -> serde_json::Value {
    serde_json::json!({
        "name": c.name,
        "model": c.model,
        "base_url": c.display_url(),
        "api_key_env": c.api_key_env,
        "max_concurrency": c.max_concurrency,
        "requests_per_minute": c.requests_per_minute,
        "max_tokens": c.max_tokens_sent(),
        "temperature": c.temperature,
        "seed": c.seed,
        "request_timeout_s": c.request_timeout_s,
        "retries": c.retries,
        "max_requests_per_cell": c.max_requests_per_cell,
        "cell_timeout_s": c.cell_timeout_s,
    })
}

/// Where a manifest's run read its scenarios and strategies (` It read scenarios from …`), for
/// a refused resume; empty for a manifest that does not say.
fn read_from(manifest: &serde_json::Value) -> String {
    let label = |key: &str| manifest["config"][key].as_str().map(str::to_string);
    match (label("scenario_dir"), label("strategy_dir")) {
        (Some(sc), Some(st)) => {
            format!(
                " The run in this folder read its scenarios from `{sc}` and its strategies from `{st}`."
            )
        }
        _ => String::new(),
    }
}

/// The digests of a strategy source's configurations and templates (its top-level files and
/// those of `templates/`), keyed by the path inside the folder: the same for a folder and for
/// the embedded files when their bytes are the same.
fn strategy_digests(source: &Source) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    match source {
        Source::Embedded => {
            for f in Set::Strategies.files() {
                let depth = f.path.matches('/').count();
                if depth == 0 || (depth == 1 && f.path.starts_with("templates/")) {
                    out.insert(f.path.to_string(), crate::world::sha256_digest(f.bytes));
                }
            }
        }
        Source::Folder(dir) => {
            for sub in [dir.clone(), dir.join("templates")] {
                if let Ok(entries) = std::fs::read_dir(&sub) {
                    let mut files: Vec<PathBuf> = entries
                        .filter_map(|e| e.ok().map(|e| e.path()))
                        .filter(|p| p.is_file())
                        .collect();
                    files.sort();
                    for f in files {
                        out.insert(inside(dir, &f), file_digest(&f));
                    }
                }
            }
        }
    }
    out
}

/// The run's `manifest.json` (without its digest): configuration, scenario and strategy digests,
/// versions, seed, cell counts and the matrix order.
pub fn manifest_value(cfg: &RunConfig, plan: &Plan) -> serde_json::Value {
    // Keyed by the file's path inside its folder: the identity of a scenario or strategy is its
    // content and its place in the folder, never how the folder was spelled (`./sc`, `sc`, an
    // absolute path, another working directory).
    let mut scenario_digests = BTreeMap::new();
    if let Ok(files) = scenario::source_files(&cfg.scenario_dir) {
        for (inside, bytes) in files {
            scenario_digests.insert(inside, crate::world::sha256_digest(&bytes));
        }
    }
    let strategy_digests = strategy_digests(&cfg.strategy_dir);
    // The interrupt points of each scenario in matrix order (`merge` restores cell order).
    let interrupts: serde_json::Map<String, serde_json::Value> = plan
        .scenarios
        .iter()
        .map(|s| {
            (
                s.id.clone(),
                serde_json::json!(
                    s.interrupts
                        .iter()
                        .map(|i| i.point.clone())
                        .collect::<Vec<_>>()
                ),
            )
        })
        .collect();
    let mut m = serde_json::json!({
        "tool": "compaction-eval",
        "version": env!("CARGO_PKG_VERSION"),
        "seed": cfg.seed,
        "config": cfg,
        "cells": plan.selected.len(),
        "matrix_cells": plan.cells.len(),
        "scenarios": plan.scenarios.iter().map(|s| s.id.clone()).collect::<Vec<_>>(),
        "scenario_scales": plan.scales.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        "interrupts": interrupts,
        // Each scenario's domain, for the report's per-domain table (records name the scenario only).
        "domains": plan.scenarios.iter().map(|s| (s.id.clone(), serde_json::json!(s.domain))).collect::<serde_json::Map<_, _>>(),
        "scenario_digests": scenario_digests,
        "strategy_digests": strategy_digests,
        // The kind of each source (`embedded v0.1.0` or `folder`), compared on resume: a run of
        // the embedded files is another configuration than one of a folder. The folders' paths
        // are `config.scenario_dir` and `config.strategy_dir`, not compared.
        "sources": {
            "scenarios": cfg.scenario_dir.kind(),
            "strategies": cfg.strategy_dir.kind(),
        },
        "tokenizer": "o200k_base",
        "live_models": plan.live_models.iter().map(live_model_entry).collect::<Vec<_>>(),
    });
    // A base URL may carry `user:password@`: the manifest shows it without.
    if let Some(defs) = m["config"]["model_defs"].as_object_mut() {
        for def in defs.values_mut() {
            if let Some(url) = def["base_url"].as_str() {
                def["base_url"] = crate::destination::live::redact_userinfo(url).into();
            }
        }
    }
    m
}

/// Writes `OUT/manifest.json` ([`manifest_value`] and a digest of it, so a report can be
/// reproduced) and `OUT/continuity.jsonl`. With `--resume` on a folder that already holds
/// records, the folder's manifest must describe the same run: otherwise nothing is written and
/// the differing keys are named ([`RunError::ManifestMismatch`]).
pub fn write_manifest(cfg: &RunConfig, plan: &Plan) -> Result<(), RunError> {
    std::fs::create_dir_all(&cfg.out).map_err(io(&cfg.out))?;
    let mut m = manifest_value(cfg, plan);
    let path = cfg.out.join("manifest.json");
    if cfg.resume && cfg.out.join("results.jsonl").is_file() && path.is_file() {
        let text = std::fs::read_to_string(&path).map_err(io(&path))?;
        let old: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| RunError::Corrupt {
                path: path.clone(),
                line: e.line(),
                message: e.to_string(),
            })?;
        let keys = manifest::differences(&old, &m, &["matrix_cells"]);
        if !keys.is_empty() {
            return Err(RunError::ManifestMismatch {
                path,
                keys,
                read_from: read_from(&old),
            });
        }
        if let (Some(new), Some(old)) = (
            m.get_mut("config").and_then(|c| c.as_object_mut()),
            old.get("config").and_then(|c| c.as_object()),
        ) {
            for key in KEPT_ON_RESUME {
                if let Some(v) = old.get(*key) {
                    new.insert((*key).to_string(), v.clone());
                }
            }
        }
    }
    let digest = crate::world::sha256_digest(m.to_string().as_bytes());
    m["digest"] = serde_json::Value::String(digest);
    write_atomic(&path, &pretty(&m, "manifest.json")?)?;
    // The continuity trace and required eval, one line per scenario × point × strategy: every cell
    // of that triple starts from this handoff (records name it by the same three fields).
    let path = cfg.out.join("continuity.jsonl");
    let mut text = String::new();
    for c in &plan.continuity {
        text.push_str(&crate::secrets::json_line(c));
        text.push('\n');
    }
    write_atomic(&path, text.as_bytes())?;
    write_governed(cfg, plan)
}

/// The governed handoffs' documents and policies (seed 004), kept in the run folder:
/// `artifacts/<digest>` (content-addressed: every document a governed cell of the run is
/// delivered) and `policies/<policy digest>.json`, so `inspect-context
/// OUT/policies/D.json --store OUT/artifacts` re-checks any cell's context from the folder.
fn write_governed(cfg: &RunConfig, plan: &Plan) -> Result<(), RunError> {
    write_governed_of(&cfg.out, plan.handoffs.values())
}

/// [`write_governed`] for some handoffs (a point's, as the stream builds it) into run folder
/// `out`.
pub(super) fn write_governed_of<'a>(
    out: &Path,
    handoffs: impl Iterator<Item = &'a Prepared>,
) -> Result<(), RunError> {
    let artifacts = out.join("artifacts");
    let policies = out.join("policies");
    for p in handoffs {
        let Prepared::Ready {
            governed: Some(g), ..
        } = p
        else {
            continue;
        };
        let (Some(policy), Some(digest)) = (&g.policy, &g.policy_digest) else {
            continue;
        };
        let mut docs: Vec<String> = policy.originals();
        docs.extend(policy.summary.iter().map(|s| s.artifact_digest.clone()));
        g.store
            .export(&docs, &artifacts)
            .map_err(|source| RunError::Store {
                path: artifacts.clone(),
                source,
            })?;
        std::fs::create_dir_all(&policies).map_err(io(&policies))?;
        let path = policies.join(format!("{digest}.json"));
        if !path.is_file() {
            write_atomic(&path, &pretty(policy, "a governed policy")?)?;
        }
    }
    Ok(())
}

/// `value` as pretty JSON; a value that cannot be serialised is the harness's failure, never an
/// empty file.
fn pretty<T: serde::Serialize + ?Sized>(value: &T, what: &str) -> Result<Vec<u8>, RunError> {
    serde_json::to_vec_pretty(value)
        .map_err(|e| RunError::Harness(format!("{what} could not be serialised: {e}")))
}
