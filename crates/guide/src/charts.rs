//! Charts as pure functions: a [`Chart`] in, an SVG document out.
//!
//! Measured series are solid lines with markers (and error bars where the point has a spread);
//! predicted or fitted series are dashed. Each series has its own colour from a palette of ten
//! (Okabe and Ito's eight, made for colour-blind readers, and two more) and its own marker
//! shape, so that series survive greyscale and lie distinguishably over each other. The legend
//! is drawn below the plot, never over the data. Log2 axes are drawn by plotting log2(x) and
//! labelling ticks with the powers of two they stand for; a linear x axis whose positive
//! values span more than a decade is drawn so too, and a y axis whose positive values span
//! more than a decade is drawn on a log scale. A categorical axis (precisions) is labelled with
//! its categories and drawn without connecting lines. Ticks read in k, M and G. Every SVG
//! carries a `<title>` and a `<desc>` with its numbers.

use plotters::coord::Shift;
use plotters::prelude::*;
use results::{AxisUnit, Chart, Scale};

/// How a chart is laid out: a wide one for a desktop's column, and a narrow one drawn for a
/// phone's width, so that its text reads at 11 px or more there instead of being scaled down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Width of the SVG, in pixels.
    pub width: u32,
    /// Height of the plot (the legend adds rows below).
    pub plot_height: u32,
    /// The title's size, where the chart draws its title (the narrow one leaves it to the
    /// page's caption).
    title_font: Option<u32>,
    /// Tick labels' size.
    tick_font: u32,
    /// Axis descriptions' size.
    axis_font: u32,
    /// Legend text's size.
    legend_font: u32,
    /// Legend entries per row.
    legend_columns: usize,
    /// Most x tick labels on a numeric axis.
    x_ticks: usize,
    /// Room for the y tick labels and description.
    y_label_area: u32,
    /// Room for the x tick labels and description.
    x_label_area: u32,
}

/// The wide layout: a desktop page's column.
pub const WIDE: Layout = Layout {
    width: 760,
    plot_height: 440,
    title_font: Some(20),
    tick_font: 14,
    axis_font: 15,
    legend_font: 13,
    legend_columns: 2,
    x_ticks: 10,
    y_label_area: 78,
    x_label_area: 52,
};

/// The narrow layout: drawn 360 px wide for a 390 px phone, where it is shown at about its
/// own size, every text 12 px or more (plotters draws a font's size at 1/1.24 of it).
pub const NARROW: Layout = Layout {
    width: 360,
    plot_height: 300,
    title_font: None,
    // Plotters writes a font of size s at s / 1.24 px: 15 draws at 12.1 px.
    tick_font: 15,
    axis_font: 15,
    legend_font: 15,
    legend_columns: 1,
    x_ticks: 5,
    y_label_area: 62,
    x_label_area: 48,
};

/// Width and height of the wide layout's plot, in SVG pixels.
pub const SIZE: (u32, u32) = (WIDE.width, WIDE.plot_height);

/// Height of one line of the legend, per pixel of its font.
const LEGEND_LINE: f64 = 1.6;
/// A series of more points than this is drawn as a line without markers.
const MAX_MARKERS: usize = 60;

/// The marker of a measured series.
#[derive(Clone, Copy)]
enum Marker {
    Circle,
    Triangle,
    Square,
    Cross,
}

/// How series `i` is drawn, in the plot and in its legend alike: its colour, its dash pattern
/// where it is predicted (dash and gap, in pixels) and its marker.
fn series_style(i: usize) -> (RGBColor, (i32, i32), Marker) {
    let dash = [(8, 5), (3, 3), (12, 4)][i % 3];
    let marker = [
        Marker::Circle,
        Marker::Triangle,
        Marker::Square,
        Marker::Cross,
    ][i % 4];
    (PALETTE[i % PALETTE.len()], dash, marker)
}

const PALETTE: [RGBColor; 10] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(153, 153, 51),
    RGBColor(136, 34, 85),
    RGBColor(120, 120, 120),
];

/// The colour of series `i` as CSS (`#0072b2`) and its dash pattern where it is predicted
/// (`8 5`): the page's own legend draws the same swatch as the chart.
pub fn swatch(i: usize) -> (String, String) {
    let (RGBColor(r, g, b), (dash, gap), _) = series_style(i);
    (format!("#{r:02x}{g:02x}{b:02x}"), format!("{dash} {gap}"))
}

