//! The safety heat map: rows × columns of values (counts, or rates with their `k/n`), coloured
//! from white (0) to dark red (the largest value), grey `n/a` where a row/column pair has no
//! cell, with its colour scale.
//!
//! It draws the [`super::HeatCell`]s it is given (validated by the caller); it never counts
//! violations itself.

use std::collections::HashMap;

use super::HeatCell;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::axis::*;
use super::draw::*;
use super::{Drawn, Figure};

/// A cell's value and, for a rate, its `(k, n)`.
type Shown = (f64, Option<(usize, usize)>);

pub(super) struct HeatFigure<'a> {
    title: &'a str,
    rows: Vec<&'a str>,
    cols: Vec<&'a str>,
    values: HashMap<(usize, usize), Shown>,
    max: f64,
    /// Every cell is a rate with its count.
    rates: bool,
}

impl<'a> HeatFigure<'a> {
    pub(super) fn new(title: &'a str, cells: &'a [HeatCell]) -> Self {
        let mut rows: Vec<&str> = Vec::new();
        let mut cols: Vec<&str> = Vec::new();
        let mut values = HashMap::new();
        let mut max = 0.0f64;
        for c in cells {
            let r = rows.iter().position(|x| *x == c.row).unwrap_or_else(|| {
                rows.push(&c.row);
                rows.len() - 1
            });
            let k = cols.iter().position(|x| *x == c.col).unwrap_or_else(|| {
                cols.push(&c.col);
                cols.len() - 1
            });
            values.insert((r, k), (c.value, c.count));
            max = max.max(c.value);
        }
        HeatFigure {
            title,
            rows,
            cols,
            values,
            max,
            rates: !cells.is_empty() && cells.iter().all(|c| c.count.is_some()),
        }
    }

    /// White at 0 (or below), ColorBrewer "Reds" up to `max`.
    fn colour(&self, v: f64) -> RGBColor {
        if v <= 0.0 || self.max <= 0.0 {
            return WHITE;
        }
        let t = (v / self.max).clamp(0.0, 1.0);
        let (a, b) = ((254.0, 224.0, 210.0), (165.0, 15.0, 21.0));
        let mix = |x: f64, y: f64| (x + (y - x) * t).round() as u8;
        RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
    }
}

