//! Report charts as SVG and PNG: the public chart functions, their input types, and rendering
//! (SVG string and in-memory PNG). Each figure lives in its own file ([`bars`], [`scatter`],
//! [`heat`], [`boxplot`]); axes in [`axis`], text, legends and markers in [`draw`].
//!
//! This module is domain-light: it receives plain data ([`Bar`], [`Point`], [`HeatCell`],
//! [`Distribution`]) and never reads run records. Each chart function returns a [`Plot`] holding
//! the same chart twice, as an SVG document and as encoded PNG bytes; [`write()`] stores both next
//! to each other.
//!
//! # Fonts
//!
//! Text is drawn with DejaVu Sans, shipped in `assets/DejaVuSans.ttf` (licence in
//! `assets/DejaVuSans.LICENSE`) and compiled into the binary; it is registered once with plotters
//! as the `sans-serif` family, and every piece of text here uses that family. No system fonts or
//! font libraries are needed at build or run time.
//!
//! # Labels are data
//!
//! Labels come from strategy plug-ins and scenario files. They are never interpreted: plotters'
//! SVG backend escapes text, control characters are replaced by spaces, and labels too wide for
//! their slot are shortened with `…`.
//!
//! # Empty input and errors
//!
//! No function here panics on its input. Empty input gives a chart that says "no data"; values
//! that are not finite numbers, or two heat-map cells for the same row and column, give a
//! [`PlotError`].

mod axis;
mod bars;
mod boxplot;
mod draw;
mod heat;
mod lines;
mod scatter;

use std::collections::HashSet;
use std::fmt::Display;
use std::io;
use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use bars::BarsFigure;
use boxplot::BoxFigure;
use draw::{GRID, MUTED, anchored, frame};
use heat::HeatFigure;
use lines::LinesFigure;
use scatter::ScatterFigure;

/// The look of strategy `id` in every plot: its colour as RGB and its marker shape (0 circle,
/// 1 triangle, 2 square, 3 diamond, 4 plus, 5 ×). Built-ins have a fixed look; any other id
/// gets one from a hash of the id that no built-in uses.
pub fn strategy_look(id: &str) -> ([u8; 3], usize) {
    let (c, shape) = draw::strategy_style(id);
    ([c.0, c.1, c.2], shape)
}

/// A rate with its interval, e.g. the task success of one strategy × model.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// Shown next to the bar, e.g. `"C · sim:careful"`.
    pub label: String,
    /// Colour key: the strategy. A strategy has one colour in every plot of every report
    /// (README, "Reading the report").
    pub colour: String,
    /// The rate; rates in `[0, 1]` are shown as percentages.
    pub value: f64,
    /// Lower end of the interval.
    pub low: f64,
    /// Upper end of the interval.
    pub high: f64,
}

/// One labelled point of a scatter plot.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Written next to the point where it does not collide with another label or marker.
    pub label: String,
    /// Colour and marker key: the strategy (one colour and shape in every plot).
    pub colour: String,
    /// Second key, e.g. the destination model: the first value's markers are hollow, the
    /// others' carry a centre dot; the label names it either way.
    pub marker: String,
    /// Horizontal position, e.g. median restore tokens.
    pub x: f64,
    /// Vertical position, e.g. the task success rate (shown in percent when in `[0, 1]`).
    pub y: f64,
}

/// One cell of a heat map. Rows and columns appear in the order of their first cell.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatCell {
    /// Row label, e.g. a strategy.
    pub row: String,
    /// Column label, e.g. an interrupt point.
    pub col: String,
    /// Written in the cell; the colour scale runs from 0 (white) to the largest value.
    pub value: f64,
    /// `(k, n)` when the value is a rate `k/n`: the cell then shows the rate to two decimals
    /// with `k/n` beneath, so every rate carries its denominator.
    pub count: Option<(usize, usize)>,
}

/// A sample of values drawn as one box plot row.
#[derive(Debug, Clone, PartialEq)]
pub struct Distribution {
    /// Row label; the number of values is appended as `(n=…)`.
    pub label: String,
    /// The sample, in any order; may be empty (the row then says "no values").
    pub values: Vec<f64>,
}

