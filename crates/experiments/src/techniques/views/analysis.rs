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
use crate::technique::{Analyse, Row};
use estimator::estimate::F32_BYTES;

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

/// The operations that copy, of those measured: each a line and a finding.
const COPYING: [Op; 4] = [
    Op::ReshapeTransposed,
    Op::ExpTransposed,
    Op::ToDataRoundTrip,
    Op::IntoDataRoundTrip,
];

/// The sweep, read once: its rows by size and the largest size.
struct Sweep<'r, 'a> {
    rows: &'r [R<'a>],
    largest: usize,
}

impl<'r, 'a> Sweep<'r, 'a> {
    fn at_largest(&self, op: Op) -> Option<&'r R<'a>> {
        self.rows
            .iter()
            .find(|r| r.config.op == op && r.config.rows == self.largest)
    }

    fn of(&self, op: Op) -> Vec<&'r R<'a>> {
        self.rows.iter().filter(|r| r.config.op == op).collect()
    }

    /// The views that keep no row (all but the row view).
    fn views(&self) -> Vec<&'r R<'a>> {
        self.rows
            .iter()
            .filter(|r| r.config.op.is_view() && r.config.op != Op::RowView)
            .collect()
    }
}

fn parent(r: &R<'_>) -> f64 {
    r.config.parent_bytes() as f64
}

/// Bytes copied by every operation, and held after the drop by the row view and copy, beside
/// the rules, at the largest size.
fn predictions(sw: &Sweep<'_, '_>) -> Vec<Comparison<Text>> {
    let copied_rows = OPS.iter().filter_map(|&op| {
        let r = sw.at_largest(op)?;
        let predicted = predict::copied_bytes(op, r.config.rows, r.config.cols, r.allocator());
        Some(
            Comparison::new(
                Text::said(Key::CopiedQuantity).name("op", op.code()),
                predicted as f64,
                copied(r),
                Text::said(Key::CopyNote)
                    .variant("op", op)
                    .variant("allocator", r.allocator()),
            )
            .bracketed(bracket::added_upper(r, PHASE, 1.0)),
        )
    });
    let held_rows = [Op::RowView, Op::RowCopy].into_iter().filter_map(|op| {
        let r = sw.at_largest(op)?;
        Some(Comparison::new(
            Text::said(Key::HeldQuantity).name("op", op.code()),
            predict::held_bytes(op, r.config.rows, r.config.cols) as f64,
            held(r),
            Text::said(Key::HeldNote).variant("op", op),
        ))
    });
    copied_rows.chain(held_rows).collect()
}

