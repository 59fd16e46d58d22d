//! The files shipped inside the binary: the scenarios, the strategy folder (configurations,
//! templates, schemas, the example plug-in) and the τ-bench airline data, embedded at build time
//! (`build.rs` lists the folders), so an installed `compaction-eval` works from any folder.
//!
//! Owns: the embedded [`File`]s of each [`Set`], where a run takes each input from ([`Source`]:
//! a folder, or the embedded files), writing a set out (`scenarios export`, `strategies
//! export`: [`export`]) and the private copy on disk that programs need ([`materialise`]: the
//! example plug-ins run in a strategy folder; the τ-bench loaders read a folder). A leaf: it
//! knows no scenario, strategy or table, only files.

use std::path::{Path, PathBuf};

use serde::{Serialize, Serializer};

/// One shipped file: its path inside its folder (`/` between parts) and its bytes.
#[derive(Debug, Clone, Copy)]
pub struct File {
    pub path: &'static str,
    pub bytes: &'static [u8],
}

mod files {
    use super::File;
    include!(concat!(env!("OUT_DIR"), "/shipped_files.rs"));
}

/// The version the embedded files are named by (`embedded v0.1.0`): the crate's.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The label of the embedded files in manifests, reports and messages.
pub fn embedded_label() -> String {
    format!("embedded v{VERSION}")
}

/// A shipped folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Set {
    /// `scenarios/`: the scenario files (and the folder's schema and revision notes).
    Scenarios,
    /// `strategies/`: every file, sub-folders included.
    Strategies,
    /// `data/tau-bench-airline/`: the airline tables, tasks, policy and recorded runs.
    TauAirline,
}

impl Set {
    /// Its files, sorted by path.
    pub fn files(self) -> &'static [File] {
        match self {
            Set::Scenarios => files::SCENARIOS,
            Set::Strategies => files::STRATEGIES,
            Set::TauAirline => files::TAU_AIRLINE,
        }
    }

    /// The folder's name in the repository (and of its copy on disk).
    pub fn name(self) -> &'static str {
        match self {
            Set::Scenarios => "scenarios",
            Set::Strategies => "strategies",
            Set::TauAirline => "tau-bench-airline",
        }
    }

    /// The file at `path` inside the set.
    pub fn file(self, path: &str) -> Option<&'static File> {
        self.files().iter().find(|f| f.path == path)
    }

    /// A digest of every path and byte of the set (what names its copy on disk).
    pub fn digest(self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for f in self.files() {
            h.update((f.path.len() as u64).to_le_bytes());
            h.update(f.path.as_bytes());
            h.update((f.bytes.len() as u64).to_le_bytes());
            h.update(f.bytes);
        }
        hex::encode(h.finalize())
    }
}

/// Where a run takes scenarios or strategies from: a folder (named by a flag, or the one in the
/// working directory), or the files embedded in the binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Embedded,
    Folder(PathBuf),
}

impl Source {
    /// The source of an input: the folder a flag names, else `local` in the working directory
    /// when it is there, else the embedded files.
    pub fn resolve(flag: Option<PathBuf>, local: &str) -> Source {
        match flag {
            Some(p) => Source::Folder(p),
            None if Path::new(local).is_dir() => Source::Folder(PathBuf::from(local)),
            None => Source::Embedded,
        }
    }

    /// The folder, when the source is one.
    pub fn folder(&self) -> Option<&Path> {
        match self {
            Source::Embedded => None,
            Source::Folder(p) => Some(p),
        }
    }

    /// `embedded v0.1.0`, or the folder's path as given.
    pub fn label(&self) -> String {
        match self {
            Source::Embedded => embedded_label(),
            Source::Folder(p) => p.display().to_string(),
        }
    }

    /// What kind of source it is, independent of how a folder is spelled: `embedded v0.1.0` or
    /// `folder`. A resume compares it (another kind is another configuration); the path itself
    /// is not compared, the folder's files are (by content).
    pub fn kind(&self) -> String {
        match self {
            Source::Embedded => embedded_label(),
            Source::Folder(_) => "folder".into(),
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

impl Serialize for Source {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.label())
    }
}

impl From<PathBuf> for Source {
    fn from(p: PathBuf) -> Source {
        Source::Folder(p)
    }
}

impl From<&Path> for Source {
    fn from(p: &Path) -> Source {
        Source::Folder(p.to_path_buf())
    }
}

impl From<&str> for Source {
    fn from(p: &str) -> Source {
        Source::Folder(PathBuf::from(p))
    }
}

/// A shipped set could not be written out.
#[derive(Debug, thiserror::Error)]
pub enum ShippedError {
    #[error(
        "{file}: already exists and differs from the shipped file; export into an empty folder, or pass --force to overwrite it"
    )]
    Exists { file: PathBuf },
    #[error("{file}: cannot write: {source}")]
    Write {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn write_err(file: &Path) -> impl FnOnce(std::io::Error) -> ShippedError + '_ {
    move |source| ShippedError::Write {
        file: file.to_path_buf(),
        source,
    }
}

