//! The τ-bench section of a report, over the `source: tau` records: per destination and
//! strategy, τ-bench's reward (the success rate) with a 95% interval from a bootstrap that
//! resamples whole tasks (every run, cut and repetition of a task stay together), safe success,
//! pass^k over repetitions, and the rediscovery cost paired with the full-history continuation
//! (`full`) of the same cut, destination and repetition: extra tool calls, extra customer turns
//! and extra tokens, as the mean difference from `full` with its task-clustered interval.
//!
//! Reads records only; [`attach`] adds the section to the report files the exports wrote.
//! Must not: compute a cell's measures (they are in the records) or touch the scenario ranking.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::record::{RunRecord, Source, Status, TauMeasures};
use crate::stats::{SplitMix64, pass_hat_k_mean};

/// The no-compaction baseline every strategy is paired with.
pub const BASELINE: &str = "full";
/// Bootstrap resamples of the intervals.
pub const RESAMPLES: usize = 1000;

/// A mean with its task-clustered 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
}

/// One destination × strategy over τ-bench cells.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TauRow {
    pub model: String,
    pub strategy: String,
    pub cells: usize,
    pub errored: usize,
    /// Distinct tasks among the scored cells (the clusters of the intervals).
    pub tasks: usize,
    pub reward: Estimate,
    pub safe_success: f64,
    /// pass^k with k the smallest repetition count of any (run, cut) of the row; `None` with
    /// one repetition.
    pub pass_k: Option<(usize, f64)>,
    /// Mean per cell, absolute.
    pub extra_tool_calls: f64,
    pub extra_user_turns: f64,
    pub extra_tokens: f64,
    /// Paired with `full` on the same cut, destination and repetition: the mean difference.
    pub d_tool_calls: Option<Estimate>,
    pub d_user_turns: Option<Estimate>,
    pub d_tokens: Option<Estimate>,
    /// Cells where some needed value could not be recovered.
    pub unrecovered_cells: usize,
}

fn tau_of(r: &RunRecord) -> Option<&TauMeasures> {
    r.transcript.as_ref().and_then(|t| t.tau.as_ref())
}

/// Mean and the percentile interval of the mean over `resamples` resamples of whole clusters.
fn clustered_mean(clusters: &BTreeMap<i64, Vec<f64>>, seed: u64) -> Option<Estimate> {
    let groups: Vec<&Vec<f64>> = clusters.values().filter(|v| !v.is_empty()).collect();
    let n: usize = groups.iter().map(|g| g.len()).sum();
    if n == 0 {
        return None;
    }
    let mean = groups.iter().flat_map(|g| g.iter()).sum::<f64>() / n as f64;
    let mut rng = SplitMix64::new(seed);
    let mut means = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        let (mut sum, mut count) = (0.0, 0usize);
        for _ in 0..groups.len() {
            let g = groups[rng.below(groups.len())];
            sum += g.iter().sum::<f64>();
            count += g.len();
        }
        means.push(sum / count as f64);
    }
    means.sort_by(f64::total_cmp);
    let at = |q: f64| means[((means.len() - 1) as f64 * q).round() as usize];
    Some(Estimate {
        mean,
        low: at(0.025),
        high: at(0.975),
    })
}

