//! Shared drawing vocabulary of the charts: sizes, colours, text styles, fitting text into a
//! width, the title frame, legends, markers and whiskers.
//!
//! It draws pieces only: it never lays out a whole chart, never chooses an axis range, and
//! never sees run records.

use plotters::coord::Shift;
use plotters::coord::cartesian::Cartesian2d;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{AreaResult, Drawn, FAMILY};

pub(super) const TITLE_PX: f64 = 24.0;
pub(super) const DESC_PX: f64 = 16.0;
pub(super) const TICK_PX: f64 = 14.0;
pub(super) const LEGEND_PX: f64 = 14.0;
pub(super) const NOTE_PX: f64 = 14.0;

pub(super) const INK: RGBColor = RGBColor(30, 30, 30);
pub(super) const MUTED: RGBColor = RGBColor(100, 100, 100);
pub(super) const GRID: RGBColor = RGBColor(225, 225, 225);
pub(super) const MISSING: RGBColor = RGBColor(215, 215, 215);

/// Okabe–Ito colours (without yellow, too light on white) plus two more.
pub(super) const PALETTE: [RGBColor; 9] = [
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

/// The fixed colour (an index into [`PALETTE`]) and marker shape of each built-in strategy, so a
/// strategy looks the same in every plot of every report. Pairs that share a colour differ in
/// shape and in kind (a governed wrapper takes its inner strategy's colour with another shape),
/// so no two ids of this table look alike, also to colour-blind readers (Okabe–Ito hues).
const FIXED: [(&str, usize, usize); 11] = [
    ("A", 1, 0),      // orange circle
    ("mask", 6, 3),   // purple diamond
    ("B", 3, 1),      // reddish purple triangle
    ("B+A", 5, 2),    // vermillion square
    ("C", 0, 2),      // blue square
    ("D", 2, 3),      // bluish green diamond
    ("none", 8, 5),   // grey ×
    ("gov:B", 3, 4),  // reddish purple plus
    ("gov:C", 0, 4),  // blue plus
    ("gov:D", 2, 4),  // bluish green plus
    ("B-live", 4, 1), // sky blue triangle
];

/// The colour and marker shape of strategy `id`: [`FIXED`] for the built-ins, else drawn from a
/// hash of the id (FNV-1a) among the hue × shape pairs no built-in uses, so a plug-in keeps its
/// look across runs and reports, whatever else the run holds, and never looks like a built-in.
/// Two plug-ins may hash to the same pair; their labels tell them apart.
pub(super) fn strategy_style(id: &str) -> (RGBColor, usize) {
    if let Some((_, c, m)) = FIXED.iter().find(|(k, _, _)| *k == id) {
        return (PALETTE[*c], *m);
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    // Black and grey are kept for `none` and the axes' ink; a plug-in gets a hue.
    let hues = PALETTE.len() - 2;
    let free: Vec<(usize, usize)> = (0..hues)
        .flat_map(|c| (0..SHAPES).map(move |m| (c, m)))
        .filter(|(c, m)| !FIXED.iter().any(|(_, fc, fm)| fc == c && fm == m))
        .collect();
    let (c, m) = free[(h % free.len() as u64) as usize];
    (PALETTE[c], m)
}

/// Distinct marker shapes (see [`draw_marker`]).
pub(super) const SHAPES: usize = 6;

/// (plot area, legend panel)
pub(super) type Split<DB> = (DrawingArea<DB, Shift>, DrawingArea<DB, Shift>);

pub(super) fn style(px: f64, color: RGBColor) -> TextStyle<'static> {
    (FAMILY, px).into_font().color(&color)
}

pub(super) fn anchored(px: f64, color: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    style(px, color).pos(Pos::new(h, v))
}

/// Height for `rows` rows of `row_px` pixels plus the fixed parts of a chart.
pub(super) fn height_for(rows: usize, row_px: u32) -> u32 {
    let rows = u32::try_from(rows).unwrap_or(u32::MAX);
    rows.saturating_mul(row_px).saturating_add(170)
}

/// Tick label size for rows `row_px` pixels apart.
pub(super) fn tick_px_for(row_px: f64) -> f64 {
    even_px(row_px * 0.8).clamp(8.0, TICK_PX)
}

/// `px` rounded down to an even size: plotters places glyphs at half the font size, and odd
/// sizes put some glyphs (e.g. `.`) a pixel off the baseline.
pub(super) fn even_px(px: f64) -> f64 {
    (px / 2.0).floor() * 2.0
}

pub(super) fn text_width<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    text: &str,
    style: &TextStyle,
) -> AreaResult<u32, DB> {
    Ok(area.estimate_text_size(text, style)?.0)
}