/// One line of a line chart in one panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The panel it is drawn in, e.g. the destination model (panels stack in first-seen order).
    pub panel: String,
    /// Colour and marker key: the strategy (one colour and shape in every plot).
    pub line: String,
    /// Drawn dashed (e.g. the unsafe-cell rate beside the solid success rate).
    pub dashed: bool,
    /// `(x, y, low, high)` in x order; `low`/`high` give a vertical whisker (equal: none).
    pub points: Vec<(f64, f64, f64, f64)>,
}

/// A rendered chart.
#[derive(Debug, Clone)]
pub struct Plot {
    /// File stem, e.g. `"task_success"`; [`write()`] adds `.svg` and `.png`.
    pub name: &'static str,
    /// A complete SVG document.
    pub svg: String,
    /// Encoded PNG bytes (8-bit RGB).
    pub png: Vec<u8>,
}

/// Why a chart could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// An input value is NaN or infinite.
    #[error("plot `{plot}`: {what} of `{label}` is not a finite number")]
    NonFinite {
        plot: &'static str,
        label: String,
        what: &'static str,
    },
    /// Two heat-map cells have the same row and column.
    #[error("plot `{plot}`: more than one cell for row `{row}`, column `{col}`")]
    DuplicateCell {
        plot: &'static str,
        row: String,
        col: String,
    },
    /// The bundled font could not be loaded.
    #[error("the bundled font assets/DejaVuSans.ttf could not be loaded")]
    Font,
    /// plotters failed while drawing.
    #[error("plot `{plot}`: drawing failed: {message}")]
    Render { plot: &'static str, message: String },
    /// The PNG could not be encoded.
    #[error("plot `{plot}`: PNG encoding failed: {source}")]
    Png {
        plot: &'static str,
        #[source]
        source: image::ImageError,
    },
}

/// Task success by strategy × model: one horizontal bar per entry (in the given order, first at
/// the top) with its interval as a whisker and the rate written after it. File stem
/// `task_success`.
pub fn success_bars(title: &str, bars: &[Bar]) -> Result<Plot, PlotError> {
    const NAME: &str = "task_success";
    for b in bars {
        check(NAME, &b.label, "value", b.value)?;
        check(NAME, &b.label, "low", b.low)?;
        check(NAME, &b.label, "high", b.high)?;
    }
    if bars.is_empty() {
        return render(NAME, &NoData { title });
    }
    render(NAME, &BarsFigure { title, bars })
}

/// Cost against quality: x = median restore tokens, y = task success, one hollow marker per
/// point, its colour from [`Point::colour`] and its shape from [`Point::marker`] (both keys in the
/// legend). File stem `cost_quality`.
pub fn cost_quality(title: &str, points: &[Point]) -> Result<Plot, PlotError> {
    scatter("cost_quality", title, points, "task success rate")
}

/// Probe accuracy against cost: x = median restore tokens, y = the share of probe questions
/// answered correctly over every dimension, one marker per strategy × destination as in
/// [`cost_quality`]. File stem `probe_accuracy`.
pub fn probe_accuracy(title: &str, points: &[Point]) -> Result<Plot, PlotError> {
    scatter("probe_accuracy", title, points, "probe accuracy")
}

/// A scatter of `points` against median restore tokens, checked first (every coordinate finite).
fn scatter(
    name: &'static str,
    title: &str,
    points: &[Point],
    y_desc: &'static str,
) -> Result<Plot, PlotError> {
    for p in points {
        check(name, &p.label, "x", p.x)?;
        check(name, &p.label, "y", p.y)?;
    }
    if points.is_empty() {
        return render(name, &NoData { title });
    }
    render(
        name,
        &ScatterFigure {
            title,
            points,
            y_desc,
        },
    )
}

