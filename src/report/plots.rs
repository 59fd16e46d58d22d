//! Report charts as SVG and PNG.
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

use std::collections::{HashMap, HashSet};
use std::fmt::Display;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use plotters::coord::Shift;
use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// A rate with its interval, e.g. the task success of one strategy × model.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// Shown next to the bar, e.g. `"C · sim:careful"`. Bars whose labels share the text after
    /// the last `" · "` share a colour (and a legend entry).
    pub label: String,
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
    /// Written next to the point (where it does not collide) and in the legend.
    pub label: String,
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
}

/// A sample of values drawn as one box plot row.
#[derive(Debug, Clone, PartialEq)]
pub struct Distribution {
    /// Row label; the number of values is appended as `(n=…)`.
    pub label: String,
    /// The sample, in any order; may be empty (the row then says "no values").
    pub values: Vec<f64>,
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
    #[error("plot `{plot}`: PNG encoding failed: {message}")]
    Png { plot: &'static str, message: String },
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

/// Cost against quality: x = median restore tokens, y = task success, one labelled point per
/// strategy × model (colour and marker listed in the legend). File stem `cost_quality`.
pub fn cost_quality(title: &str, points: &[Point]) -> Result<Plot, PlotError> {
    const NAME: &str = "cost_quality";
    for p in points {
        check(NAME, &p.label, "x", p.x)?;
        check(NAME, &p.label, "y", p.y)?;
    }
    if points.is_empty() {
        return render(NAME, &NoData { title });
    }
    render(NAME, &ScatterFigure { title, points })
}

/// Safety heat map: rows are strategies, columns interrupt points, the value (violations +
/// duplicate side effects) is written in each cell and coloured from white (0) to dark red (the
/// largest value). Row/column pairs without a cell are grey and marked `n/a`. File stem
/// `safety_heatmap`.
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
    std::fs::write(dir.join(format!("{name}.svg")), &plot.svg)?;
    std::fs::write(dir.join(format!("{name}.png")), &plot.png)?;
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
const FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

const WIDTH: u32 = 900;
const MIN_HEIGHT: u32 = 560;
const MAX_HEIGHT: u32 = 2400;

const TITLE_PX: f64 = 24.0;
const DESC_PX: f64 = 16.0;
const TICK_PX: f64 = 14.0;
const LEGEND_PX: f64 = 14.0;
const NOTE_PX: f64 = 14.0;

const INK: RGBColor = RGBColor(30, 30, 30);
const MUTED: RGBColor = RGBColor(100, 100, 100);
const GRID: RGBColor = RGBColor(225, 225, 225);
const MISSING: RGBColor = RGBColor(215, 215, 215);

/// Okabe–Ito colours (without yellow, too light on white) plus two more.
const PALETTE: [RGBColor; 9] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(117, 112, 179),
    RGBColor(0, 0, 0),
    RGBColor(140, 140, 140),
];

/// Marker shapes cycled after the palette runs out.
const SHAPES: usize = 4;

type Drawn<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;
type AreaResult<T, DB> = Result<T, DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;
/// (plot area, legend panel)
type Split<DB> = (DrawingArea<DB, Shift>, DrawingArea<DB, Shift>);

/// A linear `f64` axis with exactly the given tick positions (and no light grid lines). Tick
/// labels always come from an explicit formatter.
struct Ticked {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ticked {
    fn new(range: Range<f64>, ticks: Vec<f64>) -> Self {
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

    let png = encode_png(&rgb, size).map_err(|message| PlotError::Png {
        plot: name,
        message,
    })?;
    Ok(Plot { name, svg, png })
}

/// plotters only encodes PNG through `BitMapBackend::new(path)`: the finished RGB buffer is
/// copied into such a backend pointing into a fresh private directory, saved, and read back.
fn encode_png(rgb: &[u8], size: (u32, u32)) -> Result<Vec<u8>, String> {
    let scratch = ScratchDir::new().map_err(|e| format!("scratch directory: {e}"))?;
    let path = scratch.0.join("plot.png");
    {
        let mut backend = BitMapBackend::new(&path, size);
        backend
            .blit_bitmap((0, 0), size, rgb)
            .map_err(|e| e.to_string())?;
        backend.present().map_err(|e| e.to_string())?;
    }
    std::fs::read(&path).map_err(|e| format!("reading {}: {e}", path.display()))
}

/// A directory only this process uses, removed on drop.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> io::Result<Self> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        for _ in 0..16 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = std::env::temp_dir().join(format!(
                "compaction-eval-plot-{}-{nanos}-{n}",
                std::process::id()
            ));
            let mut builder = std::fs::DirBuilder::new();
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                builder.mode(0o700);
            }
            match builder.create(&path) {
                Ok(()) => return Ok(Self(path)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "no unused scratch directory name found",
        ))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---------------------------------------------------------------------------------------------
