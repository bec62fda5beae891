//! In-place operations: ownership decides memory.
//!
//! Question: what does keeping a clone of a tensor alive while transforming it cost in memory,
//! against handing the tensor over by value?
//! Method: the same computation (an element-wise chain, a layer normalisation) written both
//! ways, at three sizes, each point in its own process; the bytes each adds above its input
//! predicted from Flex's rules; the proof compares the outputs of the two ways on the same
//! values.
//! Answer: Flex (like Burn's other backends) writes an operation's result into its input's
//! buffer when the input is uniquely owned and contiguous, so the clone costs exactly one
//! tensor's elements; `square()` is `x * x` and always allocates.

mod analysis;
pub mod predict;
#[allow(dead_code, missing_docs)]
#[doc(hidden)]
pub mod snippet;

use burn::tensor::Tensor;
use results::TechniqueId;
use results::{
    Check, ComparisonSpec, DeviceKind, Metric, Metrics, PointResult, Profile, PutMetric,
};
use serde::{Deserialize, Serialize};

use crate::harness::backend::{self, Backends, OnBackend, Pool, Setup};
use crate::harness::probe::MemoryProbe;
use crate::harness::profile::{Repeats, Sizes};
use crate::harness::single_op::{measure_op, normal_inputs};
use crate::technique::{Measurement, Planned, Row, Technique};
use burn::tensor::Device;
use estimator::estimate::F32_BYTES;
use snippet::{chain, layer_norm_borrowed, layer_norm_owned};

results::metric_keys! {
    /// What in-place operations measure beyond the shared metrics.
    pub enum InPlaceMetric {
        /// Bytes a copy added (views against copies).
        AddedPeakBytes = "added_peak_bytes",
    }
}

results::phase_names! {
    /// The phase in-place measures.
    pub enum InPlacePhase {
        /// The computation measured, consuming its input or keeping a clone.
        Computation = "computation",
    }
}

/// The phase of every point.
pub(crate) const PHASE: InPlacePhase = InPlacePhase::Computation;

/// Layer normalisation's epsilon.
const EPS: f64 = 1e-5;
/// The host computes in f64: the tolerance allows for f32 rounding of exp, log and the row
/// reductions (differences measured are about 1e-7 of the largest value).
const TOLERANCE: f64 = 1e-5;

/// The computation measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Case {
    /// Four element-wise ops: `log(1 + exp(x / 2))`.
    Chain,
    /// Layer normalisation over each row, without affine parameters.
    LayerNorm,
    /// One element-wise op, `x + 1`: written both ways, its time difference is the cost of a
    /// fresh buffer (allocating it and touching its pages for the first time), which sets the
    /// other cases' time differences beside it.
    Touch,
}

/// Every computation, in the page's order.
pub const CASES: [Case; 3] = [Case::Chain, Case::LayerNorm, Case::Touch];

/// How the computation gets its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Style {
    /// The caller keeps `x` (a clone goes in): the first write needs a new buffer.
    KeepClone,
    /// `x` is handed over by value: writes land in its buffer.
    Consume,
}

impl Case {
    /// The computation's name in sentences.
    pub fn name(self) -> &'static str {
        match self {
            Case::Chain => "element-wise chain",
            Case::LayerNorm => "layer norm",
            Case::Touch => "single add (x + 1)",
        }
    }

    fn id(self) -> &'static str {
        match self {
            Case::Chain => "chain",
            Case::LayerNorm => "layer-norm",
            Case::Touch => "touch",
        }
    }
}

impl Style {
    /// The style's name in sentences.
    pub fn name(self) -> &'static str {
        match self {
            Style::KeepClone => "keep a clone",
            Style::Consume => "consume",
        }
    }

    fn id(self) -> &'static str {
        match self {
            Style::KeepClone => "keep-clone",
            Style::Consume => "consume",
        }
    }
}

/// Configuration of one in-place point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct InPlaceConfig {
    /// The computation.
    pub case: Case,
    /// How it gets its input.
    pub style: Style,
    /// Rows of the f32 input (the "samples" of the throughput figure).
    pub rows: usize,
    /// Columns of the input.
    pub cols: usize,
    /// Seed of the backend's generator.
    pub seed: u64,
}

impl InPlaceConfig {
    /// Bytes of the input tensor's elements.
    pub fn tensor_bytes(&self) -> u64 {
        (self.rows * self.cols) as u64 * F32_BYTES
    }
}

/// The in-place experiment.
pub struct InPlace;

const COLS: usize = 1024;

fn rows(sizes: Sizes) -> Vec<usize> {
    match sizes {
        // 2048 rows at most quick: its three comparisons at 4096 rows would take most of the
        // quick run's minute.
        Sizes::Quick => vec![256, 1024, 2048],
        Sizes::Full => vec![1024, 4096, 16384],
        Sizes::FullCuda => vec![16384, 65536, 262144],
    }
}

