//! The views experiment's conclusions: bytes copied and held, predicted beside measured, the
//! trap and its fix, charts and the index row.

use results::keys::views::Key;
use results::keys::CommonKey;
use results::{
    Analysis, AxisUnit, Chart, Comparison, ComparisonSpec, Correctness, Headline, MeasuredPoint,
    Metric, PairedComparison, Scale, Series, Side, Text,
};

use super::ViewsMetric;
use super::{predict, Op, ViewConfig, Views, COLS, OPS, PHASE};
use crate::bracket;
use crate::estimate::F32_BYTES;
use crate::technique::{Analyse, Row};

/// A measured views point.
type R<'a> = Row<'a, ViewConfig>;

/// Bytes the operation added at its peak above the live parent.
fn copied(r: &R<'_>) -> f64 {
    r.result.metric(ViewsMetric::CopiedBytes)
}

/// Bytes still held once the operation returned.
fn held(r: &R<'_>) -> f64 {
    r.result.metric(Metric::HeldBytes)
}

/// The id of the headline's paired comparison.
const HEADLINE: &str = "row-view-against-copy";

/// The trap against its fix at the largest parent: a one-row view (the baseline) against the
/// row copied out.
pub(super) fn comparisons(rows: &[R<'_>]) -> Vec<ComparisonSpec> {
    let largest = |op: Op| {
        rows.iter()
            .filter(|r| r.config.op == op)
            .max_by_key(|r| r.config.rows)
    };
    match (largest(Op::RowView), largest(Op::RowCopy)) {
        (Some(view), Some(copy)) if view.config.rows == copy.config.rows => {
            vec![ComparisonSpec::new(HEADLINE, view.id, copy.id)]
        }
        _ => Vec::new(),
    }
}

impl Analyse for Views {
    /// The analysis of the views experiment.
    fn analyse(
        &self,
        mut rows: Vec<Row<'_, ViewConfig>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis<Text> {
        rows.sort_by_key(|r| r.config.rows);
        let correctness = Correctness::of(points);
        let Some(largest) = rows.iter().map(|r| r.config.rows).max() else {
            return Analysis::unmeasured(correctness);
        };
        let at_largest = |op: Op| {
            rows.iter()
                .find(|r| r.config.op == op && r.config.rows == largest)
        };
        let of = |op: Op| -> Vec<&R<'_>> { rows.iter().filter(|r| r.config.op == op).collect() };

        let mut comparisons = Vec::new();
        for op in OPS {
            if let Some(r) = at_largest(op) {
                comparisons.push(
                    Comparison::new(
                        Text::said(Key::CopiedQuantity).name("op", op.code()),
                        predict::copied_bytes(op, r.config.rows, r.config.cols, r.allocator())
                            as f64,
                        copied(r),
                        Text::said(Key::CopyNote)
                            .variant("op", op)
                            .variant("allocator", r.allocator()),
                    )
                    .bracketed(bracket::added_upper(r, PHASE, 1.0)),
                );
            }
        }
        for op in [Op::RowView, Op::RowCopy] {
            if let Some(r) = at_largest(op) {
                comparisons.push(Comparison {
                    quantity: Text::said(Key::HeldQuantity).name("op", op.code()),
                    predicted_bytes: predict::held_bytes(op, r.config.rows, r.config.cols) as f64,
                    measured_bytes: held(r),
                    measured_upper_bytes: None,
                    note: Text::said(Key::HeldNote).variant("op", op),
                });
            }
        }

        let mut findings = Vec::new();
        let parent = |r: &R<'_>| r.config.parent_bytes() as f64;
        let views: Vec<&R<'_>> = rows
            .iter()
            .filter(|r| r.config.op.is_view() && r.config.op != Op::RowView)
            .collect();
        if let Some(most) = views.iter().max_by(|a, b| copied(a).total_cmp(&copied(b))) {
            findings.push(
                Text::said(Key::ViewsAreFree)
                    .bytes("most", copied(most))
                    .count("measurements", views.len())
                    .bytes("largest", largest as f64 * COLS as f64 * F32_BYTES as f64),
            );
        }
        for op in [
            Op::ReshapeTransposed,
            Op::ExpTransposed,
            Op::ToDataRoundTrip,
            Op::IntoDataRoundTrip,
        ] {
            if let Some(r) = at_largest(op) {
                findings.push(
                    Text::said(Key::OpCopies)
                        .name("op", op.code())
                        .bytes("parent", parent(r))
                        .bytes("copied", copied(r)),
                );
            }
        }
        if let (Some(view), Some(copy)) = (at_largest(Op::RowView), at_largest(Op::RowCopy)) {
            findings.push(
                Text::said(Key::Trap)
                    .bytes("parent", parent(view))
                    .bytes("view_held", held(view))
                    .bytes("copy_held", held(copy))
                    .paired("timing", HEADLINE),
            );
        }
        findings.extend(
            paired
                .iter()
                .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id)),
        );

        let x = |r: &R<'_>| r.config.parent_bytes() as f64;
        let mut copy_series = Vec::new();
        let view_max: Vec<(f64, f64)> = {
            let mut sizes: Vec<usize> = views.iter().map(|r| r.config.rows).collect();
            sizes.dedup();
            sizes
                .into_iter()
                .map(|n| {
                    let most = views
                        .iter()
                        .filter(|r| r.config.rows == n)
                        .map(|r| copied(r))
                        .fold(0.0, f64::max);
                    (n as f64 * COLS as f64 * F32_BYTES as f64, most)
                })
                .collect()
        };
        if !view_max.is_empty() {
            copy_series.push(Series::line(
                Text::said(Key::LabelLargestOfTheSixViewsMeasured),
                false,
                view_max,
            ));
        }
        for op in [
            Op::ReshapeTransposed,
            Op::ExpTransposed,
            Op::ToDataRoundTrip,
            Op::IntoDataRoundTrip,
        ] {
            let rs = of(op);
            if !rs.is_empty() {
                copy_series.push(Series::line(
                    Text::said(Key::SeriesMeasured).name("op", op.code()),
                    false,
                    rs.iter().map(|r| (x(r), copied(r))).collect(),
                ));
            }
        }
        let sizes = of(Op::ReshapeTransposed);
        if !sizes.is_empty() {
            copy_series.push(Series::line(
                Text::said(Key::LabelOneParentSSizePredictedFor),
                true,
                sizes.iter().map(|r| (x(r), x(r))).collect(),
            ));
        }
        let mut held_series = Vec::new();
        for op in [Op::RowView, Op::RowCopy] {
            let rs = of(op);
            if !rs.is_empty() {
                held_series.push(Series::line(
                    Text::said(Key::SeriesMeasured).name("op", op.code()),
                    false,
                    rs.iter().map(|r| (x(r), held(r))).collect(),
                ));
                held_series.push(Series::line(
                    Text::said(Key::SeriesPredicted).name("op", op.code()),
                    true,
                    rs.iter()
                        .map(|r| {
                            let held = predict::held_bytes(op, r.config.rows, r.config.cols);
                            (x(r), held as f64)
                        })
                        .collect(),
                ));
            }
        }
        let charts = vec![
            Chart {
                id: "copied-vs-parent".into(),
                title: Text::said(Key::LabelBytesAnOperationAddsAboveIts),
                x_label: Key::LabelParentTensor.into(),
                y_label: Key::LabelPeakAboveTheParent.into(),
                x_unit: AxisUnit::Bytes,
                y_unit: AxisUnit::Bytes,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: copy_series,
            },
            Chart {
                id: "held-after-drop".into(),
                title: Text::said(Key::LabelMemoryStillHeldAfterDroppingThe),
                x_label: Key::LabelParentTensor.into(),
                y_label: Key::LabelBytesHeld.into(),
                x_unit: AxisUnit::Bytes,
                y_unit: AxisUnit::Bytes,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: held_series,
            },
        ];

        let headline = match (at_largest(Op::RowView), at_largest(Op::RowCopy)) {
            (Some(view), Some(copy)) => Headline::versus(
                Text::said(Key::Headline).bytes("parent", parent(view)),
                Side::with_peak(Key::LabelBytesHeldAfterTheParentIs, held(view)),
                Side::with_peak(Key::LabelBytesHeldAfterTheParentIs, held(copy)),
                correctness,
                Text::said(CommonKey::WorstCheck),
            )
            .timed_by(HEADLINE),
            _ => Analysis::unmeasured(correctness).headline,
        };
        Analysis {
            fix_table: None,
            fix_checks: Vec::new(),
            headline,
            secondary_headlines: vec![],
            findings,
            comparisons,
            fits: vec![],
            charts,
            published: vec![],
        }
    }
}
