//! `merge`: the run folders of the shards of one matrix (`run --shard K/N`) into one run folder
//! that `report` and `gate` accept, with its records in matrix order, as an unsharded run writes
//! them.
//!
//! Owns: checking that the folders' manifests describe the same run (all keys but the shard),
//! that no cell is missing or present twice, restoring cell order from the manifest, and writing
//! `manifest.json`, `results.jsonl`, `continuity.jsonl`, the shards' conversations and their
//! `artifacts/` and `policies/` (atomically, under the output folder's lock), and never writing over
//! another run (a folder of another run is refused unless `--force`; a merge done again replaces its
//! own files, leaving nothing stale). Must not: run a cell or render a report (the command calls
//! [`crate::report`] afterwards).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::journal::write_atomic;
use super::{CellId, RunError, RunRecord, manifest, read_records};

/// What a merge wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    pub folders: usize,
    pub records: usize,
}

fn read_manifest(dir: &Path) -> Result<Value, RunError> {
    let path = dir.join("manifest.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        RunError::Usage(format!(
            "{}: not a run folder (cannot read manifest.json: {e})",
            dir.display()
        ))
    })?;
    serde_json::from_str(&text).map_err(|e| RunError::Corrupt {
        path,
        line: e.line(),
        message: e.to_string(),
    })
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(|x| x.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The cells of the matrix a manifest describes, in matrix order (scenario, interrupt point,
/// strategy, model, repetition), at most `matrix_cells` of them.
fn matrix_order(m: &Value) -> Result<Vec<CellId>, RunError> {
    let bad = |what: &str| RunError::Usage(format!("manifest.json: {what}"));
    let total = m
        .get("matrix_cells")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad("no `matrix_cells` (written by an older version: run it again)"))?
        as usize;
    let only: Option<Vec<String>> = m
        .pointer("/config/interrupts")
        .filter(|v| !v.is_null())
        .map(|v| strings(Some(v)));
    let strategies = strings(m.pointer("/config/strategies"));
    let models = strings(m.pointer("/config/models"));
    let reps = m
        .pointer("/config/reps")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad("no `config.reps`"))? as u32;
    let mut out = Vec::new();
    let scales = strings(m.get("scenario_scales"));
    'all: for (si, s) in strings(m.get("scenarios")).into_iter().enumerate() {
        let scale = scales
            .get(si)
            .cloned()
            .unwrap_or_else(crate::record::base_scale);
        for p in strings(m.pointer(&format!(
            "/interrupts/{}",
            s.replace('~', "~0").replace('/', "~1")
        ))) {
            if only.as_ref().is_some_and(|o| !o.contains(&p)) {
                continue;
            }
            for st in &strategies {
                for model in &models {
                    for rep in 0..reps {
                        if out.len() >= total {
                            break 'all;
                        }
                        out.push(CellId {
                            scenario: s.clone(),
                            scale: scale.clone(),
                            interrupt: p.clone(),
                            strategy: st.clone(),
                            model: model.clone(),
                            rep,
                        });
                    }
                }
            }
        }
    }
    Ok(out)
}

/// How `merge` treats its output folder.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MergeOptions {
    /// Replace an output folder that holds another run (its run files are removed first).
    pub force: bool,
}

/// The files and folders of a run folder that a merge writes or that belong to the run it
/// replaces: what `--force` removes, and all it removes (a folder named by mistake loses no
/// other file).
const RUN_FILES: &[&str] = &[
    "manifest.json",
    "results.jsonl",
    "results.jsonl.tmp",
    "journal.jsonl",
    "continuity.jsonl",
    "artifacts",
    "policies",
    "plots",
    "report.md",
    "report.html",
    "runs.csv",
    "summary.csv",
    "summary.json",
    "gate.md",
    "gate-junit.xml",
];

/// Refuses an output folder that holds another run (or files of no run) unless `force`; with
/// `force`, or when it holds this very merge's run (a merge done again), removes its run files so
/// nothing stale (a journal, an old run's artifacts or policies) is left.
fn clear_target(out: &Path, base: &Value, force: bool) -> Result<(), RunError> {
    let Ok(entries) = std::fs::read_dir(out) else {
        return Ok(());
    };
    let names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != super::LOCK_FILE)
        .collect();
    if names.is_empty() {
        return Ok(());
    }
    if !force {
        match read_manifest(out) {
            Ok(old) => {
                let keys = manifest::differences(base, &old, manifest::SHARD_KEYS);
                if !keys.is_empty() {
                    return Err(RunError::Usage(format!(
                        "{}: holds another run (differing keys: {}); merge into a new folder, or pass --force to replace it",
                        out.display(),
                        keys.join(", ")
                    )));
                }
            }
            Err(_) => {
                return Err(RunError::Usage(format!(
                    "{}: is not empty and holds no run (found {}); merge into a new or empty folder, or pass --force to replace its run files",
                    out.display(),
                    names.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
                )));
            }
        }
    }
    for name in RUN_FILES {
        let p = out.join(name);
        let gone = if p.is_dir() {
            std::fs::remove_dir_all(&p)
        } else if p.exists() {
            std::fs::remove_file(&p)
        } else {
            Ok(())
        };
        gone.map_err(|source| RunError::Io { path: p, source })?;
    }
    Ok(())
}