impl Technique for InPlace {
    type Config = InPlaceConfig;
    const ID: TechniqueId = TechniqueId::InPlace;
    const SNIPPET: &'static str = include_str!("snippet.rs");

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Planned<InPlaceConfig>> {
        let mut points = Vec::new();
        for case in CASES {
            for rows in rows(Sizes::of(profile, device)) {
                for style in [Style::KeepClone, Style::Consume] {
                    points.push(Planned::new(
                        format!("{}-{}-rows-{rows}", case.id(), style.id()),
                        format!("{}, {}, {rows} x {COLS}", case.name(), style.name()),
                        profile,
                        InPlaceConfig {
                            case,
                            style,
                            rows,
                            cols: COLS,
                            seed: 11,
                        },
                    ));
                }
            }
        }
        points
    }

    fn comparisons(&self, rows: &[Row<'_, InPlaceConfig>]) -> Vec<ComparisonSpec> {
        analysis::comparisons(rows)
    }

    fn run_point(
        &self,
        config: &InPlaceConfig,
        repeats: Repeats,
        device: DeviceKind,
    ) -> Measurement {
        // The operation's phase is bracketed on a device: one page per allocation.
        device.dispatch(
            Setup {
                pool: Pool::ExclusivePages,
                ..Setup::default()
            },
            InPlacePoint {
                config: *config,
                repeats,
            },
        )
    }
}

/// Runs `case` in `style` on `x`. With [`Style::KeepClone`] the input is returned beside the
/// output, so that it stays alive through the measurement as the caller's copy would.
fn compute(case: Case, style: Style, x: Tensor<2>) -> (Tensor<2>, Option<Tensor<2>>) {
    match (case, style) {
        (Case::Chain, Style::KeepClone) => (chain(x.clone()), Some(x)),
        (Case::Chain, Style::Consume) => (chain(x), None),
        (Case::LayerNorm, Style::KeepClone) => (layer_norm_borrowed(&x, EPS), Some(x)),
        (Case::LayerNorm, Style::Consume) => (layer_norm_owned(x, EPS), None),
        (Case::Touch, Style::KeepClone) => (x.clone().add_scalar(1.0), Some(x)),
        (Case::Touch, Style::Consume) => (x.add_scalar(1.0), None),
    }
}

/// The computation done on the host, in f64, from the input's values: the reference the
/// backend's output is checked against.
pub fn host_reference(case: Case, x: &[f32], cols: usize) -> Vec<f32> {
    match case {
        Case::Chain => x
            .iter()
            .map(|&v| (1.0 + (f64::from(v) * 0.5).exp()).ln() as f32)
            .collect(),
        Case::Touch => x.iter().map(|&v| (f64::from(v) + 1.0) as f32).collect(),
        Case::LayerNorm => x
            .chunks(cols)
            .flat_map(|row| {
                let n = row.len() as f64;
                let mean = row.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
                let var = row
                    .iter()
                    .map(|&v| (f64::from(v) - mean).powi(2))
                    .sum::<f64>()
                    / n;
                let scale = 1.0 / (var + EPS).sqrt();
                row.iter()
                    .map(move |&v| ((f64::from(v) - mean) * scale) as f32)
            })
            .collect(),
    }
}

/// Measures one computation written one way.
pub struct InPlacePoint {
    /// What to run.
    pub config: InPlaceConfig,
    /// Untimed and timed repeats.
    pub repeats: Repeats,
}

impl OnBackend for InPlacePoint {
    type Output = PointResult;

    fn run(self, device: Device, probe: &dyn MemoryProbe) -> PointResult {
        let device = device.without_autodiff();
        let c = self.config;
        let sync = || backend::sync(&device);
        device.seed(c.seed);
        let input = normal_inputs(c.rows, c.cols, &device);
        let m = measure_op(probe, &sync, PHASE, self.repeats, c.rows, &input, |x| {
            compute(c.case, c.style, x)
        });

        // The check: this way's output against the same computation done on the host.
        let x = input();
        let values = |t: Tensor<2>| t.into_data().try_to_vec::<f32>().unwrap_or_default();
        let reference = host_reference(c.case, &values(x.clone()), c.cols);
        let check = Check::compare(
            "host-f64-output",
            &reference,
            &values(compute(c.case, c.style, x).0),
            TOLERANCE,
        );

        let mut metrics = Metrics::new();
        metrics.put(Metric::TensorBytes, c.tensor_bytes() as f64);
        m.into_result(probe.info(), InPlaceMetric::AddedPeakBytes, metrics, check)
    }
}
