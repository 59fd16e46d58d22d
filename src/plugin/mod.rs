//! Plug-in compactors: any program, run without a shell, that reads the interrupted state as JSON
//! on stdin and writes a handoff on stdout — a checkpoint (`compaction-eval/handoff/1`, rendered
//! like strategy C's), a text document (`compaction-eval/text/1`), or plain text.
//!
//! The harness enforces a time limit and an output limit, clears the environment (only the
//! variables the strategy file names pass through: no API keys unless named), runs the program in
//! its own process group — on Linux in new user, PID and mount namespaces with a fresh `/proc`
//! where the platform allows ([`isolation`]), with a private view of the file system there
//! ([`sandbox`]: the run's folders hidden, the rest read-only, a private scratch folder;
//! [`protections`] says what applies) — kills the group at the limit, bounds every read by the
//! same deadline, and turns every failure into a clear [`PluginError`]; a plug-in can neither hang
//! nor crash a run, nor read the harness's environment through `/proc`, the scenario files or
//! other run folders.
//!
//! This module only runs programs and speaks the protocol ([`protocol`]); turning an answer into a
//! handoff is the exec strategy's (`strategy/exec.rs`). It must not import the strategy module.

pub mod protocol;
pub mod sandbox;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::checkpoint::{Checkpoint, FORMAT as HANDOFF_FORMAT};
use protocol::{TEXT_FORMAT, TextDocument};

/// A plug-in program and its limits, as a strategy file describes it.
#[derive(Debug, Clone)]
pub struct Program {
    /// The strategy id (for messages).
    pub id: String,
    /// A name on PATH, or a path relative to `dir`.
    pub program: Option<String>,
    pub args: Vec<String>,
    /// The only environment variables passed through.
    pub env: Vec<String>,
    /// Time limit in seconds (default [`DEFAULT_TIMEOUT_S`]).
    pub timeout_s: Option<f64>,
    /// Output limit in bytes (default [`DEFAULT_MAX_OUTPUT`]).
    pub max_output_bytes: Option<usize>,
    /// The folder the program runs in (under [`sandbox`]: a private writable tmpfs at that path,
    /// holding only the plug-in's own folder, read-only).
    pub dir: PathBuf,
    /// Folders the plug-in must neither read nor write (the scenario folder, run folders, the
    /// response cache…), hidden under empty tmpfs where [`protections`] allow.
    pub hide: Vec<PathBuf>,
}

/// Default time limit of a plug-in, seconds.
pub const DEFAULT_TIMEOUT_S: f64 = 30.0;
/// Default output limit of a plug-in, bytes.
pub const DEFAULT_MAX_OUTPUT: usize = 4 << 20;

/// Why a plug-in produced no handoff.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PluginError {
    #[error("plug-in `{id}`: cannot start `{program}`: {message}")]
    Spawn {
        id: String,
        program: String,
        message: String,
    },
    #[error("plug-in `{id}` exited with {status}; stderr ends: {stderr_tail}")]
    Exit {
        id: String,
        status: String,
        stderr_tail: String,
    },
    #[error("plug-in `{id}` ran past its time limit of {limit_s} s and was killed")]
    Timeout { id: String, limit_s: f64 },
    #[error("plug-in `{id}` wrote more than its output limit of {limit} bytes and was killed")]
    TooLarge { id: String, limit: usize },
    #[error("plug-in `{id}` wrote invalid JSON: {message}")]
    InvalidJson { id: String, message: String },
    #[error(
        "plug-in `{id}`: its {format} document does not match the schema at `{path}`: {message}"
    )]
    Schema {
        id: String,
        format: String,
        path: String,
        message: String,
    },
    #[error("plug-in `{id}` wrote nothing")]
    Empty { id: String },
    #[error(
        "plug-in `{id}` exited, but a process it started kept its output open past the time limit (killed; the answer is incomplete)"
    )]
    Leaked { id: String },
    #[error("plug-in `{id}` wrote invalid UTF-8 at byte {offset} of its stdout")]
    InvalidUtf8 { id: String, offset: usize },
    #[error("plug-in `{id}`: {message}")]
    Config { id: String, message: String },
}

/// The last `n` characters of a plug-in's stderr, on one line, with every secret of the run
/// redacted.
fn tail(bytes: &[u8], n: usize) -> String {
    let lossy = String::from_utf8_lossy(bytes);
    let text = crate::secrets::redact(&lossy);
    let t = text.trim_end();
    let start = t
        .char_indices()
        .rev()
        .nth(n.saturating_sub(1))
        .map(|(i, _)| i)
        .unwrap_or(0);
    t[start..].replace('\n', " ⏎ ")
}

