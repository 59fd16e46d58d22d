//! The cost/quality scatter plot: one marker per point — colour and shape by the strategy (its
//! fixed style, [`strategy_style`]), a centre dot for every destination but the first — a
//! legend with both keys, direct labels where they fit, and markers on the same spot nudged
//! apart so each stays visible.
//!
//! It draws the [`super::Point`]s it is given; it never aggregates records.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::axis::Axis;
use super::draw::*;
use super::{Drawn, Figure, Point};

pub(super) struct ScatterFigure<'a> {
    pub(super) title: &'a str,
    pub(super) points: &'a [Point],
    /// The y axis's description.
    pub(super) y_desc: &'a str,
}

/// Distinct values of `key` over `points`, in first-seen order.
fn keys<'a>(points: &'a [Point], key: impl Fn(&'a Point) -> &'a str) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for p in points {
        if !out.contains(&key(p)) {
            out.push(key(p));
        }
    }
    out
}

/// Pixels within which two markers count as on the same spot.
const NEAR_PX: i32 = 5;

impl ScatterFigure<'_> {
    fn legend(&self) -> Vec<LegendItem> {
        let colours = keys(self.points, |p| &p.colour);
        let markers = keys(self.points, |p| &p.marker);
        let mut items = vec![LegendItem {
            key: Key::Label,
            text: "strategy".to_owned(),
        }];
        items.extend(colours.iter().map(|c| {
            let (colour, shape) = strategy_style(c);
            LegendItem {
                key: Key::Marker(colour, shape),
                text: (*c).to_owned(),
            }
        }));
        if markers.len() > 1 {
            items.push(LegendItem {
                key: Key::Label,
                text: "destination".to_owned(),
            });
            items.extend(markers.iter().enumerate().map(|(i, m)| LegendItem {
                key: if i == 0 {
                    Key::Marker(INK, 0)
                } else {
                    Key::DottedMarker(INK, 0)
                },
                text: format!("{} {m}", if i == 0 { "hollow:" } else { "dot:" }),
            }));
        }
        items
    }
}

impl Figure for ScatterFigure<'_> {
    fn height(&self) -> u32 {
        height_for(self.legend().len(), LEGEND_ROW as u32).saturating_sub(60)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn<DB> {
        let markers = keys(self.points, |p| &p.marker);
        let dotted = |p: &Point| markers.iter().position(|m| *m == p.marker).unwrap_or(0) > 0;
        let body = frame(root, self.title)?;
        let items = self.legend();
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
            .y_desc(self.y_desc)
            .draw()?;

        // A marker on the same spot as earlier ones is nudged right by one marker width per
        // earlier marker there (deterministic; the position in data units is unchanged).
        let mut drawn: Vec<(i32, i32)> = Vec::new();
        let mut nudges: Vec<i32> = Vec::new();
        for p in self.points {
            let (px, py) = chart.backend_coord(&(p.x, p.y));
            let near = drawn
                .iter()
                .filter(|(x, y)| (x - px).abs() <= NEAR_PX && (y - py).abs() <= NEAR_PX)
                .count() as i32;
            drawn.push((px, py));
            nudges.push(near * 11);
            let (colour, shape) = strategy_style(&p.colour);
            draw_marker(
                chart.plotting_area(),
                (p.x, p.y),
                (near * 11, 0),
                shape,
                colour,
            )?;
            if dotted(p) {
                chart.plotting_area().draw(
                    &(EmptyElement::at((p.x, p.y))
                        + Circle::new((near * 11, 0), 2, colour.filled())),
                )?;
            }
        }

        // Direct labels where they do not collide with another label or marker; the legend
        // names every point either way.
        let (xr, yr) = chart.plotting_area().get_pixel_range();
        let centres = drawn;
        let mut taken: Vec<[i32; 4]> = centres
            .iter()
            .zip(&nudges)
            .map(|(&(x, y), n)| [x - 9, y - 9, x + 9 + n, y + 9])
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
                (10 + nudges[i], -th / 2),
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
