//! Report charts: every chart renders from small hand-made data to an SVG carrying its text and
//! to a valid, non-blank PNG; empty input says "no data"; labels are escaped in the SVG; and the
//! drawn marks follow the data (bar lengths proportional to rates, scatter positions ordered and
//! scaled like the data, one fixed colour and marker per strategy, heat-map values in place and
//! column labels whole).
//!
//! Set `PLOTS_SAMPLE_DIR=/some/dir` to keep the rendered files for a look.

use compaction_eval::report::plots::{
    self, Bar, Distribution, HeatCell, Plot, PlotError, Point, hooks::Raster,
};

const WHITE: [u8; 3] = [255, 255, 255];

fn bars() -> Vec<Bar> {
    let bar = |label: &str, value: f64, low: f64, high: f64| Bar {
        label: label.to_owned(),
        colour: label.split(" · ").next().unwrap_or(label).to_owned(),
        value,
        low,
        high,
    };
    vec![
        bar("A · sim:careful", 0.9, 0.74, 0.97),
        bar("A · sim:sloppy", 0.6, 0.42, 0.76),
        bar("C · sim:careful", 0.72, 0.55, 0.85),
        bar("C · sim:sloppy", 0.35, 0.2, 0.53),
        bar("full-context · sim:careful", 1.0, 0.89, 1.0),
    ]
}

fn points() -> Vec<Point> {
    let point = |label: &str, x: f64, y: f64| {
        let (strategy, model) = label.rsplit_once(" · ").unwrap();
        Point {
            label: label.to_owned(),
            colour: strategy.to_owned(),
            marker: model.to_owned(),
            x,
            y,
        }
    };
    vec![
        point("A · sim:careful", 1200.0, 0.9),
        point("A · sim:sloppy", 1250.0, 0.6),
        point("C · sim:careful", 5400.0, 0.72),
        point("C · sim:sloppy", 5300.0, 0.35),
        point("full-context · sim:careful", 21000.0, 1.0),
    ]
}

fn cells() -> Vec<HeatCell> {
    let mut out = Vec::new();
    for (r, row) in ["A", "C", "full-context"].into_iter().enumerate() {
        for (c, col) in ["before_write", "after_write", "mid_plan", "end"]
            .into_iter()
            .enumerate()
        {
            if row == "C" && col == "end" {
                continue; // a missing cell is drawn as n/a
            }
            out.push(HeatCell {
                row: row.to_owned(),
                col: col.to_owned(),
                value: ((r * 3 + c) % 5) as f64,
                count: None,
            });
        }
    }
    out
}

fn distributions() -> Vec<Distribution> {
    vec![
        Distribution {
            label: "A".to_owned(),
            values: vec![9000.0, 11000.0, 10500.0, 12500.0, 9800.0, 15000.0],
        },
        Distribution {
            label: "C".to_owned(),
            values: vec![14000.0, 18000.0, 16500.0, 22000.0],
        },
        Distribution {
            label: "full-context".to_owned(),
            values: vec![40000.0, 42000.0, 39000.0, 47000.0, 44000.0],
        },
        Distribution {
            label: "never-ran".to_owned(),
            values: vec![],
        },
    ]
}

