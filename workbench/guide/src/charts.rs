//! Charts as pure functions: a [`Chart`] in, an SVG document out.
//!
//! Measured series are solid lines with markers (and error bars where the point has a spread);
//! predicted or fitted series are dashed. Log2 axes are drawn by plotting log2(x) and labelling
//! ticks with the powers of two they stand for.

use plotters::prelude::*;
use results::{Chart, Scale};

/// Width and height of every chart, in SVG pixels.
pub const SIZE: (u32, u32) = (760, 440);

const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(140, 86, 75),
];

/// A chart that could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw chart '{id}': {reason}")]
pub struct ChartError {
    id: String,
    reason: String,
}

fn to_x(scale: Scale, x: f64) -> f64 {
    match scale {
        Scale::Linear => x,
        Scale::Log2 => x.log2(),
    }
}

fn x_tick_label(scale: Scale, x: f64) -> String {
    match scale {
        Scale::Linear => trim_number(x),
        Scale::Log2 => trim_number(x.exp2().round()),
    }
}

fn trim_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e12 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// Draws `chart` as a standalone SVG document.
pub fn render_svg(chart: &Chart) -> Result<String, ChartError> {
    let err = |e: &dyn std::fmt::Display| ChartError {
        id: chart.id.clone(),
        reason: e.to_string(),
    };
    let finite = |v: &f64| v.is_finite();
    let xs: Vec<f64> = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| to_x(chart.x_scale, p.x)))
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
    let (x_min, x_max) = bounds(&xs, 0.05);
    // Zero is always on the axis; 8% of the span is left above (and below, where values are
    // negative), so that markers and error bars are not cut at the frame.
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

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let mut ctx = ChartBuilder::on(&root)
            .caption(&chart.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(72)
            .build_cartesian_2d(x_min..x_max, y_min..y_max)
            .map_err(|e| err(&e))?;
        let scale = chart.x_scale;
        let x_labels = match scale {
            Scale::Log2 => ((x_max.floor() - x_min.ceil()) as usize + 1).clamp(2, 14),
            Scale::Linear => 10,
        };
        ctx.configure_mesh()
            .x_desc(&chart.x_label)
            .y_desc(&chart.y_label)
            .x_labels(x_labels)
            .x_label_formatter(&|x| x_tick_label(scale, *x))
            .y_label_formatter(&|y| trim_number(*y))
            .axis_desc_style(("sans-serif", 15))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(|e| err(&e))?;

        for (i, series) in chart.series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let pts: Vec<(f64, f64)> = series
                .points
                .iter()
                .map(|p| (to_x(scale, p.x), p.y))
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect();
            let style = ShapeStyle::from(color).stroke_width(2);
            let drawn = if series.predicted {
                ctx.draw_series(DashedLineSeries::new(pts.clone(), 8, 5, style))
                    .map_err(|e| err(&e))?
            } else {
                ctx.draw_series(LineSeries::new(pts.clone(), style))
                    .map_err(|e| err(&e))?
            };
            drawn.label(&series.name).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
            if !series.predicted {
                ctx.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                    .map_err(|e| err(&e))?;
                let bars = series.points.iter().filter_map(|p| {
                    let (lo, hi) = (p.y_low?, p.y_high?);
                    let x = to_x(scale, p.x);
                    (x.is_finite() && lo.is_finite() && hi.is_finite())
                        .then(|| ErrorBar::new_vertical(x, lo, p.y, hi, color.stroke_width(1), 8))
                });
                ctx.draw_series(bars).map_err(|e| err(&e))?;
            }
        }
        ctx.configure_series_labels()
            .position(legend_position(&chart.series, scale))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

/// Upper left when the data rise from left to right, upper right when they fall, so that the
/// legend sits over the emptier corner.
fn legend_position(series: &[results::Series], scale: Scale) -> SeriesLabelPosition {
    let (mut left, mut right) = (0.0, 0.0);
    for s in series {
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .map(|p| (to_x(scale, p.x), p.y))
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        if let (Some(first), Some(last)) = (
            pts.iter().min_by(|a, b| a.0.total_cmp(&b.0)),
            pts.iter().max_by(|a, b| a.0.total_cmp(&b.0)),
        ) {
            left += first.1;
            right += last.1;
        }
    }
    if left > right {
        SeriesLabelPosition::UpperRight
    } else {
        SeriesLabelPosition::UpperLeft
    }
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
            x_scale: scale,
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

    #[test]
    fn empty_chart_is_an_error() {
        let mut c = chart(Scale::Linear);
        c.series.clear();
        assert!(render_svg(&c).is_err());
    }
}
