//! The record files of a run folder: reading `results.jsonl`, repairing a torn last line, the
//! journal's name, putting records in cell order and writing files atomically.
//!
//! Owns: durability of what the runner writes (a temporary file, fsync, rename). Must not:
//! decide which cells run (the plan and `execute` do).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use super::error::io;
use super::{CellId, Plan, RunConfig, RunError, RunRecord};

pub fn read_records(path: &Path) -> Result<Vec<RunRecord>, RunError> {
    Ok(crate::record::read_records(path)?)
}

/// Makes `results.jsonl` end on a whole line before records are appended to it: a torn last
/// line (an interrupted write, a full disk) is cut off. Returns the bytes removed.
pub fn repair_tail(path: &Path) -> Result<usize, RunError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(io(path)(e)),
    };
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        return Ok(0);
    }
    let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let torn = &bytes[keep..];
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

/// `records` in the plan's cell order (records of cells outside the plan keep their order, after
/// the plan's), each cell once (the last record of a cell wins).
pub(super) fn in_cell_order(plan: &Plan, records: Vec<RunRecord>) -> Vec<RunRecord> {
    let order: BTreeMap<CellId, usize> = plan
        .selected
        .iter()
        .filter_map(|&i| plan.cells.id(i).map(|id| (id, i)))
        .collect();
    let mut placed: BTreeMap<usize, RunRecord> = BTreeMap::new();
    let mut others: Vec<(CellId, RunRecord)> = Vec::new();
    for r in records {
        let k = r.id();
        match order.get(&k) {
            Some(&i) => {
                placed.insert(i, r);
            }
            None => match others.iter_mut().find(|(ok, _)| *ok == k) {
                Some(slot) => slot.1 = r,
                None => others.push((k, r)),
            },
        }
    }
    placed
        .into_values()
        .chain(others.into_iter().map(|(_, r)| r))
        .collect()
}

/// Writes `records` as `path`, whole or not at all ([`crate::durable`]: a crash loses nothing).
pub(super) fn write_records(path: &Path, records: &[RunRecord]) -> Result<(), RunError> {
    let mut text = String::new();
    for r in records {
        text.push_str(&crate::secrets::json_line(r));
        text.push('\n');
    }
    write_atomic(path, text.as_bytes())
}

/// Writes a file whole or not at all ([`crate::durable::write`]), so a run killed at any moment
/// leaves either the old or the new file, never a torn one (`--resume` reads the manifest).
pub(super) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), RunError> {
    crate::durable::write(path, bytes).map_err(io(path))
}
