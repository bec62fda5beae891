//! Views against copies: which tensor operations share their parent's buffer and which copy.
//!
//! Slicing, narrowing, transposing, reshaping a contiguous tensor and expanding only change a
//! tensor's shape, strides and offset: they are free. A reshape the strides cannot express, an
//! element-wise op on a strided view and a round trip through `TensorData` copy. A view is not
//! free in one way: it keeps its whole parent buffer alive, so a one-row view of a large tensor
//! holds the large tensor. The experiment measures the bytes every operation adds, predicts them,
//! and measures the trap and its fix.

use std::collections::BTreeMap;

use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{s, Distribution, Tensor};
use serde::{Deserialize, Serialize};

use crate::backend::{self, OnBackend};
use crate::device::DeviceKind;
use crate::experiment::{
    parse_config, worst_check, Analysis, Chart, Check, Comparison, Correctness, Experiment,
    ExperimentError, Headline, MeasuredPoint, Point, PointResult, Profile, Scale, Series, Sizes,
};
use crate::format::{self, mib};
use crate::probe::MemoryProbe;
use crate::single_op::measure_op;
use crate::snippets::views::{first_row_copy, first_row_view};

use crate::batch_size::F32_BYTES;
/// Views and copies move values without arithmetic, so they must be exact; `exp` is compared
/// with the standard library's, which may differ in the last bit.
const TOLERANCE: f64 = 1e-6;

/// One operation on a `rows x cols` f32 parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    /// `x.slice(s![0..rows / 2])`, parent kept.
    SliceRows,
    /// `x.slice([0..rows, 0..cols / 2])`, a strided view, parent kept.
    SliceColumns,
    /// `x.narrow(0, rows / 4, rows / 2)`, parent kept.
    Narrow,
    /// `x.transpose()`, parent kept.
    Transpose,
    /// `x.reshape([cols, rows])` of the contiguous parent, parent kept.
    Reshape,
    /// `x.narrow(0, 0, 1).expand([rows, cols])`, parent kept.
    Expand,
    /// `x.transpose().reshape([rows, cols])`: not expressible with strides, parent kept.
    ReshapeTransposed,
    /// `x.exp()` on the uniquely owned, contiguous parent.
    ExpOwned,
    /// `x.transpose().exp()` on the uniquely owned parent: a strided input.
    ExpTransposed,
    /// `Tensor::from_data(x.to_data())`, parent kept.
    ToDataRoundTrip,
    /// `Tensor::from_data(x.into_data())` of the uniquely owned parent.
    IntoDataRoundTrip,
    /// The trap: keep the first row as a view, drop the parent.
    RowView,
    /// The fix: copy the first row out, drop the parent.
    RowCopy,
}

/// Every operation, in the table's order.
pub const OPS: [Op; 13] = [
    Op::SliceRows,
    Op::SliceColumns,
    Op::Narrow,
    Op::Transpose,
    Op::Reshape,
    Op::Expand,
    Op::ReshapeTransposed,
    Op::ExpOwned,
    Op::ExpTransposed,
    Op::ToDataRoundTrip,
    Op::IntoDataRoundTrip,
    Op::RowView,
    Op::RowCopy,
];

