//! The report's plots: which charts a report shows and the plain data each is drawn from,
//! taken from the scenario records and the [`Summary`] (the drawing is [`super::plots`]).
//!
//! Owns: [`render_plots`]. Must not: draw (the plots module does), write a file, or compute a
//! statistic (the summary and the analysis do).

use super::group::Group;
use super::summary::Summary;
use super::{curve, plots};
use crate::record::{RunRecord, Status};
use crate::results::outcome::is_unsafe;

/// The four plots of a report, from saved records and their summary.
pub fn render_plots(
    records: &[RunRecord],
    s: &Summary,
) -> Result<Vec<plots::Plot>, plots::PlotError> {
    let ci = |g: &Group| {
        s.analysis
            .intervals
            .iter()
            .find(|i| i.strategy == g.strategy && i.model == g.model && i.interrupt.is_none())
            .and_then(|i| i.safe_success_ci)
    };
    let bars: Vec<plots::Bar> = s
        .by_strategy_model
        .iter()
        .filter(|g| g.n > 0)
        .map(|g| {
            let (low, high) = ci(g).unwrap_or((g.safe_success.rate, g.safe_success.rate));
            plots::Bar {
                label: format!("{} · {}", g.strategy, g.model),
                colour: g.strategy.clone(),
                value: g.safe_success.rate,
                low,
                high,
            }
        })
        .collect();
    let points: Vec<plots::Point> = s
        .by_strategy_model
        .iter()
        .filter_map(|g| {
            Some(plots::Point {
                label: format!("{} · {}", g.strategy, g.model),
                colour: g.strategy.clone(),
                marker: g.model.clone(),
                x: g.restore_tokens?.median,
                y: g.safe_success.rate,
            })
        })
        .collect();
    let probe_points: Vec<plots::Point> = s
        .by_strategy_model
        .iter()
        .filter_map(|g| {
            let (asked, correct) = g
                .probes
                .values()
                .fold((0u64, 0u64), |(a, c), (x, y)| (a + x, c + y));
            (asked > 0).then_some(())?;
            Some(plots::Point {
                label: format!("{} · {}", g.strategy, g.model),
                colour: g.strategy.clone(),
                marker: g.model.clone(),
                x: g.restore_tokens?.median,
                y: correct as f64 / asked as f64,
            })
        })
        .collect();
    // Per strategy × interrupt point: the rate of unsafe cells with its k/n (cells with any
    // duplicate or violation, of the ok cells).
    let mut heat: Vec<plots::HeatCell> = Vec::new();
    for r in records.iter().filter(|r| r.status == Status::Ok) {
        let hit = usize::from(is_unsafe(r));
        let c = match heat
            .iter_mut()
            .position(|c| c.row == r.strategy && c.col == r.interrupt)
        {
            Some(i) => &mut heat[i],
            None => {
                heat.push(plots::HeatCell {
                    row: r.strategy.clone(),
                    col: r.interrupt.clone(),
                    value: 0.0,
                    count: Some((0, 0)),
                });
                heat.last_mut().expect("just pushed")
            }
        };
        let (k, n) = c.count.unwrap_or_default();
        c.count = Some((k + hit, n + 1));
        c.value = (k + hit) as f64 / (n + 1) as f64;
    }
    let mut dists: Vec<plots::Distribution> = Vec::new();
    for r in records.iter().filter(|r| r.status == Status::Ok) {
        match dists.iter_mut().find(|d| d.label == r.strategy) {
            Some(d) => d.values.push(r.metrics.total_tokens as f64),
            None => dists.push(plots::Distribution {
                label: r.strategy.clone(),
                values: vec![r.metrics.total_tokens as f64],
            }),
        }
    }
    let mut chain = Vec::new();
    if !s.chains.is_empty() {
        chain.push(plots::compaction_chain(
            "Compaction chains: safe success (solid, 95% clustered) and unsafe-cell rate (dashed) by compactions",
            &chain_series(&s.chains),
        )?);
    }
    let all = vec![
        plots::success_bars(
            "Safe success by strategy × destination (95% interval clustered by scenario)",
            &bars,
        )?,
        plots::cost_quality(
            "Restore tokens against safe success (median per strategy × destination)",
            &points,
        )?,
        plots::safety_heatmap(
            "Unsafe cells by strategy × interrupt point: rate and cells with any / ok cells",
            &heat,
        )?,
        plots::token_distributions("Total tokens to completion per strategy", &dists)?,
        plots::compaction_curve(
            "Compaction curve: safe success (solid, 95% clustered), unsafe-cell rate (dashed)",
            &curve_series(&s.curve, false),
        )?,
        plots::restore_curve(
            "Restore tokens against full-history tokens",
            &curve_series(&s.curve, true),
        )?,
        plots::probe_accuracy(
            "Probe accuracy (every dimension) against restore tokens (median per strategy × destination)",
            &probe_points,
        )?,
    ];
    Ok(all.into_iter().chain(chain).collect())
}

/// The chain rows as line series: per destination (panel) and strategy (colour), safe success
/// with its interval and the unsafe-cell rate (dashed) against the number of compactions.
fn chain_series(rows: &[super::chains::ChainRow]) -> Vec<plots::Series> {
    let mut out: Vec<plots::Series> = Vec::new();
    for r in rows {
        let x = f64::from(r.compactions);
        let (lo, hi) = r
            .safe_success_ci
            .unwrap_or((r.safe_success, r.safe_success));
        let u = r.unsafe_cells as f64 / r.n.max(1) as f64;
        push_point(
            &mut out,
            &r.model,
            &r.strategy,
            false,
            (x, r.safe_success, lo, hi),
        );
        push_point(&mut out, &r.model, &r.strategy, true, (x, u, u, u));
    }
    out
}

/// Appends a point to the series of `panel` × `line` × `dashed`, starting it when it is new.
fn push_point(
    out: &mut Vec<plots::Series>,
    panel: &str,
    line: &str,
    dashed: bool,
    pt: (f64, f64, f64, f64),
) {
    match out
        .iter_mut()
        .find(|s| s.panel == panel && s.line == line && s.dashed == dashed)
    {
        Some(s) => s.points.push(pt),
        None => out.push(plots::Series {
            panel: panel.to_string(),
            line: line.to_string(),
            dashed,
            points: vec![pt],
        }),
    }
}

/// The curve's points as line series: per destination (panel) and strategy (colour), safe
/// success with its interval and the unsafe-cell rate (dashed) — or, with `restore`, median
/// restore tokens.
fn curve_series(points: &[curve::CurvePoint], restore: bool) -> Vec<plots::Series> {
    let mut out: Vec<plots::Series> = Vec::new();
    for p in points {
        let x = p.history_tokens;
        let mut push = |dashed: bool, pt| push_point(&mut out, &p.model, &p.strategy, dashed, pt);
        if restore {
            push(
                false,
                (x, p.restore_tokens, p.restore_tokens, p.restore_tokens),
            );
        } else {
            let (lo, hi) = p
                .safe_success_ci
                .unwrap_or((p.safe_success, p.safe_success));
            push(false, (x, p.safe_success, lo, hi));
            let u = p.unsafe_cells as f64 / p.n.max(1) as f64;
            push(true, (x, u, u, u));
        }
    }
    out
}
