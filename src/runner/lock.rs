//! One writer per run folder: `OUT/run.lock`, held with an exclusive advisory lock of the
//! operating system (`flock` on Unix) by a `run`, a `--resume` or a `merge` for as long as it
//! writes, and read by `report` and `gate`, which refuse a folder whose run is in progress.
//!
//! Owns: taking, naming and releasing the lock. Must not: decide what a command does when the
//! folder is busy (the commands map [`RunError::Busy`] and [`RunError::InProgress`] onto
//! `exit::BUSY`).
//!
//! Why the operating system's lock and not the file's existence: the kernel releases a lock when
//! its process ends, however it ends (`kill -9`, a crash, a reboot), so a lock file left by a
//! killed run is simply taken by the next writer; no pid has to be guessed alive or dead. The
//! file's text (pid, host, command, start time) only names the holder in the refusal message.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use super::RunError;
use super::error::io;

/// The lock file's name in a run folder.
pub const LOCK_FILE: &str = "run.lock";

/// How often a writer tries again before it gives up: a reader's probe holds the shared lock for
/// microseconds, which must not turn a free folder into a refused one.
const TRIES: u32 = 5;
const PAUSE: std::time::Duration = std::time::Duration::from_millis(10);

/// The exclusive lock of a run folder, released (and its file removed) when dropped.
#[derive(Debug)]
pub struct FolderLock {
    file: Option<File>,
    path: PathBuf,
    /// The folders the lock created (the run folder and any missing parent, deepest first):
    /// removed again where the command left them empty (a refused configuration or a failed
    /// start leaves no trace, not even `reports/runs/`).
    created: Vec<PathBuf>,
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        // Removed while still held: a writer that opened the old file before the removal finds,
        // once it has the lock, that the path no longer names its file, and opens it afresh.
        let _ = std::fs::remove_file(&self.path);
        if let Some(f) = self.file.take() {
            let _ = f.unlock();
        }
        for dir in &self.created {
            // Fails, as it should, unless the folder is empty.
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// Who holds a lock, as its file tells: `pid 123 on host h (run, since 2026-…)`.
fn holder_text(command: &str) -> String {
    format!(
        "pid {} on host {} ({command}, since {})",
        std::process::id(),
        host_name(),
        jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ")
    )
}

/// The machine's name, for the holder text only.
fn host_name() -> String {
    #[cfg(unix)]
    {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is valid for its length; gethostname writes at most that many bytes.
        let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
        if rc == 0 {
            let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
            return String::from_utf8_lossy(&buf[..end]).into_owned();
        }
    }
    std::env::var("COMPUTERNAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "unknown".into())
}

fn read_holder(f: &mut File) -> String {
    let mut text = String::new();
    let _ = f.rewind();
    let _ = f.take(1024).read_to_string(&mut text);
    let text = text.trim();
    if text.is_empty() {
        "another process (its lock names no holder yet)".into()
    } else {
        text.to_string()
    }
}

/// Whether `f` is still the file `path` names (the previous holder may have removed it between
/// our open and our lock).
fn still_named(f: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (f.metadata(), std::fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (f, path);
        true
    }
}

/// Takes the exclusive lock of run folder `dir` (created if missing) for `command` (`run`,
/// `resume`, `merge`). A folder another live process holds is refused at once
/// ([`RunError::Busy`], naming the holder); a lock file left by a process that ended is taken
/// over.
pub fn lock(dir: &Path, command: &str) -> Result<FolderLock, RunError> {
    let created: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
        .map(Path::to_path_buf)
        .collect();
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let path = dir.join(LOCK_FILE);
    let mut tries = 0;
    loop {
        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io(&path))?;
        match f.try_lock() {
            Ok(()) => {
                if !still_named(&f, &path) {
                    continue;
                }
                let text = holder_text(command);
                f.set_len(0)
                    .and_then(|_| f.rewind())
                    .and_then(|_| f.write_all(format!("{text}\n").as_bytes()))
                    .and_then(|_| f.sync_data())
                    .map_err(io(&path))?;
                // Temporary files are only ever a dead writer's once the lock is ours.
                crate::durable::remove_stale_temporaries(dir);
                return Ok(FolderLock {
                    file: Some(f),
                    path,
                    created,
                });
            }
            Err(TryLockError::WouldBlock) => {
                tries += 1;
                if tries >= TRIES {
                    return Err(RunError::Busy {
                        path: dir.to_path_buf(),
                        holder: read_holder(&mut f),
                    });
                }
                std::thread::sleep(PAUSE);
            }
            Err(TryLockError::Error(e)) => return Err(io(&path)(e)),
        }
    }
}

/// The holder of `dir`'s lock if a live process writes the folder now (`None`: no run is in
/// progress there, whether or not a lock file was left by one that ended).
pub fn in_progress(dir: &Path) -> Option<String> {
    let path = dir.join(LOCK_FILE);
    let mut f = File::open(&path).ok()?;
    match f.try_lock_shared() {
        Ok(()) => {
            let _ = f.unlock();
            None
        }
        Err(TryLockError::WouldBlock) => Some(read_holder(&mut f)),
        Err(TryLockError::Error(_)) => None,
    }
}

/// Refuses a folder a live process writes ([`RunError::InProgress`]), for the readers
/// (`report`, `gate`, the folders `merge` reads).
pub fn refuse_in_progress(dir: &Path) -> Result<(), RunError> {
    match in_progress(dir) {
        Some(holder) => Err(RunError::InProgress {
            path: dir.to_path_buf(),
            holder,
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ce-lock-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_second_writer_is_refused_naming_the_holder_and_the_lock_goes_with_its_holder() {
        let d = tmp("two");
        let held = lock(&d, "run").expect("first");
        let text = std::fs::read_to_string(d.join(LOCK_FILE)).expect("lock file");
        assert!(
            text.contains(&format!("pid {}", std::process::id())),
            "{text}"
        );
        match lock(&d, "merge") {
            Err(RunError::Busy { holder, .. }) => {
                assert!(holder.contains("(run, since"), "{holder}")
            }
            other => panic!("expected Busy, got {other:?}"),
        }
        assert!(in_progress(&d).is_some());
        assert!(refuse_in_progress(&d).is_err());
        drop(held);
        assert!(!d.join(LOCK_FILE).exists());
        assert!(in_progress(&d).is_none());
        let again = lock(&d, "resume").expect("free again");
        drop(again);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_lock_file_nobody_holds_is_taken_over() {
        let d = tmp("stale");
        std::fs::create_dir_all(&d).expect("dir");
        // What a killed run leaves: the file with its text, and no lock (the kernel dropped it).
        std::fs::write(d.join(LOCK_FILE), "pid 1 on host gone (run, since then)\n").expect("w");
        assert!(in_progress(&d).is_none());
        let l = lock(&d, "resume").expect("taken over");
        let text = std::fs::read_to_string(d.join(LOCK_FILE)).expect("lock file");
        assert!(text.contains("(resume, since"), "{text}");
        drop(l);
        let _ = std::fs::remove_dir_all(&d);
    }
}