/// Safety heat map: rows are strategies, columns interrupt points, the value (e.g. the rate of
/// unsafe cells, with its `k/n` when [`HeatCell::count`] is given) is written in each cell and
/// coloured from white (0) to dark red (the largest value). Row/column pairs without a cell are
/// grey and marked `n/a`. File stem `safety_heatmap`.
pub fn safety_heatmap(title: &str, cells: &[HeatCell]) -> Result<Plot, PlotError> {
    const NAME: &str = "safety_heatmap";
    let mut seen = HashSet::new();
    for c in cells {
        if !c.value.is_finite() {
            check(NAME, &format!("{} / {}", c.row, c.col), "value", c.value)?;
        }
        if !seen.insert((c.row.as_str(), c.col.as_str())) {
            return Err(PlotError::DuplicateCell {
                plot: NAME,
                row: c.row.clone(),
                col: c.col.clone(),
            });
        }
    }
    if cells.is_empty() {
        return render(NAME, &NoData { title });
    }
    render(NAME, &HeatFigure::new(title, cells))
}

/// Total tokens per strategy: one row per distribution with a box plot (box from the 25th to
/// the 75th percentile, median line, whiskers to the minimum and maximum) over the individual
/// values as dots. Percentiles interpolate linearly between order statistics (numpy's default,
/// R type 7). File stem `total_tokens`.
pub fn token_distributions(title: &str, d: &[Distribution]) -> Result<Plot, PlotError> {
    const NAME: &str = "total_tokens";
    for dist in d {
        for &v in &dist.values {
            check(NAME, &dist.label, "a value", v)?;
        }
    }
    if d.iter().all(|dist| dist.values.is_empty()) {
        return render(NAME, &NoData { title });
    }
    render(NAME, &BoxFigure { title, d })
}

/// The compaction curve: task success (solid, with Wilson whiskers) and the unsafe-cell rate
/// (dashed) against full-history tokens, one panel per destination, one colour per strategy.
/// File stem `compaction_curve`.
pub fn compaction_curve(title: &str, series: &[Series]) -> Result<Plot, PlotError> {
    lines_plot("compaction_curve", title, series, "rate", true)
}

/// Compaction chains: safe success (solid, with its interval) and the unsafe-cell rate (dashed)
/// against the number of compactions, one panel per destination, one colour per strategy.
/// File stem `compaction_chain`.
pub fn compaction_chain(title: &str, series: &[Series]) -> Result<Plot, PlotError> {
    lines_plot("compaction_chain", title, series, "rate", true)
}

/// Restore tokens against full-history tokens, one panel per destination, one colour per
/// strategy. File stem `restore_vs_history`.
pub fn restore_curve(title: &str, series: &[Series]) -> Result<Plot, PlotError> {
    lines_plot(
        "restore_vs_history",
        title,
        series,
        "median restore tokens",
        false,
    )
}

fn lines_plot(
    name: &'static str,
    title: &str,
    series: &[Series],
    y_desc: &str,
    rate: bool,
) -> Result<Plot, PlotError> {
    for s in series {
        for p in &s.points {
            check(name, &s.line, "x", p.0)?;
            check(name, &s.line, "y", p.1)?;
            check(name, &s.line, "low", p.2)?;
            check(name, &s.line, "high", p.3)?;
        }
    }
    if series.iter().all(|s| s.points.is_empty()) {
        return render(name, &NoData { title });
    }
    render(
        name,
        &LinesFigure {
            title,
            series,
            y_desc,
            rate,
        },
    )
}

/// Writes `dir/NAME.svg` and `dir/NAME.png`, creating `dir` if needed.
pub fn write(dir: &Path, plot: &Plot) -> io::Result<()> {
    let name = plot.name;
    if name.is_empty()
        || name.starts_with('.')
        || name.contains(['/', '\\'])
        || name.chars().any(char::is_control)
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("plot name {name:?} is not a plain file stem"),
        ));
    }
    std::fs::create_dir_all(dir)?;
    crate::durable::write(&dir.join(format!("{name}.svg")), plot.svg.as_bytes())?;
    crate::durable::write(&dir.join(format!("{name}.png")), &plot.png)?;
    Ok(())
}

/// Access to the RGB buffer a PNG is encoded from, for tests.
#[doc(hidden)]
pub mod hooks {
    use std::cell::RefCell;

