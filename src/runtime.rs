//! The process's one async runtime: live model calls, live summarisers and the runner's cells all
//! run on it, and commands outside it reach it through [`block_on`].
//!
//! A leaf: it knows nothing of the pipeline. It must never be entered from inside itself
//! ([`block_on`] on a runtime worker would panic); async code awaits instead.

use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::Runtime;

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// The runtime, started on first use with one worker per core.
pub fn runtime() -> std::io::Result<&'static Runtime> {
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2),
        )
        .enable_all()
        .build()?;
    // Another thread may have won the race; its runtime is used and this one dropped.
    Ok(RUNTIME.get_or_init(|| rt))
}

/// Runs `f` to completion on the process's runtime.
pub fn block_on<F: Future>(f: F) -> std::io::Result<F::Output> {
    Ok(runtime()?.block_on(f))
}

/// Hands the heap the process has freed back to the system (glibc keeps freed memory for reuse,
/// so a run's freed handoffs stayed resident under its report and the two peaks added up).
/// Elsewhere a no-op.
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of glibc's own heap to the system; it touches
    // no live allocation and takes no pointer.
    unsafe {
        libc::malloc_trim(0);
    }
}