/// The rows, destinations in first-seen order, `full` first within each.
pub fn summarize(records: &[RunRecord], seed: u64) -> Vec<TauRow> {
    let tau: Vec<&RunRecord> = records.iter().filter(|r| r.source == Source::Tau).collect();
    let mut keys: Vec<(String, String)> = Vec::new();
    for r in &tau {
        let k = (r.model.clone(), r.strategy.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.sort_by_key(|(m, s)| {
        (
            keys_pos(&tau, m),
            s != BASELINE,
            tau.iter().position(|r| &r.strategy == s),
        )
    });
    let full_map: BTreeMap<(String, String, String, u32), &TauMeasures> = tau
        .iter()
        .filter(|r| r.strategy == BASELINE && r.status == Status::Ok)
        .filter_map(|r| {
            tau_of(r).map(|m| {
                (
                    (
                        r.scenario.clone(),
                        r.interrupt.clone(),
                        r.model.clone(),
                        r.rep,
                    ),
                    m,
                )
            })
        })
        .collect();
    let full = &full_map;
    keys.into_iter()
        .enumerate()
        .map(|(i, (model, strategy))| {
            let all: Vec<&&RunRecord> = tau
                .iter()
                .filter(|r| r.model == model && r.strategy == strategy)
                .collect();
            let ok: Vec<(&RunRecord, &TauMeasures)> = all
                .iter()
                .filter(|r| r.status == Status::Ok)
                .filter_map(|r| tau_of(r).map(|m| (**r, m)))
                .collect();
            let by_task = |f: &dyn Fn(&RunRecord, &TauMeasures) -> Option<f64>| {
                let mut c: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
                for (r, m) in &ok {
                    if let Some(x) = f(r, m) {
                        c.entry(m.task_id).or_default().push(x);
                    }
                }
                c
            };
            let stream = |k: u64| crate::stats::derive_seed(seed, (i as u64) * 8 + k);
            let paired = |g: fn(&TauMeasures) -> f64| {
                move |r: &RunRecord, m: &TauMeasures| {
                    full.get(&(
                        r.scenario.clone(),
                        r.interrupt.clone(),
                        r.model.clone(),
                        r.rep,
                    ))
                    .map(|f| g(m) - g(f))
                }
            };
            let mean = |g: fn(&TauMeasures) -> f64| {
                if ok.is_empty() {
                    0.0
                } else {
                    ok.iter().map(|(_, m)| g(m)).sum::<f64>() / ok.len() as f64
                }
            };
            let mut reps: BTreeMap<(&str, &str), (usize, usize)> = BTreeMap::new();
            for (r, m) in &ok {
                let e = reps.entry((&r.scenario, &r.interrupt)).or_default();
                e.1 += 1;
                if m.reward >= 1.0 {
                    e.0 += 1;
                }
            }
            let per: Vec<(usize, usize)> = reps.values().copied().collect();
            let k = per.iter().map(|(_, n)| *n).min().unwrap_or(0);
            let tasks = by_task(&|_, _| Some(0.0)).len();
            let calls: fn(&TauMeasures) -> f64 = |m| m.extra_tool_calls as f64;
            let turns: fn(&TauMeasures) -> f64 = |m| m.extra_user_turns as f64;
            let toks: fn(&TauMeasures) -> f64 = |m| m.extra_tokens as f64;
            TauRow {
                cells: all.len(),
                errored: all.len() - ok.len(),
                tasks,
                reward: clustered_mean(&by_task(&|_, m| Some(m.reward)), stream(0)).unwrap_or(
                    Estimate {
                        mean: f64::NAN,
                        low: f64::NAN,
                        high: f64::NAN,
                    },
                ),
                safe_success: mean(|m| f64::from(u8::from(m.safe_success))),
                pass_k: (k > 1)
                    .then(|| pass_hat_k_mean(&per, k).map(|p| (k, p)))
                    .flatten(),
                extra_tool_calls: mean(calls),
                extra_user_turns: mean(turns),
                extra_tokens: mean(toks),
                d_tool_calls: clustered_mean(&by_task(&paired(calls)), stream(1)),
                d_user_turns: clustered_mean(&by_task(&paired(turns)), stream(2)),
                d_tokens: clustered_mean(&by_task(&paired(toks)), stream(3)),
                unrecovered_cells: ok.iter().filter(|(_, m)| !m.unrecovered.is_empty()).count(),
                model,
                strategy,
            }
        })
        .collect()
}

fn keys_pos(tau: &[&RunRecord], model: &str) -> Option<usize> {
    tau.iter().position(|r| r.model == model)
}

fn est(e: &Estimate, digits: usize) -> String {
    if e.mean.is_nan() {
        return "-".into();
    }
    format!("{:.d$} [{:.d$}, {:.d$}]", e.mean, e.low, e.high, d = digits)
}

fn opt(e: &Option<Estimate>, digits: usize) -> String {
    e.as_ref()
        .map(|e| est(e, digits))
        .unwrap_or_else(|| "-".into())
}

const INTRO: &str = "Recorded τ-bench airline runs that succeeded, cut before the first write, before each later write and before the final answer; every strategy's handoff is built from the prefix and continued on the native airline environment, and scored by τ-bench's reward (the final database equals the ground truth's, and every required output was said). `full` is the whole prefix (the no-compaction baseline). `sim:follow` follows the rest of the recorded run: a value its handoff does not show is re-read with the call that produced it, or asked of the customer again, or, when neither is possible, left out. Reward: mean with a 95% interval resampling whole tasks. Safe success: reward 1 with no unsafe write. Extra calls, turns and tokens: the rediscovery cost per cell; Δ: the mean difference from `full` on the same cut, destination and repetition, with its task-clustered interval. README, \"The τ-bench airline environment\", defines each.";

/// The section in Markdown; `None` without τ-bench records.
pub fn markdown(rows: &[TauRow]) -> Option<String> {
    if rows.is_empty() {
        return None;
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n## τ-bench airline (real tasks, cut and continued)\n\n{INTRO}\n"
    );
    let _ = writeln!(
        s,
        "| destination | strategy | cells | tasks | reward [95% CI] | safe success | pass^k | extra calls | extra turns | extra tokens | Δ calls vs full | Δ turns vs full | Δ tokens vs full | cells with unrecovered values |"
    );
    let _ = writeln!(
        s,
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {}{} | {} | {} | {:.3} | {} | {:.2} | {:.2} | {:.0} | {} | {} | {} | {} |",
            r.model.replace('|', "\\|"),
            r.strategy.replace('|', "\\|"),
            r.cells,
            if r.errored > 0 {
                format!(" ({} errored)", r.errored)
            } else {
                String::new()
            },
            r.tasks,
            est(&r.reward, 3),
            r.safe_success,
            r.pass_k
                .map(|(k, p)| format!("pass^{k} {p:.3}"))
                .unwrap_or_else(|| "-".into()),
            r.extra_tool_calls,
            r.extra_user_turns,
            r.extra_tokens,
            opt(&r.d_tool_calls, 2),
            opt(&r.d_user_turns, 2),
            opt(&r.d_tokens, 0),
            r.unrecovered_cells
        );
    }
    Some(s)
}

/// The section in HTML (every model-chosen string escaped); `None` without τ-bench records.
pub fn html(rows: &[TauRow]) -> Option<String> {
    if rows.is_empty() {
        return None;
    }
    let e = crate::text::escape_markup;
    let mut s = String::new();
    let _ = write!(
        s,
        "<section id=\"tau-bench\"><h2>τ-bench airline (real tasks, cut and continued)</h2><p>{}</p><table><thead><tr><th>destination</th><th>strategy</th><th>cells</th><th>tasks</th><th>reward [95% CI]</th><th>safe success</th><th>pass^k</th><th>extra calls</th><th>extra turns</th><th>extra tokens</th><th>Δ calls vs full</th><th>Δ turns vs full</th><th>Δ tokens vs full</th><th>cells with unrecovered values</th></tr></thead><tbody>",
        e(INTRO)
    );
    for r in rows {
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{}</td><td>{:.2}</td><td>{:.2}</td><td>{:.0}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            e(&r.model),
            e(&r.strategy),
            r.cells,
            r.tasks,
            est(&r.reward, 3),
            r.safe_success,
            r.pass_k
                .map(|(k, p)| format!("pass^{k} {p:.3}"))
                .unwrap_or_else(|| "-".into()),
            r.extra_tool_calls,
            r.extra_user_turns,
            r.extra_tokens,
            opt(&r.d_tool_calls, 2),
            opt(&r.d_user_turns, 2),
            opt(&r.d_tokens, 0),
            r.unrecovered_cells
        );
    }
    s.push_str("</tbody></table></section>\n");
    Some(s)
}

/// Adds the τ-bench section to `report.md` (at its end) and `report.html` (before `</body>`),
/// and writes `tau.json` (the rows), when the run has τ-bench records.
pub fn attach(dir: &Path, records: &[RunRecord], seed: u64) -> std::io::Result<()> {
    let rows = summarize(records, seed);
    let (Some(md), Some(html)) = (markdown(&rows), html(&rows)) else {
        return Ok(());
    };
    let redact = |t: String| crate::secrets::redact_text(&t).into_owned();
    let md_path = dir.join("report.md");
    let mut text = std::fs::read_to_string(&md_path).unwrap_or_default();
    text.push_str(&redact(md));
    crate::durable::write(&md_path, text.as_bytes())?;
    let html_path = dir.join("report.html");
    if let Ok(mut page) = std::fs::read_to_string(&html_path) {
        let at = page.rfind("</body>").unwrap_or(page.len());
        page.insert_str(at, &redact(html));
        crate::durable::write(&html_path, page.as_bytes())?;
    }
    let json = serde_json::to_vec_pretty(&rows).unwrap_or_default();
    crate::durable::write(
        &dir.join("tau.json"),
        redact(String::from_utf8_lossy(&json).into_owned()).as_bytes(),
    )
}