impl Figure for HeatFigure<'_> {
    fn height(&self) -> u32 {
        height_for(self.rows.len(), 46)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn<DB> {
        let (nr, nc) = (self.rows.len(), self.cols.len());
        let body = frame(root, self.title)?;
        let heading = if self.rates {
            "unsafe-cell rate (k/n)"
        } else {
            "violations + duplicates"
        };
        let (w, _) = body.dim_in_pixel();
        let panel_w = (text_width(&body, heading, &style(LEGEND_PX, INK))? + 24).clamp(150, 260);
        let (plot_area, legend) = body.split_horizontally((w - panel_w) as i32);
        self.draw_scale(&legend, heading)?;

        let (_, plot_h) = plot_area.dim_in_pixel();
        let row_px = f64::from(plot_h.saturating_sub(80)) / nr as f64;
        let tick = style(tick_px_for(row_px), INK);
        let rows: Vec<String> = self.rows.iter().map(|s| (*s).to_owned()).collect();
        let (label_w, row_labels) = row_label_area(&plot_area, &rows, &tick)?;

        // Column labels are wrapped to the column width (at most three lines), and the label
        // area below the map is sized for the tallest.
        let col_style = style(TICK_PX, INK);
        let (plot_w, _) = plot_area.dim_in_pixel();
        let col_est = f64::from(plot_w.saturating_sub(label_w + 20)) / nc as f64;
        let col_labels = self
            .cols
            .iter()
            .map(|c| wrap(root, c, &col_style, (col_est - 8.0).max(8.0) as u32, 3))
            .collect::<Result<Vec<_>, _>>()?;
        let lines = col_labels.iter().map(Vec::len).max().unwrap_or(1) as u32;
        let line_px = TICK_PX as u32 + 3;

        let x = Ticked::new(0.0..nc as f64, (0..nc).map(|i| i as f64 + 0.5).collect());
        let y = Ticked::new(0.0..nr as f64, (0..nr).map(|i| i as f64 + 0.5).collect());
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(10)
            .x_label_area_size(40 + lines * line_px)
            .y_label_area_size(label_w)
            .build_cartesian_2d(x, y)?;
        let (xr, yr) = chart.plotting_area().get_pixel_range();
        let col_px = (xr.end - xr.start) as f64 / nc as f64;
        let cell_px = (yr.end - yr.start) as f64 / nr as f64;
        let x_fmt = |_: &f64| String::new();
        let y_fmt = |v: &f64| {
            let i = v.floor();
            if i < 0.0 || i >= nr as f64 {
                return String::new();
            }
            row_labels
                .get(nr - 1 - i as usize)
                .cloned()
                .unwrap_or_default()
        };
        chart
            .configure_mesh()
            .disable_mesh()
            .axis_style(MUTED)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .y_label_style(tick.clone())
            .axis_desc_style(style(DESC_PX, INK))
            .x_desc("interrupt point")
            .y_desc("strategy")
            .draw()?;

        let label_style = anchored(TICK_PX, INK, HPos::Center, VPos::Top);
        for (c, lines) in col_labels.iter().enumerate() {
            let (cx, _) = chart.backend_coord(&(c as f64 + 0.5, 0.0));
            for (k, line) in lines.iter().enumerate() {
                root.draw_text(
                    line,
                    &label_style,
                    (cx, yr.end + 8 + k as i32 * line_px as i32),
                )?;
            }
        }

        let text_px = even_px(cell_px.min(col_px) * 0.42).clamp(8.0, 18.0);
        for r in 0..nr {
            let y0 = (nr - 1 - r) as f64;
            for c in 0..nc {
                let x0 = c as f64;
                let value = self.values.get(&(r, c)).copied();
                let fill = value.map_or(MISSING, |(v, _)| self.colour(v));
                let rect = [(x0, y0), (x0 + 1.0, y0 + 1.0)];
                chart.draw_series(std::iter::once(Rectangle::new(rect, fill.filled())))?;
                chart.draw_series(std::iter::once(Rectangle::new(rect, WHITE.stroke_width(2))))?;
                let (text, ink, count) = match value {
                    Some((v, count)) => {
                        let dark = self.max > 0.0 && v / self.max > 0.55;
                        let text = if count.is_some() {
                            format!("{v:.2}")
                        } else {
                            number(v)
                        };
                        (text, if dark { WHITE } else { INK }, count)
                    }
                    None => ("n/a".to_owned(), MUTED, None),
                };
                // A rate sits above the centre with its k/n below it.
                let dy = if count.is_some() { 0.22 } else { 0.0 };
                chart.draw_series(std::iter::once(Text::new(
                    text,
                    (x0 + 0.5, y0 + 0.5 + dy),
                    anchored(text_px, ink, HPos::Center, VPos::Center),
                )))?;
                if let Some((k, n)) = count {
                    chart.draw_series(std::iter::once(Text::new(
                        format!("{k}/{n}"),
                        (x0 + 0.5, y0 + 0.5 - dy),
                        anchored((text_px * 0.8).max(8.0), ink, HPos::Center, VPos::Center),
                    )))?;
                }
            }
        }
        Ok(())
    }
}

impl HeatFigure<'_> {
    /// The colour scale: a vertical gradient from the largest value (top) to 0, then the
    /// "n/a" swatch.
    fn draw_scale<DB: DrawingBackend>(
        &self,
        panel: &DrawingArea<DB, Shift>,
        heading: &str,
    ) -> Drawn<DB> {
        let st = anchored(LEGEND_PX, INK, HPos::Left, VPos::Center);
        let (w, _) = panel.dim_in_pixel();
        let heading = fit(panel, heading, &st, w.saturating_sub(16))?;
        panel.draw_text(&heading, &st, (8, 28))?;
        let (x0, x1, top, bottom) = (14, 36, 52, 232);
        let steps = 60;
        for s in 0..steps {
            let ya = top + (bottom - top) * s / steps;
            let yb = top + (bottom - top) * (s + 1) / steps;
            let v = self.max * f64::from(steps - s) / f64::from(steps);
            let c = if self.max > 0.0 {
                self.colour(v)
            } else {
                WHITE
            };
            panel.draw(&Rectangle::new([(x0, ya), (x1, yb)], c.filled()))?;
        }
        panel.draw(&Rectangle::new(
            [(x0, top), (x1, bottom)],
            MUTED.stroke_width(1),
        ))?;
        let ticks = if self.max > 0.0 {
            vec![
                (top, self.max),
                ((top + bottom) / 2, self.max / 2.0),
                (bottom, 0.0),
            ]
        } else {
            vec![(bottom, 0.0)]
        };
        for (y, v) in ticks {
            panel.draw(&PathElement::new(
                vec![(x1, y), (x1 + 5, y)],
                MUTED.stroke_width(1),
            ))?;
            let label = if self.rates {
                format!("{v:.2}")
            } else {
                number(v)
            };
            panel.draw_text(&label, &st, (x1 + 9, y))?;
        }
        let y = bottom + 34;
        panel.draw(&Rectangle::new(
            [(x0, y - 9), (x1, y + 9)],
            MISSING.filled(),
        ))?;
        panel.draw_text("n/a: no cell", &st, (x1 + 9, y))?;
        Ok(())
    }
}