fn resolve_program(program: &str, dir: &Path) -> Option<PathBuf> {
    if program.contains('/') {
        let p = Path::new(program);
        return Some(if p.is_absolute() {
            p.to_path_buf()
        } else {
            dir.join(p)
        });
    }
    // Resolved with the harness's PATH; the plug-in itself gets a cleared environment.
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
}

/// How a plug-in is kept away from the harness, as this platform allows (probed once per process).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Isolation {
    /// Linux: new user, PID and mount namespaces with a fresh `/proc` (`unshare`): the plug-in
    /// sees only its own processes and holds no capability outside its namespaces.
    UserNamespaces { unshare: PathBuf },
    /// Linux, where user namespaces are refused but the harness is root: new PID and mount
    /// namespaces with a fresh `/proc` (a plug-in running as root could still unmount it).
    PidNamespace { unshare: PathBuf },
    /// No namespaces: a cleared environment and its own process group only.
    None,
}

impl Isolation {
    /// One line for the README and `--help`-like messages.
    pub fn describe(&self) -> &'static str {
        match self {
            Isolation::UserNamespaces { .. } => {
                "user, PID and mount namespaces with a fresh /proc (unshare)"
            }
            Isolation::PidNamespace { .. } => {
                "PID and mount namespaces with a fresh /proc (unshare)"
            }
            Isolation::None => "no namespaces (cleared environment, own process group)",
        }
    }

    fn flags(&self) -> Option<(&Path, &'static [&'static str])> {
        match self {
            Isolation::UserNamespaces { unshare } => Some((
                unshare,
                &[
                    "--user",
                    "--map-root-user",
                    "--pid",
                    "--fork",
                    "--kill-child",
                    "--mount",
                    "--mount-proc",
                    "--",
                ],
            )),
            Isolation::PidNamespace { unshare } => Some((
                unshare,
                &[
                    "--pid",
                    "--fork",
                    "--kill-child",
                    "--mount",
                    "--mount-proc",
                    "--",
                ],
            )),
            Isolation::None => None,
        }
    }
}

/// The isolation plug-ins get in this process: the strongest that works here, probed once by
/// running `true` under it. `COMPACTION_EVAL_PLUGIN_ISOLATION=none` turns it off (for platforms
/// where the probe itself misbehaves).
pub fn isolation() -> &'static Isolation {
    static ISOLATION: std::sync::OnceLock<Isolation> = std::sync::OnceLock::new();
    ISOLATION.get_or_init(|| {
        protect_harness();
        if !cfg!(target_os = "linux")
            || std::env::var("COMPACTION_EVAL_PLUGIN_ISOLATION").is_ok_and(|v| v == "none")
        {
            return Isolation::None;
        }
        let Some(unshare) = resolve_program("unshare", Path::new("/")) else {
            return Isolation::None;
        };
        let truth = resolve_program("true", Path::new("/"));
        for candidate in [
            Isolation::UserNamespaces {
                unshare: unshare.clone(),
            },
            Isolation::PidNamespace {
                unshare: unshare.clone(),
            },
        ] {
            let (Some((bin, flags)), Some(t)) = (candidate.flags(), truth.as_ref()) else {
                continue;
            };
            let ok = Command::new(bin)
                .args(flags)
                .arg(t)
                .env_clear()
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                return candidate;
            }
        }
        Isolation::None
    })
}

/// The private view plug-ins get in this process (probed once, after [`isolation`], by running
/// the sandbox prologue on a scratch layout): empty where there are no namespaces.
pub fn protections() -> &'static sandbox::Protections {
    static PROTECTIONS: std::sync::OnceLock<sandbox::Protections> = std::sync::OnceLock::new();
    PROTECTIONS.get_or_init(|| {
        let iso = isolation();
        sandbox::probe(
            iso.flags(),
            matches!(iso, Isolation::UserNamespaces { .. }),
            |name| resolve_program(name, Path::new("/")),
        )
    })
}

/// Makes the harness process non-dumpable (Linux): its `/proc/PID/environ`, `mem` and `fd` are
/// then closed to processes of the same user without `CAP_SYS_PTRACE`, so a plug-in that escapes
/// its namespaces, or runs without them, cannot read the harness's environment.
fn protect_harness() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_DUMPABLE, 0) changes only this process's dumpable flag.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
}

/// The process groups of the plug-ins running now, so a run stopped by a signal ends them too
/// ([`kill_live`]) instead of leaving them to their time limits.
static LIVE: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

/// A running plug-in's group in [`LIVE`], removed when its call ends.
struct Live(u32);

impl Live {
    fn new(pgid: u32) -> Live {
        if let Ok(mut l) = LIVE.lock() {
            l.push(pgid);
        }
        Live(pgid)
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Ok(mut l) = LIVE.lock() {
            l.retain(|&g| g != self.0);
        }
    }
}