/// That views are free, which operations copy, and the trap of a view kept after its parent.
fn findings(sw: &Sweep<'_, '_>, paired: &[PairedComparison]) -> Vec<Text> {
    let views = sw.views();
    let mut findings: Vec<Text> = views
        .iter()
        .max_by(|a, b| copied(a).total_cmp(&copied(b)))
        .map(|most| {
            Text::said(Key::ViewsAreFree)
                .bytes("most", copied(most))
                .count("measurements", views.len())
                .bytes(
                    "largest",
                    sw.largest as f64 * COLS as f64 * F32_BYTES as f64,
                )
        })
        .into_iter()
        .collect();
    findings.extend(COPYING.iter().filter_map(|&op| {
        let r = sw.at_largest(op)?;
        Some(
            Text::said(Key::OpCopies)
                .name("op", op.code())
                .bytes("parent", parent(r))
                .bytes("copied", copied(r)),
        )
    }));
    if let (Some(view), Some(copy)) = (sw.at_largest(Op::RowView), sw.at_largest(Op::RowCopy)) {
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
    findings
}

/// Bytes each operation adds against its parent's size: the views' largest, each copying
/// operation, and one parent's size, the copies' rule.
fn copy_chart(sw: &Sweep<'_, '_>) -> Chart<Text> {
    let views = sw.views();
    let mut sizes: Vec<usize> = views.iter().map(|r| r.config.rows).collect();
    sizes.dedup();
    let view_max: Vec<(f64, f64)> = sizes
        .into_iter()
        .map(|n| {
            let most = views
                .iter()
                .filter(|r| r.config.rows == n)
                .map(|r| copied(r))
                .fold(0.0, f64::max);
            (n as f64 * COLS as f64 * F32_BYTES as f64, most)
        })
        .collect();
    let views_line = (!view_max.is_empty())
        .then(|| Series::line(Key::LabelLargestOfTheSixViewsMeasured, false, view_max));
    let copies = COPYING
        .iter()
        .map(|&op| sw.of(op))
        .filter(|rs| !rs.is_empty());
    let copy_lines = copies.map(|rs| {
        Series::line(
            Text::said(Key::SeriesMeasured).name("op", rs[0].config.op.code()),
            false,
            rs.iter().map(|r| (parent(r), copied(r))).collect(),
        )
    });
    let sizes = sw.of(Op::ReshapeTransposed);
    let rule = (!sizes.is_empty()).then(|| {
        Series::line(
            Key::LabelOneParentSSizePredictedFor,
            true,
            sizes.iter().map(|r| (parent(r), parent(r))).collect(),
        )
    });
    Chart::new(
        "copied-vs-parent",
        Key::LabelBytesAnOperationAddsAboveIts,
        Key::LabelParentTensor,
        Key::LabelPeakAboveTheParent,
    )
    .x(AxisUnit::Bytes, Scale::Log2)
    .y(AxisUnit::Bytes)
    .series(views_line)
    .series(copy_lines)
    .series(rule)
}

/// Bytes still held after the parent is dropped, by the row view and the row copy.
fn held_chart(sw: &Sweep<'_, '_>) -> Chart<Text> {
    let lines = [Op::RowView, Op::RowCopy].into_iter().flat_map(|op| {
        let rs = sw.of(op);
        let predicted = |r: &&R<'_>| {
            let held = predict::held_bytes(op, r.config.rows, r.config.cols);
            (parent(r), held as f64)
        };
        (!rs.is_empty())
            .then(|| {
                [
                    Series::line(
                        Text::said(Key::SeriesMeasured).name("op", op.code()),
                        false,
                        rs.iter().map(|r| (parent(r), held(r))).collect(),
                    ),
                    Series::line(
                        Text::said(Key::SeriesPredicted).name("op", op.code()),
                        true,
                        rs.iter().map(predicted).collect(),
                    ),
                ]
            })
            .into_iter()
            .flatten()
    });
    Chart::new(
        "held-after-drop",
        Key::LabelMemoryStillHeldAfterDroppingThe,
        Key::LabelParentTensor,
        Key::LabelBytesHeld,
    )
    .x(AxisUnit::Bytes, Scale::Log2)
    .y(AxisUnit::Bytes)
    .series(lines)
}

impl Analyse for Views {
    /// The analysis of the views experiment.
    fn analyse(
        &self,
        mut rows: Vec<R<'_>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis<Text> {
        rows.sort_by_key(|r| r.config.rows);
        let correctness = Correctness::of(points);
        let Some(largest) = rows.iter().map(|r| r.config.rows).max() else {
            return Analysis::unmeasured(correctness);
        };
        let sw = Sweep {
            rows: &rows,
            largest,
        };
        let headline = match (sw.at_largest(Op::RowView), sw.at_largest(Op::RowCopy)) {
            (Some(view), Some(copy)) => Headline::versus(
                Text::said(Key::Headline).bytes("parent", parent(view)),
                Side::with_peak(Key::LabelBytesHeldAfterTheParentIs, held(view)),
                Side::with_peak(Key::LabelBytesHeldAfterTheParentIs, held(copy)),
                correctness,
                CommonKey::WorstCheck,
            )
            .timed_by(HEADLINE),
            _ => Analysis::unmeasured(correctness).headline,
        };
        Analysis::new(headline)
            .findings(findings(&sw, paired))
            .comparisons(predictions(&sw))
            .charts([copy_chart(&sw), held_chart(&sw)])
    }
}
