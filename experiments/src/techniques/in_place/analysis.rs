//! The in-place experiment's conclusions: the bytes each way adds, predicted beside measured,
//! charts and the index row.

use results::analysis::worst_check;
use results::format::{self, mib};
use results::{
    Analysis, Chart, Comparison, Correctness, Headline, MeasuredPoint, Metric, Scale, Series, Side,
};

use super::{predict, Case, InPlace, InPlaceConfig, Style};
use crate::technique::{Analyse, Row};

/// A measured in-place point.
type R<'a> = Row<'a, InPlaceConfig>;

/// Bytes the computation added at its peak above its input.
fn added(r: &R<'_>) -> f64 {
    r.result.metric(Metric::AddedPeakBytes)
}

impl Analyse for InPlace {
    /// The analysis of the in-place experiment.
    fn analyse(&self, mut rows: Vec<Row<'_, InPlaceConfig>>, points: &[MeasuredPoint]) -> Analysis {
        rows.sort_by_key(|r| r.config.rows);
        let correctness = Correctness::of(points);
        let of = |case: Case, style: Style| -> Vec<&R<'_>> {
            rows.iter()
                .filter(|r| r.config.case == case && r.config.style == style)
                .collect()
        };
        // The pair at the largest size measured both ways, per case.
        let pair = |case: Case| -> Option<(&R<'_>, &R<'_>)> {
            of(case, Style::KeepClone).into_iter().rev().find_map(|k| {
                of(case, Style::Consume)
                    .into_iter()
                    .find(|c| c.config.rows == k.config.rows)
                    .map(|c| (k, c))
            })
        };
        let Some((norm_kept, norm_consumed)) = pair(Case::LayerNorm).or_else(|| pair(Case::Chain))
        else {
            return Analysis::unmeasured(correctness);
        };

        let mut findings = Vec::new();
        let mut comparisons = Vec::new();
        for case in [Case::Chain, Case::LayerNorm] {
            if let Some((kept, consumed)) = pair(case) {
                let saved = added(kept) - added(consumed);
                findings.push(format!(
                    "{} on {} x {} f32 ({}): keeping a clone adds {} at the peak, consuming the \
                 input adds {}; the saving, {}, is {:.4} tensors' worth. Time: {} against {}.",
                    format::capitalise(case.name()),
                    kept.config.rows,
                    kept.config.cols,
                    format::bytes(kept.config.tensor_bytes() as f64),
                    format::bytes(added(kept)),
                    format::bytes(added(consumed)),
                    format::bytes(saved),
                    saved / kept.config.tensor_bytes() as f64,
                    format::seconds(kept.result.step.median_s),
                    format::seconds(consumed.result.step.median_s),
                ));
                comparisons.push(Comparison {
                    quantity: format!(
                        "{}, {} rows: bytes saved by consuming",
                        case.name(),
                        kept.config.rows
                    ),
                    predicted_bytes: predict::added_peak_bytes(&kept.config)
                        - predict::added_peak_bytes(&consumed.config),
                    measured_bytes: saved,
                    note: "one tensor's elements: the buffer the first write into a shared tensor \
                       allocates"
                        .into(),
                });
            }
        }
        for r in &rows {
            if r.config.rows == norm_kept.config.rows {
                comparisons.push(Comparison {
                    quantity: format!(
                        "{}, {}, {} rows: peak above the input",
                        r.config.case.name(),
                        r.config.style.name(),
                        r.config.rows
                    ),
                    predicted_bytes: predict::added_peak_bytes(&r.config),
                    measured_bytes: added(r),
                    note: prediction_note(r.config.case, r.config.style).into(),
                });
            }
        }

        let mut memory_series = Vec::new();
        let mut time_series = Vec::new();
        for case in [Case::Chain, Case::LayerNorm] {
            for style in [Style::KeepClone, Style::Consume] {
                let rs = of(case, style);
                if rs.is_empty() {
                    continue;
                }
                let name = format!("{}, {}", case.name(), style.name());
                let x = |r: &R<'_>| mib(r.config.tensor_bytes() as f64);
                memory_series.push(Series::line(
                    &format!("{name} (measured)"),
                    false,
                    rs.iter().map(|r| (x(r), mib(added(r)))).collect(),
                ));
                memory_series.push(Series::line(
                    &format!("{name} (predicted)"),
                    true,
                    rs.iter()
                        .map(|r| (x(r), mib(predict::added_peak_bytes(&r.config))))
                        .collect(),
                ));
                time_series.push(Series::throughput(
                    &format!("{name} (median; bars: fastest and slowest)"),
                    rs.iter().map(|r| (x(r), r.result)),
                ));
            }
        }
        let charts = vec![
            Chart {
                id: "added-peak-vs-size".into(),
                title: "Peak memory the computation adds above its input".into(),
                x_label: "input tensor (MiB)".into(),
                y_label: "peak above the input (MiB)".into(),
                x_scale: Scale::Log2,
                series: memory_series,
            },
            Chart {
                id: "throughput-vs-size".into(),
                title: "Rows processed per second".into(),
                x_label: "input tensor (MiB)".into(),
                y_label: "throughput (rows/s)".into(),
                x_scale: Scale::Log2,
                series: time_series,
            },
        ];

        let (k, c) = (norm_kept, norm_consumed);
        Analysis {
            headline: Headline::versus(
                format!(
                    "{} of {} x {} f32: keeping a clone of the input against consuming it (peak \
                 above the input; rows/s)",
                    k.config.case.name(),
                    k.config.rows,
                    k.config.cols
                ),
                Side::with_peak("peak above the input", added(k), k.result),
                Side::with_peak("peak above the input", added(c), c.result),
                correctness,
                worst_check(points),
            ),
            findings,
            comparisons,
            fits: vec![],
            charts,
            published: vec![],
        }
    }
}

fn prediction_note(case: Case, style: Style) -> &'static str {
    match (case, style) {
        (Case::Chain, Style::KeepClone) => {
            "the first op (x / 2) writes a new tensor since x is shared; exp, + 1 and log run in \
             place on it. The few dozen bytes over are the new tensor's handle"
        }
        (Case::Chain, Style::Consume) => "all four ops write into x's buffer",
        (Case::LayerNorm, Style::KeepClone) => {
            "x - mean needs a new buffer (x is shared), square() is x * x and always allocates, \
             plus one f32 per row for the variance while the square is alive"
        }
        (Case::LayerNorm, Style::Consume) => {
            "x - mean writes into x; square() allocates one tensor, plus one f32 per row for the \
             variance; the division runs in place"
        }
    }
}
