//! Reading `results.jsonl` (and `journal.jsonl`, the same form): one record per line, a torn
//! last line ignored, a repeated cell refused, every secret of the run redacted.
//!
//! Owns: [`read_records`]. Must not: write a record (the runner does) or import anything of the
//! pipeline (only `secrets`).

use std::path::Path;

use super::{CellId, RecordError, RunRecord};

/// Reads `results.jsonl`. A torn last line (a killed run) is ignored; any other bad line is an
/// error naming the line, and so is a second record of the same cell. Every secret of the run
/// ([`crate::secrets`]) is redacted from what is read.
pub fn read_records(path: &Path) -> Result<Vec<RunRecord>, RecordError> {
    let bytes = std::fs::read(path).map_err(|source| RecordError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let raw: Vec<&[u8]> = bytes
        .strip_suffix(b"\n")
        .unwrap_or(&bytes)
        .split(|&b| b == b'\n')
        .collect();
    let mut lines: Vec<&str> = Vec::with_capacity(raw.len());
    let mut offset = 0usize;
    for (i, l) in raw.iter().enumerate() {
        match std::str::from_utf8(l) {
            Ok(t) => lines.push(t),
            // A torn last line may end inside a character.
            Err(_) if i + 1 == raw.len() => lines.push(""),
            Err(e) => {
                return Err(RecordError::Corrupt {
                    path: path.to_path_buf(),
                    line: i + 1,
                    message: format!(
                        "not UTF-8 text: invalid byte sequence at byte offset {}",
                        offset + e.valid_up_to()
                    ),
                });
            }
        }
        offset += l.len() + 1;
    }
    let mut out = Vec::with_capacity(lines.len());
    let mut seen: std::collections::HashMap<CellId, usize> = std::collections::HashMap::new();
    let secrets = crate::secrets::any();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<RunRecord>(line) {
            Ok(mut r) => {
                if let Some(first) = seen.insert(r.id(), i + 1) {
                    return Err(RecordError::Duplicate {
                        path: path.to_path_buf(),
                        line: i + 1,
                        first,
                        id: r.id().to_string(),
                    });
                }
                if secrets && crate::secrets::contains(line) {
                    crate::secrets::redact_serde(&mut r);
                }
                out.push(r)
            }
            Err(_) if i + 1 == lines.len() => {}
            Err(e) => {
                return Err(RecordError::Corrupt {
                    path: path.to_path_buf(),
                    line: i + 1,
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(out)
}