/// For each series, the later series it lies under where the two have the same values at the
/// same x (within half a percent of the chart's largest value): drawn later, that one hides
/// it, so its legend says so.
pub fn hidden_under(chart: &Chart) -> Vec<Option<usize>> {
    let largest = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.y.abs()))
        .filter(|y| y.is_finite())
        .fold(0.0_f64, f64::max);
    let same = |a: &results::Series, b: &results::Series| {
        a.points.len() == b.points.len()
            && !a.points.is_empty()
            && a.points
                .iter()
                .zip(&b.points)
                .all(|(p, q)| p.x == q.x && (p.y - q.y).abs() <= largest * 0.005)
    };
    (0..chart.series.len())
        .map(|i| {
            (i + 1..chart.series.len())
                .rev()
                .find(|&j| !chart.series[i].band && same(&chart.series[i], &chart.series[j]))
        })
        .collect()
}

/// The legend text of every series: its name, and the series it lies under where one hides
/// it.
pub fn legend_names(chart: &Chart) -> Vec<String> {
    hidden_under(chart)
        .into_iter()
        .zip(&chart.series)
        .map(|(under, s)| match under {
            Some(j) => format!(
                "{} (the same values as {}, drawn over it)",
                s.name, chart.series[j].name
            ),
            None => s.name.clone(),
        })
        .collect()
}

/// A chart that could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw chart '{id}': {reason}")]
pub struct ChartError {
    id: String,
    reason: String,
}

/// The height of `chart`'s wide SVG: the plot and its legend's rows.
pub fn height(chart: &Chart) -> u32 {
    height_in(chart, &WIDE)
}

/// The height of `chart`'s SVG in `layout`.
pub fn height_in(chart: &Chart, layout: &Layout) -> u32 {
    layout.plot_height + legend_height(chart, layout)
}

/// The legend's entries, each its lines of text, wrapped to its column's width.
fn legend_lines(chart: &Chart, layout: &Layout) -> Vec<Vec<String>> {
    let column = (layout.width as usize - 40) / layout.legend_columns - 44;
    // A character of a sans-serif font is about 0.55 of its size wide.
    let per_line = ((column as f64) / (layout.legend_font as f64 * 0.55)) as usize;
    legend_names(chart)
        .iter()
        .map(|name| wrap(name, per_line.max(10)))
        .collect()
}

/// `text` in lines of at most `width` characters, broken at spaces.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// The legend's row heights: each row of entries as tall as its longest entry.
fn legend_rows(chart: &Chart, layout: &Layout) -> Vec<u32> {
    let line = (layout.legend_font as f64 * LEGEND_LINE).round() as u32;
    legend_lines(chart, layout)
        .chunks(layout.legend_columns)
        .map(|row| row.iter().map(Vec::len).max().unwrap_or(1) as u32 * line + 4)
        .collect()
}

fn legend_height(chart: &Chart, layout: &Layout) -> u32 {
    let rows = legend_rows(chart, layout);
    if rows.is_empty() {
        0
    } else {
        rows.iter().sum::<u32>() + 10
    }
}

/// How the x axis is drawn: the record's scale, or log2 where a linear axis spans more than a
/// decade of positive values.
fn x_scale(chart: &Chart) -> Scale {
    if !chart.categories.is_empty() {
        return Scale::Linear;
    }
    match chart.x_scale {
        Scale::Log2 => Scale::Log2,
        Scale::Counted => Scale::Linear,
        Scale::Linear => {
            let xs: Vec<f64> = chart
                .series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.x))
                .filter(|x| x.is_finite())
                .collect();
            if spans_decades(&xs) {
                Scale::Log2
            } else {
                Scale::Linear
            }
        }
    }
}

/// Whether a byte axis reads in GiB: an x axis where every value is 1 GiB or more, a y axis
/// where its largest reaches 1 GiB, unless it spans decades from below a tenth of a GiB.
fn reads_in_gib(x_axis: bool, values: &[f64], lo: f64, hi: f64, gib: f64) -> bool {
    if x_axis {
        lo.is_finite() && lo >= gib
    } else {
        hi >= gib && (!spans_decades(values) || lo >= gib / 10.0)
    }
}

/// All values positive and the largest more than ten times the smallest.
fn spans_decades(values: &[f64]) -> bool {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    !values.is_empty() && lo > 0.0 && hi / lo > 10.0
}

