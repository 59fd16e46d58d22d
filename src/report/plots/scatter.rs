//! The cost/quality scatter plot: one marker per point, direct labels where they fit, and a
//! legend.
//!
//! It draws the [`super::Point`]s it is given; it never aggregates records.

use super::Point;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::axis::*;
use super::draw::*;
use super::{Drawn, Figure};

pub(super) struct ScatterFigure<'a> {
    pub(super) title: &'a str,
    pub(super) points: &'a [Point],
}

impl Figure for ScatterFigure<'_> {
    fn height(&self) -> u32 {
        // The legend lists every point.
        height_for(self.points.len(), LEGEND_ROW as u32).saturating_sub(60)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn<DB> {
        let colour = |i: usize| PALETTE[i % PALETTE.len()];
        let shape = |i: usize| i / PALETTE.len();
        let body = frame(root, self.title)?;
        let items: Vec<LegendItem> = self
            .points
            .iter()
            .enumerate()
            .map(|(i, p)| LegendItem {
                key: Key::Marker(colour(i), shape(i)),
                text: p.label.clone(),
            })
            .collect();
        let (plot_area, legend) = split_legend(&body, "", &items)?;
        draw_legend(&legend, "", &items)?;

        let x_axis = Axis::linear(self.points.iter().map(|p| p.x), 0.06).pad_start(0.03);
        let y_axis = Axis::rate(self.points.iter().map(|p| p.y), 0.05).pad_start(0.03);
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(10)
            .x_label_area_size(56)
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
            .x_desc("median restore tokens")
            .y_desc("task success rate")
            .draw()?;

        for (i, p) in self.points.iter().enumerate() {
            draw_marker(chart.plotting_area(), (p.x, p.y), shape(i), colour(i))?;
        }

        // Direct labels where they do not collide with another label or marker; the legend
        // names every point either way.
        let (xr, yr) = chart.plotting_area().get_pixel_range();
        let centres: Vec<(i32, i32)> = self
            .points
            .iter()
            .map(|p| chart.backend_coord(&(p.x, p.y)))
            .collect();
        let mut taken: Vec<[i32; 4]> = centres
            .iter()
            .map(|&(x, y)| [x - 7, y - 7, x + 7, y + 7])
            .collect();
        let label_style = style(NOTE_PX, INK);
        for (i, p) in self.points.iter().enumerate() {
            let text = fit(root, &p.label, &label_style, 200)?;
            if text.trim().is_empty() {
                continue;
            }
            let (tw, th) = root.estimate_text_size(&text, &label_style)?;
            let (tw, th) = (tw as i32, th as i32);
            let (cx, cy) = centres[i];
            let candidates = [
                (10, -th / 2),
                (-10 - tw, -th / 2),
                (-tw / 2, -12 - th),
                (-tw / 2, 12),
                (10, -th - 4),
                (10, 4),
            ];
            let spot = candidates.into_iter().find_map(|(dx, dy)| {
                let r = [cx + dx, cy + dy, cx + dx + tw, cy + dy + th];
                let inside =
                    r[0] >= xr.start && r[2] <= xr.end && r[1] >= yr.start && r[3] <= yr.end;
                let free = taken.iter().enumerate().all(|(j, o)| {
                    // A label may touch its own marker box.
                    j == i || r[2] <= o[0] || r[0] >= o[2] || r[3] <= o[1] || r[1] >= o[3]
                });
                (inside && free).then_some((dx, dy, r))
            });
            if let Some((dx, dy, r)) = spot {
                taken.push(r);
                chart.draw_series(std::iter::once(
                    EmptyElement::at((p.x, p.y)) + Text::new(text, (dx, dy), label_style.clone()),
                ))?;
            }
        }
        Ok(())
    }
}