/// Kills every plug-in running now (a run stopping on SIGINT or SIGTERM). Returns how many.
pub fn kill_live() -> usize {
    // `try_lock`: called from a signal watcher, it must never wait on a call that is ending.
    let groups: Vec<u32> = match LIVE.try_lock() {
        Ok(l) => l.clone(),
        Err(_) => return 0,
    };
    for &g in &groups {
        kill_group(g);
    }
    groups.len()
}

/// Kills every process of the plug-in's process group.
fn kill_group(pgid: u32) {
    #[cfg(unix)]
    // SAFETY: kill(2) with a negative pid signals the process group we created for the plug-in.
    unsafe {
        libc::kill(-(pgid as i32), libc::SIGKILL);
    }
    #[cfg(not(unix))]
    let _ = pgid;
}

/// Whether the child has exited, without reaping it (so its process group id stays its own
/// until the group is killed).
fn has_exited(child: &mut std::process::Child) -> std::io::Result<bool> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: waitid with WNOWAIT only inspects our own child; `info` is zeroed and owned.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                child.id(),
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: si_pid is set by waitid (0 when no child has changed state).
        Ok(unsafe { info.si_pid() } != 0)
    }
    #[cfg(not(target_os = "linux"))]
    {
        child.try_wait().map(|s| s.is_some())
    }
}

/// Reads a pipe to its end on a thread, keeping at most `keep` bytes (the first ones, or with
/// `tail` the last ones); `overflow` is set when more than `keep` arrived and reading stopped.
fn drain(
    mut pipe: impl Read + Send + 'static,
    keep: usize,
    tail: bool,
    overflow: Arc<AtomicBool>,
) -> std::sync::mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut buf = [0u8; 64 * 1024];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    out.extend_from_slice(&buf[..n]);
                    if out.len() > keep {
                        if tail {
                            out.drain(..out.len() - keep);
                        } else {
                            overflow.store(true, Ordering::SeqCst);
                            break;
                        }
                    }
                }
            }
        }
        let _ = tx.send(out);
    });
    rx
}

/// Runs a plug-in on `input`; returns its stdout.
///
/// The plug-in runs in its own process group (under [`isolation`] where the platform allows),
/// with a cleared environment. At the time limit, on overflow, and as soon as the plug-in itself
/// has exited, the whole group is killed; the reads of its output are bounded by the same
/// deadline, so a descendant that keeps a pipe open cannot hold the run.
pub fn run(cfg: &Program, input: &[u8]) -> Result<Vec<u8>, PluginError> {
    let (id, dir) = (cfg.id.as_str(), cfg.dir.as_path());
    let program = cfg.program.clone().ok_or_else(|| PluginError::Config {
        id: id.into(),
        message: "an exec strategy needs `program`".into(),
    })?;
    let path = resolve_program(&program, dir).ok_or_else(|| PluginError::Spawn {
        id: id.into(),
        program: program.clone(),
        message: "not found on PATH".into(),
    })?;
    let limit = cfg.max_output_bytes.unwrap_or(DEFAULT_MAX_OUTPUT);
    let timeout = cfg.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S);
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(timeout.clamp(0.001, 1e7));
    let mut cmd = match isolation().flags() {
        Some((unshare, flags)) => {
            let mut c = Command::new(unshare);
            c.args(flags);
            match sandbox::command_line(protections(), &program, &path, &cfg.args, dir, &cfg.hide) {
                Some(line) => c.args(line),
                None => c.arg(&path).args(&cfg.args),
            };
            c
        }
        None => {
            let mut c = Command::new(&path);
            c.args(&cfg.args);
            c
        }
    };
    cmd.current_dir(dir)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    for var in &cfg.env {
        if let Some(v) = std::env::var_os(var) {
            cmd.env(var, v);
        }
    }
    let mut child = cmd.spawn().map_err(|e| PluginError::Spawn {
        id: id.into(),
        program: program.clone(),
        message: e.to_string(),
    })?;
    let pgid = child.id();
    let _live = Live::new(pgid);
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        kill_group(pgid);
        let _ = child.wait();
        return Err(PluginError::Spawn {
            id: id.into(),
            program,
            message: "no pipes".into(),
        });
    };
    let input = input.to_vec();
    // A plug-in that never reads stdin must not block the harness: write on a thread that is
    // never joined, and ignore a broken pipe.
    std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let overflow = Arc::new(AtomicBool::new(false));
    let out_rx = drain(stdout, limit, false, overflow.clone());
    let err_rx = drain(stderr, 16 * 1024, true, Arc::new(AtomicBool::new(false)));
    let finish = |child: &mut std::process::Child| {
        kill_group(pgid);
        child.wait()
    };
    loop {
        if overflow.load(Ordering::SeqCst) {
            let _ = finish(&mut child);
            return Err(PluginError::TooLarge {
                id: id.into(),
                limit,
            });
        }
        match has_exited(&mut child) {
            Ok(true) => break,
            Ok(false) if Instant::now() >= deadline => {
                let _ = finish(&mut child);
                return Err(PluginError::Timeout {
                    id: id.into(),
                    limit_s: timeout,
                });
            }
            Ok(false) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => {
                let _ = finish(&mut child);
                return Err(PluginError::Spawn {
                    id: id.into(),
                    program,
                    message: e.to_string(),
                });
            }
        }
    }
    // The plug-in has exited: whatever it left running goes with it, then its pipes close.
    let status = finish(&mut child).map_err(|e| PluginError::Spawn {
        id: id.into(),
        program: program.clone(),
        message: e.to_string(),
    })?;
    let left = |now: Instant| {
        deadline
            .saturating_duration_since(now)
            .max(Duration::from_millis(200))
    };
    let out = out_rx
        .recv_timeout(left(Instant::now()))
        .map_err(|_| PluginError::Leaked { id: id.into() })?;
    let err = err_rx
        .recv_timeout(left(Instant::now()))
        .unwrap_or_default();
    if overflow.load(Ordering::SeqCst) || out.len() > limit {
        return Err(PluginError::TooLarge {
            id: id.into(),
            limit,
        });
    }
    if !status.success() {
        return Err(PluginError::Exit {
            id: id.into(),
            status: match status.code() {
                Some(c) => format!("exit status {c}"),
                None => "a signal".into(),
            },
            stderr_tail: tail(&err, 400),
        });
    }
    Ok(out)
}