// Shared drawing helpers

fn style(px: f64, color: RGBColor) -> TextStyle<'static> {
    (FAMILY, px).into_font().color(&color)
}

fn anchored(px: f64, color: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    style(px, color).pos(Pos::new(h, v))
}

/// Height for `rows` rows of `row_px` pixels plus the fixed parts of a chart.
fn height_for(rows: usize, row_px: u32) -> u32 {
    let rows = u32::try_from(rows).unwrap_or(u32::MAX);
    rows.saturating_mul(row_px).saturating_add(170)
}

/// Tick label size for rows `row_px` pixels apart.
fn tick_px_for(row_px: f64) -> f64 {
    even_px(row_px * 0.8).clamp(8.0, TICK_PX)
}

/// `px` rounded down to an even size: plotters places glyphs at half the font size, and odd
/// sizes put some glyphs (e.g. `.`) a pixel off the baseline.
fn even_px(px: f64) -> f64 {
    (px / 2.0).floor() * 2.0
}

fn text_width<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    text: &str,
    style: &TextStyle,
) -> AreaResult<u32, DB> {
    Ok(area.estimate_text_size(text, style)?.0)
}

/// `text` with control characters replaced, shortened with `…` to at most `max_px` pixels.
fn fit<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    text: &str,
    style: &TextStyle,
    max_px: u32,
) -> AreaResult<String, DB> {
    let clean: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text_width(area, &clean, style)? <= max_px {
        return Ok(clean);
    }
    let chars: Vec<char> = clean.chars().collect();
    let (mut lo, mut hi) = (0usize, chars.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let candidate: String = chars[..mid].iter().chain(['…'].iter()).collect();
        if text_width(area, &candidate, style)? <= max_px {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let mut out: String = chars[..lo].iter().collect::<String>().trim_end().to_owned();
    out.push('…');
    Ok(out)
}

/// Fills the background, draws the title, returns the area below it.
fn frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
) -> AreaResult<DrawingArea<DB, Shift>, DB> {
    root.fill(&WHITE)?;
    let (w, _) = root.dim_in_pixel();
    let title_style = style(TITLE_PX, INK);
    let title = fit(root, title, &title_style, w.saturating_sub(40))?;
    let body = root.margin(8, 0, 0, 0).titled(&title, title_style)?;
    Ok(body.margin(6, 8, 8, 8))
}

/// An icon in the legend panel.
enum Key {
    Swatch(RGBColor),
    Marker(RGBColor, usize),
    Whisker(RGBColor),
    Box(RGBColor),
    Median,
    Dot(RGBColor),
}

struct LegendItem {
    key: Key,
    text: String,
}

const LEGEND_ROW: i32 = 24;

/// Splits a legend panel off the right of `body`, sized for `heading` and `items`.
fn split_legend<DB: DrawingBackend>(
    body: &DrawingArea<DB, Shift>,
    heading: &str,
    items: &[LegendItem],
) -> AreaResult<Split<DB>, DB> {
    let st = style(LEGEND_PX, INK);
    let mut widest = text_width(body, heading, &st)?;
    for item in items {
        widest = widest.max(text_width(body, &item.text, &st)? + 36);
    }
    let panel = (widest + 24).clamp(150, 280) as i32;
    let (w, _) = body.dim_in_pixel();
    Ok(body.split_horizontally((w as i32 - panel).max(0)))
}

fn draw_legend<DB: DrawingBackend>(
    panel: &DrawingArea<DB, Shift>,
    heading: &str,
    items: &[LegendItem],
) -> Drawn<DB> {
    let (w, h) = panel.dim_in_pixel();
    let st = anchored(LEGEND_PX, INK, HPos::Left, VPos::Center);
    let max_text = w.saturating_sub(48);
    let mut y = 28;
    if !heading.is_empty() {
        let heading = fit(panel, heading, &st, w.saturating_sub(16))?;
        panel.draw_text(&heading, &st, (8, y))?;
        y += LEGEND_ROW + 4;
    }
    let rows_fit = ((h as i32 - y - 8) / LEGEND_ROW).max(1) as usize;
    let shown = if items.len() > rows_fit {
        rows_fit - 1
    } else {
        items.len()
    };
    for item in &items[..shown] {
        draw_key(panel, &item.key, (20, y))?;
        let text = fit(panel, &item.text, &st, max_text)?;
        panel.draw_text(&text, &st, (38, y))?;
        y += LEGEND_ROW;
    }
    if shown < items.len() {
        let more = format!("… and {} more", items.len() - shown);
        panel.draw_text(
            &more,
            &anchored(LEGEND_PX, MUTED, HPos::Left, VPos::Center),
            (38, y),
        )?;
    }
    Ok(())
}

fn draw_key<DB: DrawingBackend>(
    panel: &DrawingArea<DB, Shift>,
    key: &Key,
    (x, y): (i32, i32),
) -> Drawn<DB> {
    match *key {
        Key::Swatch(c) => {
            panel.draw(&Rectangle::new(
                [(x - 9, y - 7), (x + 9, y + 7)],
                c.filled(),
            ))?;
        }
        Key::Marker(c, shape) => draw_marker(panel, (x, y), shape, c)?,
        Key::Whisker(c) => {
            let s = c.stroke_width(2);
            panel.draw(&PathElement::new(vec![(x - 11, y), (x + 11, y)], s))?;
            panel.draw(&PathElement::new(vec![(x - 11, y - 6), (x - 11, y + 6)], s))?;
            panel.draw(&PathElement::new(vec![(x + 11, y - 6), (x + 11, y + 6)], s))?;
        }
        Key::Box(c) => {
            let r = [(x - 10, y - 8), (x + 10, y + 8)];
            panel.draw(&Rectangle::new(r, c.mix(0.35).filled()))?;
            panel.draw(&Rectangle::new(r, c.stroke_width(1)))?;
        }
        Key::Median => {
            panel.draw(&PathElement::new(
                vec![(x, y - 9), (x, y + 9)],
                INK.stroke_width(3),
            ))?;
        }
        Key::Dot(c) => {
            panel.draw(&Circle::new((x, y), 3, c.mix(0.45).filled()))?;
        }
    }
    Ok(())
}

/// Draws marker `shape` (cycled) centred on `at`.
fn draw_marker<DB, CT>(
    area: &DrawingArea<DB, CT>,
    at: CT::From,
    shape: usize,
    color: RGBColor,
) -> Drawn<DB>
where
    DB: DrawingBackend,
    CT: CoordTranslate,
    CT::From: Clone + 'static,
{
    let fill = color.filled();
    match shape % SHAPES {
        0 => area.draw(&(EmptyElement::at(at) + Circle::new((0, 0), 6, fill))),
        1 => area.draw(&(EmptyElement::at(at) + Rectangle::new([(-5, -5), (5, 5)], fill))),
        2 => area.draw(&(EmptyElement::at(at) + TriangleMarker::new((0, 0), 8, fill))),
        _ => area.draw(&(EmptyElement::at(at) + Cross::new((0, 0), 6, color.stroke_width(3)))),
    }
}

/// A horizontal interval line from `lo` to `hi` at height `y` with end caps `cap` pixels tall
/// on each side.
fn whisker<DB, X, Y>(
    area: &DrawingArea<DB, Cartesian2d<X, Y>>,
    y: f64,
    (lo, hi): (f64, f64),
    cap: i32,
    stroke: ShapeStyle,
) -> Drawn<DB>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    area.draw(&PathElement::new(vec![(lo, y), (hi, y)], stroke))?;
    for x in [lo, hi] {
        area.draw(
            &(EmptyElement::at((x, y)) + PathElement::new(vec![(0, -cap), (0, cap)], stroke)),
        )?;
    }
    Ok(())
}

