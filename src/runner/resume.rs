//! A resumed run's records put in cell order without holding them: where each record is (its file
//! and the byte offset of its line), by the plan's cell index, and the file written again from
//! those places a record at a time.
//!
//! Owns: [`Kept`], what a resume keeps of the records already written (about 40 bytes a record;
//! it held every record, 348 MiB to resume a finished run of 61,920 cells). Must not: decide
//! which cells run (`execute` asks [`Kept::has`]) or write anything but `results.jsonl`.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, Seek};
use std::path::{Path, PathBuf};

use super::error::io;
use super::{CellId, Plan, RunError, RunRecord};

/// Where a record is: the index of its file among those read, and its line's byte offset.
#[derive(Debug, Clone, Copy)]
struct Place {
    file: usize,
    offset: u64,
    /// Its line number, for the error a second record of a cell in one file is.
    line: usize,
}

/// The records of a run folder's files, each cell once (the last record of a cell wins): the
/// plan's cells by their index, then the cells outside the plan in the order first seen.
#[derive(Debug)]
pub(super) struct Kept {
    files: Vec<PathBuf>,
    placed: BTreeMap<usize, Place>,
    others: Vec<(CellId, Place)>,
    /// Whether the files, read in order, already are the kept records in cell order.
    in_order: bool,
}

impl Kept {
    /// Reads `files` in order (missing ones are skipped), keeping the place of each record that
    /// `keep` accepts.
    pub(super) fn read(
        plan: &Plan,
        files: &[&Path],
        keep: impl Fn(&RunRecord) -> bool,
    ) -> Result<Kept, RunError> {
        // The plan's cells by the digest of their id; equal digests are told apart by the id.
        let mut index: HashMap<u64, Vec<usize>> = HashMap::new();
        for &i in plan.selected.iter() {
            if let Some(id) = plan.cells.id(i) {
                index.entry(id.digest()).or_default().push(i);
            }
        }
        let mut kept = Kept {
            files: Vec::new(),
            placed: BTreeMap::new(),
            others: Vec::new(),
            in_order: true,
        };
        for path in files {
            if !path.exists() {
                continue;
            }
            let file = kept.files.len();
            kept.files.push(path.to_path_buf());
            crate::record::scan_records_at(path, |line, offset, r| {
                let place = Place { file, offset, line };
                // A file holds a cell once (a later file, the journal, may hold it again).
                let twice = |first: &Place| {
                    (first.file == file).then(|| crate::record::RecordError::Duplicate {
                        path: path.to_path_buf(),
                        line,
                        first: first.line,
                        id: r.id().to_string(),
                    })
                };
                if !keep(&r) {
                    kept.in_order = false;
                    return Ok(());
                }
                let planned = index.get(&r.digest()).and_then(|cands| {
                    cands
                        .iter()
                        .copied()
                        .find(|&i| plan.cells.id(i).is_some_and(|id| r.same_id(&id)))
                });
                match planned {
                    Some(i) => {
                        if let Some(e) = kept.placed.get(&i).and_then(twice) {
                            return Err(e);
                        }
                        // In order: after every planned record read so far, before any other.
                        let after = kept.placed.last_key_value().is_none_or(|(&k, _)| k < i);
                        kept.in_order &= after && kept.others.is_empty();
                        kept.placed.insert(i, place);
                    }
                    None => match kept.others.iter_mut().find(|(id, _)| r.same_id(id)) {
                        Some(slot) => {
                            if let Some(e) = twice(&slot.1) {
                                return Err(e);
                            }
                            kept.in_order = false;
                            slot.1 = place;
                        }
                        None => kept.others.push((r.id(), place)),
                    },
                }
                Ok(())
            })?;
        }
        Ok(kept)
    }

    /// Whether the plan's cell `i` has a kept record.
    pub(super) fn has(&self, i: usize) -> bool {
        self.placed.contains_key(&i)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.placed.is_empty() && self.others.is_empty()
    }

    /// Whether the files read, in order, are already the kept records in cell order (one file,
    /// nothing dropped, nothing out of place): writing them again would change no record.
    pub(super) fn in_order(&self) -> bool {
        self.in_order && self.files.len() <= 1
    }

    /// Writes the kept records to `out` in cell order, whole or not at all, each read again from
    /// its place and written as [`crate::secrets::json_line`] writes it.
    pub(super) fn write(&self, out: &Path) -> Result<(), RunError> {
        let mut readers = Vec::with_capacity(self.files.len());
        for p in &self.files {
            readers.push(std::io::BufReader::new(
                std::fs::File::open(p).map_err(io(p))?,
            ));
        }
        let places = self
            .placed
            .values()
            .chain(self.others.iter().map(|(_, p)| p));
        let mut failure: Option<RunError> = None;
        let mut line = String::new();
        let written = crate::durable::write_streamed(out, |w| {
            for p in places {
                let path = &self.files[p.file];
                let r = &mut readers[p.file];
                line.clear();
                r.seek(std::io::SeekFrom::Start(p.offset))?;
                r.read_line(&mut line)?;
                let text = line.strip_suffix('\n').unwrap_or(&line);
                let mut rec = match crate::record::parse_record(text) {
                    Ok(rec) => rec,
                    Err(e) => {
                        // Read whole a moment ago: only a file changed under the run gets here.
                        failure = Some(RunError::from(crate::record::RecordError::Corrupt {
                            path: path.clone(),
                            line: 0,
                            message: e.to_string(),
                        }));
                        return Err(std::io::Error::other("a kept record no longer reads"));
                    }
                };
                if crate::secrets::any() && crate::secrets::contains(text) {
                    crate::secrets::redact_serde(&mut rec);
                }
                w.write_all(crate::secrets::json_line(&rec).as_bytes())?;
                w.write_all(b"\n")?;
            }
            Ok(())
        });
        match (failure, written) {
            (Some(e), _) => Err(e),
            (None, Err(e)) => Err(io(out)(e)),
            (None, Ok(())) => Ok(()),
        }
    }
}
