//! Axes of the charts: a linear axis with exactly chosen ticks ([`Ticked`]), value axes for
//! rates and counts ([`Axis`]) with round tick steps and short labels, and the row layout shared
//! by the bar and box-plot charts (one labelled row per entry over a numeric x axis).
//!
//! It decides ranges, ticks and labels only: it never draws marks for data and never sees run
//! records.

use std::ops::Range;

use plotters::coord::Shift;
use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::AreaResult;
use super::draw::{DESC_PX, GRID, INK, MUTED, TICK_PX, fit, style, text_width, tick_px_for};

/// A linear `f64` axis with exactly the given tick positions (and no light grid lines). Tick
/// labels always come from an explicit formatter.
pub(super) struct Ticked {
    inner: RangedCoordf64,
    pub(super) ticks: Vec<f64>,
}

impl Ticked {
    pub(super) fn new(range: Range<f64>, ticks: Vec<f64>) -> Self {
        Ticked {
            inner: range.into(),
            ticks,
        }
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.inner.range()
    }
}

/// A value axis: range, tick positions and tick labels.
pub(super) struct Axis {
    pub(super) range: Range<f64>,
    pub(super) ticks: Vec<f64>,
    pub(super) percent: bool,
    pub(super) unit: f64,
    pub(super) suffix: &'static str,
    pub(super) decimals: usize,
}

impl Axis {
    /// An axis for rates: `[0, 1]` in percent unless some value falls outside it.
    pub(super) fn rate(values: impl IntoIterator<Item = f64>, room_right: f64) -> Self {
        let (lo, hi) = bounds(values);
        if lo >= 0.0 && hi <= 1.0 {
            let ticks = (0..=10).map(|i| f64::from(i) / 10.0).collect();
            Axis {
                range: 0.0..1.0 + room_right,
                ticks,
                percent: true,
                unit: 1.0,
                suffix: "",
                decimals: 0,
            }
        } else {
            Self::linear([lo, hi, 0.0, 1.0], room_right)
        }
    }

    /// A linear axis that includes 0 and every value, `room_right` (a fraction of the span)
    /// added at the top end.
    pub(super) fn linear(values: impl IntoIterator<Item = f64>, room_right: f64) -> Self {
        let (lo, hi) = bounds(values.into_iter().chain([0.0]));
        let span = if hi > lo { hi - lo } else { 1.0 };
        let end = hi.max(lo + span) + span * (0.04 + room_right);
        let step = nice_step(end - lo, 6);
        let mut ticks = Vec::new();
        if step.is_finite() && step > 0.0 {
            let first = (lo / step).ceil();
            for i in 0..64 {
                let t = (first + f64::from(i)) * step;
                if t > end {
                    break;
                }
                ticks.push(t);
            }
        }
        if ticks.is_empty() {
            ticks = vec![lo, end];
        }
        let top = ticks.iter().fold(0.0f64, |m, t| m.max(t.abs()));
        let (unit, suffix) = if top >= 1e6 {
            (1e6, "M")
        } else if top >= 1e4 {
            (1e3, "k")
        } else {
            (1.0, "")
        };
        let decimals = (0..=4)
            .find(|&d| {
                let scaled = step / unit * 10f64.powi(d as i32);
                (scaled - scaled.round()).abs() < 1e-6
            })
            .unwrap_or(4);
        Axis {
            range: lo..end,
            ticks,
            percent: false,
            unit,
            suffix,
            decimals,
        }
    }

    /// Extends the range below its start by `frac` of its span (ticks unchanged), so that
    /// markers at the start do not sit on the axis line.
    pub(super) fn pad_start(mut self, frac: f64) -> Self {
        let span = self.range.end - self.range.start;
        self.range.start -= span * frac;
        self
    }

    pub(super) fn coord(&self) -> Ticked {
        Ticked::new(self.range.clone(), self.ticks.clone())
    }

    pub(super) fn label(&self, v: f64) -> String {
        if v == 0.0 {
            "0".to_owned()
        } else if self.percent {
            format!("{:.0}%", v * 100.0)
        } else {
            format!("{:.*}{}", self.decimals, v / self.unit, self.suffix)
        }
    }

    /// A data value written out (more precise than a tick label).
    pub(super) fn value(&self, v: f64) -> String {
        if self.percent {
            format!("{:.0}%", v * 100.0)
        } else {
            number(v)
        }
    }
}