/// Whether `path` holds exactly `bytes`.
fn same(path: &Path, bytes: &[u8]) -> bool {
    std::fs::read(path).is_ok_and(|b| b == bytes)
}

/// Writes every file of `set` under `dir` (created if missing); returns the files written. A
/// file already there with the same bytes is left as it is; one that differs is refused
/// ([`ShippedError::Exists`], before anything is written) unless `force`.
pub fn export(set: Set, dir: &Path, force: bool) -> Result<Vec<PathBuf>, ShippedError> {
    let target = |f: &File| dir.join(f.path);
    if !force
        && let Some(f) = set
            .files()
            .iter()
            .find(|f| target(f).exists() && !same(&target(f), f.bytes))
    {
        return Err(ShippedError::Exists { file: target(f) });
    }
    let mut written = Vec::new();
    for f in set.files() {
        let path = target(f);
        if same(&path, f.bytes) {
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(write_err(parent))?;
        }
        crate::durable::write(&path, f.bytes).map_err(write_err(&path))?;
        written.push(path);
    }
    Ok(written)
}

/// The folder private copies go under: `compaction-eval/shipped` in the user's cache folder
/// (e.g. `~/.cache`, `$XDG_CACHE_HOME`), else in the temporary folder.
fn copies_dir() -> PathBuf {
    dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("compaction-eval")
        .join("shipped")
}

/// A private copy of `set` on disk, for what must read a folder (a plug-in runs in its strategy
/// folder; the τ-bench loaders read files): `…/shipped/<set>-v<version>-<digest>/`, named by the
/// set's content, so every run of one binary uses the same folder and the copy is written once.
/// A copy whose files differ from the embedded ones (edited by hand) is written again. Written
/// into a temporary folder and renamed, so a copy is whole or absent.
pub fn materialise(set: Set) -> Result<PathBuf, ShippedError> {
    materialise_in(set, &copies_dir())
}

fn materialise_in(set: Set, base: &Path) -> Result<PathBuf, ShippedError> {
    let digest = set.digest();
    let dir = base.join(format!("{}-v{VERSION}-{}", set.name(), &digest[..16]));
    let whole = |d: &Path| set.files().iter().all(|f| same(&d.join(f.path), f.bytes));
    if dir.is_dir() && whole(&dir) {
        return Ok(dir);
    }
    std::fs::create_dir_all(base).map_err(write_err(base))?;
    let tmp = base.join(format!(
        ".{}-{}-{}",
        set.name(),
        std::process::id(),
        jiff::Timestamp::now().as_nanosecond()
    ));
    export(set, &tmp, true)?;
    if dir.exists() {
        // An incomplete or edited copy: replaced whole.
        let _ = std::fs::remove_dir_all(&dir);
    }
    if let Err(source) = std::fs::rename(&tmp, &dir) {
        let _ = std::fs::remove_dir_all(&tmp);
        // Another process renamed its copy first: that one is as good.
        if !(dir.is_dir() && whole(&dir)) {
            return Err(ShippedError::Write { file: dir, source });
        }
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_set_is_shipped_and_a_copy_is_written_once_and_healed() {
        for set in [Set::Scenarios, Set::Strategies, Set::TauAirline] {
            assert!(!set.files().is_empty(), "{set:?}");
        }
        assert!(Set::Scenarios.file("support-ticket-timeout.yaml").is_some());
        assert!(Set::Strategies.file("templates/checkpoint.md.j2").is_some());
        assert!(Set::Strategies.file("examples/checkpoint.py").is_some());
        assert!(Set::TauAirline.file("env/flights.json").is_some());
        let base = tempfile::tempdir().expect("tmp");
        let a = materialise_in(Set::Strategies, base.path()).expect("copy");
        assert!(a.join("A.toml").is_file());
        let b = materialise_in(Set::Strategies, base.path()).expect("copy again");
        assert_eq!(a, b);
        std::fs::write(a.join("A.toml"), "edited").expect("edit");
        let c = materialise_in(Set::Strategies, base.path()).expect("healed");
        assert_eq!(a, c);
        assert!(same(
            &c.join("A.toml"),
            Set::Strategies.file("A.toml").expect("A").bytes
        ));
    }

    #[test]
    fn export_refuses_a_different_file_unless_forced() {
        let d = tempfile::tempdir().expect("tmp");
        let written = export(Set::Strategies, d.path(), false).expect("export");
        assert_eq!(written.len(), Set::Strategies.files().len());
        assert!(
            export(Set::Strategies, d.path(), false)
                .expect("again")
                .is_empty()
        );
        std::fs::write(d.path().join("B.toml"), "mine").expect("edit");
        match export(Set::Strategies, d.path(), false) {
            Err(ShippedError::Exists { file }) => assert!(file.ends_with("B.toml")),
            other => panic!("expected Exists, got {other:?}"),
        }
        assert_eq!(
            std::fs::read_to_string(d.path().join("B.toml")).expect("r"),
            "mine"
        );
        assert_eq!(
            export(Set::Strategies, d.path(), true)
                .expect("forced")
                .len(),
            1
        );
    }
}
