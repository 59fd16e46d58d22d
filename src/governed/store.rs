//! The content-addressed artifact store of governed context: publish bytes → their lowercase SHA-256
//! digest; read by digest with the integrity checked on every read.
//!
//! Owns: the in-memory store, the folder store (`dir/<64 hex>`, written atomically through a temporary
//! file and a rename in the same folder) and `export`, which copies the artifacts a run delivered into
//! its run folder.
//!
//! Must not: build a path from anything but a validated digest (a value that is not 64 lowercase hex
//! characters is refused before any file is touched); hand out bytes whose SHA-256 differs from the
//! digest asked for; cache a folder store's bytes (a byte flipped on disk after publishing must be seen as
//! changed on the next read).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use thiserror::Error;

use super::{digest, is_digest};

/// Where artifacts live: in memory, or one file per digest in a folder.
#[derive(Debug, Clone)]
enum Backing {
    Memory(BTreeMap<String, Vec<u8>>),
    Folder(PathBuf),
}

/// A content-addressed artifact store (see the module doc).
#[derive(Debug, Clone)]
pub struct ArtifactStore {
    backing: Backing,
}

/// Why an artifact could not be read as the exact bytes its digest names. The context report maps
/// `Missing`, `Changed` and `Unreadable` to its block reasons of the same names.
#[derive(Debug, Error)]
pub enum ReadError {
    /// No artifact with this digest is in the store.
    #[error("artifact {digest} is missing{}", at(path.as_deref()))]
    Missing {
        digest: String,
        /// The file that should hold it (folder stores).
        path: Option<PathBuf>,
    },
    /// The stored bytes no longer hash to the digest.
    #[error("artifact {digest} has changed{}: its bytes now hash to {actual}", at(path.as_deref()))]
    Changed {
        digest: String,
        actual: String,
        path: Option<PathBuf>,
    },
    /// The artifact exists but could not be read.
    #[error("artifact {digest} is unreadable{}: {message}", at(path.as_deref()))]
    Unreadable {
        digest: String,
        message: String,
        path: Option<PathBuf>,
    },
    /// The value asked for is not a lowercase SHA-256 digest (so no file is looked up for it).
    #[error("`{value}` is not an artifact digest (64 lowercase hex characters)")]
    NotADigest { value: String },
}

impl ReadError {
    /// The digest (or the refused value) the error is about.
    pub fn digest(&self) -> &str {
        match self {
            ReadError::Missing { digest, .. }
            | ReadError::Changed { digest, .. }
            | ReadError::Unreadable { digest, .. } => digest,
            ReadError::NotADigest { value } => value,
        }
    }
}