pub(super) fn bounds(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    values
        .into_iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        })
}

pub(super) fn nice_step(span: f64, target: u32) -> f64 {
    let raw = span / f64::from(target);
    if !raw.is_finite() || raw <= 0.0 {
        return 1.0;
    }
    let magnitude = 10f64.powf(raw.log10().floor());
    let norm = raw / magnitude;
    // 1, 2 or 5 times a power of ten, whichever is nearest (geometrically) to the raw step.
    let nice = if norm < 1.5 {
        1.0
    } else if norm < 3.2 {
        2.0
    } else if norm < 7.0 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

/// A count or measurement written out: integers without decimals, large values abbreviated.
pub(super) fn number(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Rows 0..n top to bottom, row `i` centred at `n - 1 - i`.
pub(super) fn row_axis(n: usize) -> Ticked {
    let top = n as f64 - 0.5;
    Ticked::new(-0.5..top, (0..n).map(|i| i as f64).collect())
}

pub(super) fn row_index(n: usize, y: f64) -> Option<usize> {
    let r = y.round();
    if r < 0.0 || r >= n as f64 {
        return None;
    }
    Some(n - 1 - r as usize)
}

pub(super) fn row_y(n: usize, i: usize) -> f64 {
    (n - 1 - i) as f64
}

/// A chart whose rows are labels and whose x axis is numeric.
pub(super) type RowChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<Ticked, Ticked>>;

/// A chart with one row per label (top to bottom) over a numeric x axis, its labels fitted into
/// the left margin and its mesh drawn; returns the chart and the height of one row in pixels.
pub(super) fn row_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    labels: &[String],
    x_axis: &Axis,
    x_desc: &str,
    y_desc: &str,
) -> AreaResult<(RowChart<'a, DB>, f64), DB> {
    let n = labels.len();
    let (_, plot_h) = area.dim_in_pixel();
    let row_px = f64::from(plot_h.saturating_sub(80)) / n as f64;
    let tick = style(tick_px_for(row_px), INK);
    let (label_w, fitted) = row_label_area(area, labels, &tick)?;
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .x_label_area_size(56)
        .y_label_area_size(label_w)
        .build_cartesian_2d(x_axis.coord(), row_axis(n))?;
    let x_fmt = |v: &f64| x_axis.label(*v);
    let y_fmt = |v: &f64| {
        row_index(n, *v)
            .and_then(|i| fitted.get(i).cloned())
            .unwrap_or_default()
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .bold_line_style(GRID)
        .axis_style(MUTED)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .y_labels(n)
        .x_label_style(style(TICK_PX, INK))
        .y_label_style(tick)
        .axis_desc_style(style(DESC_PX, INK))
        .x_desc(x_desc)
        .y_desc(y_desc)
        .draw()?;
    Ok((chart, row_px))
}

/// Width of the left label area for `labels`, plus room for the rotated axis description.
pub(super) fn row_label_area<DB: DrawingBackend>(
    body: &DrawingArea<DB, Shift>,
    labels: &[String],
    st: &TextStyle,
) -> AreaResult<(u32, Vec<String>), DB> {
    let (w, _) = body.dim_in_pixel();
    let max_label = (w * 2 / 5).max(80);
    let mut fitted = Vec::with_capacity(labels.len());
    let mut widest = 0;
    for l in labels {
        let f = fit(body, l, st, max_label)?;
        widest = widest.max(text_width(body, &f, st)?);
        fitted.push(f);
    }
    Ok((widest + 44, fitted))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_axis_ticks_are_round() {
        let a = Axis::linear([0.0, 12_345.0], 0.0);
        assert_eq!(a.ticks.first(), Some(&0.0));
        assert!(
            a.ticks.iter().all(|t| (t / 2000.0).fract() == 0.0),
            "{:?}",
            a.ticks
        );
        assert_eq!(a.label(4000.0), "4k");
        let flat = Axis::linear([5.0, 5.0], 0.0);
        assert!(flat.range.end > flat.range.start);
    }

    #[test]
    fn rows_map_top_to_bottom() {
        assert_eq!(row_y(3, 0), 2.0);
        assert_eq!(row_index(3, 2.0), Some(0));
        assert_eq!(row_index(3, -1.0), None);
        assert_eq!(row_index(3, 3.0), None);
    }
}