fn to_x(scale: Scale, x: f64) -> f64 {
    match scale {
        Scale::Linear | Scale::Counted => x,
        Scale::Log2 => x.log2(),
    }
}

fn x_tick_label(scale: Scale, categories: &[String], x: f64) -> String {
    if !categories.is_empty() {
        let i = x.round();
        return if (x - i).abs() < 1e-6 && i >= 1.0 && (i as usize) <= categories.len() {
            categories[i as usize - 1].clone()
        } else {
            String::new()
        };
    }
    match scale {
        Scale::Linear | Scale::Counted => si(x),
        Scale::Log2 => si(x.exp2().round()),
    }
}

/// `chart` with each byte and time axis in the unit its values read best in, the unit added to
/// its label; other axes as they are. Bytes read in MiB, in GiB from 1 GiB (a y axis spanning
/// a decade or more only where its smallest positive value is at least a tenth of a GiB, so
/// that small sizes keep their digits; an x axis only where every value is 1 GiB or more), in
/// KiB where every value is below 1 MiB. Seconds read in s where the largest value reaches
/// 10 s, in ms where it reaches 10 ms, in µs below. Presentation only: the analysis keeps base units.
pub fn in_readable_units(chart: &Chart) -> Chart {
    let mut c = chart.clone();
    let values = |c: &Chart, x: bool| -> Vec<f64> {
        c.series
            .iter()
            .flat_map(|s| &s.points)
            .flat_map(|p| {
                if x {
                    [Some(p.x), None, None]
                } else {
                    [Some(p.y), p.y_low, p.y_high]
                }
            })
            .flatten()
            .filter(|v| v.is_finite())
            .collect()
    };
    if let Some((divisor, unit)) = readable_unit(c.y_unit, &values(&c, false), false) {
        c.y_label = format!("{} ({unit})", c.y_label);
        for s in &mut c.series {
            for p in s.points.iter_mut().chain(s.marked.iter_mut()) {
                p.y /= divisor;
                p.y_low = p.y_low.map(|v| v / divisor);
                p.y_high = p.y_high.map(|v| v / divisor);
            }
        }
    }
    let x_unit = if c.categories.is_empty() {
        c.x_unit
    } else {
        AxisUnit::Given
    };
    if let Some((divisor, unit)) = readable_unit(x_unit, &values(&c, true), true) {
        c.x_label = format!("{} ({unit})", c.x_label);
        for s in &mut c.series {
            for p in s.points.iter_mut().chain(s.marked.iter_mut()) {
                p.x /= divisor;
            }
        }
    }
    c.x_unit = AxisUnit::Given;
    c.y_unit = AxisUnit::Given;
    c
}

/// The divisor and name of the unit `values` (in base units) read best in, as
/// [`in_readable_units`] chooses it; `None` for an axis whose label gives its unit.
fn readable_unit(unit: AxisUnit, values: &[f64], x_axis: bool) -> Option<(f64, &'static str)> {
    const KIB: f64 = 1024.0;
    const MIB: f64 = KIB * KIB;
    const GIB: f64 = MIB * KIB;
    let hi = values.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    let lo = values
        .iter()
        .copied()
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    match unit {
        AxisUnit::Given => None,
        AxisUnit::Bytes => Some(if reads_in_gib(x_axis, values, lo, hi, GIB) {
            (GIB, "GiB")
        } else if hi > 0.0 && hi < MIB {
            (KIB, "KiB")
        } else {
            (MIB, "MiB")
        }),
        AxisUnit::Seconds => Some(if hi >= 10.0 {
            (1.0, "s")
        } else if hi >= 10e-3 {
            (1e-3, "ms")
        } else {
            (1e-6, "µs")
        }),
    }
}

/// A tick value in a few characters: `1.2k`, `3.4M`, `1.21G`; small values as they are.
pub fn si(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let text = if scaled.fract() == 0.0 || scaled.abs() >= 100.0 {
        format!("{scaled:.0}")
    } else if scaled.abs() >= 10.0 {
        format!("{scaled:.1}")
    } else {
        format!("{scaled:.2}")
    };
    format!("{text}{suffix}")
}

