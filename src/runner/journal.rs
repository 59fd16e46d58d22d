//! The record files of a run folder: reading `results.jsonl`, repairing a torn last line, the
//! journal's name and writing files atomically (a resumed run's cell order: `resume`).
//!
//! Owns: durability of what the runner writes (a temporary file, fsync, rename). Must not:
//! decide which cells run (the plan and `execute` do).

use std::io::Write;
use std::path::Path;

use super::error::io;
use super::{Plan, RunConfig, RunError, RunRecord};

pub fn read_records(path: &Path) -> Result<Vec<RunRecord>, RunError> {
    Ok(crate::record::read_records(path)?)
}

/// Makes `results.jsonl` end on a whole line before records are appended to it: a torn last
/// line (an interrupted write, a full disk) is cut off. Returns the bytes removed.
pub fn repair_tail(path: &Path) -> Result<usize, RunError> {
    // Only the tail is read: the file may be a run's every record (108 MB at 61,920 cells).
    let (keep, torn) = match tail_after_last_newline(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(io(path)(e)),
    };
    if torn.is_empty() {
        return Ok(0);
    }
    let torn = &torn[..];
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(io(path))?;
    // A whole record that only lacks its newline is kept.
    if serde_json::from_slice::<RunRecord>(torn).is_ok() {
        use std::io::Seek;
        let mut f = f;
        f.seek(std::io::SeekFrom::End(0)).map_err(io(path))?;
        f.write_all(b"\n").map_err(io(path))?;
        return Ok(0);
    }
    f.set_len(keep as u64).map_err(io(path))?;
    f.sync_all().map_err(io(path))?;
    Ok(torn.len())
}

/// The length of `path` up to and including its last newline, and the bytes after it (read
/// backwards a block at a time, so a long file costs its last line).
fn tail_after_last_newline(path: &Path) -> std::io::Result<(usize, Vec<u8>)> {
    use std::io::{Read, Seek, SeekFrom};
    const BLOCK: u64 = 1 << 16;
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    let mut torn: Vec<u8> = Vec::new();
    let mut end = len;
    while end > 0 {
        let start = end.saturating_sub(BLOCK);
        let mut block = vec![0u8; (end - start) as usize];
        f.seek(SeekFrom::Start(start))?;
        f.read_exact(&mut block)?;
        if let Some(i) = block.iter().rposition(|&b| b == b'\n') {
            block.drain(..=i);
            block.extend_from_slice(&torn);
            return Ok(((start as usize) + i + 1, block));
        }
        block.extend_from_slice(&torn);
        torn = block;
        end = start;
    }
    Ok((0, torn))
}

/// Checks that `OUT/results.jsonl` holds a record of every cell of the plan (after `execute`).
pub fn check_complete(cfg: &RunConfig, plan: &Plan) -> Result<usize, RunError> {
    let path = cfg.out.join("results.jsonl");
    // The cells' digests, not their records nor their ids: what this check holds is a digest
    // a cell (it held every record: 243 MiB at 61,920 cells). Two cells share a digest with a chance of
    // about n²/2⁶⁵ (10⁻¹⁰ at 60,000 cells).
    let mut have: std::collections::HashSet<u64> = std::collections::HashSet::new();
    crate::record::scan_records(&path, |_, r| {
        have.insert(r.digest());
        Ok(())
    })?;
    let present = plan
        .selected
        .iter()
        .filter(|&&i| {
            plan.cells
                .id(i)
                .is_some_and(|id| have.contains(&id.digest()))
        })
        .count();
    if present < plan.selected.len() {
        return Err(RunError::Incomplete {
            path,
            records: present,
            cells: plan.selected.len(),
        });
    }
    Ok(present)
}

/// The journal of finished cells, next to `results.jsonl`.
pub const JOURNAL: &str = "journal.jsonl";

/// How often at most the journal is flushed to the disk while a run goes: a killed process
/// loses no written line (the kernel has it), a power cut at most this much of finished cells;
/// syncing every line would cost a disk round trip per cell.
const SYNC_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

/// The journal of finished cells, appended line by line and synced to the disk at most every
/// [`SYNC_EVERY`] and at the end.
pub(crate) struct Journal {
    file: std::fs::File,
    synced: std::time::Instant,
}

impl Journal {
    pub(crate) fn open(path: &Path) -> Result<Journal, RunError> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io(path))?;
        Ok(Journal {
            file,
            synced: std::time::Instant::now(),
        })
    }

    /// Appends one line (written by the kernel at once, synced to the disk in batches).
    pub(crate) fn append(&mut self, line: &[u8]) -> std::io::Result<()> {
        self.file.write_all(line)?;
        if self.synced.elapsed() >= SYNC_EVERY {
            self.file.sync_data()?;
            self.synced = std::time::Instant::now();
        }
        Ok(())
    }

    /// Syncs what was appended to the disk.
    pub(crate) fn sync(&mut self) -> std::io::Result<()> {
        self.file.sync_data()
    }
}

/// Writes a file whole or not at all ([`crate::durable::write`]), so a run killed at any moment
/// leaves either the old or the new file, never a torn one (`--resume` reads the manifest).
pub(super) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), RunError> {
    crate::durable::write(path, bytes).map_err(io(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_after_the_last_newline_is_found_across_blocks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("f");
        let long = "b".repeat(150_000);
        for (text, keep, torn) in [
            (format!("a\n{long}"), 2, long.as_str()),
            (format!("{long}\nc"), 150_001, "c"),
            ("x\n".to_string(), 2, ""),
            (String::new(), 0, ""),
            (long.clone(), 0, long.as_str()),
        ] {
            std::fs::write(&p, &text).expect("write");
            let (k, t) = tail_after_last_newline(&p).expect("tail");
            assert_eq!((k, t.as_slice()), (keep, torn.as_bytes()));
        }
    }
}