/// Renders with `f`, returning the plot and the RGB raster its PNG was encoded from.
/// With `PLOTS_SAMPLE_DIR` set, the files are kept in its subdirectory `tag`.
fn rendered(tag: &str, f: impl FnOnce() -> Result<Plot, PlotError>) -> (Plot, Raster) {
    let (plot, mut rasters) = plots::hooks::capture(f);
    let plot = plot.expect("plot renders");
    assert_eq!(rasters.len(), 1, "one raster per plot");
    let raster = rasters.pop().unwrap();
    if let Some(dir) = std::env::var_os("PLOTS_SAMPLE_DIR") {
        plots::write(&std::path::Path::new(&dir).join(tag), &plot).unwrap();
    }
    (plot, raster)
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Checks the PNG signature and chunk structure (CRCs, IHDR first, IDAT, IEND last) and
/// returns (width, height, bit depth, colour type).
fn png_header(png: &[u8]) -> (u32, u32, u8, u8) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    let mut at = 8;
    let mut kinds = Vec::new();
    let mut header = None;
    while at < png.len() {
        let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        let kind = &png[at + 4..at + 8];
        let data = &png[at + 8..at + 8 + len];
        let crc = u32::from_be_bytes(png[at + 8 + len..at + 12 + len].try_into().unwrap());
        assert_eq!(
            crc,
            crc32(&png[at + 4..at + 8 + len]),
            "CRC of chunk {kind:?}"
        );
        if kind == b"IHDR" {
            let w = u32::from_be_bytes(data[0..4].try_into().unwrap());
            let h = u32::from_be_bytes(data[4..8].try_into().unwrap());
            header = Some((w, h, data[8], data[9]));
        }
        kinds.push(String::from_utf8_lossy(kind).into_owned());
        at += 12 + len;
    }
    assert_eq!(at, png.len(), "no trailing bytes");
    assert_eq!(kinds.first().map(String::as_str), Some("IHDR"));
    assert_eq!(kinds.last().map(String::as_str), Some("IEND"));
    assert!(kinds.iter().any(|k| k == "IDAT"));
    header.unwrap()
}

/// The PNG is well formed, matches the raster, and the raster is a drawn chart (not a single
/// colour, readable size).
fn check_png(plot: &Plot, raster: &Raster) {
    let (w, h, depth, colour_type) = png_header(&plot.png);
    assert_eq!((w, h), (raster.width, raster.height));
    assert_eq!((depth, colour_type), (8, 2), "8-bit RGB");
    assert!(w >= 800 && h >= 500, "readable size, got {w}×{h}");
    assert_eq!(raster.rgb.len(), (w * h * 3) as usize);
    let total = (w * h) as usize;
    let drawn = raster.pixels_unlike(WHITE);
    assert!(
        drawn > total / 50 && drawn < total,
        "{}: {drawn} of {total} pixels are not background",
        plot.name
    );
    let mut colours: Vec<&[u8]> = raster.rgb.chunks_exact(3).collect();
    colours.sort_unstable();
    colours.dedup();
    assert!(colours.len() > 10, "anti-aliased text and several colours");
}

/// The trimmed contents of every `<text>` element.
fn svg_texts(svg: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(start) = rest.find("<text") {
        rest = &rest[start..];
        let open_end = rest.find('>').unwrap() + 1;
        let close = rest.find("</text>").unwrap();
        out.push(rest[open_end..close].trim().to_owned());
        rest = &rest[close..];
    }
    out
}

/// Some `<text>` element is exactly `text` (as escaped in the SVG).
fn has_text(plot: &Plot, text: &str) -> bool {
    svg_texts(&plot.svg).iter().any(|t| t == text)
}

fn check_svg(plot: &Plot, texts: &[&str]) {
    assert!(plot.svg.starts_with("<svg"), "{}", &plot.svg[..60]);
    assert!(plot.svg.trim_end().ends_with("</svg>"));
    assert!(
        plot.svg.contains("font-family=\"sans-serif\""),
        "text uses the registered family"
    );
    for t in texts {
        assert!(plot.svg.contains(t), "{}: SVG lacks {t:?}", plot.name);
    }
}

#[test]
fn success_bars_render() {
    let (plot, raster) = rendered("basic", || {
        plots::success_bars("Task success by strategy", &bars())
    });
    assert_eq!(plot.name, "task_success");
    check_png(&plot, &raster);
    check_svg(
        &plot,
        &[
            "Task success by strategy",
            "task success rate",
            "C · sim:careful",
            "full-context · sim:careful",
            "sim:sloppy",
            "interval",
            "72%",
            "100%",
        ],
    );
}