    /// An 8-bit RGB pixel buffer, row by row.
    #[derive(Debug, Clone)]
    pub struct Raster {
        pub width: u32,
        pub height: u32,
        pub rgb: Vec<u8>,
    }

    impl Raster {
        /// Number of pixels whose colour differs from `rgb`.
        pub fn pixels_unlike(&self, rgb: [u8; 3]) -> usize {
            self.rgb.chunks_exact(3).filter(|p| *p != rgb).count()
        }
    }

    thread_local! {
        static CAPTURED: RefCell<Option<Vec<Raster>>> = const { RefCell::new(None) };
    }

    /// Runs `f` and returns, besides its result, the raster of every plot rendered by `f` on
    /// this thread.
    pub fn capture<T>(f: impl FnOnce() -> T) -> (T, Vec<Raster>) {
        let previous = CAPTURED.with(|c| c.replace(Some(Vec::new())));
        let out = f();
        let rasters = CAPTURED.with(|c| c.replace(previous)).unwrap_or_default();
        (out, rasters)
    }

    pub(super) fn offer(width: u32, height: u32, rgb: &[u8]) {
        CAPTURED.with(|c| {
            if let Some(list) = c.borrow_mut().as_mut() {
                list.push(Raster {
                    width,
                    height,
                    rgb: rgb.to_vec(),
                });
            }
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Rendering

const FAMILY: &str = "sans-serif";
const FONT: &[u8] = include_bytes!("../../../assets/DejaVuSans.ttf");

const WIDTH: u32 = 900;
const MIN_HEIGHT: u32 = 560;
const MAX_HEIGHT: u32 = 2400;

type Drawn<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;
type AreaResult<T, DB> = Result<T, DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// A chart that can be drawn on any backend.
trait Figure {
    fn height(&self) -> u32;
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn<DB>;
}

fn check(plot: &'static str, label: &str, what: &'static str, v: f64) -> Result<(), PlotError> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(PlotError::NonFinite {
            plot,
            label: label.to_owned(),
            what,
        })
    }
}

fn ensure_font() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED
        .get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    if ok { Ok(()) } else { Err(PlotError::Font) }
}

fn render<F: Figure>(name: &'static str, figure: &F) -> Result<Plot, PlotError> {
    ensure_font()?;
    let size = (WIDTH, figure.height().clamp(MIN_HEIGHT, MAX_HEIGHT));
    let failed = |e: &dyn Display| PlotError::Render {
        plot: name,
        message: e.to_string(),
    };

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        figure.draw(&root).map_err(|e| failed(&e))?;
        root.present().map_err(|e| failed(&e))?;
    }

    let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
        figure.draw(&root).map_err(|e| failed(&e))?;
        root.present().map_err(|e| failed(&e))?;
    }
    hooks::offer(size.0, size.1, &rgb);

    let png = encode_png(&rgb, size).map_err(|source| PlotError::Png { plot: name, source })?;
    Ok(Plot { name, svg, png })
}

/// The finished RGB buffer as PNG bytes, encoded in memory (the `image` crate's PNG encoder,
/// the one plotters' bitmap backend uses for files).
fn encode_png(rgb: &[u8], (w, h): (u32, u32)) -> Result<Vec<u8>, image::ImageError> {
    use image::ImageEncoder as _;
    let mut png = Vec::new();
    image::codecs::png::PngEncoder::new(&mut png).write_image(rgb, w, h, image::ColorType::Rgb8)?;
    Ok(png)
}

struct NoData<'a> {
    title: &'a str,
}

impl Figure for NoData<'_> {
    fn height(&self) -> u32 {
        MIN_HEIGHT
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn<DB> {
        let body = frame(root, self.title)?;
        let (w, h) = body.dim_in_pixel();
        let (w, h) = (w as i32, h as i32);
        body.draw(&Rectangle::new(
            [(0, 0), (w - 1, h - 1)],
            GRID.stroke_width(2),
        ))?;
        body.draw_text(
            "no data",
            &anchored(28.0, MUTED, HPos::Center, VPos::Center),
            (w / 2, h / 2),
        )?;
        Ok(())
    }
}
