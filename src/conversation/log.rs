//! The file of a run folder's conversations, [`FILE`]: one gzip member per cell, each member one
//! JSON line ([`Entry`]), appended whole with one write. Concatenated gzip members are one valid
//! gzip stream (`zcat` reads the file), and shards' files concatenate into a merged run's.
//!
//! Crash safety: a cell's member is written before its record reaches the journal, so every
//! record's entry is on disk; a process killed in the middle of a write leaves a torn last member,
//! which readers stop at and `--resume` cuts off before appending ([`repair`]). A member whose
//! cell has no record (the process died between the two writes) is harmless: its cell runs again
//! and the newer entry wins.
//!
//! Owns: writing, reading and repairing the file; secrets are redacted from every entry before it
//! is written. Must not: decide what an entry holds (the runner and the destinations do).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use flate2::Compression;
use flate2::write::GzEncoder;

use std::collections::{BTreeMap, HashSet};

use super::{Cell, Entry, Handoff};

/// The conversations file of a run folder.
pub const FILE: &str = "conversations.jsonl.gz";
/// The handoffs the conversations name, once each.
pub const HANDOFFS: &str = "handoffs.jsonl.gz";

/// Why the conversations file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: entry {entry} is not a conversation entry: {message}", path.display())]
    Corrupt {
        path: PathBuf,
        entry: usize,
        message: String,
    },
}

/// The conversations file a run appends to (and its handoffs file), opened on the first entry: a
/// fresh run replaces the files, a resumed one cuts a torn last member off and appends.
pub struct Log {
    path: PathBuf,
    entries: Members,
    handoffs: Members,
    /// The handoffs written by this process (a resumed run may write one again: harmless).
    written: Mutex<HashSet<String>>,
    /// The first write that failed: the run ends with an I/O error once its cells are done.
    failed: Mutex<Option<String>>,
}