/// A value axis: range, tick positions and tick labels.
struct Axis {
    range: Range<f64>,
    ticks: Vec<f64>,
    percent: bool,
    unit: f64,
    suffix: &'static str,
    decimals: usize,
}

impl Axis {
    /// An axis for rates: `[0, 1]` in percent unless some value falls outside it.
    fn rate(values: impl IntoIterator<Item = f64>, room_right: f64) -> Self {
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
    fn linear(values: impl IntoIterator<Item = f64>, room_right: f64) -> Self {
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
    fn pad_start(mut self, frac: f64) -> Self {
        let span = self.range.end - self.range.start;
        self.range.start -= span * frac;
        self
    }

    fn coord(&self) -> Ticked {
        Ticked::new(self.range.clone(), self.ticks.clone())
    }

    fn label(&self, v: f64) -> String {
        if v == 0.0 {
            "0".to_owned()
        } else if self.percent {
            format!("{:.0}%", v * 100.0)
        } else {
            format!("{:.*}{}", self.decimals, v / self.unit, self.suffix)
        }
    }

    /// A data value written out (more precise than a tick label).
    fn value(&self, v: f64) -> String {
        if self.percent {
            format!("{:.0}%", v * 100.0)
        } else {
            number(v)
        }
    }
}

fn bounds(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    values
        .into_iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        })
}

