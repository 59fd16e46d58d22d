//! Plug-in compactors: any program, run without a shell, that reads the interrupted state as JSON
//! on stdin and writes a handoff on stdout — a checkpoint (`compaction-eval/handoff/1`, rendered
//! like strategy C's), a text document (`compaction-eval/text/1`), or plain text.
//!
//! The harness enforces a time limit and an output limit, clears the environment (only the
//! variables the strategy file names pass through: no API keys unless named), and turns every
//! failure into a clear [`PluginError`]; a plug-in can neither hang nor crash a run.
//!
//! This module only runs programs and speaks the protocol ([`protocol`]); turning an answer into a
//! handoff is the exec strategy's (`strategy/exec.rs`). It must not import the strategy module.

pub mod protocol;

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
    /// The folder the program runs in.
    pub dir: PathBuf,
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
    #[error("plug-in `{id}`: {message}")]
    Config { id: String, message: String },
}

fn tail(bytes: &[u8], n: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
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

/// Runs a plug-in on `input`; returns its stdout.
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
    let mut cmd = Command::new(&path);
    cmd.args(&cfg.args)
        .current_dir(dir)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
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
    let (Some(mut stdin), Some(mut stdout), Some(mut stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        let _ = child.kill();
        return Err(PluginError::Spawn {
            id: id.into(),
            program,
            message: "no pipes".into(),
        });
    };
    let input = input.to_vec();
    // A plug-in that never reads stdin must not block the harness: write on a thread and ignore
    // a broken pipe.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let overflow = Arc::new(AtomicBool::new(false));
    let flag = overflow.clone();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut buf = [0u8; 64 * 1024];
        loop {
            match stdout.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    out.extend_from_slice(&buf[..n]);
                    if out.len() > limit {
                        flag.store(true, Ordering::SeqCst);
                        break;
                    }
                }
            }
        }
        out
    });
    let err_reader = std::thread::spawn(move || {
        let mut err = Vec::new();
        let mut buf = [0u8; 16 * 1024];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            err.extend_from_slice(&buf[..n]);
            if err.len() > 64 * 1024 {
                err.drain(..err.len() - 16 * 1024);
            }
        }
        err
    });
    let deadline = Instant::now() + Duration::from_secs_f64(timeout.max(0.001));
    let status = loop {
        if overflow.load(Ordering::SeqCst) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(PluginError::TooLarge {
                id: id.into(),
                limit,
            });
        }
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(PluginError::Timeout {
                    id: id.into(),
                    limit_s: timeout,
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => {
                let _ = child.kill();
                return Err(PluginError::Spawn {
                    id: id.into(),
                    program,
                    message: e.to_string(),
                });
            }
        }
    };
    let _ = writer.join();
    let out = reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    if out.len() > limit {
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
pub fn parse_answer(id: &str, out: &[u8]) -> Result<Answer, PluginError> {
    let text = String::from_utf8_lossy(out);
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
        Some(TEXT_FORMAT) => serde_path_to_error::deserialize::<_, TextDocument>(value)
            .map(Answer::Text)
            .map_err(|e| schema_error(id, TEXT_FORMAT, e)),
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