impl Op {
    /// Kebab-case id.
    pub fn id(self) -> &'static str {
        match self {
            Op::SliceRows => "slice-rows",
            Op::SliceColumns => "slice-columns",
            Op::Narrow => "narrow",
            Op::Transpose => "transpose",
            Op::Reshape => "reshape",
            Op::Expand => "expand",
            Op::ReshapeTransposed => "reshape-transposed",
            Op::ExpOwned => "exp-owned",
            Op::ExpTransposed => "exp-transposed",
            Op::ToDataRoundTrip => "to-data-round-trip",
            Op::IntoDataRoundTrip => "into-data-round-trip",
            Op::RowView => "row-view",
            Op::RowCopy => "row-copy",
        }
    }

    /// The Burn code, as on the page.
    pub fn code(self) -> &'static str {
        match self {
            Op::SliceRows => "x.clone().slice(s![0..rows / 2])",
            Op::SliceColumns => "x.clone().slice([0..rows, 0..cols / 2])",
            Op::Narrow => "x.clone().narrow(0, rows / 4, rows / 2)",
            Op::Transpose => "x.clone().transpose()",
            Op::Reshape => "x.clone().reshape([cols, rows])",
            Op::Expand => "x.clone().narrow(0, 0, 1).expand([rows, cols])",
            Op::ReshapeTransposed => "x.clone().transpose().reshape([rows, cols])",
            Op::ExpOwned => "x.exp()",
            Op::ExpTransposed => "x.transpose().exp()",
            Op::ToDataRoundTrip => "Tensor::from_data(x.to_data(), &device)",
            Op::IntoDataRoundTrip => "Tensor::from_data(x.into_data(), &device)",
            Op::RowView => "x.narrow(0, 0, 1), then x dropped",
            Op::RowCopy => "Tensor::from_data(x.narrow(0, 0, 1).into_data(), &device)",
        }
    }

    /// Whether the operation is expected to be a free view of its parent.
    pub fn is_view(self) -> bool {
        matches!(
            self,
            Op::SliceRows
                | Op::SliceColumns
                | Op::Narrow
                | Op::Transpose
                | Op::Reshape
                | Op::Expand
                | Op::RowView
        )
    }

    /// Predicted bytes the operation adds at its peak above the live parent, from Flex's rules:
    /// views share the buffer; an op writes in place only into a uniquely owned contiguous
    /// buffer; `into_data` hands over a uniquely owned exact-size buffer and copies otherwise.
    /// Its copy is made twice at the peak: Flex copies the elements into a `Vec<u8>`, and
    /// cubecl's `Bytes::from_bytes_vec` copies that again to 16-byte alignment (a `Vec<u8>` is
    /// only 1-byte aligned), freeing the first copy after.
    pub fn predicted_copied_bytes(self, rows: usize, cols: usize) -> u64 {
        let tensor = (rows * cols) as u64 * F32_BYTES;
        match self {
            Op::ReshapeTransposed | Op::ExpTransposed => tensor,
            Op::ToDataRoundTrip => 2 * tensor,
            Op::RowCopy => 2 * cols as u64 * F32_BYTES,
            _ => 0,
        }
    }

    /// Predicted bytes still held once the operation returned, the parent's own reference
    /// dropped where the operation consumes it.
    pub fn predicted_held_bytes(self, rows: usize, cols: usize) -> u64 {
        let tensor = (rows * cols) as u64 * F32_BYTES;
        match self {
            // The output is (or shares) a buffer of the parent's size.
            Op::ExpOwned | Op::ExpTransposed | Op::IntoDataRoundTrip | Op::RowView => tensor,
            Op::RowCopy => cols as u64 * F32_BYTES,
            // The parent is kept: its buffer, plus the copy if there is one.
            Op::ToDataRoundTrip => 2 * tensor,
            op => tensor + op.predicted_copied_bytes(rows, cols),
        }
    }

    /// Runs the operation. Operations that keep the parent return it beside the result.
    fn apply<B: Backend>(self, x: Tensor<B, 2>) -> (Tensor<B, 2>, Option<Tensor<B, 2>>) {
        let [rows, cols] = x.dims();
        let device = x.device();
        let keep = |y: Tensor<B, 2>, x: Tensor<B, 2>| (y, Some(x));
        match self {
            Op::SliceRows => keep(x.clone().slice(s![0..rows / 2]), x),
            Op::SliceColumns => keep(x.clone().slice([0..rows, 0..cols / 2]), x),
            Op::Narrow => keep(x.clone().narrow(0, rows / 4, rows / 2), x),
            Op::Transpose => keep(x.clone().transpose(), x),
            Op::Reshape => keep(x.clone().reshape([cols, rows]), x),
            Op::Expand => keep(x.clone().narrow(0, 0, 1).expand([rows, cols]), x),
            Op::ReshapeTransposed => keep(x.clone().transpose().reshape([rows, cols]), x),
            Op::ExpOwned => (x.exp(), None),
            Op::ExpTransposed => (x.transpose().exp(), None),
            Op::ToDataRoundTrip => keep(Tensor::from_data(x.to_data(), &device), x),
            Op::IntoDataRoundTrip => (Tensor::from_data(x.into_data(), &device), None),
            Op::RowView => (first_row_view(x), None),
            Op::RowCopy => (first_row_copy(x), None),
        }
    }

    /// The values the operation must produce, computed on the host from the parent's.
    fn reference(self, x: &[f32], rows: usize, cols: usize) -> Vec<f32> {
        let at = |r: usize, c: usize| x[r * cols + c];
        let transposed = || -> Vec<f32> {
            (0..cols)
                .flat_map(|c| (0..rows).map(move |r| at(r, c)))
                .collect()
        };
        match self {
            Op::SliceRows => x[..rows / 2 * cols].to_vec(),
            Op::SliceColumns => (0..rows)
                .flat_map(|r| (0..cols / 2).map(move |c| at(r, c)))
                .collect(),
            Op::Narrow => x[rows / 4 * cols..(rows / 4 + rows / 2) * cols].to_vec(),
            Op::Transpose | Op::ReshapeTransposed => transposed(),
            Op::Reshape | Op::ToDataRoundTrip | Op::IntoDataRoundTrip => x.to_vec(),
            Op::Expand => (0..rows).flat_map(|_| x[..cols].iter().copied()).collect(),
            Op::ExpOwned => x.iter().map(|v| v.exp()).collect(),
            Op::ExpTransposed => transposed().into_iter().map(f32::exp).collect(),
            Op::RowView | Op::RowCopy => x[..cols].to_vec(),
        }
    }
}