impl Log {
    /// The log of run folder `dir`; nothing is touched before the first [`Log::append`].
    pub fn new(dir: &Path, resume: bool) -> Log {
        Log {
            path: dir.join(FILE),
            entries: Members::new(dir.join(FILE), resume),
            handoffs: Members::new(dir.join(HANDOFFS), resume),
            written: Mutex::new(HashSet::new()),
            failed: Mutex::new(None),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one entry as one gzip member (secrets redacted), after its handoff when this
    /// process has not written that one yet. On failure the error is also kept for
    /// [`Log::failure`].
    pub fn append(&self, entry: &Entry, handoff: Option<&Handoff>) -> Result<(), LogError> {
        let result = self.write(entry, handoff);
        if let Err(e) = &result {
            let mut f = self.failed.lock().unwrap_or_else(|p| p.into_inner());
            f.get_or_insert_with(|| e.to_string());
        }
        result
    }

    fn write(&self, entry: &Entry, handoff: Option<&Handoff>) -> Result<(), LogError> {
        if let Some(h) = handoff {
            let mut written = self.written.lock().unwrap_or_else(|p| p.into_inner());
            if !written.contains(&h.digest) {
                // Before the entry that names it, so a named handoff is always on disk.
                self.handoffs.append(h)?;
                written.insert(h.digest.clone());
            }
        }
        self.entries.append(entry)
    }

    /// The first write that failed, if any.
    pub fn failure(&self) -> Option<String> {
        self.failed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Syncs the files to the disk (at the end of a run).
    pub fn sync(&self) -> Result<(), LogError> {
        self.handoffs.sync()?;
        self.entries.sync()
    }
}

/// One file of gzip members, appended whole.
struct Members {
    path: PathBuf,
    resume: bool,
    file: Mutex<Option<std::fs::File>>,
}

impl Members {
    fn new(path: PathBuf, resume: bool) -> Members {
        Members {
            path,
            resume,
            file: Mutex::new(None),
        }
    }

    fn append<T: serde::Serialize>(&self, value: &T) -> Result<(), LogError> {
        let io = |source| LogError::Io {
            path: self.path.clone(),
            source,
        };
        let mut line = crate::secrets::json_line(value);
        line.push('\n');
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(line.as_bytes()).map_err(io)?;
        let member = enc.finish().map_err(io)?;
        let mut guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            if let Some(parent) = self.path.parent() {
                std::fs::create_dir_all(parent).map_err(io)?;
            }
            if self.resume {
                repair(&self.path)?;
            }
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .truncate(false)
                .open(&self.path)
                .map_err(io)?;
            if !self.resume {
                file.set_len(0).map_err(io)?;
            }
            *guard = Some(file);
        }
        let Some(file) = guard.as_mut() else {
            return Ok(());
        };
        // One write of the whole member: the kernel has it once this returns.
        file.write_all(&member).map_err(io)
    }

    fn sync(&self) -> Result<(), LogError> {
        let guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        match guard.as_ref() {
            Some(f) => f.sync_all().map_err(|source| LogError::Io {
                path: self.path.clone(),
                source,
            }),
            None => Ok(()),
        }
    }
}

/// The whole members of `bytes`: each member's JSON line, and the length of the prefix they
/// make up (anything after it is a torn member).
fn members(bytes: &[u8]) -> (Vec<String>, usize) {
    let mut rest = bytes;
    let mut lines = Vec::new();
    while !rest.is_empty() {
        let mut dec = flate2::bufread::GzDecoder::new(rest);
        let mut text = String::new();
        if dec.read_to_string(&mut text).is_err() {
            break;
        }
        let after = dec.into_inner();
        if after.len() >= rest.len() {
            break;
        }
        rest = after;
        lines.extend(text.lines().map(str::to_string));
    }
    (lines, bytes.len() - rest.len())
}

/// Cuts a torn last member off the file (an interrupted write); returns the bytes removed. A
/// missing file is not an error.
pub fn repair(path: &Path) -> Result<u64, LogError> {
    let io = |source| LogError::Io {
        path: path.to_path_buf(),
        source,
    };
    let (whole, len) = match whole_members(path) {
        Ok(w) => w,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(io(e)),
    };
    if whole == len {
        return Ok(0);
    }
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(io)?;
    f.set_len(whole).map_err(io)?;
    f.sync_all().map_err(io)?;
    Ok(len - whole)
}

/// The length of `path`'s whole gzip members and the file's length, read a member at a time and
/// holding none (a resumed run's conversations file is every cell's: it was read whole, and
/// every entry kept as text).
fn whole_members(path: &Path) -> std::io::Result<(u64, u64)> {
    use std::io::BufRead;
    /// A reader that counts the bytes its reader consumed.
    struct Counted<R> {
        inner: R,
        consumed: u64,
    }
    impl<R: BufRead> Read for Counted<R> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.consumed += n as u64;
            Ok(n)
        }
    }
    impl<R: BufRead> BufRead for Counted<R> {
        fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
            self.inner.fill_buf()
        }
        fn consume(&mut self, n: usize) {
            self.consumed += n as u64;
            self.inner.consume(n);
        }
    }
    let file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let mut r = Counted {
        inner: std::io::BufReader::with_capacity(1 << 16, file),
        consumed: 0,
    };
    let mut whole = 0;
    while !r.fill_buf()?.is_empty() {
        let mut dec = flate2::bufread::GzDecoder::new(&mut r);
        if std::io::copy(&mut dec, &mut std::io::sink()).is_err() {
            break;
        }
        drop(dec);
        if r.consumed <= whole {
            break;
        }
        whole = r.consumed;
    }
    Ok((whole, len))
}

/// Every whole entry of run folder `dir`'s conversations file, in the order they were written
/// (none when the file does not exist; a torn last member is left out).
pub fn read(dir: &Path) -> Result<Vec<Entry>, LogError> {
    lines(&dir.join(FILE))
}

/// The handoffs of run folder `dir`, by digest.
pub fn handoffs(dir: &Path) -> Result<BTreeMap<String, Handoff>, LogError> {
    Ok(lines::<Handoff>(&dir.join(HANDOFFS))?
        .into_iter()
        .map(|h| (h.digest.clone(), h))
        .collect())
}

fn lines<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>, LogError> {
    let mut out = Vec::new();
    each(path, |_, x: T| {
        out.push(x);
        Ok(())
    })?;
    Ok(out)
}

