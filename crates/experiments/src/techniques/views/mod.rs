//! Views against copies: which tensor operations share their parent's buffer and which copy.
//!
//! Question: which tensor operations are free, which copy, and what does a view keep alive?
//! Method: thirteen operations on a parent tensor at three sizes, each point in its own
//! process: the bytes each adds at its peak and holds after, predicted from Flex's rules; the
//! trap (a one-row view of a dropped parent) against its fix (copying the row out); the proof
//! compares every output with the same operation done on the host.
//! Answer: slicing, narrowing, transposing, reshaping a contiguous tensor and expanding only
//! change shape, strides and offset: they are free. A reshape the strides cannot express, an
//! element-wise op on a strided view and a round trip through `TensorData` copy. A view keeps
//! its whole parent buffer alive, so a one-row view of a large tensor holds all of it.

mod analysis;
pub mod predict;
#[allow(dead_code, missing_docs)]
#[doc(hidden)]
pub mod snippet;

use burn::tensor::{s, Tensor};
use results::TechniqueId;
use results::{Check, ComparisonSpec, DeviceKind, Metrics, PointResult, Profile, PutMetric};
use serde::{Deserialize, Serialize};

use crate::harness::backend::{self, Backends, OnBackend, Pool, Setup};
use crate::harness::probe::MemoryProbe;
use crate::harness::profile::{Repeats, Sizes};
use crate::harness::single_op::{measure_op, normal_inputs};
use crate::technique::{Measurement, Planned, Row, Technique};
use burn::tensor::Device;
use estimator::estimate::F32_BYTES;
use snippet::{first_row_copy, first_row_view};

results::metric_keys! {
    /// What views against copies measures beyond the shared metrics.
    pub enum ViewsMetric {
        /// Bytes an operation copied.
        CopiedBytes = "copied_bytes",
        /// The parent tensor (views against copies).
        ParentBytes = "parent_bytes",
    }
}

results::phase_names! {
    /// The phase views measures.
    pub enum ViewsPhase {
        /// The operation measured: a view, or a copy.
        Operation = "operation",
    }
}

/// The phase of every point.
pub(crate) const PHASE: ViewsPhase = ViewsPhase::Operation;

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

    /// Runs the operation. Operations that keep the parent return it beside the result.
    fn apply(self, x: Tensor<2>) -> (Tensor<2>, Option<Tensor<2>>) {
        let [rows, cols] = x.dims();
        let device = x.device();
        let keep = |y: Tensor<2>, x: Tensor<2>| (y, Some(x));
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
        Sizes::FullCuda => vec![65536, 262144, 1048576],
    }
}

impl Technique for Views {
    type Config = ViewConfig;
    const ID: TechniqueId = TechniqueId::Views;
    const SNIPPET: &'static str = include_str!("snippet.rs");

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Planned<ViewConfig>> {
        let mut points = Vec::new();
        for op in OPS {
            for rows in rows(Sizes::of(profile, device)) {
                points.push(Planned::new(
                    format!("{}-rows-{rows}", op.id()),
                    format!("{}, {rows} x {COLS}", op.code()),
                    profile,
                    ViewConfig {
                        op,
                        rows,
                        cols: COLS,
                        seed: 13,
                    },
                ));
            }
        }
        points
    }

    fn comparisons(&self, rows: &[Row<'_, ViewConfig>]) -> Vec<ComparisonSpec> {
        analysis::comparisons(rows)
    }

    fn run_point(&self, config: &ViewConfig, repeats: Repeats, device: DeviceKind) -> Measurement {
        // The operation's phase is bracketed on a device: one page per allocation.
        device.dispatch(
            Setup {
                pool: Pool::ExclusivePages,
                ..Setup::default()
            },
            ViewPoint {
                config: *config,
                repeats,
            },
        )
    }
}

/// Measures one operation.
pub struct ViewPoint {
    /// What to run.
    pub config: ViewConfig,
    /// Untimed and timed repeats.
    pub repeats: Repeats,
}

impl OnBackend for ViewPoint {
    type Output = PointResult;

    fn run(self, device: Device, probe: &dyn MemoryProbe) -> PointResult {
        let device = device.without_autodiff();
        let c = self.config;
        let sync = || backend::sync(&device);
        device.seed(c.seed);
        let input = normal_inputs(c.rows, c.cols, &device);
        let m = measure_op(probe, &sync, PHASE, self.repeats, c.rows, &input, |x| {
            c.op.apply(x)
        });

        let x = input();
        let parent = x.to_data().try_to_vec::<f32>().unwrap_or_default();
        let output =
            c.op.apply(x)
                .0
                .into_data()
                .try_to_vec::<f32>()
                .unwrap_or_default();
        let check = Check::compare(
            "host-op-values",
            &c.op.reference(&parent, c.rows, c.cols),
            &output,
            TOLERANCE,
        );

        let mut metrics = Metrics::new();
        metrics.put(ViewsMetric::ParentBytes, c.parent_bytes() as f64);
        m.into_result(probe.info(), ViewsMetric::CopiedBytes, metrics, check)
    }
}