fn schema_error(
    id: &str,
    format: &str,
    e: serde_path_to_error::Error<serde_json::Error>,
) -> PluginError {
    PluginError::Schema {
        id: id.into(),
        format: format.into(),
        path: e.path().to_string(),
        message: e.into_inner().to_string(),
    }
}

/// What a plug-in answered.
pub enum Answer {
    Checkpoint(Box<Checkpoint>),
    Text(TextDocument),
}

/// Parses a plug-in's stdout: JSON documents by their `format`, anything else as plain text.
///
/// Invalid UTF-8 is an error naming the byte offset, never replaced silently.
pub fn parse_answer(id: &str, out: &[u8]) -> Result<Answer, PluginError> {
    let text = std::str::from_utf8(out).map_err(|e| PluginError::InvalidUtf8 {
        id: id.into(),
        offset: e.valid_up_to(),
    })?;
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(PluginError::Empty { id: id.into() });
    }
    if !trimmed.starts_with('{') {
        return Ok(Answer::Text(TextDocument {
            format: TEXT_FORMAT.into(),
            text: trimmed.to_string(),
            messages: vec![],
        }));
    }
    let value: serde_json::Value =
        serde_json::from_str(trimmed).map_err(|e| PluginError::InvalidJson {
            id: id.into(),
            message: format!(
                "{e} (stdout starts with `{}`)",
                trimmed.chars().take(40).collect::<String>()
            ),
        })?;
    match value.get("format").and_then(|f| f.as_str()) {
        Some(HANDOFF_FORMAT) => serde_path_to_error::deserialize::<_, Checkpoint>(value)
            .map(|c| Answer::Checkpoint(Box::new(c)))
            .map_err(|e| schema_error(id, HANDOFF_FORMAT, e)),
        Some(TEXT_FORMAT) => {
            let doc = serde_path_to_error::deserialize::<_, TextDocument>(value)
                .map_err(|e| schema_error(id, TEXT_FORMAT, e))?;
            // Roles are `user` or `assistant`: a `system` message would put plug-in text above
            // the harness's system prompt, which is the same for every strategy.
            if let Some((i, m)) = doc
                .messages
                .iter()
                .enumerate()
                .find(|(_, m)| m.role != "user" && m.role != "assistant")
            {
                return Err(PluginError::Schema {
                    id: id.into(),
                    format: TEXT_FORMAT.into(),
                    path: format!("messages[{i}].role"),
                    message: format!("`{}` is not `user` or `assistant`", m.role),
                });
            }
            Ok(Answer::Text(doc))
        }
        other => Err(PluginError::Schema {
            id: id.into(),
            format: "answer".into(),
            path: "format".into(),
            message: format!(
                "{} is not `{HANDOFF_FORMAT}` or `{TEXT_FORMAT}`",
                other
                    .map(|f| format!("`{f}`"))
                    .unwrap_or_else(|| "missing".into())
            ),
        }),
    }
}