/// Configuration of one views point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ViewConfig {
    /// The operation.
    pub op: Op,
    /// Rows of the parent.
    pub rows: usize,
    /// Columns of the parent.
    pub cols: usize,
    /// Seed of the backend's generator.
    pub seed: u64,
}

impl ViewConfig {
    /// Bytes of the parent's elements.
    pub fn parent_bytes(&self) -> u64 {
        (self.rows * self.cols) as u64 * F32_BYTES
    }
}

/// The views-vs-clones experiment.
pub struct Views;

const COLS: usize = 256;

fn rows(sizes: Sizes) -> Vec<usize> {
    match sizes {
        Sizes::Quick => vec![1024, 2048, 4096],
        Sizes::Full => vec![16384, 32768, 65536],
        Sizes::Gpu => vec![65536, 262144, 1048576],
    }
}

impl Experiment for Views {
    fn id(&self) -> &'static str {
        "views-vs-clones"
    }

    fn title(&self) -> &'static str {
        "Views against copies"
    }

    fn explanation(&self) -> &'static str {
        "Slicing, narrowing, transposing, reshaping a contiguous tensor and expanding change only \
         a tensor's shape, strides and offset: they share the parent's buffer and cost nothing. A \
         reshape that strides cannot express, an element-wise op on a strided view and a round \
         trip through TensorData copy. A view is not free in one way: it keeps the whole parent \
         buffer alive, so a one-row view of a large tensor holds all of it."
    }

    fn on_devices(&self) -> &'static str {
        "Views are views on the device backends too (shape, strides and offset over one buffer), \
         and a view keeps its parent's buffer alive there as well. A round trip through \
         TensorData is not a device copy: to_data copies the tensor to host memory, \
         which the device probe does not count; only the tensor made again from it is \
         device memory."
    }

    fn snippet(&self) -> &'static str {
        include_str!("snippets/views.rs")
    }

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Point> {
        let (warmup, repeats) = crate::batch_size::repeats(profile);
        let mut points = Vec::new();
        for op in OPS {
            for rows in rows(Sizes::of(profile, device)) {
                points.push(Point {
                    id: format!("{}-rows-{rows}", op.id()),
                    label: format!("{}, {rows} x {COLS}", op.code()),
                    warmup,
                    repeats,
                    config: serde_json::to_value(ViewConfig {
                        op,
                        rows,
                        cols: COLS,
                        seed: 13,
                    })
                    .expect("config serialises"),
                });
            }
        }
        points
    }

    fn run_point(&self, point: &Point, device: DeviceKind) -> Result<PointResult, ExperimentError> {
        let config: ViewConfig = parse_config(self.id(), point)?;
        backend::dispatch(
            device,
            ViewPoint {
                config,
                warmup: point.warmup,
                repeats: point.repeats,
            },
        )
    }

    fn analyse(&self, points: &[MeasuredPoint]) -> Analysis {
        analyse(points)
    }
}

