//! Stopping a run on SIGINT or SIGTERM: at once, keeping every finished cell, so `--resume`
//! continues where it stopped.
//!
//! Owns: the two signals' handlers while a run writes its folder. Must not: write records (every
//! finished cell is in the journal already, written by the kernel the moment it finished: a run
//! that ends at any instant loses none) or decide the exit code of anything but a signal.
//!
//! Why a handler at all when the default action already ends the process: a process started in
//! the background of a non-interactive shell (`run … &` in a script, some job runners) inherits
//! SIGINT *ignored*, and such a run could not be stopped by Ctrl-C or `kill -INT`; and plug-ins
//! run in process groups of their own, which a signal to the harness does not reach. So the
//! handler records the signal, and a watcher thread kills the running plug-ins and ends the
//! process by the same signal with its default action (a shell then reports 130 for SIGINT and
//! 143 for SIGTERM, as for any program a signal stopped).

#[cfg(unix)]
mod imp {
    use std::sync::Once;
    use std::sync::atomic::{AtomicI32, Ordering};

    static CAUGHT: AtomicI32 = AtomicI32::new(0);
    static INSTALL: Once = Once::new();
    /// How often the watcher looks: well inside the 2 s a stop may take.
    const POLL: std::time::Duration = std::time::Duration::from_millis(25);

    extern "C" fn on_signal(sig: libc::c_int) {
        // Only an atomic store: all a signal handler may safely do.
        CAUGHT.store(sig, Ordering::SeqCst);
    }

    pub fn install() {
        INSTALL.call_once(|| {
            for sig in [libc::SIGINT, libc::SIGTERM] {
                // SAFETY: the handler only stores to an atomic, which is async-signal-safe; the
                // sigaction struct is zeroed then filled as sigaction(2) documents.
                unsafe {
                    let mut sa: libc::sigaction = std::mem::zeroed();
                    sa.sa_sigaction = on_signal as *const () as libc::sighandler_t;
                    libc::sigemptyset(&mut sa.sa_mask);
                    sa.sa_flags = libc::SA_RESTART;
                    libc::sigaction(sig, &sa, std::ptr::null_mut());
                }
            }
            std::thread::Builder::new()
                .name("signal-watcher".into())
                .spawn(|| {
                    loop {
                        let sig = CAUGHT.load(Ordering::SeqCst);
                        if sig != 0 {
                            stop(sig);
                        }
                        std::thread::sleep(POLL);
                    }
                })
                .ok();
        });
    }

    fn stop(sig: libc::c_int) {
        let name = if sig == libc::SIGINT {
            "SIGINT"
        } else {
            "SIGTERM"
        };
        crate::plugin::kill_live();
        eprintln!(
            "\nstopped by {name}: every finished cell is kept in the run folder; run again with --resume to continue"
        );
        // SAFETY: restoring the default action and raising the signal ends the process as that
        // signal would have; nothing else runs after it.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
        // A signal that did not end the process (blocked in this thread): end it plainly.
        std::process::exit(128 + sig);
    }
}

/// Installs the handlers (once per process). On a platform without Unix signals, the default
/// Ctrl-C behaviour (the process ends, finished cells kept) applies.
pub fn stop_on_signals() {
    #[cfg(unix)]
    imp::install();
}
