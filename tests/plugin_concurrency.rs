//! Plug-in calls run concurrently up to `--concurrency` (issue 28, item 7): a plug-in that waits
//! at a rendezvous on 127.0.0.1 until as many of its calls run at once as the run allows proves
//! the overlap without timing anything; with `--concurrency 1` the calls never overlap.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use compaction_eval::runner::{self, Prepared, RunConfig};

/// The rendezvous: each connection (one plug-in call) is answered once `want` calls are open at
/// once, or after `patience` (so calls that never overlap still end). Returns the port and the
/// most calls ever open at once.
fn rendezvous(want: usize, patience: Duration) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let most = Arc::new(AtomicUsize::new(0));
    let open = Arc::new((Mutex::new(0usize), Condvar::new()));
    let seen = most.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { break };
            let (open, seen) = (open.clone(), seen.clone());
            std::thread::spawn(move || {
                let (lock, cv) = &*open;
                let mut n = lock.lock().expect("lock");
                *n += 1;
                seen.fetch_max(*n, Ordering::SeqCst);
                cv.notify_all();
                let (mut n, _) = cv
                    .wait_timeout_while(n, patience, |n| *n < want)
                    .expect("wait");
                let _ = s.write_all(b"go\n");
                let mut sink = [0u8; 16];
                let _ = s.read(&mut sink);
                *n -= 1;
            });
        }
    });
    (port, most)
}

fn strategy_dir(port: u16) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    // Reads its input, meets the others at the rendezvous, then writes a text handoff.
    let script = format!(
        "import socket,sys\nsys.stdin.read()\ns=socket.create_connection(('127.0.0.1',{port}))\ns.recv(16)\ns.close()\nprint('Handoff: continue the task.')\n"
    );
    std::fs::write(
        dir.path().join("meet.toml"),
        format!(
            "id = \"exec:meet\"\nkind = \"exec\"\nprogram = \"python3\"\nargs = [\"-c\", {script:?}]\ntimeout_s = 60\n"
        ),
    )
    .expect("strategy");
    dir
}

/// Plans a run of one scenario at three interrupt points (three plug-in calls) and returns the
/// most calls the rendezvous saw at once.
fn most_at_once(concurrency: usize) -> usize {
    let (port, most) = rendezvous(3, Duration::from_millis(800));
    let strategies = strategy_dir(port);
    let out = tempfile::tempdir().expect("out");
    let cfg = RunConfig {
        scenario_dir: Path::new("scenarios").into(),
        scenarios: Some(vec!["support-ticket-timeout".into()]),
        interrupts: Some(vec![
            "after_exploration".into(),
            "pending_approval".into(),
            "uncertain_side_effect".into(),
        ]),
        strategies: vec!["exec:meet".into()],
        models: vec!["sim:careful".into()],
        reps: 1,
        concurrency,
        out: out.path().join("run"),
        strategy_dir: strategies.path().into(),
        scales: vec![compaction_eval::scenario::volume::Scale::Base],
        ..RunConfig::default()
    };
    let plan = runner::plan(&cfg).expect("plan");
    assert_eq!(plan.handoffs.len(), 3);
    for p in plan.handoffs.values() {
        assert!(matches!(p, Prepared::Ready { .. }), "{p:?}");
    }
    most.load(Ordering::SeqCst)
}

#[test]
fn plugin_calls_run_up_to_the_concurrency_at_once() {
    assert_eq!(most_at_once(3), 3, "three calls, three at once");
    assert_eq!(most_at_once(1), 1, "one at a time with --concurrency 1");
}