#[test]
fn cost_quality_renders() {
    let (plot, raster) = rendered("basic", || {
        plots::cost_quality("Cost vs. quality", &points())
    });
    assert_eq!(plot.name, "cost_quality");
    check_png(&plot, &raster);
    check_svg(
        &plot,
        &[
            "Cost vs. quality",
            "median restore tokens",
            "task success rate",
            "A · sim:careful",
            "full-context · sim:careful",
            "20k",
        ],
    );
}

#[test]
fn safety_heatmap_renders() {
    let (plot, raster) = rendered("basic", || plots::safety_heatmap("Safety", &cells()));
    assert_eq!(plot.name, "safety_heatmap");
    check_png(&plot, &raster);
    check_svg(
        &plot,
        &[
            "Safety",
            "interrupt point",
            "strategy",
            "before_write",
            "full-context",
            "violations + duplicates",
        ],
    );
    for t in ["n/a", "0", "4", "before_write", "A", "C"] {
        assert!(has_text(&plot, t), "no text element {t:?}");
    }
}

#[test]
fn token_distributions_render() {
    let (plot, raster) = rendered("basic", || {
        plots::token_distributions("Total tokens", &distributions())
    });
    assert_eq!(plot.name, "total_tokens");
    check_png(&plot, &raster);
    check_svg(
        &plot,
        &[
            "Total tokens",
            "total tokens per cell",
            "A (n=6)",
            "never-ran (n=0)",
            "no values",
            "median",
        ],
    );
}

#[test]
fn empty_input_says_no_data() {
    let empty_dists = [Distribution {
        label: "A".to_owned(),
        values: vec![],
    }];
    type Render = Box<dyn FnOnce() -> Result<Plot, PlotError>>;
    let cases: [(&str, Render); 5] = [
        (
            "task_success",
            Box::new(|| plots::success_bars("Empty bars", &[])),
        ),
        (
            "cost_quality",
            Box::new(|| plots::cost_quality("Empty bars", &[])),
        ),
        (
            "safety_heatmap",
            Box::new(|| plots::safety_heatmap("Empty bars", &[])),
        ),
        (
            "total_tokens",
            Box::new(|| plots::token_distributions("Empty bars", &[])),
        ),
        (
            "total_tokens",
            Box::new(move || plots::token_distributions("Empty bars", &empty_dists)),
        ),
    ];
    for (name, f) in cases {
        let (plot, raster) = rendered("empty", f);
        assert_eq!(plot.name, name);
        check_svg(&plot, &["Empty bars", "no data"]);
        let (w, h, _, _) = png_header(&plot.png);
        assert_eq!((w, h), (raster.width, raster.height));
        assert!(
            raster.pixels_unlike(WHITE) > 1000,
            "title and note are drawn"
        );
    }
}

#[test]
fn labels_are_escaped_in_svg() {
    let evil = "<script>alert(1)</script> & \"x\"";
    let plots = [
        plots::success_bars(
            evil,
            &[Bar {
                label: evil.to_owned(),
                colour: evil.to_owned(),
                value: 0.5,
                low: 0.2,
                high: 0.8,
            }],
        ),
        plots::cost_quality(
            evil,
            &[Point {
                label: evil.to_owned(),
                colour: evil.to_owned(),
                marker: "m".to_owned(),
                x: 10.0,
                y: 0.5,
            }],
        ),
        plots::safety_heatmap(
            evil,
            &[HeatCell {
                row: evil.to_owned(),
                col: evil.to_owned(),
                value: 1.0,
                count: None,
            }],
        ),
        plots::token_distributions(
            evil,
            &[Distribution {
                label: evil.to_owned(),
                values: vec![1.0, 2.0],
            }],
        ),
        plots::success_bars(evil, &[]),
    ];
    for plot in plots {
        let plot = plot.unwrap();
        let lower = plot.svg.to_lowercase();
        assert!(
            !lower.contains("<script"),
            "{}: raw <script> in SVG",
            plot.name
        );
        assert!(!lower.contains("</script"), "{}", plot.name);
        assert!(
            svg_texts(&plot.svg)
                .iter()
                .any(|t| t.starts_with("&lt;script&gt;alert(1)&lt;/script&gt; &amp;")),
            "{}: escaped label",
            plot.name
        );
        png_header(&plot.png);
    }
}

