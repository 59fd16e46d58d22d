//! Line charts in stacked panels: the compaction curve (task success with its interval as a
//! vertical whisker, and the unsafe-cell rate dashed, against full-history tokens) and restore
//! tokens against full-history tokens. One panel per destination, one line per strategy.
//!
//! It draws the [`super::Series`] it is given; it never aggregates records.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::axis::Axis;
use super::draw::*;
use super::{Drawn, Figure, Series};

pub(super) struct LinesFigure<'a> {
    pub(super) title: &'a str,
    pub(super) series: &'a [Series],
    pub(super) y_desc: &'a str,
    /// The y values are rates in `[0, 1]`.
    pub(super) rate: bool,
}

const PANEL_PX: u32 = 330;

fn distinct<'a>(series: &'a [Series], key: impl Fn(&'a Series) -> &'a str) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for s in series {
        if !out.contains(&key(s)) {
            out.push(key(s));
        }
    }
    out
}

impl LinesFigure<'_> {
    fn legend(&self) -> Vec<LegendItem> {
        let mut items = vec![LegendItem {
            key: Key::Label,
            text: "strategy".to_owned(),
        }];
        items.extend(distinct(self.series, |s| &s.line).iter().map(|c| {
            let (colour, shape) = strategy_style(c);
            LegendItem {
                key: Key::Marker(colour, shape),
                text: (*c).to_owned(),
            }
        }));
        if self.series.iter().any(|s| s.dashed) {
            items.push(LegendItem {
                key: Key::Label,
                text: "solid: task success".to_owned(),
            });
            items.push(LegendItem {
                key: Key::Label,
                text: "dashed: unsafe cells".to_owned(),
            });
        }
        items
    }
}

impl Figure for LinesFigure<'_> {
    fn height(&self) -> u32 {
        let panels = distinct(self.series, |s| &s.panel).len().max(1) as u32;
        panels * PANEL_PX + 80
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn<DB> {
        let body = frame(root, self.title)?;
        let items = self.legend();
        let (plot_area, legend) = split_legend(&body, "", &items)?;
        draw_legend(&legend, "", &items)?;
        let panels = distinct(self.series, |s| &s.panel);
        let areas = plot_area.split_evenly((panels.len().max(1), 1));
        let x_axis = Axis::linear(
            self.series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.0)),
            0.06,
        )
        .pad_start(0.03);
        let ys = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().flat_map(|p| [p.1, p.3]));
        let y_axis = if self.rate {
            Axis::rate(ys, 0.05).pad_start(0.03)
        } else {
            Axis::linear(ys, 0.06).pad_start(0.03)
        };
        for (panel, area) in panels.iter().zip(areas.iter()) {
            let title = fit(area, panel, &style(DESC_PX, INK), 500)?;
            let area = area.titled(&title, style(DESC_PX, INK))?;
            let mut chart = ChartBuilder::on(&area)
                .margin(8)
                .x_label_area_size(48)
                .y_label_area_size(76)
                .build_cartesian_2d(x_axis.coord(), y_axis.coord())?;
            let x_fmt = |v: &f64| x_axis.label(*v);
            let y_fmt = |v: &f64| y_axis.label(*v);
            chart
                .configure_mesh()
                .bold_line_style(GRID)
                .axis_style(MUTED)
                .x_label_formatter(&x_fmt)
                .y_label_formatter(&y_fmt)
                .label_style(style(TICK_PX, INK))
                .axis_desc_style(style(DESC_PX, INK))
                .x_desc("full-history tokens (median per scale)")
                .y_desc(self.y_desc)
                .draw()?;
            for s in self.series.iter().filter(|s| s.panel == *panel) {
                let (colour, shape) = strategy_style(&s.line);
                let stroke = colour.stroke_width(2);
                let pts: Vec<(f64, f64)> = s.points.iter().map(|p| (p.0, p.1)).collect();
                if s.dashed {
                    for w in pts.windows(2) {
                        let (a, b) = (w[0], w[1]);
                        for k in 0..10 {
                            if k % 2 == 1 {
                                continue;
                            }
                            let t0 = k as f64 / 10.0;
                            let t1 = (k + 1) as f64 / 10.0;
                            let p0 = (a.0 + (b.0 - a.0) * t0, a.1 + (b.1 - a.1) * t0);
                            let p1 = (a.0 + (b.0 - a.0) * t1, a.1 + (b.1 - a.1) * t1);
                            chart
                                .plotting_area()
                                .draw(&PathElement::new(vec![p0, p1], stroke))?;
                        }
                    }
                } else {
                    chart
                        .plotting_area()
                        .draw(&PathElement::new(pts.clone(), stroke))?;
                }
                for p in &s.points {
                    if (p.3 - p.2).abs() > f64::EPSILON {
                        chart.plotting_area().draw(&PathElement::new(
                            vec![(p.0, p.2), (p.0, p.3)],
                            colour.stroke_width(1),
                        ))?;
                    }
                    draw_marker(chart.plotting_area(), (p.0, p.1), (0, 0), shape, colour)?;
                }
            }
        }
        Ok(())
    }
}