/// Measures one operation.
pub struct ViewPoint {
    /// What to run.
    pub config: ViewConfig,
    /// Untimed repeats first.
    pub warmup: usize,
    /// Measured repeats.
    pub repeats: usize,
}

impl OnBackend for ViewPoint {
    type Output = PointResult;

    fn run<AB: AutodiffBackend>(self, device: AB::Device, probe: &dyn MemoryProbe) -> PointResult {
        type B<AB> = <AB as AutodiffBackend>::InnerBackend;
        let c = self.config;
        let sync = || backend::sync::<AB>(&device);
        B::<AB>::seed(&device, c.seed);
        let input = || {
            Tensor::<B<AB>, 2>::random([c.rows, c.cols], Distribution::Normal(0.0, 1.0), &device)
        };
        let m = measure_op(
            probe,
            &sync,
            "operation",
            self.warmup,
            self.repeats,
            c.rows,
            input,
            |x| c.op.apply(x),
        );

        let x = input();
        let parent = x.to_data().to_vec::<f32>().unwrap_or_default();
        let output =
            c.op.apply(x)
                .0
                .into_data()
                .to_vec::<f32>()
                .unwrap_or_default();
        let check = Check::compare(
            "values against the same operation on the host",
            &c.op.reference(&parent, c.rows, c.cols),
            &output,
            TOLERANCE,
        );

        let metrics = BTreeMap::from([("parent_bytes".to_string(), c.parent_bytes() as f64)]);
        m.into_result(probe.info(), "copied_bytes", metrics, check)
    }
}

struct Row {
    config: ViewConfig,
    result: PointResult,
}

impl Row {
    fn copied(&self) -> f64 {
        self.result.metric("copied_bytes")
    }

    fn held(&self) -> f64 {
        self.result.metric("held_bytes")
    }
}