/// The text a screen reader gets: each series and its points.
fn description(chart: &Chart) -> String {
    let mut parts = vec![format!("x: {}; y: {}.", chart.x_label, chart.y_label)];
    for s in &chart.series {
        let points: Vec<String> = s
            .points
            .iter()
            .map(|p| {
                let x = if chart.categories.is_empty() {
                    trim(p.x)
                } else {
                    x_tick_label(Scale::Linear, &chart.categories, p.x)
                };
                format!("{x}: {}", trim(p.y))
            })
            .collect();
        let marked: Vec<String> = s
            .marked
            .iter()
            .map(|p| format!("{}: {}", trim(p.x), trim(p.y)))
            .collect();
        parts.push(format!(
            "{}{}: {}{}.",
            s.name,
            if s.predicted { " (predicted)" } else { "" },
            points.join(", "),
            if marked.is_empty() {
                String::new()
            } else {
                format!("; marked {}", marked.join(", "))
            }
        ));
    }
    parts.join(" ")
}

/// A number as written in a table: whole numbers whole, others to four significant figures.
pub fn trim(v: f64) -> String {
    if !v.is_finite() {
        "n/a".into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        let digits = (3 - v.abs().log10().floor() as i32).clamp(0, 8) as usize;
        format!("{v:.digits$}")
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Draws `chart` as a standalone SVG document in the wide layout.
pub fn render_svg(chart: &Chart) -> Result<String, ChartError> {
    render_svg_in(chart, &WIDE)
}

/// Draws `chart` as a standalone SVG document in `layout`.
pub fn render_svg_in(chart: &Chart, layout: &Layout) -> Result<String, ChartError> {
    let err = |e: &dyn std::fmt::Display| ChartError {
        id: chart.id.clone(),
        reason: e.to_string(),
    };
    let scale = x_scale(chart);
    let finite = |v: &f64| v.is_finite();
    let xs: Vec<f64> = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| to_x(scale, p.x)))
        .filter(finite)
        .collect();
    let ys: Vec<f64> = chart
        .series
        .iter()
        .flat_map(|s| {
            s.points
                .iter()
                .flat_map(|p| [Some(p.y), p.y_low, p.y_high])
                .flatten()
        })
        .filter(finite)
        .collect();
    if xs.is_empty() || ys.is_empty() {
        return Err(err(&"no finite points"));
    }
    let (x_min, x_max) = if chart.categories.is_empty() {
        bounds(&xs, 0.05)
    } else {
        (0.5, chart.categories.len() as f64 + 0.5)
    };
    let log_y = spans_decades(&ys);

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (layout.width, height_in(chart, layout)))
            .into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let (plot, legend) = root.split_vertically(layout.plot_height);
        if log_y {
            let lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let ctx = builder(&plot, chart, layout)
                .build_cartesian_2d(x_min..x_max, ((lo / 1.3)..(hi * 1.3)).log_scale())
                .map_err(|e| err(&e))?;
            draw(ctx, chart, scale, layout, &err)?;
        } else {
            // Zero is always on the axis; 8% of the span is left above (and below, where
            // values are negative), so that markers and error bars are not cut at the frame.
            let high = ys
                .iter()
                .copied()
                .fold(f64::NEG_INFINITY, f64::max)
                .max(0.0);
            let low = ys.iter().copied().fold(f64::INFINITY, f64::min).min(0.0);
            let pad = (high - low) * 0.08;
            let (y_min, y_max) = if high > low {
                (if low < 0.0 { low - pad } else { low }, high + pad)
            } else {
                (low, low + 1.0)
            };
            let ctx = builder(&plot, chart, layout)
                .build_cartesian_2d(x_min..x_max, y_min..y_max)
                .map_err(|e| err(&e))?;
            draw(ctx, chart, scale, layout, &err)?;
        }
        draw_legend(&legend, chart, layout).map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    // A title and a description for screen readers, right after the opening tag.
    if let Some(end) = svg.find('>') {
        let meta = format!(
            "\n<title>{}</title>\n<desc>{}</desc>",
            escape(&chart.title),
            escape(&description(chart))
        );
        svg.insert_str(end + 1, &meta);
    }
    Ok(svg)
}

