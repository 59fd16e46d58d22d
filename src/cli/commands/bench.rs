//! `bench`: time the harness on the offline default matrix.
//!
//! Owns: the timing per history scale (plan CPU, CPU per cell, cells per second, median
//! full-history tokens at the restore points, peak resident memory), the scaling table of
//! `--cells` (whole `run` processes at multiples of the default matrix: CPU and peak memory),
//! the CPU time and memory read from `/proc` and the kernel (Linux; other systems print without
//! them), and the lines on stdout. Must not: change what a run does — it runs the ordinary
//! [`crate::runner`] (or the `run` command) with the default configuration.

use std::time::Instant;

use crate::cli::args::BenchArgs;
use crate::error::Error;
use crate::exit;
use crate::runner::{RunConfig, Silent};
use crate::scenario::volume::Scale;

pub fn run(dir: &crate::shipped::Source, args: &BenchArgs) -> Result<i32, Error> {
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("compaction-eval-bench"));
    let scales: Vec<Scale> = match &args.scale {
        None => crate::scenario::volume::DEFAULT_SCALES.to_vec(),
        Some(list) => list
            .iter()
            .map(|x| x.parse().map_err(|e| Error::Usage(format!("--scale: {e}"))))
            .collect::<Result<_, _>>()?,
    };
    let multiples = match &args.cells {
        None => Vec::new(),
        Some(list) => list
            .iter()
            .map(|m| parse_multiple(m))
            .collect::<Result<Vec<u32>, _>>()?,
    };
    if multiples.is_empty() {
        per_scale(dir, args, &out, &scales)?;
    } else {
        let scale = scales.first().copied().unwrap_or(Scale::Base);
        scaling(dir, args, &out, scale, &multiples)?;
    }
    say!("results under {}", out.display());
    Ok(exit::OK)
}

/// `--cells 4x` (or `4`): the default matrix's repetitions times 4.
fn parse_multiple(m: &str) -> Result<u32, Error> {
    m.trim()
        .trim_end_matches(['x', '×'])
        .parse::<u32>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| {
            Error::Usage(format!(
                "--cells: `{m}` is not a multiple of the default matrix (write 1x,4x,16x)"
            ))
        })
}

/// The table per scale, each scale timed on its own in this process.
fn per_scale(
    dir: &crate::shipped::Source,
    args: &BenchArgs,
    out: &std::path::Path,
    scales: &[Scale],
) -> Result<(), Error> {
    say!(
        "{:<8} {:>8} {:>16} {:>12} {:>14} {:>14} {:>14}",
        "scale",
        "cells",
        "history tokens",
        "plan CPU s",
        "CPU/cell ms",
        "cells/s",
        "peak RSS MiB"
    );
    let defaults = RunConfig::default().strategies;
    let strategies =
        crate::strategy::chain::expand(&defaults, &[args.cycles]).map_err(Error::Usage)?;
    for &scale in scales {
        let cfg = RunConfig {
            scenario_dir: dir.clone(),
            strategy_dir: crate::shipped::Source::resolve(None, "strategies"),
            strategies: strategies.clone(),
            reps: args.reps,
            concurrency: args.concurrency,
            out: out.join(scale.to_string()),
            scales: vec![scale],
            ..RunConfig::default()
        };
        // The peak of this scale alone (Linux: the kernel's high-water mark is reset).
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        let cpu0 = cpu_seconds();
        let plan = crate::runner::plan_streaming(&cfg, crate::runner::select_scenarios(&cfg)?)?;
        let cpu1 = cpu_seconds();
        let t1 = Instant::now();
        let n = crate::runner::execute(&cfg, &plan, &mut Silent)?;
        let wall = t1.elapsed().as_secs_f64();
        let cpu2 = cpu_seconds();
        // The points built while cells ran count as the plan's, as when a plan built them all.
        let building = plan.builder.cpu_seconds();
        let median = median_history(&cfg.out.join("results.jsonl"));
        let (plan_cpu, per_cell) = match (cpu0, cpu1, cpu2) {
            (Some(a), Some(b), Some(c)) => {
                let warm = b - a;
                let streamed = (building - warm).max(0.0);
                (
                    format!("{:.2}", warm + streamed),
                    format!("{:.4}", (c - b - streamed) * 1e3 / n.max(1) as f64),
                )
            }
            _ => ("n/a".into(), "n/a".into()),
        };
        say!(
            "{:<8} {:>8} {:>16.0} {:>12} {:>14} {:>14.0} {:>14}",
            scale.to_string(),
            n,
            median,
            plan_cpu,
            per_cell,
            n as f64 / wall,
            peak_rss_mib()
                .map(|m| format!("{m:.1}"))
                .unwrap_or_else(|| "n/a".into())
        );
    }
    Ok(())
}

