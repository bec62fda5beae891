//! The views experiment's conclusions: bytes copied and held, predicted beside measured, the
//! trap and its fix, charts and the index row.

use results::{Analysis, Chart, Comparison, ComparisonSpec, Correctness, Headline, MeasuredPoint, Metric, PairedComparison, Scale, Series, Side, analysis::worst_check, format::{self, mib}, paired::find};

use super::ViewsMetric;
use super::{predict, Op, ViewConfig, Views, COLS, OPS, PHASE};
use crate::bracket;
use crate::estimate::{Allocator, F32_BYTES};
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
    ) -> Analysis {
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
                        format!("{}: bytes copied", op.code()),
                        predict::copied_bytes(op, r.config.rows, r.config.cols, r.allocator())
                            as f64,
                        copied(r),
                        copy_note(op, r.allocator()),
                    )
                    .bracketed(bracket::added_upper(r, PHASE, 1.0)),
                );
            }
        }
        for op in [Op::RowView, Op::RowCopy] {
            if let Some(r) = at_largest(op) {
                comparisons.push(Comparison {
                    quantity: format!("{}: bytes still held", op.code()),
                    predicted_bytes: predict::held_bytes(op, r.config.rows, r.config.cols) as f64,
                    measured_bytes: held(r),
                    measured_upper_bytes: None,
                    note: match op {
                        Op::RowView => "the view's Arc keeps the parent's whole buffer",
                        _ => {
                            "only the row: into_data of a narrowed view copies its own elements. \
                         Not predicted: the new tensor's bookkeeping, a large share of so \
                         small a tensor"
                        }
                    }
                    .into(),
                });
            }
        }

        let mut findings = Vec::new();
        let parent = |r: &R<'_>| format::bytes(r.config.parent_bytes() as f64);
        let views: Vec<&R<'_>> = rows
            .iter()
            .filter(|r| r.config.op.is_view() && r.config.op != Op::RowView)
            .collect();
        if let Some(most) = views.iter().max_by(|a, b| copied(a).total_cmp(&copied(b))) {
            findings.push(format!(
            "Slicing rows or columns, narrow, transpose, a contiguous reshape and expand added at \
             most {} at their peak over {} measurements on parents up to {}: they are views.",
            format::bytes(copied(most)),
            views.len(),
            format::bytes(largest as f64 * COLS as f64 * F32_BYTES as f64),
        ));
        }
        for op in [
            Op::ReshapeTransposed,
            Op::ExpTransposed,
            Op::ToDataRoundTrip,
            Op::IntoDataRoundTrip,
        ] {
            if let Some(r) = at_largest(op) {
                findings.push(format!(
                    "{} on a {} parent added {} ({:.4} of the parent).",
                    op.code(),
                    parent(r),
                    format::bytes(copied(r)),
                    copied(r) / r.config.parent_bytes() as f64
                ));
            }
        }
        if let (Some(view), Some(copy)) = (at_largest(Op::RowView), at_largest(Op::RowCopy)) {
            findings.push(format!(
            "The trap: a one-row view of a {} tensor still held {} after the tensor was dropped; \
             copying the row out held {}. Time, the copy against the view, each timed with \
             freeing the parent's buffer (the copy frees it inside the operation, the view when \
             it is dropped): {}.",
            parent(view),
            format::bytes(held(view)),
            format::bytes(held(copy)),
            find(paired, HEADLINE).map_or_else(
                || "not timed in pairs".to_string(),
                PairedComparison::cost_phrase
            ),
        ));
        }
        findings.extend(paired.iter().map(PairedComparison::finding));

        let x = |r: &R<'_>| mib(r.config.parent_bytes() as f64);
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
                    (mib(n as f64 * COLS as f64 * F32_BYTES as f64), mib(most))
                })
                .collect()
        };
        if !view_max.is_empty() {
            copy_series.push(Series::line(
                "largest of the six views (measured)",
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
                    &format!("{} (measured)", op.code()),
                    false,
                    rs.iter().map(|r| (x(r), mib(copied(r)))).collect(),
                ));
            }
        }
        let sizes = of(Op::ReshapeTransposed);
        if !sizes.is_empty() {
            copy_series.push(Series::line(
                "one parent's size (predicted for the reshape and the exp of a transpose)",
                true,
                sizes.iter().map(|r| (x(r), x(r))).collect(),
            ));
        }
        let mut held_series = Vec::new();
        for op in [Op::RowView, Op::RowCopy] {
            let rs = of(op);
            if !rs.is_empty() {
                held_series.push(Series::line(
                    &format!("{} (measured)", op.code()),
                    false,
                    rs.iter().map(|r| (x(r), mib(held(r)))).collect(),
                ));
                held_series.push(Series::line(
                    &format!("{} (predicted)", op.code()),
                    true,
                    rs.iter()
                        .map(|r| {
                            let held = predict::held_bytes(op, r.config.rows, r.config.cols);
                            (x(r), mib(held as f64))
                        })
                        .collect(),
                ));
            }
        }
        let charts = vec![
            Chart {
                id: "copied-vs-parent".into(),
                title: "Bytes an operation adds above its parent".into(),
                x_label: "parent tensor (MiB)".into(),
                y_label: "peak above the parent (MiB)".into(),
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: copy_series,
            },
            Chart {
                id: "held-after-drop".into(),
                title: "Memory still held after dropping the parent of a one-row view".into(),
                x_label: "parent tensor (MiB)".into(),
                y_label: "bytes held (MiB)".into(),
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: held_series,
            },
        ];

        let headline = match (at_largest(Op::RowView), at_largest(Op::RowCopy)) {
            (Some(view), Some(copy)) => Headline::versus(
                format!(
                    "the first row of a {} tensor kept as a view against copied out, after the \
                 tensor is dropped (bytes held; time of the operation and of freeing the parent)",
                    parent(view)
                ),
                Side::with_peak("bytes held after the parent is dropped", held(view)),
                Side::with_peak("bytes held after the parent is dropped", held(copy)),
                correctness,
                worst_check(points),
            )
            .timed_by(HEADLINE),
            _ => Analysis::unmeasured(correctness).headline,
        };
        Analysis {
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

fn copy_note(op: Op, allocator: Allocator) -> &'static str {
    match (op, allocator) {
        (Op::SliceRows | Op::Narrow, _) => "a view: same buffer, new offset and shape",
        (Op::SliceColumns, _) => "a view: same buffer, the row stride unchanged",
        (Op::Transpose, _) => "a view: strides swapped",
        (Op::Reshape, _) => "a view: a contiguous tensor reshapes by recomputing strides",
        (Op::Expand, _) => "a view: the broadcast dimension gets stride 0",
        (Op::ReshapeTransposed, _) => {
            "no strides express the transposed order in the new shape: one contiguous copy"
        }
        (Op::ExpOwned, _) => "unique and contiguous: exp writes into x's buffer",
        (Op::ExpTransposed, _) => {
            "unique but not contiguous: exp writes a new contiguous buffer, x is freed after"
        }
        (Op::ToDataRoundTrip, Allocator::Flex) => {
            "x is shared, so to_data copies it into a Vec<u8>, which Bytes::from_bytes_vec \
             copies again to 16-byte alignment before the first copy is freed; from_data then \
             takes the aligned buffer as is. One copy stays"
        }
        (Op::ToDataRoundTrip, Allocator::CubeCl) => {
            "to_data reads x back into host memory, which the device's memory manager does not \
             count; from_data uploads it into one new device buffer, which stays"
        }
        (Op::IntoDataRoundTrip, _) => {
            "x is unique, contiguous and exactly sized: into_data hands its buffer over"
        }
        (Op::RowView, _) => "a view: nothing copied (and nothing freed, see below)",
        (Op::RowCopy, Allocator::Flex) => {
            "into_data copies the row's elements out of the larger buffer, twice at the peak \
             (the alignment copy, as for to_data)"
        }
        (Op::RowCopy, Allocator::CubeCl) => {
            "into_data reads the row back to the host (not device memory); the parent's buffer \
             is freed with the narrowed view, before from_data allocates the row: nothing \
             above the parent"
        }
    }
}