fn nice_step(span: f64, target: u32) -> f64 {
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
fn number(v: f64) -> String {
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
fn row_axis(n: usize) -> Ticked {
    let top = n as f64 - 0.5;
    Ticked::new(-0.5..top, (0..n).map(|i| i as f64).collect())
}

fn row_index(n: usize, y: f64) -> Option<usize> {
    let r = y.round();
    if r < 0.0 || r >= n as f64 {
        return None;
    }
    Some(n - 1 - r as usize)
}

fn row_y(n: usize, i: usize) -> f64 {
    (n - 1 - i) as f64
}

/// A chart whose rows are labels and whose x axis is numeric.
type RowChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<Ticked, Ticked>>;

/// A chart with one row per label (top to bottom) over a numeric x axis, its labels fitted into
/// the left margin and its mesh drawn; returns the chart and the height of one row in pixels.
fn row_chart<'a, DB: DrawingBackend>(
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
fn row_label_area<DB: DrawingBackend>(
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

// ---------------------------------------------------------------------------------------------
// Figures

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

struct BarsFigure<'a> {
    title: &'a str,
    bars: &'a [Bar],
}

impl BarsFigure<'_> {
    /// Colour groups: the text after the last `" · "` when every label has one and there is
    /// more than one distinct group.
    fn groups(&self) -> Option<Vec<String>> {
        let mut groups: Vec<String> = Vec::new();
        for b in self.bars {
            let (_, g) = b.label.rsplit_once(" · ")?;
            if !groups.iter().any(|x| x == g) {
                groups.push(g.to_owned());
            }
        }
        (groups.len() > 1).then_some(groups)
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
        let groups = self.groups();
        let color_of = |b: &Bar| -> RGBColor {
            let Some(groups) = &groups else {
                return PALETTE[0];
            };
            let g = b.label.rsplit_once(" · ").map_or("", |(_, g)| g);
            let i = groups.iter().position(|x| x == g).unwrap_or(0);
            PALETTE[i % PALETTE.len()]
        };

        let body = frame(root, self.title)?;
        let mut items: Vec<LegendItem> = groups
            .iter()
            .flatten()
            .enumerate()
            .map(|(i, g)| LegendItem {
                key: Key::Swatch(PALETTE[i % PALETTE.len()]),
                text: g.clone(),
            })
            .collect();
        if groups.is_none() {
            items.push(LegendItem {
                key: Key::Swatch(PALETTE[0]),
                text: "rate".to_owned(),
            });
        }
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

struct ScatterFigure<'a> {
    title: &'a str,
    points: &'a [Point],
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

struct HeatFigure<'a> {
    title: &'a str,
    rows: Vec<&'a str>,
    cols: Vec<&'a str>,
    values: HashMap<(usize, usize), f64>,
    max: f64,
}

impl<'a> HeatFigure<'a> {
    fn new(title: &'a str, cells: &'a [HeatCell]) -> Self {
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
            values.insert((r, k), c.value);
            max = max.max(c.value);
        }
        HeatFigure {
            title,
            rows,
            cols,
            values,
            max,
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
        let heading = "violations + duplicates";
        let (w, _) = body.dim_in_pixel();
        let panel_w = (text_width(&body, heading, &style(LEGEND_PX, INK))? + 24).clamp(150, 260);
        let (plot_area, legend) = body.split_horizontally((w - panel_w) as i32);
        self.draw_scale(&legend, heading)?;

        let (_, plot_h) = plot_area.dim_in_pixel();
        let row_px = f64::from(plot_h.saturating_sub(80)) / nr as f64;
        let tick = style(tick_px_for(row_px), INK);
        let rows: Vec<String> = self.rows.iter().map(|s| (*s).to_owned()).collect();
        let (label_w, row_labels) = row_label_area(&plot_area, &rows, &tick)?;

        let x = Ticked::new(0.0..nc as f64, (0..nc).map(|i| i as f64 + 0.5).collect());
        let y = Ticked::new(0.0..nr as f64, (0..nr).map(|i| i as f64 + 0.5).collect());
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(10)
            .x_label_area_size(56)
            .y_label_area_size(label_w)
            .build_cartesian_2d(x, y)?;
        let (xr, yr) = chart.plotting_area().get_pixel_range();
        let col_px = (xr.end - xr.start) as f64 / nc as f64;
        let cell_px = (yr.end - yr.start) as f64 / nr as f64;
        let col_style = style(TICK_PX, INK);
        let col_labels = self
            .cols
            .iter()
            .map(|c| fit(root, c, &col_style, (col_px - 6.0).max(8.0) as u32))
            .collect::<Result<Vec<_>, _>>()?;
        let x_fmt = |v: &f64| {
            let i = v.floor();
            if i < 0.0 {
                return String::new();
            }
            col_labels.get(i as usize).cloned().unwrap_or_default()
        };
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
            .x_label_style(col_style.clone())
            .y_label_style(tick.clone())
            .axis_desc_style(style(DESC_PX, INK))
            .x_desc("interrupt point")
            .y_desc("strategy")
            .draw()?;

        let text_px = even_px(cell_px.min(col_px) * 0.42).clamp(8.0, 18.0);
        for r in 0..nr {
            let y0 = (nr - 1 - r) as f64;
            for c in 0..nc {
                let x0 = c as f64;
                let value = self.values.get(&(r, c)).copied();
                let fill = value.map_or(MISSING, |v| self.colour(v));
                let rect = [(x0, y0), (x0 + 1.0, y0 + 1.0)];
                chart.draw_series(std::iter::once(Rectangle::new(rect, fill.filled())))?;
                chart.draw_series(std::iter::once(Rectangle::new(rect, WHITE.stroke_width(2))))?;
                let (text, ink) = match value {
                    Some(v) => {
                        let dark = self.max > 0.0 && v / self.max > 0.55;
                        (number(v), if dark { WHITE } else { INK })
                    }
                    None => ("n/a".to_owned(), MUTED),
                };
                chart.draw_series(std::iter::once(Text::new(
                    text,
                    (x0 + 0.5, y0 + 0.5),
                    anchored(text_px, ink, HPos::Center, VPos::Center),
                )))?;
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
            panel.draw_text(&number(v), &st, (x1 + 9, y))?;
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

struct BoxFigure<'a> {
    title: &'a str,
    d: &'a [Distribution],
}

/// Percentile `q` (0..=1) of sorted, non-empty `v`, interpolating linearly (R type 7).
fn quantile(v: &[f64], q: f64) -> f64 {
    let pos = q * (v.len() - 1) as f64;
    let (i, frac) = (pos.floor() as usize, pos.fract());
    match v.get(i + 1) {
        Some(next) => v[i] + (next - v[i]) * frac,
        None => v[i],
    }
}

/// At most this many dots per row are drawn (evenly spaced in sorted order).
const MAX_DOTS: usize = 400;

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
