//! The task-success bar chart: one horizontal bar per entry with its interval as a whisker,
//! coloured by its strategy's fixed colour ([`strategy_style`]).
//!
//! It draws the [`super::Bar`]s it is given, in order; it never computes a rate or an interval.

use super::Bar;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::axis::*;
use super::draw::*;
use super::{Drawn, Figure};

pub(super) struct BarsFigure<'a> {
    pub(super) title: &'a str,
    pub(super) bars: &'a [Bar],
}

impl BarsFigure<'_> {
    /// The distinct colour keys (strategies), in first-seen order.
    fn groups(&self) -> Vec<String> {
        let mut groups: Vec<String> = Vec::new();
        for b in self.bars {
            if !groups.contains(&b.colour) {
                groups.push(b.colour.clone());
            }
        }
        groups
    }

    fn row_px(&self) -> u32 {
        30
    }
}

impl Figure for BarsFigure<'_> {
    fn height(&self) -> u32 {
        height_for(self.bars.len(), self.row_px())
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn<DB> {
        let n = self.bars.len();
        let color_of = |b: &Bar| strategy_style(&b.colour).0;
        let body = frame(root, self.title)?;
        let mut items: Vec<LegendItem> = self
            .groups()
            .into_iter()
            .map(|g| LegendItem {
                key: Key::Swatch(strategy_style(&g).0),
                text: g,
            })
            .collect();
        items.push(LegendItem {
            key: Key::Whisker(INK),
            text: "interval (low – high)".to_owned(),
        });
        let (plot_area, legend) = split_legend(&body, "", &items)?;
        draw_legend(&legend, "", &items)?;

        let labels: Vec<String> = self.bars.iter().map(|b| b.label.clone()).collect();
        let x_axis = Axis::rate(
            self.bars.iter().flat_map(|b| [b.value, b.low, b.high]),
            0.12,
        );
        let (mut chart, row_px) = row_chart(
            &plot_area,
            &labels,
            &x_axis,
            "task success rate",
            "strategy · model",
        )?;

        let half = 0.34;
        let cap = (row_px * 0.25).clamp(2.0, 7.0) as i32;
        for (i, b) in self.bars.iter().enumerate() {
            let y = row_y(n, i);
            let c = color_of(b);
            let base = x_axis.range.start.max(0.0).min(b.value);
            chart.draw_series(std::iter::once(Rectangle::new(
                [(base, y - half), (b.value, y + half)],
                c.mix(0.85).filled(),
            )))?;
            let (lo, hi) = (b.low.min(b.high), b.low.max(b.high));
            whisker(chart.plotting_area(), y, (lo, hi), cap, INK.stroke_width(2))?;
            let end = hi.max(b.value);
            chart.draw_series(std::iter::once(
                EmptyElement::at((end, y))
                    + Text::new(
                        x_axis.value(b.value),
                        (8, 0),
                        anchored(tick_px_for(row_px), INK, HPos::Left, VPos::Center),
                    ),
            ))?;
        }
        Ok(())
    }
}