/// The analysis of the views experiment.
pub fn analyse(points: &[MeasuredPoint]) -> Analysis {
    let mut rows: Vec<Row> = points
        .iter()
        .filter_map(|p| {
            Some(Row {
                config: p.config()?,
                result: p.result()?.clone(),
            })
        })
        .collect();
    rows.sort_by_key(|r| r.config.rows);
    let correctness = Correctness::of(points);
    let Some(largest) = rows.iter().map(|r| r.config.rows).max() else {
        return Analysis::unmeasured(correctness);
    };
    let at_largest = |op: Op| {
        rows.iter()
            .find(|r| r.config.op == op && r.config.rows == largest)
    };
    let of = |op: Op| -> Vec<&Row> { rows.iter().filter(|r| r.config.op == op).collect() };

    let mut comparisons = Vec::new();
    for op in OPS {
        if let Some(r) = at_largest(op) {
            comparisons.push(Comparison {
                quantity: format!("{}: bytes copied", op.code()),
                predicted_bytes: op.predicted_copied_bytes(r.config.rows, r.config.cols) as f64,
                measured_bytes: r.copied(),
                note: copy_note(op).into(),
            });
        }
    }
    for op in [Op::RowView, Op::RowCopy] {
        if let Some(r) = at_largest(op) {
            comparisons.push(Comparison {
                quantity: format!("{}: bytes still held", op.code()),
                predicted_bytes: op.predicted_held_bytes(r.config.rows, r.config.cols) as f64,
                measured_bytes: r.held(),
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
    let parent = |r: &Row| format::bytes(r.config.parent_bytes() as f64);
    let views: Vec<&Row> = rows
        .iter()
        .filter(|r| r.config.op.is_view() && r.config.op != Op::RowView)
        .collect();
    if let Some(most) = views
        .iter()
        .max_by(|a, b| a.copied().total_cmp(&b.copied()))
    {
        findings.push(format!(
            "Slicing rows or columns, narrow, transpose, a contiguous reshape and expand added at \
             most {} at their peak over {} measurements on parents up to {}: they are views.",
            format::bytes(most.copied()),
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
                format::bytes(r.copied()),
                r.copied() / r.config.parent_bytes() as f64
            ));
        }
    }
    if let (Some(view), Some(copy)) = (at_largest(Op::RowView), at_largest(Op::RowCopy)) {
        findings.push(format!(
            "The trap: a one-row view of a {} tensor still held {} after the tensor was dropped; \
             copying the row out held {} and took {} against {} for the view (the copy's time \
             includes freeing the parent's buffer).",
            parent(view),
            format::bytes(view.held()),
            format::bytes(copy.held()),
            format::seconds(copy.result.step.median_s),
            format::seconds(view.result.step.median_s),
        ));
    }

    let x = |r: &Row| mib(r.config.parent_bytes() as f64);
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
                    .map(|r| r.copied())
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
                rs.iter().map(|r| (x(r), mib(r.copied()))).collect(),
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
                rs.iter().map(|r| (x(r), mib(r.held()))).collect(),
            ));
            held_series.push(Series::line(
                &format!("{} (predicted)", op.code()),
                true,
                rs.iter()
                    .map(|r| {
                        let held = op.predicted_held_bytes(r.config.rows, r.config.cols);
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
            series: copy_series,
        },
        Chart {
            id: "held-after-drop".into(),
            title: "Memory still held after dropping the parent of a one-row view".into(),
            x_label: "parent tensor (MiB)".into(),
            y_label: "bytes held (MiB)".into(),
            x_scale: Scale::Log2,
            series: held_series,
        },
    ];

    let headline = match (at_largest(Op::RowView), at_largest(Op::RowCopy)) {
        (Some(view), Some(copy)) => Headline {
            compared: format!(
                "the first row of a {} tensor kept as a view against copied out, after the \
                 tensor is dropped (bytes held; rows/s of the operation)",
                parent(view)
            ),
            memory_saved_bytes: Some(view.held() - copy.held()),
            memory_saved_pct: Some((view.held() - copy.held()) / view.held() * 100.0),
            throughput_cost_pct: Some(
                (view.result.samples_per_s - copy.result.samples_per_s) / view.result.samples_per_s
                    * 100.0,
            ),
            correctness,
            correctness_detail: worst_check(points),
        },
        _ => Analysis::unmeasured(correctness).headline,
    };
    Analysis {
        headline,
        findings,
        comparisons,
        fits: vec![],
        charts,
        published: vec![],
    }
}

fn copy_note(op: Op) -> &'static str {
    match op {
        Op::SliceRows | Op::Narrow => "a view: same buffer, new offset and shape",
        Op::SliceColumns => "a view: same buffer, the row stride unchanged",
        Op::Transpose => "a view: strides swapped",
        Op::Reshape => "a view: a contiguous tensor reshapes by recomputing strides",
        Op::Expand => "a view: the broadcast dimension gets stride 0",
        Op::ReshapeTransposed => {
            "no strides express the transposed order in the new shape: one contiguous copy"
        }
        Op::ExpOwned => "unique and contiguous: exp writes into x's buffer",
        Op::ExpTransposed => {
            "unique but not contiguous: exp writes a new contiguous buffer, x is freed after"
        }
        Op::ToDataRoundTrip => {
            "x is shared, so to_data copies it into a Vec<u8>, which Bytes::from_bytes_vec \
             copies again to 16-byte alignment before the first copy is freed; from_data then \
             takes the aligned buffer as is. One copy stays"
        }
        Op::IntoDataRoundTrip => {
            "x is unique, contiguous and exactly sized: into_data hands its buffer over"
        }
        Op::RowView => "a view: nothing copied (and nothing freed, see below)",
        Op::RowCopy => {
            "into_data copies the row's elements out of the larger buffer, twice at the peak \
             (the alignment copy, as for to_data)"
        }
    }
}