#[test]
fn awkward_labels_do_not_panic() {
    let labels = [
        "",
        "line\nbreak\tand\u{7} bell",
        "emoji 🚀 and CJK 文字 and RTL שלום",
        &"very long strategy name that goes on and on ".repeat(8),
    ];
    let bars: Vec<Bar> = labels
        .iter()
        .map(|l| Bar {
            label: (*l).to_owned(),
            colour: (*l).to_owned(),
            value: 0.5,
            low: 0.6, // interval not around the value: drawn as given
            high: 0.4,
        })
        .collect();
    let title = "a very long title ".repeat(20);
    let (plot, _) = rendered("awkward", || plots::success_bars(&title, &bars));
    assert!(plot.svg.contains('…'), "long labels are shortened");
    assert!(
        !plot.svg.contains('\u{7}'),
        "control characters are replaced"
    );
    png_header(&plot.png);

    let points: Vec<Point> = labels
        .iter()
        .map(|l| Point {
            label: (*l).to_owned(),
            colour: (*l).to_owned(),
            marker: "m".to_owned(),
            x: 0.0,
            y: 0.0,
        })
        .collect();
    let (plot, raster) = rendered("awkward", || plots::cost_quality("same spot", &points));
    check_png(&plot, &raster);
}

#[test]
fn many_rows_and_unusual_ranges() {
    let many: Vec<Bar> = (0..80)
        .map(|i| Bar {
            label: format!("S{i} · m{}", i % 3),
            colour: format!("S{i}"),
            value: f64::from(i) / 80.0,
            low: 0.0,
            high: 1.0,
        })
        .collect();
    let (plot, raster) = rendered("many", || plots::success_bars("many", &many));
    check_png(&plot, &raster);
    assert!(raster.height > 560, "taller for many rows");
    assert!(raster.height <= 2400, "height is capped");

    // Rates outside [0, 1] and negative values get a plain numeric axis.
    let odd = [Bar {
        label: "pct".to_owned(),
        colour: "pct".to_owned(),
        value: 72.0,
        low: -5.0,
        high: 90.0,
    }];
    png_header(&plots::success_bars("percent points", &odd).unwrap().png);

    // A single point, all-zero heat map, one-value and constant distributions.
    png_header(
        &plots::cost_quality(
            "one",
            &[Point {
                label: "only".to_owned(),
                colour: "only".to_owned(),
                marker: "m".to_owned(),
                x: 0.0,
                y: 1.0,
            }],
        )
        .unwrap()
        .png,
    );
    let zeros: Vec<HeatCell> = (0..3)
        .map(|i| HeatCell {
            row: "A".to_owned(),
            col: format!("p{i}"),
            value: 0.0,
            count: None,
        })
        .collect();
    let plot = plots::safety_heatmap("zeros", &zeros).unwrap();
    assert!(has_text(&plot, "0"));
    let dists = [
        Distribution {
            label: "one".to_owned(),
            values: vec![5.0],
        },
        Distribution {
            label: "flat".to_owned(),
            values: vec![7.0; 1000],
        },
    ];
    png_header(&plots::token_distributions("flat", &dists).unwrap().png);
}

