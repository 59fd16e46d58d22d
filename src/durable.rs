//! Writing an output file whole or not at all: every file the harness writes for a user (a run
//! folder's manifest, records and continuity trace, the reports, tables, plots, the gate's files,
//! a merge's files) goes through [`write`], which writes a temporary file beside it, syncs it,
//! renames it over the target and syncs the folder.
//!
//! A leaf: it knows no domain type. Must not: decide what a file holds or where it goes.
//!
//! So a full disk, a killed process or a power cut leaves each file either as it was (or absent)
//! or complete, never truncated, and the next run writes it whole again. A file whose bytes
//! would not change is not rewritten at all (a resume with nothing to do leaves every file as it
//! was, its times included).
//!
//! For tests, `COMPACTION_EVAL_TEST_DISK_BYTES=N` makes the process's disk "full" after `N`
//! bytes written through [`write`]: every later write fails as a full disk does
//! (`StorageFull`), which is how the suite checks the promise above without a small file
//! system.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable of the simulated full disk (tests only).
pub const TEST_DISK_BYTES: &str = "COMPACTION_EVAL_TEST_DISK_BYTES";

fn budget() -> Option<&'static AtomicU64> {
    static BUDGET: OnceLock<Option<AtomicU64>> = OnceLock::new();
    BUDGET
        .get_or_init(|| {
            std::env::var(TEST_DISK_BYTES)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(AtomicU64::new)
        })
        .as_ref()
}

/// Writes `bytes` to `f` in pieces, failing as a full disk does once the simulated budget (if
/// any) is spent: part of the bytes may be written, as on a real full disk.
fn write_all(f: &mut std::fs::File, bytes: &[u8]) -> std::io::Result<()> {
    let Some(left) = budget() else {
        return f.write_all(bytes);
    };
    for chunk in bytes.chunks(16 * 1024) {
        let want = chunk.len() as u64;
        let got = left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |l| {
                Some(l.saturating_sub(want))
            })
            .unwrap_or(0);
        let n = got.min(want) as usize;
        f.write_all(&chunk[..n])?;
        if n < chunk.len() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                format!("No space left on device (simulated by {TEST_DISK_BYTES})"),
            ));
        }
    }
    Ok(())
}

/// The temporary file beside `path`: hidden, and named by the process so two processes never
/// share one.
fn temporary(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// Whether `name` is a temporary file of [`write`] (`.NAME.PID.tmp`).
fn is_temporary(name: &str) -> bool {
    name.strip_prefix('.')
        .and_then(|n| n.strip_suffix(".tmp"))
        .and_then(|n| n.rsplit_once('.'))
        .is_some_and(|(stem, pid)| !stem.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

/// Removes the temporary files a killed writer left in `dir` and its immediate subfolders.
/// Only for a caller that holds the folder (its lock): no other process writes there then.
pub fn remove_stale_temporaries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.filter_map(|e| e.ok()) {
        let p = e.path();
        if p.is_dir() {
            if let Ok(inner) = std::fs::read_dir(&p) {
                for f in inner.filter_map(|f| f.ok()) {
                    if is_temporary(&f.file_name().to_string_lossy()) {
                        let _ = std::fs::remove_file(f.path());
                    }
                }
            }
        } else if is_temporary(&e.file_name().to_string_lossy()) {
            let _ = std::fs::remove_file(&p);
        }
    }
}

/// Writes `bytes` as `path`, whole or not at all (see the module's doc). Unchanged bytes are
/// not written again.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Ok(meta) = std::fs::metadata(path)
        && meta.is_file()
        && meta.len() == bytes.len() as u64
        && std::fs::read(path).is_ok_and(|old| old == bytes)
    {
        return Ok(());
    }
    let tmp = temporary(path);
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        write_all(&mut f, bytes)?;
        f.sync_all()
    });
    replace(written, &tmp, path)
}

/// Puts the synced temporary `tmp` in place of `path` (its folder synced too) when `written`
/// succeeded; removes it otherwise.
fn replace(written: std::io::Result<()>, tmp: &Path, path: &Path) -> std::io::Result<()> {
    if let Err(e) = written.and_then(|_| std::fs::rename(tmp, path)) {
        let _ = std::fs::remove_file(tmp);
        return Err(e);
    }
    // A folder cannot be opened for syncing everywhere (Windows): the rename is then as durable
    // as the platform makes it.
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && let Ok(d) = std::fs::File::open(dir)
    {
        let _ = d.sync_all();
    }
    Ok(())
}

