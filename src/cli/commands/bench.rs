//! `bench`: time the harness on the offline default matrix.
//!
//! Owns: the timing, the process's CPU time and peak memory read from `/proc` (Linux; other
//! systems print without them), and the lines on stdout. Must not: change what a run does —
//! it runs the ordinary [`crate::runner`] with the default configuration.

use std::path::Path;
use std::time::Instant;

use crate::cli::args::BenchArgs;
use crate::error::Error;
use crate::exit;
use crate::runner::{RunConfig, Silent};

pub fn run(dir: &Path, args: &BenchArgs) -> Result<i32, Error> {
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("compaction-eval-bench"));
    let cfg = RunConfig {
        scenario_dir: dir.to_path_buf(),
        reps: args.reps,
        concurrency: args.concurrency,
        out: out.clone(),
        ..RunConfig::default()
    };
    let t0 = Instant::now();
    let cpu0 = cpu_seconds();
    let plan = crate::runner::plan(&cfg)?;
    let plan_s = t0.elapsed().as_secs_f64();
    let cpu1 = cpu_seconds();
    let t1 = Instant::now();
    let n = crate::runner::execute(&cfg, &plan, &mut Silent)?;
    let wall = t1.elapsed().as_secs_f64();
    let cpu2 = cpu_seconds();
    println!("cells:               {n}");
    println!("plan (states + handoffs): {:.1} ms", plan_s * 1e3);
    println!("cells per second:    {:.0}", n as f64 / wall);
    if let (Some(a), Some(b), Some(c)) = (cpu0, cpu1, cpu2) {
        println!(
            "CPU per cell:        {:.4} ms (plan: {:.0} ms CPU)",
            (c - b) * 1e3 / n.max(1) as f64,
            (b - a) * 1e3
        );
    }
    if let Some(m) = peak_rss_mib() {
        println!("peak RSS:            {m:.1} MiB");
    }
    println!(
        "results:             {}",
        out.join("results.jsonl").display()
    );
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