#[test]
fn bad_values_are_errors() {
    let nan = [Bar {
        label: "x".to_owned(),
        colour: "x".to_owned(),
        value: f64::NAN,
        low: 0.0,
        high: 1.0,
    }];
    let err = plots::success_bars("t", &nan).unwrap_err();
    assert!(matches!(
        err,
        PlotError::NonFinite {
            plot: "task_success",
            ..
        }
    ));
    assert!(err.to_string().contains("`x`"), "{err}");

    let inf = [Point {
        label: "p".to_owned(),
        colour: "p".to_owned(),
        marker: "m".to_owned(),
        x: f64::INFINITY,
        y: 0.5,
    }];
    assert!(matches!(
        plots::cost_quality("t", &inf),
        Err(PlotError::NonFinite { what: "x", .. })
    ));

    let dist = [Distribution {
        label: "d".to_owned(),
        values: vec![1.0, f64::NAN],
    }];
    assert!(matches!(
        plots::token_distributions("t", &dist),
        Err(PlotError::NonFinite { .. })
    ));

    let cell = HeatCell {
        row: "A".to_owned(),
        col: "p".to_owned(),
        value: 1.0,
        count: None,
    };
    let err = plots::safety_heatmap("t", &[cell.clone(), cell]).unwrap_err();
    assert!(matches!(err, PlotError::DuplicateCell { .. }), "{err}");
}

#[test]
fn write_stores_svg_and_png() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("plots");
    let plot = plots::success_bars("written", &bars()).unwrap();
    plots::write(&out, &plot).unwrap();
    assert_eq!(
        std::fs::read_to_string(out.join("task_success.svg")).unwrap(),
        plot.svg
    );
    assert_eq!(
        std::fs::read(out.join("task_success.png")).unwrap(),
        plot.png
    );

    let bad = Plot {
        name: "../escape", // hostile input: a name that climbs out of the plots folder
        svg: String::new(),
        png: Vec::new(),
    };
    assert!(plots::write(&out, &bad).is_err());
    assert!(!dir.path().join("escape.svg").exists());
}

#[test]
fn rendering_is_deterministic_and_thread_safe() {
    let a = plots::token_distributions("d", &distributions()).unwrap();
    let handles: Vec<_> = (0..3)
        .map(|_| std::thread::spawn(|| plots::token_distributions("d", &distributions()).unwrap()))
        .collect();
    for h in handles {
        let b = h.join().unwrap();
        assert_eq!(a.svg, b.svg);
        assert_eq!(a.png, b.png);
    }
}

/// The value of attribute `name` in the SVG element `el`.
fn attr<'a>(el: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let start = el.find(&key)? + key.len();
    Some(&el[start..start + el[start..].find('"')?])
}

fn num(el: &str, name: &str) -> f64 {
    attr(el, name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no numeric {name} in {el}"))
}

/// Every `<tag …>` element of the SVG, in document (drawing) order.
fn elements<'a>(svg: &'a str, tag: &str) -> Vec<&'a str> {
    let open = format!("<{tag} ");
    svg.match_indices(&open)
        .map(|(i, _)| &svg[i..i + svg[i..].find('>').unwrap() + 1])
        .collect()
}

#[test]
fn bar_lengths_are_proportional_to_the_rates() {
    let data = bars();
    let plot = plots::success_bars("t", &data).unwrap();
    // The bars are the translucent rectangles, drawn top to bottom in data order.
    let rects: Vec<&str> = elements(&plot.svg, "rect")
        .into_iter()
        .filter(|r| attr(r, "opacity") == Some("0.85"))
        .collect();
    assert_eq!(rects.len(), data.len());
    let px_per_unit = num(rects[4], "width") / data[4].value;
    for (r, b) in rects.iter().zip(&data) {
        let expected = b.value * px_per_unit;
        assert!(
            (num(r, "width") - expected).abs() <= 1.5,
            "{}: width {} for rate {} (expected {expected:.1})",
            b.label,
            num(r, "width"),
            b.value
        );
        assert_eq!(num(r, "x"), num(rects[0], "x"), "bars start at 0");
    }
    let ys: Vec<f64> = rects.iter().map(|r| num(r, "y")).collect();
    assert!(
        ys.windows(2).all(|w| w[0] < w[1]),
        "first bar on top: {ys:?}"
    );
    // Bars of the same strategy share its colour whatever the destination; strategies differ.
    let fill = |i: usize| attr(rects[i], "fill").unwrap();
    assert_eq!(fill(0), fill(1));
    assert_eq!(fill(2), fill(3));
    assert_ne!(fill(0), fill(2));
}