/// A file under the simulated disk budget, for [`write_streamed`]'s buffered writer.
struct Budgeted(std::fs::File);

impl Write for Budgeted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        write_all(&mut self.0, buf)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// As [`write`], for a file written in pieces by `fill` (a page of tens of megabytes is never
/// held whole): the pieces go to the temporary file, which replaces `path` only when `fill`
/// succeeded and its bytes differ from the file's.
pub fn write_streamed(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let tmp = temporary(path);
    let written = std::fs::File::create(&tmp).and_then(|f| {
        let mut w = std::io::BufWriter::with_capacity(1 << 16, Budgeted(f));
        fill(&mut w)?;
        let f = w.into_inner().map_err(|e| e.into_error())?;
        f.0.sync_all()
    });
    if written.is_ok() && same_bytes(&tmp, path) {
        return std::fs::remove_file(&tmp);
    }
    replace(written, &tmp, path)
}

/// Whether two files hold the same bytes, read a block at a time.
fn same_bytes(a: &Path, b: &Path) -> bool {
    use std::io::Read;
    let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return false;
    };
    if !mb.is_file() || ma.len() != mb.len() {
        return false;
    }
    let (Ok(fa), Ok(fb)) = (std::fs::File::open(a), std::fs::File::open(b)) else {
        return false;
    };
    let (mut ra, mut rb) = (std::io::BufReader::new(fa), std::io::BufReader::new(fb));
    let (mut ba, mut bb) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    loop {
        let n = match ra.read(&mut ba) {
            Ok(n) => n,
            Err(_) => return false,
        };
        if n == 0 {
            return true;
        }
        if rb.read_exact(&mut bb[..n]).is_err() || ba[..n] != bb[..n] {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_streamed_file_is_replaced_whole_kept_when_unchanged_and_untouched_when_its_writer_fails() {
        let d = std::env::temp_dir().join(format!("ce-durable-streamed-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("dir");
        let p = d.join("viewer.html");
        write_streamed(&p, |w| {
            w.write_all(b"head ")?;
            w.write_all(b"tail")
        })
        .expect("write");
        assert_eq!(std::fs::read(&p).expect("read"), b"head tail");
        let mtime = || {
            std::fs::metadata(&p)
                .and_then(|m| m.modified())
                .expect("mtime")
        };
        let before = mtime();
        std::thread::sleep(std::time::Duration::from_millis(20));
        write_streamed(&p, |w| w.write_all(b"head tail")).expect("same bytes");
        assert_eq!(before, mtime(), "unchanged bytes are not written again");
        let failed = write_streamed(&p, |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("the writer failed"))
        });
        assert!(failed.is_err());
        assert_eq!(
            std::fs::read(&p).expect("read"),
            b"head tail",
            "the old file stays"
        );
        let left: Vec<_> = std::fs::read_dir(&d)
            .expect("list")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name())
            .collect();
        assert_eq!(
            left,
            vec![std::ffi::OsString::from("viewer.html")],
            "no temporary left"
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_file_is_replaced_whole_and_unchanged_bytes_are_not_rewritten() {
        let d = std::env::temp_dir().join(format!("ce-durable-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("dir");
        let p = d.join("report.md");
        write(&p, b"first").expect("write");
        assert_eq!(std::fs::read(&p).expect("read"), b"first");
        let before = std::fs::metadata(&p)
            .and_then(|m| m.modified())
            .expect("mtime");
        std::thread::sleep(std::time::Duration::from_millis(20));
        write(&p, b"first").expect("same bytes");
        let after = std::fs::metadata(&p)
            .and_then(|m| m.modified())
            .expect("mtime");
        assert_eq!(before, after, "unchanged bytes are not written again");
        write(&p, b"second, longer").expect("write");
        assert_eq!(std::fs::read(&p).expect("read"), b"second, longer");
        let left: Vec<_> = std::fs::read_dir(&d)
            .expect("list")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("report.md")]);
        // What a writer killed between its write and its rename leaves, removed by the next.
        std::fs::write(d.join(".report.md.4242.tmp"), b"half").expect("w");
        std::fs::write(d.join(".hidden"), b"mine").expect("w");
        remove_stale_temporaries(&d);
        assert!(!d.join(".report.md.4242.tmp").exists());
        assert!(d.join(".hidden").exists());
        let _ = std::fs::remove_dir_all(&d);
    }
}