/// The median full-history tokens over a run's restore points, from its records.
fn median_history(results: &std::path::Path) -> f64 {
    let Ok(records) = crate::runner::read_records(results) else {
        return 0.0;
    };
    let mut seen = std::collections::BTreeMap::new();
    for r in &records {
        seen.insert(
            (r.scenario.clone(), r.interrupt.clone()),
            r.metrics.history_tokens as f64,
        );
    }
    let mut hist: Vec<f64> = seen.into_values().collect();
    hist.sort_by(f64::total_cmp);
    crate::stats::median(&hist).unwrap_or(0.0)
}

/// `--cells`: whole `run` processes at multiples of the default matrix (its repetitions ×
/// each multiple), each measured by the kernel: CPU (user + system) and peak resident memory,
/// the report included, as a user's run is.
fn scaling(
    dir: &crate::shipped::Source,
    args: &BenchArgs,
    out: &std::path::Path,
    scale: Scale,
    multiples: &[u32],
) -> Result<(), Error> {
    let exe = std::env::current_exe().map_err(|e| Error::Usage(format!("bench --cells: {e}")))?;
    say!(
        "{:<6} {:>8} {:>10} {:>14} {:>14}",
        "cells",
        "count",
        "CPU s",
        "CPU/cell ms",
        "peak RSS MiB"
    );
    for &m in multiples {
        let folder = out.join(format!("{scale}-{m}x"));
        let _ = std::fs::remove_dir_all(&folder);
        let mut cmd = std::process::Command::new(&exe);
        cmd.arg("run")
            .arg("--scale")
            .arg(scale.to_string())
            .arg("--reps")
            .arg((args.reps.max(1) * m).to_string())
            .arg("--concurrency")
            .arg(args.concurrency.to_string())
            .arg("--out")
            .arg(&folder)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if let Some(f) = dir.folder() {
            cmd.arg("--scenario-dir").arg(f);
        }
        let (ok, cpu, peak) = measured(cmd)
            .map_err(|e| Error::Usage(format!("bench --cells: running `run`: {e}")))?;
        if !ok {
            return Err(Error::Usage(format!(
                "bench --cells: the run into {} failed; run it by hand to see why",
                folder.display()
            )));
        }
        let n = crate::runner::read_records(&folder.join("results.jsonl"))
            .map(|r| r.len())
            .unwrap_or(0);
        say!(
            "{:<6} {:>8} {:>10.2} {:>14.4} {:>14.1}",
            format!("{m}x"),
            n,
            cpu,
            cpu * 1e3 / n.max(1) as f64,
            peak
        );
    }
    Ok(())
}

/// Runs `cmd` to its end: whether it succeeded, its CPU seconds and its peak resident MiB
/// (the kernel's figures for that child alone).
#[cfg(unix)]
fn measured(mut cmd: std::process::Command) -> std::io::Result<(bool, f64, f64)> {
    let child = cmd.spawn()?;
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct wait4 fills in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not waited for yet; both pointers are to live locals.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let cpu = secs(usage.ru_utime) + secs(usage.ru_stime);
    // ru_maxrss is in KiB on Linux.
    let peak = usage.ru_maxrss as f64 / 1024.0;
    Ok((
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        cpu,
        peak,
    ))
}

#[cfg(not(unix))]
fn measured(mut cmd: std::process::Command) -> std::io::Result<(bool, f64, f64)> {
    let ok = cmd.status()?.success();
    Ok((ok, f64::NAN, f64::NAN))
}

/// CPU seconds (user + system) this process has used, from /proc (Linux); `None` elsewhere.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// Peak resident memory in MiB, from /proc (Linux).
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}