/// Copies the shards' content-addressed `artifacts/` and `policies/` into `out` (one name, one
/// content: a file two shards hold is the same file).
fn copy_governed(out: &Path, dirs: &[PathBuf]) -> Result<(), RunError> {
    for sub in ["artifacts", "policies"] {
        for d in dirs {
            let Ok(entries) = std::fs::read_dir(d.join(sub)) else {
                continue;
            };
            let target = out.join(sub);
            std::fs::create_dir_all(&target).map_err(|source| RunError::Io {
                path: target.clone(),
                source,
            })?;
            for e in entries.filter_map(|e| e.ok()) {
                let (from, to) = (e.path(), target.join(e.file_name()));
                if !from.is_file() || to.is_file() {
                    continue;
                }
                let bytes = std::fs::read(&from).map_err(|source| RunError::Io {
                    path: from.clone(),
                    source,
                })?;
                write_atomic(&to, &bytes)?;
            }
        }
    }
    Ok(())
}

/// Merges the shard folders `dirs` into `out`; the caller holds `out`'s lock ([`super::lock`]),
/// through the report it renders afterwards. A shard
/// whose run is in progress is refused, and so is an `out` that holds another run (unless
/// [`MergeOptions::force`]); merging the same shards again writes the same folder.
pub fn merge(out: &Path, dirs: &[PathBuf], opts: MergeOptions) -> Result<Merged, RunError> {
    let Some(first) = dirs.first() else {
        return Err(RunError::Usage(
            "merge needs at least one run folder".into(),
        ));
    };
    for d in dirs {
        if d.canonicalize().ok() == out.canonicalize().ok() && out.exists() {
            return Err(RunError::Usage(format!(
                "{}: the output folder cannot be one of the folders merged",
                out.display()
            )));
        }
        super::refuse_in_progress(d)?;
    }
    let base = read_manifest(first)?;
    let mut seen: HashMap<CellId, PathBuf> = HashMap::new();
    let mut records: Vec<RunRecord> = Vec::new();
    let continuity = std::fs::read(first.join("continuity.jsonl")).unwrap_or_default();
    for d in dirs {
        let m = read_manifest(d)?;
        let keys = manifest::differences(&base, &m, manifest::SHARD_KEYS);
        if !keys.is_empty() {
            return Err(RunError::Usage(format!(
                "{} and {}: the manifests describe different runs; differing keys: {}",
                first.display(),
                d.display(),
                keys.join(", ")
            )));
        }
        if std::fs::read(d.join("continuity.jsonl")).unwrap_or_default() != continuity {
            return Err(RunError::Usage(format!(
                "{} and {}: continuity.jsonl differs although the manifests agree",
                first.display(),
                d.display()
            )));
        }
        for r in read_records(&d.join("results.jsonl"))? {
            if let Some(other) = seen.insert(r.id(), d.clone()) {
                return Err(RunError::Usage(format!(
                    "cell {} is in both {} and {}",
                    r.id(),
                    other.display(),
                    d.display()
                )));
            }
            records.push(r);
        }
    }
    let order = matrix_order(&base)?;
    let position: HashMap<&CellId, usize> = order.iter().enumerate().map(|(i, c)| (c, i)).collect();
    let mut placed: BTreeMap<usize, RunRecord> = BTreeMap::new();
    for r in records {
        let id = r.id();
        let Some(&i) = position.get(&id) else {
            return Err(RunError::Usage(format!(
                "cell {id} (in {}) is not in the run's matrix",
                seen.get(&id)
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            )));
        };
        placed.insert(i, r);
    }
    let missing: Vec<&CellId> = order
        .iter()
        .enumerate()
        .filter(|(i, _)| !placed.contains_key(i))
        .map(|(_, c)| c)
        .collect();
    if !missing.is_empty() {
        return Err(RunError::Usage(format!(
            "{} of the run's {} cells are in none of the folders (a shard missing or unfinished), e.g. {}",
            missing.len(),
            order.len(),
            missing
                .iter()
                .take(3)
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join("; ")
        )));
    }
    clear_target(out, &base, opts.force)?;
    let mut m = base;
    if let Some(c) = m.get_mut("config").and_then(Value::as_object_mut) {
        c.remove("shard");
        c.insert("out".into(), Value::String(out.display().to_string()));
    }
    m["cells"] = Value::from(placed.len());
    if let Some(o) = m.as_object_mut() {
        o.remove("digest");
    }
    let digest = crate::world::sha256_digest(m.to_string().as_bytes());
    m["digest"] = Value::String(digest);
    let write = |name: &str, bytes: Vec<u8>| write_atomic(&out.join(name), &bytes);
    copy_governed(out, dirs)?;
    // The manifest last: a folder with a manifest is a whole merge (a merge cut short is refused
    // as "holds no run" until it is done again, or forced).
    let manifest = serde_json::to_vec_pretty(&m)
        .map_err(|e| RunError::Harness(format!("the manifest could not be serialised: {e}")))?;
    let text: String = placed
        .values()
        .map(|r| crate::secrets::json_line(r) + "\n")
        .collect();
    write("results.jsonl", text.into_bytes())?;
    write("continuity.jsonl", continuity)?;
    // The shards' conversations and handoffs, one file each: entries are found by their cell
    // and handoffs by their digest, so concatenated gzip members serve the merged records.
    for name in [crate::conversation::FILE, crate::conversation::HANDOFFS] {
        let files: Vec<PathBuf> = dirs.iter().map(|d| d.join(name)).collect();
        crate::conversation::log::concat(&files, &out.join(name)).map_err(|e| match e {
            crate::conversation::LogError::Io { path, source } => RunError::Io { path, source },
            other => RunError::Usage(other.to_string()),
        })?;
    }
    write("manifest.json", manifest)?;
    Ok(Merged {
        folders: dirs.len(),
        records: placed.len(),
    })
}