/// The chart's frame in `layout`: its title where the layout draws one, its margins and the
/// room for the axes' labels (more below a narrow categorical axis, whose labels stand up).
fn builder<'a, 'b, DB: DrawingBackend>(
    plot: &'a DrawingArea<DB, Shift>,
    chart: &Chart,
    layout: &Layout,
) -> ChartBuilder<'a, 'b, DB> {
    let mut b = ChartBuilder::on(plot);
    if let Some(size) = layout.title_font {
        b.caption(&chart.title, ("sans-serif", size));
    }
    let standing = upright_categories(chart, layout);
    b.margin(if layout.title_font.is_some() { 12 } else { 8 })
        .margin_right(14)
        .x_label_area_size(if standing {
            layout.x_label_area + 40
        } else {
            layout.x_label_area
        })
        .y_label_area_size(layout.y_label_area);
    b
}

/// Whether a categorical axis's labels stand upright: where they would not fit side by side.
fn upright_categories(chart: &Chart, layout: &Layout) -> bool {
    let longest = chart
        .categories
        .iter()
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(0) as f64;
    let room = (layout.width - layout.y_label_area) as f64 / chart.categories.len().max(1) as f64;
    !chart.categories.is_empty() && longest * layout.tick_font as f64 * 0.6 > room
}

/// The mesh and every series, on a y axis of either kind.
fn draw<'a, DB, Y>(
    mut ctx: ChartContext<'a, DB, Cartesian2d<plotters::coord::types::RangedCoordf64, Y>>,
    chart: &Chart,
    scale: Scale,
    layout: &Layout,
    err: &dyn Fn(&dyn std::fmt::Display) -> ChartError,
) -> Result<(), ChartError>
where
    DB: DrawingBackend + 'a,
    Y: Ranged<ValueType = f64> + plotters::coord::ranged1d::ValueFormatter<f64>,
{
    let x_labels = if !chart.categories.is_empty() {
        chart.categories.len() * 2 + 1
    } else {
        match scale {
            Scale::Log2 => {
                let (lo, hi) = (ctx.x_range().start, ctx.x_range().end);
                let all = (hi.floor() - lo.ceil()) as usize + 1;
                // Every power of two where they fit, else every other one.
                let fit = (layout.x_ticks as f64 * 1.4) as usize;
                if all <= fit {
                    all.max(2)
                } else {
                    all.div_ceil(2).clamp(2, fit)
                }
            }
            Scale::Linear | Scale::Counted => layout.x_ticks,
        }
    };
    let categories = &chart.categories;
    let tick = ("sans-serif", layout.tick_font).into_font();
    let x_tick = if upright_categories(chart, layout) {
        tick.clone().transform(FontTransform::Rotate90)
    } else {
        tick.clone()
    };
    ctx.configure_mesh()
        .x_desc(&chart.x_label)
        .y_desc(&chart.y_label)
        .x_labels(x_labels)
        .x_label_formatter(&|x| x_tick_label(scale, categories, *x))
        .y_labels(if layout.width < WIDE.width { 6 } else { 12 })
        .y_label_formatter(&|y| si(*y))
        .label_style(tick)
        .x_label_style(x_tick)
        .axis_desc_style(("sans-serif", layout.axis_font))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(|e| err(&e))?;

    for (i, series) in chart.series.iter().enumerate() {
        let (color, (dash, gap), marker) = series_style(i);
        if series.band {
            // An interval: shaded from its lows to its highs, its estimate dashed.
            let edge = |p: &results::ChartPoint, y: Option<f64>| {
                let (x, y) = (to_x(scale, p.x), y?);
                (x.is_finite() && y.is_finite()).then_some((x, y))
            };
            let mut outline: Vec<(f64, f64)> = series
                .points
                .iter()
                .filter_map(|p| edge(p, p.y_high))
                .collect();
            outline.extend(series.points.iter().rev().filter_map(|p| edge(p, p.y_low)));
            ctx.draw_series(std::iter::once(Polygon::new(
                outline,
                color.mix(0.18).filled(),
            )))
            .map_err(|e| err(&e))?;
            let mid: Vec<(f64, f64)> = series
                .points
                .iter()
                .filter_map(|p| edge(p, Some(p.y)))
                .collect();
            let style = ShapeStyle::from(color).stroke_width(2);
            ctx.draw_series(DashedLineSeries::new(mid, dash, gap, style))
                .map_err(|e| err(&e))?;
            continue;
        }
        let pts: Vec<(f64, f64)> = series
            .points
            .iter()
            .map(|p| (to_x(scale, p.x), p.y))
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        let style = ShapeStyle::from(color).stroke_width(2);
        if categories.is_empty() {
            if series.predicted {
                ctx.draw_series(DashedLineSeries::new(pts.clone(), dash, gap, style))
                    .map_err(|e| err(&e))?;
            } else {
                ctx.draw_series(LineSeries::new(pts.clone(), style))
                    .map_err(|e| err(&e))?;
            }
        }
        // A marked point (a peak): a large ring in the series' colour around a dot.
        let marked: Vec<(f64, f64)> = series
            .marked
            .iter()
            .map(|p| (to_x(scale, p.x), p.y))
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        ctx.draw_series(
            marked
                .iter()
                .map(|&p| Circle::new(p, 8, color.stroke_width(3))),
        )
        .map_err(|e| err(&e))?;
        ctx.draw_series(marked.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(|e| err(&e))?;
        // Markers where they can be told apart: a timeline of hundreds of events is a line.
        let markers = pts.len() <= MAX_MARKERS || !categories.is_empty();
        if markers && (!series.predicted || !categories.is_empty()) {
            // A circle, a triangle, a square or a cross, in turn.
            let fill = color.filled();
            match marker {
                Marker::Circle => {
                    ctx.draw_series(pts.iter().map(|&p| Circle::new(p, 4, fill)))
                        .map_err(|e| err(&e))?;
                }
                Marker::Triangle => {
                    ctx.draw_series(pts.iter().map(|&p| TriangleMarker::new(p, 5, fill)))
                        .map_err(|e| err(&e))?;
                }
                Marker::Square => {
                    ctx.draw_series(
                        pts.iter().map(|&p| {
                            EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], fill)
                        }),
                    )
                    .map_err(|e| err(&e))?;
                }
                Marker::Cross => {
                    ctx.draw_series(pts.iter().map(|&p| Cross::new(p, 5, color.stroke_width(2))))
                        .map_err(|e| err(&e))?;
                }
            }
            let bars = series.points.iter().filter_map(|p| {
                let (lo, hi) = (p.y_low?, p.y_high?);
                let x = to_x(scale, p.x);
                (x.is_finite() && lo.is_finite() && hi.is_finite())
                    .then(|| ErrorBar::new_vertical(x, lo, p.y, hi, color.stroke_width(1), 8))
            });
            ctx.draw_series(bars).map_err(|e| err(&e))?;
        }
    }
    Ok(())
}