/// Calls `f` with each whole entry of the file at `path` and its place (0 for the first), in
/// the order they were written, reading one member at a time: what a reader holds is one
/// entry, never the file (a run of 44,000 cells writes hundreds of megabytes of them). A
/// missing file has none; a torn last member is left out, as [`read`] leaves it.
pub fn each<T: serde::de::DeserializeOwned>(
    path: &Path,
    mut f: impl FnMut(usize, T) -> Result<(), LogError>,
) -> Result<(), LogError> {
    use std::io::BufRead;
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(LogError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    let mut n = 0usize;
    let mut text = String::new();
    loop {
        match reader.fill_buf() {
            Ok([]) => break,
            Ok(_) => {}
            Err(source) => {
                return Err(LogError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
        }
        text.clear();
        // A member that does not decode whole is a torn tail: it and anything after it is left out.
        if flate2::bufread::GzDecoder::new(&mut reader)
            .read_to_string(&mut text)
            .is_err()
        {
            break;
        }
        for line in text.lines() {
            let x = serde_json::from_str(line).map_err(|e| LogError::Corrupt {
                path: path.to_path_buf(),
                entry: n + 1,
                message: e.to_string(),
            })?;
            f(n, x)?;
            n += 1;
        }
    }
    Ok(())
}

/// The entry of `cell` in run folder `dir` (the last one written, as a rerun's replaces the
/// first).
pub fn find(dir: &Path, cell: &Cell) -> Result<Option<Entry>, LogError> {
    Ok(read(dir)?.into_iter().rev().find(|e| &e.cell == cell))
}

/// Writes `out` as the whole members of `files` one after the other (merging shards' folders).
/// Files that do not exist are skipped; returns whether anything was written.
pub fn concat(files: &[PathBuf], out: &Path) -> Result<bool, LogError> {
    let mut all = Vec::new();
    for f in files {
        match std::fs::read(f) {
            Ok(b) => {
                let (_, whole) = members(&b);
                all.extend_from_slice(&b[..whole]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(LogError::Io {
                    path: f.clone(),
                    source,
                });
            }
        }
    }
    if all.is_empty() {
        return Ok(false);
    }
    let io = |source| LogError::Io {
        path: out.to_path_buf(),
        source,
    };
    let tmp = out.with_extension("gz.tmp");
    let mut f = std::fs::File::create(&tmp).map_err(io)?;
    f.write_all(&all).map_err(io)?;
    f.sync_all().map_err(io)?;
    std::fs::rename(&tmp, out).map_err(io)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{Kind, Outcome};

    fn entry(model: &str) -> Entry {
        let mut e = Entry::new(
            Cell {
                scenario: "s".into(),
                scale: "base".into(),
                interrupt: "p".into(),
                strategy: "C".into(),
                model: model.into(),
                rep: 0,
            },
            Kind::Simulated,
        );
        e.outcome = Outcome {
            status: "ok".into(),
            ..Outcome::default()
        };
        e
    }

    #[test]
    fn entries_append_as_gzip_members_and_a_torn_tail_is_cut_on_resume() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = Log::new(dir.path(), false);
        let h = Handoff::new(vec![serde_json::json!({"role": "user", "content": "go"})]);
        let mut a = entry("a");
        a.handoff = Some(h.digest.clone());
        log.append(&a, Some(&h)).expect("append");
        log.append(&entry("b"), Some(&h)).expect("append");
        // The handoff is kept once.
        let hs = handoffs(dir.path()).expect("handoffs");
        assert_eq!(hs.len(), 1);
        assert_eq!(hs[&h.digest], h);
        drop(log);
        let path = dir.path().join(FILE);
        let whole = std::fs::read(&path).expect("read");
        // The file is one gzip stream for any reader.
        let mut text = String::new();
        flate2::read::MultiGzDecoder::new(&whole[..])
            .read_to_string(&mut text)
            .expect("gunzip");
        assert_eq!(text.lines().count(), 2);
        // A write cut short: half of a third member.
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(b"{\"torn\": true}\n").expect("gz");
        let third = enc.finish().expect("gz");
        let mut torn = whole.clone();
        torn.extend_from_slice(&third[..third.len() / 2]);
        std::fs::write(&path, &torn).expect("write");
        assert_eq!(read(dir.path()).expect("read").len(), 2);
        // Resuming cuts it off, then appends; a newer entry of a cell wins.
        let log = Log::new(dir.path(), true);
        let mut again = entry("a");
        again.outcome.status = "errored".into();
        log.append(&again, None).expect("append");
        let all = read(dir.path()).expect("read");
        assert_eq!(all.len(), 3);
        let found = find(dir.path(), &entry("a").cell).expect("find");
        assert_eq!(found.map(|e| e.outcome.status), Some("errored".into()));
        // A fresh run replaces the file.
        let log = Log::new(dir.path(), false);
        log.append(&entry("c"), None).expect("append");
        assert_eq!(read(dir.path()).expect("read").len(), 1);
    }
}
