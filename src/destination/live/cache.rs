//! The response cache: one JSON file per request, named by the SHA-256 of the canonical request
//! and the identity of the cell that sends it (never the API key). It stores and finds
//! completions; it never sends a request.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The response cache: one JSON file per request, named by the SHA-256 of its canonical key.
#[derive(Debug, Clone)]
pub struct Cache {
    pub dir: PathBuf,
}

#[derive(Serialize, Deserialize)]
pub(super) struct CacheEntry {
    pub(super) response: Value,
    pub(super) latency_ms: f64,
}

/// Recursively sorts object keys: the canonical form hashed into cache keys.
pub fn canonical(v: &Value) -> Value {
    match v {
        Value::Object(o) => {
            let sorted: BTreeMap<&String, Value> =
                o.iter().map(|(k, v)| (k, canonical(v))).collect();
            let mut m = serde_json::Map::new();
            for (k, v) in sorted {
                m.insert(k.clone(), v);
            }
            Value::Object(m)
        }
        Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

impl Cache {
    /// The default location: the user's cache directory, else `.compaction-eval-cache`.
    pub fn default_dir() -> PathBuf {
        dirs::cache_dir()
            .map(|d| d.join("compaction-eval").join("responses"))
            .unwrap_or_else(|| PathBuf::from(".compaction-eval-cache"))
    }

    /// The key of a request: everything that determines the response — the endpoint, the
    /// request body and the identity of the cell that sends it (scenario, interrupt point,
    /// strategy, model, repetition), so two cells that send the same request are independent
    /// samples — never the API key. A summariser's request has no cell (`null`): its summary is
    /// made once per scenario × interrupt point and shared by the cells that start from it.
    pub fn key(base_url: &str, body: &Value, cell: &Value) -> String {
        let doc = canonical(&json!({ "base_url": base_url, "request": body, "cell": cell }));
        hex::encode(<sha2::Sha256 as sha2::Digest>::digest(
            doc.to_string().as_bytes(),
        ))
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    pub(super) fn get(&self, key: &str) -> Option<CacheEntry> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        serde_json::from_str(&text).ok()
    }

    pub(super) fn put(&self, key: &str, e: &CacheEntry) {
        let p = self.path(key);
        if let Some(parent) = p.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        // Write then rename, so a killed run never leaves a torn entry.
        let tmp = p.with_extension("tmp");
        if std::fs::write(&tmp, serde_json::to_vec(e).unwrap_or_default()).is_ok() {
            let _ = std::fs::rename(&tmp, &p);
        }
    }

    /// Number of entries and their total size in bytes.
    pub fn stats(&self) -> (u64, u64) {
        let mut n = 0;
        let mut bytes = 0;
        if let Ok(dirs) = std::fs::read_dir(&self.dir) {
            for d in dirs.flatten() {
                if let Ok(files) = std::fs::read_dir(d.path()) {
                    for f in files.flatten() {
                        if f.path().extension().is_some_and(|x| x == "json") {
                            n += 1;
                            bytes += f.metadata().map(|m| m.len()).unwrap_or(0);
                        }
                    }
                }
            }
        }
        (n, bytes)
    }

    /// Removes every entry.
    pub fn clear(&self) -> std::io::Result<()> {
        if self.dir.exists() {
            std::fs::remove_dir_all(&self.dir)?;
        }
        Ok(())
    }
}