/// Why the store could not be opened, written or exported.
#[derive(Debug, Error)]
pub enum StoreError {
    #[error("cannot create the artifact folder {}: {source}", path.display())]
    CreateFolder {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a folder: an artifact store needs a folder", path.display())]
    NotAFolder { path: PathBuf },
    #[error("cannot write artifact {digest} to {}: {source}", path.display())]
    Write {
        digest: String,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot export artifact: {0}")]
    Export(#[source] ReadError),
}

fn at(path: Option<&Path>) -> String {
    path.map(|p| format!(" ({})", p.display()))
        .unwrap_or_default()
}

/// Distinguishes temporary files of concurrent publishes within one process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl ArtifactStore {
    /// An empty store held in memory.
    pub fn in_memory() -> ArtifactStore {
        ArtifactStore {
            backing: Backing::Memory(BTreeMap::new()),
        }
    }

    /// A store backed by `dir` (created if missing); artifacts are files named by their digest only
    /// (`dir/<64 hex>`) — never a path from user input.
    pub fn open(dir: &Path) -> Result<ArtifactStore, StoreError> {
        if dir.exists() && !dir.is_dir() {
            return Err(StoreError::NotAFolder {
                path: dir.to_path_buf(),
            });
        }
        std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateFolder {
            path: dir.to_path_buf(),
            source,
        })?;
        Ok(ArtifactStore {
            backing: Backing::Folder(dir.to_path_buf()),
        })
    }

    /// The folder of a folder store (`None` in memory).
    pub fn folder(&self) -> Option<&Path> {
        match &self.backing {
            Backing::Memory(_) => None,
            Backing::Folder(dir) => Some(dir),
        }
    }

    /// Publish bytes → digest. Idempotent: the same bytes give the same digest, and an artifact that is
    /// present and intact is not rewritten (a present but corrupted one is replaced).
    pub fn publish(&mut self, bytes: &[u8]) -> Result<String, StoreError> {
        let d = digest(bytes);
        match &mut self.backing {
            Backing::Memory(map) => {
                let intact = map.get(&d).is_some_and(|b| digest(b) == d);
                if !intact {
                    map.insert(d.clone(), bytes.to_vec());
                }
            }
            Backing::Folder(dir) => {
                let path = dir.join(&d);
                let intact = std::fs::read(&path).is_ok_and(|b| digest(&b) == d);
                if !intact {
                    write_atomically(dir, &d, bytes)?;
                }
            }
        }
        Ok(d)
    }

    /// Read by digest; the SHA-256 of what was read is recomputed on every read.
    pub fn read(&self, digest_hex: &str) -> Result<Vec<u8>, ReadError> {
        if !is_digest(digest_hex) {
            return Err(ReadError::NotADigest {
                value: digest_hex.to_string(),
            });
        }
        let (bytes, path) = match &self.backing {
            Backing::Memory(map) => match map.get(digest_hex) {
                Some(b) => (b.clone(), None),
                None => {
                    return Err(ReadError::Missing {
                        digest: digest_hex.to_string(),
                        path: None,
                    });
                }
            },
            Backing::Folder(dir) => {
                let path = dir.join(digest_hex);
                match std::fs::read(&path) {
                    Ok(b) => (b, Some(path)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        return Err(ReadError::Missing {
                            digest: digest_hex.to_string(),
                            path: Some(path),
                        });
                    }
                    Err(e) => {
                        return Err(ReadError::Unreadable {
                            digest: digest_hex.to_string(),
                            message: e.to_string(),
                            path: Some(path),
                        });
                    }
                }
            }
        };
        let actual = digest(&bytes);
        if actual != digest_hex {
            return Err(ReadError::Changed {
                digest: digest_hex.to_string(),
                actual,
                path,
            });
        }
        Ok(bytes)
    }

    /// Whether an artifact with this digest is present (its integrity is checked by [`Self::read`]).
    pub fn contains(&self, digest_hex: &str) -> bool {
        if !is_digest(digest_hex) {
            return false;
        }
        match &self.backing {
            Backing::Memory(map) => map.contains_key(digest_hex),
            Backing::Folder(dir) => dir.join(digest_hex).is_file(),
        }
    }

    /// Copy the named artifacts from this store into a folder store at `dir` (what a run folder keeps).
    /// Every artifact is read with its integrity checked first; nothing is copied that does not match.
    pub fn export(&self, digests: &[String], dir: &Path) -> Result<(), StoreError> {
        let mut target = ArtifactStore::open(dir)?;
        for d in digests {
            let bytes = self.read(d).map_err(StoreError::Export)?;
            target.publish(&bytes)?;
        }
        Ok(())
    }

    /// Test support: replace the bytes held under `digest` without changing the key, so that a test can
    /// show a `Changed` read. In a folder store it overwrites the file in place.
    #[doc(hidden)]
    pub fn tamper(&mut self, digest_hex: &str, bytes: &[u8]) {
        if !is_digest(digest_hex) {
            return;
        }
        match &mut self.backing {
            Backing::Memory(map) => {
                map.insert(digest_hex.to_string(), bytes.to_vec());
            }
            Backing::Folder(dir) => {
                let _ = std::fs::write(dir.join(digest_hex), bytes);
            }
        }
    }
}

/// Writes `dir/<digest>` through a temporary file in the same folder and a rename, so a reader never sees
/// a partly written artifact.
fn write_atomically(dir: &Path, d: &str, bytes: &[u8]) -> Result<(), StoreError> {
    let path = dir.join(d);
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{d}.{}.{n}.tmp", std::process::id()));
    let err = |source| StoreError::Write {
        digest: d.to_string(),
        path: path.clone(),
        source,
    };
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(err(e));
    }
    Ok(())
}