/// `text` with control characters replaced by spaces.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// `text` with control characters replaced, shortened with `…` to at most `max_px` pixels.
pub(super) fn fit<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    text: &str,
    style: &TextStyle,
    max_px: u32,
) -> AreaResult<String, DB> {
    let clean = printable(text);
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

/// `text` (control characters replaced) wrapped into at most `max_lines` lines of at most
/// `max_px` pixels, breaking after `_`, `-`, `/`, `.` or a space, or inside a word too long for a
/// line; the last line is shortened with `…` if text remains.
pub(super) fn wrap<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    text: &str,
    style: &TextStyle,
    max_px: u32,
    max_lines: usize,
) -> AreaResult<Vec<String>, DB> {
    let clean = printable(text);
    let mut pieces: Vec<String> = vec![String::new()];
    for c in clean.chars() {
        pieces.last_mut().expect("never empty").push(c);
        if matches!(c, '_' | '-' | '/' | '.' | ' ') {
            pieces.push(String::new());
        }
    }
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for piece in pieces.iter().filter(|p| !p.is_empty()) {
        let joined = format!("{cur}{piece}");
        if cur.is_empty() || text_width(area, joined.trim_end(), style)? <= max_px {
            cur = joined;
        } else {
            lines.push(std::mem::take(&mut cur));
            cur = piece.clone();
        }
        // A piece wider than a line is cut by characters.
        while text_width(area, cur.trim_end(), style)? > max_px && cur.chars().count() > 1 {
            let chars: Vec<char> = cur.chars().collect();
            let mut n = chars.len() - 1;
            while n > 1 && text_width(area, &chars[..n].iter().collect::<String>(), style)? > max_px
            {
                n -= 1;
            }
            lines.push(chars[..n].iter().collect());
            cur = chars[n..].iter().collect();
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    if lines.len() > max_lines {
        let rest = lines.split_off(max_lines - 1).concat();
        lines.push(fit(area, &rest, style, max_px)?);
    }
    Ok(lines.into_iter().map(|l| l.trim_end().to_owned()).collect())
}

/// Fills the background, draws the title, returns the area below it.
pub(super) fn frame<DB: DrawingBackend>(
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
pub(super) enum Key {
    Swatch(RGBColor),
    Marker(RGBColor, usize),
    /// A marker with a centre dot (a second value of a scatter's second key).
    DottedMarker(RGBColor, usize),
    Whisker(RGBColor),
    Box(RGBColor),
    Median,
    Dot(RGBColor),
    /// No icon: the text is a sub-heading.
    Label,
}

pub(super) struct LegendItem {
    pub(super) key: Key,
    pub(super) text: String,
}

pub(super) const LEGEND_ROW: i32 = 24;

/// Splits a legend panel off the right of `body`, sized for `heading` and `items`.
pub(super) fn split_legend<DB: DrawingBackend>(
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

pub(super) fn draw_legend<DB: DrawingBackend>(
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
        let x = if matches!(item.key, Key::Label) {
            8
        } else {
            38
        };
        panel.draw_text(&text, &st, (x, y))?;
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

pub(super) fn draw_key<DB: DrawingBackend>(
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
        Key::Marker(c, shape) => draw_marker(panel, (x, y), (0, 0), shape, c)?,
        Key::DottedMarker(c, shape) => {
            draw_marker(panel, (x, y), (0, 0), shape, c)?;
            panel.draw(&Circle::new((x, y), 2, c.filled()))?;
        }
        Key::Label => {}
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

/// Draws hollow marker `shape` (cycled: circle, triangle, square, diamond, plus, ×) centred on
/// `at`, offset by `(dx, dy)` pixels. The shapes differ in outline and size, so markers drawn
/// on the same spot stay distinguishable.
pub(super) fn draw_marker<DB, CT>(
    area: &DrawingArea<DB, CT>,
    at: CT::From,
    (dx, dy): (i32, i32),
    shape: usize,
    color: RGBColor,
) -> Drawn<DB>
where
    DB: DrawingBackend,
    CT: CoordTranslate,
    CT::From: Clone + 'static,
{
    let line = color.stroke_width(2);
    let closed = |pts: &[(i32, i32)]| {
        let mut v: Vec<(i32, i32)> = pts.iter().map(|&(x, y)| (x + dx, y + dy)).collect();
        v.push(v[0]);
        EmptyElement::at(at.clone()) + PathElement::new(v, line)
    };
    match shape % SHAPES {
        0 => area.draw(&(EmptyElement::at(at.clone()) + Circle::new((dx, dy), 6, line))),
        1 => area.draw(&closed(&[(0, -9), (8, 6), (-8, 6)])),
        2 => area.draw(&closed(&[(-5, -5), (5, -5), (5, 5), (-5, 5)])),
        3 => area.draw(&closed(&[(0, -9), (8, 0), (0, 9), (-8, 0)])),
        4 => {
            area.draw(
                &(EmptyElement::at(at.clone())
                    + PathElement::new(vec![(dx - 8, dy), (dx + 8, dy)], line)),
            )?;
            area.draw(
                &(EmptyElement::at(at) + PathElement::new(vec![(dx, dy - 8), (dx, dy + 8)], line)),
            )
        }
        _ => {
            area.draw(
                &(EmptyElement::at(at.clone())
                    + PathElement::new(vec![(dx - 6, dy - 6), (dx + 6, dy + 6)], line)),
            )?;
            area.draw(
                &(EmptyElement::at(at)
                    + PathElement::new(vec![(dx - 6, dy + 6), (dx + 6, dy - 6)], line)),
            )
        }
    }
}

/// A horizontal interval line from `lo` to `hi` at height `y` with end caps `cap` pixels tall
/// on each side.
pub(super) fn whisker<DB, X, Y>(
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
