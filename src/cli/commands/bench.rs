//! `bench`: time the harness on the offline default matrix.
//!
//! Owns: the timing per history scale (plan CPU, CPU per cell, cells per second, median
//! full-history tokens at the restore points), the process's CPU time and peak memory read from
//! `/proc` (Linux; other systems print without them), and the lines on stdout. Must not: change what a run does —
//! it runs the ordinary [`crate::runner`] with the default configuration.

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
    say!(
        "{:<8} {:>8} {:>16} {:>12} {:>14} {:>14}",
        "scale",
        "cells",
        "history tokens",
        "plan CPU s",
        "CPU/cell ms",
        "cells/s"
    );
    for scale in scales {
        let cfg = RunConfig {
            scenario_dir: dir.clone(),
            strategy_dir: crate::shipped::Source::resolve(None, "strategies"),
            reps: args.reps,
            concurrency: args.concurrency,
            out: out.join(scale.to_string()),
            scales: vec![scale],
            ..RunConfig::default()
        };
        let cpu0 = cpu_seconds();
        let plan = crate::runner::plan(&cfg)?;
        let cpu1 = cpu_seconds();
        let t1 = Instant::now();
        let n = crate::runner::execute(&cfg, &plan, &mut Silent)?;
        let wall = t1.elapsed().as_secs_f64();
        let cpu2 = cpu_seconds();
        let mut hist: Vec<f64> = plan.history.values().map(|&h| h as f64).collect();
        hist.sort_by(f64::total_cmp);
        let median = crate::stats::median(&hist).unwrap_or(0.0);
        let (plan_cpu, per_cell) = match (cpu0, cpu1, cpu2) {
            (Some(a), Some(b), Some(c)) => (
                format!("{:.2}", b - a),
                format!("{:.4}", (c - b) * 1e3 / n.max(1) as f64),
            ),
            _ => ("n/a".into(), "n/a".into()),
        };
        say!(
            "{:<8} {:>8} {:>16.0} {:>12} {:>14} {:>14.0}",
            scale.to_string(),
            n,
            median,
            plan_cpu,
            per_cell,
            n as f64 / wall
        );
    }
    if let Some(m) = peak_rss_mib() {
        say!("peak RSS: {m:.1} MiB");
    }
    say!("results under {}", out.display());
    Ok(exit::OK)
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