/// The legend, below the plot: each series' line (dashed where predicted), marker and name.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: &Chart,
    layout: &Layout,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let columns = layout.legend_columns;
    let column = (layout.width as i32 - 40) / columns as i32;
    let lines = legend_lines(chart, layout);
    let rows = legend_rows(chart, layout);
    let line = (layout.legend_font as f64 * LEGEND_LINE).round() as i32;
    for (i, (series, text)) in chart.series.iter().zip(lines).enumerate() {
        let (color, (dash, gap), marker) = series_style(i);
        let x = 16 + (i % columns) as i32 * column;
        let top: u32 = rows[..i / columns].iter().sum();
        let y = 8 + top as i32 + line / 2;
        let style = ShapeStyle::from(color).stroke_width(2);
        if series.band {
            // The band's shade behind its estimate's dashes.
            area.draw(&Rectangle::new(
                [(x, y - 6), (x + 28, y + 6)],
                color.mix(0.18).filled(),
            ))?;
        }
        if series.predicted && chart.categories.is_empty() {
            let mut at = x;
            while at < x + 28 {
                let to = (at + dash).min(x + 28);
                area.draw(&PathElement::new(vec![(at, y), (to, y)], style))?;
                at = to + gap;
            }
        } else {
            if chart.categories.is_empty() {
                area.draw(&PathElement::new(vec![(x, y), (x + 28, y)], style))?;
            }
            let m = (x + 14, y);
            match marker {
                Marker::Circle => area.draw(&Circle::new(m, 4, color.filled()))?,
                Marker::Triangle => area.draw(&TriangleMarker::new(m, 5, color.filled()))?,
                Marker::Square => area.draw(&Rectangle::new(
                    [(m.0 - 3, m.1 - 3), (m.0 + 3, m.1 + 3)],
                    color.filled(),
                ))?,
                Marker::Cross => area.draw(&Cross::new(m, 5, color.stroke_width(2)))?,
            }
        }
        for (k, text) in text.into_iter().enumerate() {
            area.draw(&Text::new(
                text,
                (
                    x + 36,
                    y - layout.legend_font as i32 / 2 - 1 + k as i32 * line,
                ),
                ("sans-serif", layout.legend_font).into_font().color(&BLACK),
            ))?;
        }
    }
    Ok(())
}