#[test]
fn scatter_markers_follow_the_data() {
    // One strategy (A: circles) on one destination, so every data marker is a circle.
    let data: Vec<Point> = [(1200.0, 0.9), (5400.0, 0.72), (21000.0, 1.0)]
        .into_iter()
        .map(|(x, y)| Point {
            label: format!("A at {x}"),
            colour: "A".to_owned(),
            marker: "sim:careful".to_owned(),
            x,
            y,
        })
        .collect();
    let plot = plots::cost_quality("t", &data).unwrap();
    const LEGEND_INK: &str = "#1E1E1E";
    let circles: Vec<&str> = elements(&plot.svg, "circle")
        .into_iter()
        .filter(|c| attr(c, "stroke").is_some_and(|s| s != LEGEND_INK))
        .collect();
    // The legend's own A marker comes first; then one circle per point.
    assert_eq!(circles.len(), data.len() + 1, "{circles:?}");
    let points = &circles[1..];
    let (cx, cy): (Vec<f64>, Vec<f64>) =
        points.iter().map(|c| (num(c, "cx"), num(c, "cy"))).unzip();
    assert!(cx[0] < cx[1] && cx[1] < cx[2], "x order: {cx:?}");
    assert!(cy[1] > cy[0] && cy[0] > cy[2], "y order: {cy:?}");
    let sx = (cx[2] - cx[0]) / (data[2].x - data[0].x);
    let predicted = cx[0] + (data[1].x - data[0].x) * sx;
    assert!((cx[1] - predicted).abs() <= 2.0, "x scale is linear");
    for t in ["strategy", "A"] {
        assert!(has_text(&plot, t), "legend lacks {t:?}");
    }
}

/// The data colours of an SVG (strokes and fills that are not ink, grid or white).
fn data_colours(svg: &str) -> std::collections::BTreeSet<String> {
    const NOT_DATA: [&str; 6] = [
        "#1E1E1E", "#646464", "#E1E1E1", "#D7D7D7", "#FFFFFF", "none",
    ];
    let mut out = std::collections::BTreeSet::new();
    for tag in ["circle", "polyline", "rect", "path", "line"] {
        for el in elements(svg, tag) {
            for key in ["stroke", "fill"] {
                if let Some(c) = attr(el, key)
                    && c.starts_with('#')
                    && !NOT_DATA.contains(&c)
                {
                    out.insert(c.to_owned());
                }
            }
        }
    }
    out
}

#[test]
fn a_strategy_keeps_its_colour_whatever_else_a_report_plots() {
    let point = |strategy: &str| Point {
        label: format!("{strategy} · sim:careful"),
        colour: strategy.to_owned(),
        marker: "sim:careful".to_owned(),
        x: 100.0 + strategy.len() as f64,
        y: 0.5,
    };
    let bar = |strategy: &str| Bar {
        label: format!("{strategy} · sim:careful"),
        colour: strategy.to_owned(),
        value: 0.5,
        low: 0.4,
        high: 0.6,
    };
    let alone = |s: &str| {
        let scatter = plots::cost_quality("t", &[point(s)]).unwrap();
        let bars = plots::success_bars("t", &[bar(s)]).unwrap();
        (data_colours(&scatter.svg), data_colours(&bars.svg))
    };
    let (c_scatter, c_bars) = alone("C");
    assert_eq!(c_scatter.len(), 1, "{c_scatter:?}");
    assert_eq!(c_scatter, c_bars, "one colour for C in both charts");
    // No two strategies look alike: the built-ins, and plug-ins against every built-in.
    let ids = [
        "A",
        "mask",
        "B",
        "B+A",
        "C",
        "D",
        "none",
        "gov:B",
        "gov:C",
        "gov:D",
        "B-live",
        "exec:mine",
        "exec:python-example",
        "exec:shell-example",
    ];
    for (i, a) in ids.iter().enumerate() {
        assert_eq!(plots::strategy_look(a), plots::strategy_look(a), "stable");
        for b in &ids[i + 1..] {
            let builtin = !b.starts_with("exec:");
            if builtin || !a.starts_with("exec:") {
                assert_ne!(
                    plots::strategy_look(a),
                    plots::strategy_look(b),
                    "{a} and {b} look alike"
                );
            }
        }
    }
    // Whatever comes before it, and in whichever order, C keeps its colour.
    for list in [
        vec!["C"],
        vec!["A", "C"],
        vec!["none", "A", "B", "C", "D", "mask"],
        vec!["exec:mine", "D", "C"],
    ] {
        let points: Vec<Point> = list.iter().map(|s| point(s)).collect();
        let scatter = plots::cost_quality("t", &points).unwrap();
        assert!(
            data_colours(&scatter.svg).is_superset(&c_scatter),
            "C's colour is missing from {list:?}"
        );
    }
}

