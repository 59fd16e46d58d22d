//! What ends a command, by its exit code: usage, configuration and file-system failures are told
//! apart (`src/exit.rs`), and a failure writes nothing half-done.

use std::path::PathBuf;
use std::process::Command;

use compaction_eval::exit;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_compaction-eval"))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ce-exit-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Runs `run` on one shipped scenario with `args`; returns (exit code, stderr).
fn run(args: &[&str]) -> (i32, String) {
    let o = bin()
        .args([
            "run",
            "--scenarios",
            "support-ticket-timeout",
            "--limit",
            "2",
        ])
        .args(args)
        .output()
        .expect("runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_model_table_that_cannot_work_is_a_configuration_failure() {
    let d = tmp("config");
    let cfg = d.join("live.toml");
    std::fs::write(
        &cfg,
        "[model.m]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"x\"\nrequest_timeout_s = 0\n",
    )
    .expect("write");
    let out = d.join("out");
    let (code, err) = run(&[
        "--config",
        cfg.to_str().expect("utf-8"),
        "--models",
        "m",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, exit::CONFIG, "{err}");
    assert!(err.contains("request_timeout_s"), "{err}");
    assert!(!out.join("results.jsonl").exists());
}

#[test]
fn a_config_file_that_is_not_toml_is_a_configuration_failure() {
    let d = tmp("toml");
    let cfg = d.join("live.toml");
    std::fs::write(&cfg, "[model.m\nbase_url = ").expect("write");
    let (code, err) = run(&["--config", cfg.to_str().expect("utf-8")]);
    assert_eq!(code, exit::CONFIG, "{err}");
    assert!(err.contains("live.toml"), "{err}");
}

#[test]
fn a_missing_config_file_and_an_unknown_scenario_are_usage_errors() {
    let d = tmp("usage");
    let missing = d.join("nowhere.toml");
    let (code, err) = run(&["--config", missing.to_str().expect("utf-8")]);
    assert_eq!(code, exit::USAGE, "{err}");
    let o = bin()
        .args(["run", "--scenarios", "no-such-scenario", "--out"])
        .arg(d.join("out"))
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(exit::USAGE));
}

#[test]
fn an_output_folder_that_cannot_be_created_is_a_file_system_failure() {
    let d = tmp("io");
    let file = d.join("a-file");
    std::fs::write(&file, "not a folder").expect("write");
    let out = file.join("out");
    let (code, err) = run(&["--out", out.to_str().expect("utf-8")]);
    assert_eq!(code, exit::IO, "{err}");
    assert!(err.contains("a-file"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&file).expect("read"),
        "not a folder"
    );
}

#[test]
fn a_run_folder_another_process_writes_is_busy_and_nothing_is_written() {
    let d = tmp("busy");
    let out = d.join("out");
    // This process holds the folder's lock, as a run in progress does.
    let held = compaction_eval::runner::lock(&out, "run").expect("lock");
    let (code, err) = run(&["--out", out.to_str().expect("utf-8")]);
    assert_eq!(code, exit::BUSY, "{err}");
    assert!(
        err.contains(&format!("pid {}", std::process::id())),
        "{err}"
    );
    assert!(!out.join("manifest.json").exists());
    let o = bin().arg("report").arg(&out).output().expect("report");
    assert_eq!(o.status.code(), Some(exit::BUSY));
    let o = bin().arg("gate").arg(&out).output().expect("gate");
    assert_eq!(o.status.code(), Some(exit::gate::BUSY));
    drop(held);
}

#[test]
fn request_fields_the_harness_owns_and_a_model_name_without_a_url_stop_the_run_early() {
    let d = tmp("request-fields");
    let cfg = d.join("live.toml");
    std::fs::write(
        &cfg,
        "[model.m]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"x\"\nextra_body = { stream = true }\n",
    )
    .expect("write");
    let out = d.join("out");
    let (code, err) = run(&[
        "--config",
        cfg.to_str().expect("utf-8"),
        "--models",
        "m",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, exit::CONFIG, "{err}");
    assert!(
        err.contains("[model.m]") && err.contains("`stream`"),
        "{err}"
    );
    assert!(!out.join("results.jsonl").exists());
    let (code, err) = run(&["--model-name", "m", "--out", out.to_str().expect("utf-8")]);
    assert_eq!(code, exit::USAGE, "{err}");
    assert!(err.contains("--model-name needs --base-url"), "{err}");
}

#[test]
fn run_help_documents_the_not_meaningful_code() {
    let o = bin().args(["run", "--help"]).output().expect("runs");
    let help = String::from_utf8_lossy(&o.stdout);
    assert_eq!(exit::run::NOT_MEANINGFUL, 13);
    assert!(
        help.contains(" 13 a live destination's ranking is not meaningful"),
        "{help}"
    );
}