fn bounds(values: &[f64], pad: f64) -> (f64, f64) {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if hi > lo {
        let margin = (hi - lo) * pad;
        (lo - margin, hi + margin)
    } else {
        (lo - 1.0, hi + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::Series;

    fn chart(scale: Scale) -> Chart {
        Chart {
            id: "t".into(),
            title: "Peak against batch".into(),
            x_label: "batch size (samples)".into(),
            y_label: "bytes (MiB)".into(),
            x_unit: AxisUnit::Given,
            y_unit: AxisUnit::Given,
            x_scale: scale,
            categories: Vec::new(),
            series: vec![
                Series::line(
                    "measured",
                    false,
                    vec![(8.0, 1.0), (16.0, 2.0), (32.0, 4.0)],
                ),
                Series::line("predicted", true, vec![(8.0, 1.1), (32.0, 3.9)]),
            ],
        }
    }

    #[test]
    fn a_long_legend_entry_wraps_within_its_column() {
        assert_eq!(wrap("a b c", 3), vec!["a b", "c"]);
        let mut c = chart(Scale::Linear);
        c.series[0].name = "weights (the same values as gradients, drawn over it) ".repeat(2);
        let narrow = height_in(&c, &NARROW);
        let svg = render_svg_in(&c, &NARROW).unwrap();
        assert!(svg.contains("width=\"360\""));
        assert!(
            narrow > NARROW.plot_height + 2 * 30,
            "the long entry takes several lines"
        );
        let wide = render_svg(&c).unwrap();
        let titles = |svg: &str| svg.matches("Peak against batch").count();
        assert_eq!(
            titles(&svg) + 1,
            titles(&wide),
            "the narrow chart leaves its title out"
        );
    }

    #[test]
    fn svg_has_title_axes_and_legend() {
        let svg = render_svg(&chart(Scale::Log2)).unwrap();
        assert!(svg.starts_with("<svg"));
        for text in [
            "Peak against batch",
            "batch size (samples)",
            "bytes (MiB)",
            "measured",
            "predicted",
            "\n16\n",
        ] {
            assert!(svg.contains(text), "missing {text}");
        }
    }

    const MIB: f64 = 1024.0 * 1024.0;

    /// A chart of bytes against bytes, its values given in MiB.
    fn bytes_chart(points: Vec<(f64, f64)>) -> Chart {
        let mut c = chart(Scale::Linear);
        c.x_label = "tensor size".into();
        c.y_label = "bytes".into();
        c.x_unit = AxisUnit::Bytes;
        c.y_unit = AxisUnit::Bytes;
        c.series = vec![Series::line(
            "measured",
            false,
            points
                .into_iter()
                .map(|(x, y)| (x * MIB, y * MIB))
                .collect(),
        )];
        c
    }

    #[test]
    fn byte_axes_read_in_mib_in_gib_from_one_gib_and_in_kib_below_one_mib() {
        let r = in_readable_units(&bytes_chart(vec![(1.0, 512.0), (2.0, 1137.0)]));
        assert_eq!(
            (r.x_label.as_str(), r.y_label.as_str()),
            ("tensor size (MiB)", "bytes (GiB)")
        );
        assert!((r.series[0].points[1].y - 1137.0 / 1024.0).abs() < 1e-12);
        assert_eq!(r.series[0].points[1].x, 2.0);
        // On a log axis over small sizes, MiB stay.
        let r = in_readable_units(&bytes_chart(vec![(1.0, 16.0), (2.0, 1024.0)]));
        assert_eq!(r.y_label, "bytes (MiB)");
        // An x axis of sizes all of 1 GiB or more.
        let r = in_readable_units(&bytes_chart(vec![(1024.0, 1.0), (4096.0, 2.0)]));
        assert_eq!(r.x_label, "tensor size (GiB)");
        assert_eq!(r.series[0].points[1].x, 4.0);
        // Every value below 1 MiB.
        let r = in_readable_units(&bytes_chart(vec![(0.25, 0.5), (0.5, 0.75)]));
        assert_eq!(
            (r.x_label.as_str(), r.y_label.as_str()),
            ("tensor size (KiB)", "bytes (KiB)")
        );
        assert_eq!(r.series[0].points[1].y, 768.0);
    }

    #[test]
    fn time_axes_read_in_ms_from_ten_milliseconds_and_labels_that_give_their_unit_stay() {
        let mut c = chart(Scale::Linear);
        c.y_label = "time".into();
        c.y_unit = AxisUnit::Seconds;
        c.series = vec![Series::line("t", false, vec![(1.0, 0.002), (2.0, 0.5)])];
        let r = in_readable_units(&c);
        assert_eq!(r.y_label, "time (ms)");
        assert_eq!(r.series[0].points[1].y, 500.0);
        assert_eq!(
            in_readable_units(&chart(Scale::Linear)),
            chart(Scale::Linear)
        );
    }

    #[test]
    fn empty_chart_is_an_error() {
        let mut c = chart(Scale::Linear);
        c.series.clear();
        assert!(render_svg(&c).is_err());
    }
}

#[cfg(test)]
mod reading_tests {
    use super::*;
    use results::Series;

    fn base() -> Chart {
        Chart {
            id: "t".into(),
            title: "A & B".into(),
            x_label: "size (MiB)".into(),
            y_label: "time (ms)".into(),
            x_unit: AxisUnit::Given,
            y_unit: AxisUnit::Given,
            x_scale: Scale::Linear,
            categories: Vec::new(),
            series: Vec::new(),
        }
    }

    #[test]
    fn every_svg_has_a_title_and_a_description_with_its_numbers() {
        let mut c = base();
        c.series = vec![Series::line(
            "from the cache",
            false,
            vec![(16.0, 1.5), (1024.0, 820.0)],
        )];
        let svg = render_svg(&c).unwrap();
        assert!(svg.contains("<title>A &amp; B</title>"), "{}", &svg[..300]);
        assert!(svg.contains(
            "<desc>x: size (MiB); y: time (ms). from the cache: 16: 1.500, 1024: 820.</desc>"
        ));
    }

    #[test]
    fn values_over_a_decade_get_log_axes_and_ticks_read_in_si_units() {
        assert!(spans_decades(&[16.0, 1024.0]));
        assert!(
            !spans_decades(&[0.0, 1024.0]),
            "zero cannot go on a log axis"
        );
        assert!(!spans_decades(&[100.0, 900.0]));
        let mut c = base();
        c.series = vec![Series::line("s", false, vec![(16.0, 1.0), (1024.0, 2.0)])];
        assert_eq!(x_scale(&c), Scale::Log2);
        assert_eq!(si(1_210_491_319.0), "1.21G");
        assert_eq!(si(45_000.0), "45k");
        assert_eq!(si(12_500.0), "12.5k");
        assert_eq!(si(250.0), "250");
        assert_eq!(si(0.5), "0.50");
    }

    #[test]
    fn categories_label_the_axis_and_the_legend_sits_below_the_plot() {
        let mut c = base();
        c.categories = vec!["f32".into(), "bf16".into(), "mixed-bf16".into()];
        c.series = (0..5)
            .map(|i| {
                Series::line(
                    format!("series {i}"),
                    false,
                    vec![(1.0, 1.0 + i as f64), (3.0, 2.0)],
                )
            })
            .collect();
        let svg = render_svg(&c).unwrap();
        for name in ["f32", "bf16", "mixed-bf16", "series 4"] {
            assert!(
                svg.contains(&format!(">{name}<")) || svg.contains(&format!("\n{name}\n")),
                "{name}"
            );
        }
        // Five series: three legend rows below the 440 px plot (two columns wide), five on a
        // phone (one column), each a line of text.
        let row = |l: &Layout| (l.legend_font as f64 * LEGEND_LINE).round() as u32 + 4;
        assert_eq!(height(&c), SIZE.1 + 3 * row(&WIDE) + 10);
        assert_eq!(
            height_in(&c, &NARROW),
            NARROW.plot_height + 5 * row(&NARROW) + 10
        );
        assert!(svg.contains(&format!("height=\"{}\"", height(&c))));
        assert_eq!(x_tick_label(Scale::Linear, &c.categories, 2.0), "bf16");
        assert_eq!(x_tick_label(Scale::Linear, &c.categories, 2.5), "");
    }
}