#[test]
fn markers_on_the_same_spot_stay_visible() {
    let p = |strategy: &str, model: &str| Point {
        label: format!("{strategy} · {model}"),
        colour: strategy.to_owned(),
        marker: model.to_owned(),
        x: 100.0,
        y: 0.5,
    };
    let data = [p("A", "m1"), p("A", "m2"), p("B", "m1")];
    let plot = plots::cost_quality("t", &data).unwrap();
    let circles: Vec<(f64, f64)> = elements(&plot.svg, "circle")
        .into_iter()
        .filter(|c| attr(c, "stroke") != Some("#1E1E1E") && num(c, "r") > 4.0)
        .map(|c| (num(c, "cx"), num(c, "cy")))
        .collect();
    // The legend's A marker, then A on m1 and A on m2 (the latter with a centre dot).
    assert_eq!(circles.len(), 3, "{circles:?}");
    assert_ne!(circles[1], circles[2], "the second circle is nudged aside");
}

#[test]
fn heatmap_values_sit_in_their_cells_and_column_labels_are_whole() {
    let cols = [
        "after_exploration",
        "uncertain_side_effect",
        "pending_approval",
        "mid_implementation",
        "after_qa_signoff",
        "before_not_null_step",
    ];
    let rows = ["none", "A", "B+A"];
    let mut cells = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        for (c, col) in cols.iter().enumerate() {
            cells.push(HeatCell {
                row: (*row).to_owned(),
                col: (*col).to_owned(),
                value: (r * 10 + c) as f64,
                count: None,
            });
        }
    }
    let plot = plots::safety_heatmap("t", &cells).unwrap();
    let texts = svg_texts(&plot.svg);
    assert!(
        !texts.iter().any(|t| t.contains('…')),
        "no label is cut: {texts:?}"
    );
    for col in cols {
        let whole = (0..texts.len())
            .any(|i| (i + 1..=texts.len().min(i + 3)).any(|j| texts[i..j].concat() == col));
        assert!(whole, "column label {col:?} not drawn whole: {texts:?}");
    }
    // The values are drawn last, row by row, each in its own cell.
    let values = &texts[texts.len() - cells.len()..];
    let expected: Vec<String> = cells.iter().map(|c| format!("{}", c.value)).collect();
    assert_eq!(values, expected.as_slice());
}

/// A heat map of rates shows each rate with its denominator (`k/n`) and says so in its scale.
#[test]
fn heatmap_rates_carry_their_denominators() {
    let cells =
        [("A", "p1", 1, 4), ("A", "p2", 0, 6), ("C", "p1", 3, 3)].map(|(r, c, k, n)| HeatCell {
            row: r.to_owned(),
            col: c.to_owned(),
            value: k as f64 / n as f64,
            count: Some((k, n)),
        });
    let plot = plots::safety_heatmap("rates", &cells).unwrap();
    for t in [
        "0.25",
        "1/4",
        "0.00",
        "0/6",
        "1.00",
        "3/3",
        "unsafe-cell rate (k/n)",
    ] {
        assert!(has_text(&plot, t), "no text element {t:?}");
    }
}
