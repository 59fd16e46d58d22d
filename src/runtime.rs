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

/// Runs `f` once on each worker thread of the runtime, for what a thread keeps for itself
/// (per-thread memos). Each task holds its worker until every worker has taken one, so no
/// worker takes two; a worker still busy after a second is skipped (best effort, never a hang).
pub fn on_each_worker(f: fn()) {
    use std::sync::{Arc, Condvar, Mutex};
    let Some(rt) = RUNTIME.get() else { return };
    let workers = rt.metrics().num_workers();
    let arrived = Arc::new((Mutex::new(0usize), Condvar::new()));
    let tasks: Vec<_> = (0..workers)
        .map(|_| {
            let arrived = arrived.clone();
            rt.spawn(async move {
                f();
                let (count, all) = &*arrived;
                let Ok(mut n) = count.lock() else { return };
                *n += 1;
                all.notify_all();
                let _ =
                    all.wait_timeout_while(n, std::time::Duration::from_secs(1), |n| *n < workers);
            })
        })
        .collect();
    rt.block_on(async {
        for t in tasks {
            let _ = t.await;
        }
    });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_worker_runs_the_function_once_and_the_caller_never() {
        use std::sync::Mutex;
        use std::thread::ThreadId;
        static ON: Mutex<Vec<ThreadId>> = Mutex::new(Vec::new());
        let workers = runtime().expect("runtime").metrics().num_workers();
        on_each_worker(|| {
            if let Ok(mut on) = ON.lock() {
                on.push(std::thread::current().id());
            }
        });
        let on = ON.lock().expect("lock");
        assert_eq!(on.len(), workers, "once per worker");
        assert!(!on.contains(&std::thread::current().id()), "{on:?}");
    }
}
