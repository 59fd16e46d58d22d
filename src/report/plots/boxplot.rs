//! The token-distribution chart: one row per sample with a box plot (quartiles, median,
//! min–max whiskers, type-7 percentiles) over the individual values as dots.
//!
//! It draws the [`super::Distribution`]s it is given; it never reads records.

use super::Distribution;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::axis::*;
use super::draw::*;
use super::{Drawn, Figure};

pub(super) struct BoxFigure<'a> {
    pub(super) title: &'a str,
    pub(super) d: &'a [Distribution],
}

/// Percentile `q` (0..=1) of sorted, non-empty `v`, interpolating linearly (R type 7).
pub(super) fn quantile(v: &[f64], q: f64) -> f64 {
    let pos = q * (v.len() - 1) as f64;
    let (i, frac) = (pos.floor() as usize, pos.fract());
    match v.get(i + 1) {
        Some(next) => v[i] + (next - v[i]) * frac,
        None => v[i],
    }
}

/// At most this many dots per row are drawn (evenly spaced in sorted order).
pub(super) const MAX_DOTS: usize = 400;

impl Figure for BoxFigure<'_> {
    fn height(&self) -> u32 {
        height_for(self.d.len(), 46)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn<DB> {
        let n = self.d.len();
        let colour = PALETTE[0];
        let body = frame(root, self.title)?;
        let items = [
            LegendItem {
                key: Key::Box(colour),
                text: "25th – 75th percentile".to_owned(),
            },
            LegendItem {
                key: Key::Median,
                text: "median".to_owned(),
            },
            LegendItem {
                key: Key::Whisker(colour),
                text: "minimum – maximum".to_owned(),
            },
            LegendItem {
                key: Key::Dot(INK),
                text: "one value".to_owned(),
            },
        ];
        let (plot_area, legend) = split_legend(&body, "", &items)?;
        draw_legend(&legend, "", &items)?;

        let sorted: Vec<Vec<f64>> = self
            .d
            .iter()
            .map(|d| {
                let mut v = d.values.clone();
                v.sort_by(f64::total_cmp);
                v
            })
            .collect();
        let labels: Vec<String> = self
            .d
            .iter()
            .map(|d| format!("{} (n={})", d.label, d.values.len()))
            .collect();
        let x_axis = Axis::linear(sorted.iter().flatten().copied(), 0.0);
        let (mut chart, row_px) = row_chart(
            &plot_area,
            &labels,
            &x_axis,
            "total tokens per cell",
            "strategy",
        )?;

        let half = 0.28;
        let cap = (row_px * 0.2).clamp(2.0, 6.0) as i32;
        for (i, v) in sorted.iter().enumerate() {
            let y = row_y(n, i);
            if v.is_empty() {
                chart.draw_series(std::iter::once(
                    EmptyElement::at((x_axis.range.start, y))
                        + Text::new(
                            "no values",
                            (8, 0),
                            anchored(NOTE_PX, MUTED, HPos::Left, VPos::Center),
                        ),
                ))?;
                continue;
            }
            let (q1, med, q3) = (quantile(v, 0.25), quantile(v, 0.5), quantile(v, 0.75));
            let (lo, hi) = (v[0], v[v.len() - 1]);
            whisker(
                chart.plotting_area(),
                y,
                (lo, hi),
                cap,
                colour.stroke_width(2),
            )?;
            let rect = [(q1, y - half), (q3, y + half)];
            chart.draw_series(std::iter::once(Rectangle::new(rect, WHITE.filled())))?;
            chart.draw_series(std::iter::once(Rectangle::new(
                rect,
                colour.mix(0.35).filled(),
            )))?;
            chart.draw_series(std::iter::once(Rectangle::new(
                rect,
                colour.stroke_width(2),
            )))?;
            let stride = v.len().div_ceil(MAX_DOTS);
            chart.draw_series(v.iter().step_by(stride).enumerate().map(|(k, &x)| {
                // Deterministic vertical jitter (golden-ratio sequence) inside the box height.
                let jitter = ((k as f64 * 0.618_034).fract() - 0.5) * 1.6 * half;
                Circle::new((x, y + jitter), 3, INK.mix(0.45).filled())
            }))?;
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(med, y - half), (med, y + half)],
                INK.stroke_width(3),
            )))?;
            chart.draw_series(std::iter::once(
                EmptyElement::at((hi, y))
                    + Text::new(
                        format!("median {}", x_axis.value(med)),
                        (10, 0),
                        anchored(NOTE_PX, MUTED, HPos::Left, VPos::Center),
                    ),
            ))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_linearly() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 0.5), 2.5);
        assert_eq!(quantile(&v, 0.25), 1.75);
        assert_eq!(quantile(&v, 1.0), 4.0);
        assert_eq!(quantile(&[7.0], 0.75), 7.0);
    }
}
