//! Mixed precision: store or compute in 16-bit floats.
//!
//! Question: what do bf16 and f16, as storage or as mixed precision with f32 master weights,
//! save in memory, what do they cost, and do they still train to the same loss?
//! Method: the same student network trained to match a fixed teacher (and a small transformer
//! trained on a Markov chain's sequences) for the same steps in six precisions (f32; bf16 storage; f16 storage with and without a dynamic loss scale; mixed bf16
//! and mixed f16), each in its own process (Burn sets the float type once per process); memory
//! by component predicted from shapes and bytes per value; exactly-zero gradients counted with
//! and without the loss scale; the proof holds each loss curve's drift from f32's to the drift
//! between two f32 runs from other initial weights, measured in the same run.
//! Answer: 16-bit storage halves weights, optimizer state, gradients and activations; mixed
//! precision halves activations only and adds a 16-bit copy of the weights. f16's narrow range
//! flushes small gradients to zero unless the loss is scaled.

mod analysis;
pub mod predict;
#[allow(dead_code, missing_docs)]
#[doc(hidden)]
pub mod snippet;

use crate::harness::models::BuildModel;
use results::TechniqueId;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use burn::nn::loss::{MseLoss, Reduction};
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Distribution, FloatDType, Tensor};
use results::{
    Check, ComparisonSpec, DeviceKind, FloatStorage, Metric, Metrics, Phase, PhaseKey, PhaseMemory,
    PhaseTiming, PointResult, Profile, PutMetric, Timing, Trace,
};
use serde::{Deserialize, Serialize};

pub use analysis::{drift, drift_check};

use crate::error::ExperimentError;
use crate::harness::backend::{self, Backends, OnBackend, Pool, Setup};
use crate::harness::models::{
    mlp, training_transformer, Batch, MlpShape, Model, ModelShape, TransformerShape,
};
use crate::harness::probe::{
    bracketed_step, delta_spread_bytes, last_repeat, MemoryProbe, PhaseMeter,
};
use crate::harness::profile::{Repeats, Sizes};
use crate::harness::timing;
use crate::harness::train;
use crate::technique::{Measurement, Planned, Row, Technique};
use burn::optim::ModuleOptimizer;
use burn::tensor::Device;
use estimator::estimate::{self, StepPlan};
use snippet::{forward_mixed, unscale, DynamicLossScale};

results::metric_keys! {
    /// What mixed precision measures beyond the shared metrics: the loss scale and the gradients it keeps from underflowing.
    pub enum MixedMetric {
        /// Loss scale after the first steps (mixed precision, where finite).
        FiniteLossScaleFinal = "finite_loss_scale_final",
        /// Loss scale at the initial weights.
        FiniteLossScaleInitial = "finite_loss_scale_initial",
        /// Gradient elements counted.
        GradElements = "grad_elements",
        /// Optimizer steps skipped for a non-finite gradient.
        SkippedSteps = "skipped_steps",
        /// Exactly-zero gradient elements with the loss scale, at the trained weights.
        ZeroGradElementsScaledFinal = "zero_grad_elements_scaled_final",
        /// Exactly-zero gradient elements with the loss scale, at the initial weights.
        ZeroGradElementsScaledInitial = "zero_grad_elements_scaled_initial",
        /// Exactly-zero gradient elements without a scale, at the trained weights.
        ZeroGradElementsUnscaledFinal = "zero_grad_elements_unscaled_final",
        /// Exactly-zero gradient elements without a scale, at the initial weights.
        ZeroGradElementsUnscaledInitial = "zero_grad_elements_unscaled_initial",
    }
}

/// Seed of the students' initial weights.
const INIT_SEED: u64 = 23;
/// The point that trains in f32 from other initial weights: how far two f32 runs of the same
/// task drift apart is the tolerance a precision's drift is held to.
pub const YARDSTICK_ID: &str = "f32-other-init";

/// The dynamic loss scale's start (PyTorch GradScaler's default, 2^16).
pub const INITIAL_LOSS_SCALE: f64 = 65536.0;
/// Finite steps in a row before the scale doubles (GradScaler: 2000; shortened to fit a run of
/// a few hundred steps).
pub const GROWTH_INTERVAL: usize = 25;

/// How tensors are stored and computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Precision {
    /// Everything in f32: the reference.
    F32,
    /// Everything stored in bf16.
    Bf16,
    /// Everything stored in f16, with a dynamic loss scale.
    F16,
    /// Everything stored in f16, no loss scale: small gradients underflow.
    F16Unscaled,
    /// f32 weights, gradients and Adam state; forward computed in bf16.
    MixedBf16,
    /// f32 weights, gradients and Adam state; forward computed in f16, dynamic loss scale.
    MixedF16,
}

/// Every precision, in the page's order.
pub const PRECISIONS: [Precision; 6] = [
    Precision::F32,
    Precision::Bf16,
    Precision::F16,
    Precision::F16Unscaled,
    Precision::MixedBf16,
    Precision::MixedF16,
];

impl Precision {
    /// Kebab-case id.
    pub fn id(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Bf16 => "bf16",
            Precision::F16 => "f16",
            Precision::F16Unscaled => "f16-unscaled",
            Precision::MixedBf16 => "mixed-bf16",
            Precision::MixedF16 => "mixed-f16",
        }
    }

    /// What a reader sees.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Bf16 => "bf16 storage",
            Precision::F16 => "f16 storage + loss scale",
            Precision::F16Unscaled => "f16 storage, no loss scale",
            Precision::MixedBf16 => "mixed bf16 (f32 master)",
            Precision::MixedF16 => "mixed f16 (f32 master) + loss scale",
        }
    }

    /// The device's default float type.
    pub fn storage(self) -> FloatStorage {
        match self {
            Precision::Bf16 => FloatStorage::Bf16,
            Precision::F16 | Precision::F16Unscaled => FloatStorage::F16,
            _ => FloatStorage::F32,
        }
    }

    /// The float type the forward pass is computed in, where it differs from storage.
    pub fn compute(self) -> Option<FloatStorage> {
        match self {
            Precision::MixedBf16 => Some(FloatStorage::Bf16),
            Precision::MixedF16 => Some(FloatStorage::F16),
            _ => None,
        }
    }

    /// Whether the loss is scaled dynamically.
    pub fn loss_scaled(self) -> bool {
        matches!(self, Precision::F16 | Precision::MixedF16)
    }
}

/// Configuration of one mixed-precision point: a training run of `warmup + repeats` steps.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MixedConfig {
    /// The student (and the shape of the teacher's data), or the transformer (trained on its
    /// Markov chain's sequences).
    pub shape: ModelShape,
    /// Samples per step (the same batch every step: the task is to fit it).
    pub batch: usize,
    /// Adam learning rate.
    pub lr: f64,
    /// Seed of the teacher and the data.
    pub seed: u64,
    /// Seed of the student's initial weights.
    pub init_seed: u64,
    /// Storage and compute types.
    pub precision: Precision,
    /// Above 0: the seed study instead of one run. `seeds` pairs of runs, f32 and `precision`
    /// from the same initial weights (`init_seed + i`), compared by the mean of their last
    /// [`SEED_STUDY_LAST_LOSSES`] losses.
    #[serde(default)]
    pub seeds: usize,
}

/// The seed study's id.
pub const SEED_STUDY_ID: &str = "seeds-mixed-bf16";
/// How many seeds the seed study pairs.
pub const SEED_STUDY_SEEDS: usize = 5;
/// How many of a run's last losses are averaged.
pub const SEED_STUDY_LAST_LOSSES: usize = 20;

/// The mixed-precision experiment.
pub struct MixedPrecision;

fn config(sizes: Sizes) -> (MlpShape, usize, usize, usize) {
    // (shape, batch, untimed steps, timed steps): 50 steps quick (the loss halves by then),
    // 60 in full (its 16-bit steps are the slowest points of the full CPU run).
    match sizes {
        Sizes::Quick => (
            MlpShape {
                width: 128,
                depth: 4,
            },
            64,
            5,
            45,
        ),
        Sizes::Full => (
            MlpShape {
                width: 512,
                depth: 8,
            },
            256,
            10,
            50,
        ),
        Sizes::FullCuda => (
            MlpShape {
                width: 4096,
                depth: 8,
            },
            4096,
            20,
            100,
        ),
    }
}

/// When the exactly-zero gradient elements are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// At the initial weights.
    Initial,
    /// At the trained weights.
    Final,
}

impl When {
    /// Zero gradient elements without a loss scale.
    pub fn unscaled_zeros(self) -> MixedMetric {
        match self {
            When::Initial => MixedMetric::ZeroGradElementsUnscaledInitial,
            When::Final => MixedMetric::ZeroGradElementsUnscaledFinal,
        }
    }

    /// Zero gradient elements with the first finite loss scale.
    pub fn scaled_zeros(self) -> MixedMetric {
        match self {
            When::Initial => MixedMetric::ZeroGradElementsScaledInitial,
            When::Final => MixedMetric::ZeroGradElementsScaledFinal,
        }
    }

    /// That loss scale.
    pub fn finite_scale(self) -> MixedMetric {
        match self {
            When::Initial => MixedMetric::FiniteLossScaleInitial,
            When::Final => MixedMetric::FiniteLossScaleFinal,
        }
    }
}

impl Technique for MixedPrecision {
    type Config = MixedConfig;
    const ID: TechniqueId = TechniqueId::MixedPrecision;
    const SNIPPET: &'static str = include_str!("snippet.rs");

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Planned<MixedConfig>> {
        let sizes = Sizes::of(profile, device);
        let mut points: Vec<_> = PRECISIONS
            .iter()
            .map(|&p| planned(sizes, p.id(), p.name().into(), p, INIT_SEED, 0))
            .collect();
        // The yardstick for drift: f32 again, from other initial weights.
        points.push(planned(
            sizes,
            YARDSTICK_ID,
            "f32, other initial weights".into(),
            Precision::F32,
            INIT_SEED + 1,
            0,
        ));
        // The transformer in every precision, with its own yardstick.
        points.extend(
            PRECISIONS
                .iter()
                .map(|&p| {
                    planned_transformer(
                        sizes,
                        p.id(),
                        format!("transformer, {}", p.name()),
                        p,
                        INIT_SEED,
                    )
                })
                .chain([planned_transformer(
                    sizes,
                    YARDSTICK_ID,
                    "transformer, f32, other initial weights".into(),
                    Precision::F32,
                    INIT_SEED + 1,
                )]),
        );
        // The proof of the index row (mixed bf16): paired by seed, at the quick sizes.
        points.push(planned(
            Sizes::Quick,
            SEED_STUDY_ID,
            format!(
                "f32 and mixed bf16 from {SEED_STUDY_SEEDS} initial weights, paired (quick size)"
            ),
            Precision::MixedBf16,
            INIT_SEED + 100,
            SEED_STUDY_SEEDS,
        ));
        points
    }

    fn run_point(&self, config: &MixedConfig, repeats: Repeats, device: DeviceKind) -> Measurement {
        if config.seeds > 0 {
            return device.dispatch(
                Setup {
                    compute: config.precision.compute(),
                    ..Default::default()
                },
                SeedStudy {
                    config: *config,
                    repeats,
                },
            )?;
        }
        // The outer error: no device; the inner one: the device lacks the float type.
        device.dispatch(
            Setup {
                float: config.precision.storage(),
                compute: config.precision.compute(),
                pool: Pool::ExclusivePages,
                ..Default::default()
            },
            MixedPoint {
                config: *config,
                repeats,
            },
        )?
    }

    fn float_storage(&self, config: &MixedConfig) -> FloatStorage {
        if config.seeds > 0 {
            FloatStorage::F32
        } else {
            config.precision.storage()
        }
    }

    /// The estimator knows f32, bf16 storage and mixed bf16; f16 stores values in as many
    /// bytes as bf16, so the f16 points are estimated as their bf16 counterparts (the loss
    /// scale's bytes are not modelled). The seed study trains two models in turn: not one step.
    fn step_plan(&self, config: &MixedConfig) -> Option<StepPlan> {
        if config.seeds > 0 {
            return None;
        }
        Some(StepPlan {
            precision: match config.precision {
                Precision::F32 => estimate::Precision::F32,
                Precision::Bf16 | Precision::F16 | Precision::F16Unscaled => {
                    estimate::Precision::Bf16
                }
                Precision::MixedBf16 | Precision::MixedF16 => estimate::Precision::MixedBf16,
            },
            ..StepPlan::f32_adam(config.shape, config.batch as f64)
        })
    }

    fn comparisons(&self, rows: &[Row<'_, MixedConfig>]) -> Vec<ComparisonSpec> {
        analysis::comparisons(rows)
    }
}

/// The seed study: f32 and a candidate precision (with f32 storage) trained from the same
/// initial weights, for several initial weights, in one process.
pub struct SeedStudy {
    /// The candidate's configuration; `seeds` runs of each.
    pub config: MixedConfig,
    /// Steps of each run.
    pub repeats: Repeats,
}

/// The mean of the last [`SEED_STUDY_LAST_LOSSES`] values of a loss curve.
pub fn final_loss(losses: &[f64]) -> f64 {
    let last = &losses[losses.len().saturating_sub(SEED_STUDY_LAST_LOSSES)..];
    last.iter().sum::<f64>() / last.len().max(1) as f64
}

/// The seed study's check: the candidate's final losses against the reference's, paired by
/// seed. It fails only when the candidate is worse on average by more than the reference's own
/// spread across seeds (largest minus smallest final loss), measured in the same run.
pub fn seed_check(reference: &[f64], candidate: &[f64], name: &str) -> Check {
    let n = reference.len().min(candidate.len());
    let mean_worse = (0..n).map(|i| candidate[i] - reference[i]).sum::<f64>() / n.max(1) as f64;
    let spread = reference[..n]
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max)
        - reference[..n].iter().copied().fold(f64::INFINITY, f64::min);
    let passed = n >= 2 && mean_worse.is_finite() && mean_worse <= spread;
    Check {
        what: "seed-study".into(),
        params: Default::default(),
        max_abs_diff: mean_worse,
        max_rel_diff: if spread > 0.0 {
            mean_worse / spread
        } else {
            f64::INFINITY
        },
        tolerance: 1.0,
        passed,
    }
    .with("precision", name)
    .with("last", SEED_STUDY_LAST_LOSSES)
    .with("seeds", n)
}

impl OnBackend for SeedStudy {
    type Output = Result<PointResult, ExperimentError>;

    fn run(self, device: Device, probe: &dyn MemoryProbe) -> Result<PointResult, ExperimentError> {
        let c = self.config;
        let run = |precision: Precision, i: usize| {
            MixedPoint {
                config: MixedConfig {
                    precision,
                    init_seed: c.init_seed + i as u64,
                    seeds: 0,
                    ..c
                },
                repeats: self.repeats,
            }
            .run(device.clone(), probe)
        };
        // The first candidate run is the point's step (offered to a bench's timer); the others
        // run with no timer.
        let first = run(c.precision, 0)?;
        let mut candidate = vec![final_loss(first.trace(Trace::LossByStep))];
        let mut reference = Vec::new();
        timing::without_step_timer(|| -> Result<(), ExperimentError> {
            for i in 0..c.seeds {
                if i > 0 {
                    candidate.push(final_loss(run(c.precision, i)?.trace(Trace::LossByStep)));
                }
                reference.push(final_loss(run(Precision::F32, i)?.trace(Trace::LossByStep)));
            }
            Ok(())
        })?;
        let check = seed_check(&reference, &candidate, c.precision.name());
        let mut traces = BTreeMap::new();
        traces.insert(Trace::SeedReferenceFinalLoss, reference);
        traces.insert(Trace::SeedCandidateFinalLoss, candidate);
        Ok(PointResult {
            traces,
            checks: vec![check],
            ..first
        })
    }
}

/// The transformer trained in every precision: small, since a 16-bit step on the CPU is
/// several times slower than an f32 one and each precision trains for 60 to 70 steps.
fn transformer_config(sizes: Sizes) -> (TransformerShape, usize) {
    match sizes {
        Sizes::Quick => (
            TransformerShape {
                chunked: Default::default(),
                vocab: 64,
                d_model: 32,
                layers: 1,
                heads: 2,
                seq: 32,
                tied_head: false,
            },
            8,
        ),
        Sizes::Full => (
            TransformerShape {
                chunked: Default::default(),
                vocab: 128,
                d_model: 64,
                layers: 1,
                heads: 4,
                seq: 32,
                tied_head: false,
            },
            8,
        ),
        Sizes::FullCuda => (training_transformer(sizes), 8),
    }
}

/// The transformer's learning rate (its loss falls from ln(vocabulary) towards the chain's
/// entropy rate within the run at this rate).
const TRANSFORMER_LR: f64 = 3e-3;

/// The id prefix of the transformer's points.
pub const TRANSFORMER_PREFIX: &str = "transformer-";

/// A point training the transformer of `sizes` in `precision` from initial weights `init_seed`.
fn planned_transformer(
    sizes: Sizes,
    id: &str,
    label: String,
    precision: Precision,
    init_seed: u64,
) -> Planned<MixedConfig> {
    let (shape, batch) = transformer_config(sizes);
    let planned = planned(sizes, id, label, precision, init_seed, 0);
    // 70 steps in full (in 16 bits a step is several times an f32 one on the CPU): the
    // loss falls well below the chain's entropy rate by then.
    let repeats = match sizes {
        Sizes::Quick => planned.repeats,
        Sizes::Full | Sizes::FullCuda => Repeats {
            warmup: 10,
            repeats: 60,
            ..planned.repeats
        },
    };
    Planned {
        id: format!("{TRANSFORMER_PREFIX}{id}"),
        repeats,
        config: MixedConfig {
            shape: ModelShape::Transformer(shape),
            batch,
            lr: TRANSFORMER_LR,
            ..planned.config
        },
        ..planned
    }
}

/// A point training the student of `sizes` in `precision` from initial weights `init_seed`
/// (the seed study where `seeds` is above 0).
fn planned(
    sizes: Sizes,
    id: &str,
    label: String,
    precision: Precision,
    init_seed: u64,
    seeds: usize,
) -> Planned<MixedConfig> {
    let (shape, batch, warmup, repeats) = config(sizes);
    Planned {
        id: id.into(),
        label,
        repeats: Repeats {
            warmup,
            repeats,
            min_warmup: Duration::ZERO,
        },
        config: MixedConfig {
            shape: ModelShape::Mlp(shape),
            batch,
            lr: 1e-3,
            seed: 17,
            init_seed,
            precision,
            seeds,
        },
    }
}

/// The model's loss on its batch, the forward pass in `compute` if given: the student against
/// the teacher's targets through the snippet's `forward_mixed`, or the transformer's
/// cross-entropy with its weights cast to `compute` (the loss in f32).
fn loss(model: &Model, batch: &Batch, compute: Option<FloatStorage>) -> Tensor<1> {
    match (model, batch, compute) {
        (Model::Mlp(m), Batch::Regression { x, y }, Some(c)) => MseLoss::new().forward(
            forward_mixed(&m.layers, x.clone(), backend::float_dtype(c)),
            y.clone(),
            Reduction::Mean,
        ),
        _ => model.loss_in(batch, compute.map(backend::float_dtype)),
    }
}

/// The value of a one-element tensor, read as f32 (the read synchronises the device).
fn scalar(t: &Tensor<1>) -> f64 {
    t.clone()
        .inner()
        .cast(FloatDType::F32)
        .into_data()
        .try_to_vec::<f32>()
        .ok()
        .and_then(|v| v.first().copied())
        .map_or(f64::NAN, f64::from)
}

/// Parameter-gradient elements that are exactly zero, and all elements, as the optimizer would
/// see them after unscaling.
fn zero_gradients(model: &Model, grads: &GradientsParams) -> (u64, u64) {
    let values = mlp::flatten(model, Some(grads));
    let zeros = values.iter().filter(|v| **v == 0.0).count();
    (zeros as u64, values.len() as u64)
}

/// One forward and backward at `scale`, unscaled as the training step does: the gradient
/// elements that are exactly zero, all elements, and whether all were finite.
fn zeros_at_scale(
    model: &Model,
    batch: &Batch,
    compute: Option<FloatStorage>,
    scale: f64,
) -> (u64, u64, bool) {
    let grads = loss(model, batch, compute).mul_scalar(scale).backward();
    let mut grads = GradientsParams::from_grads(grads, model);
    let finite = unscale(model, &mut grads, scale);
    let (zeros, total) = zero_gradients(model, &grads);
    (zeros, total, finite)
}

/// One training run in one precision.
pub struct MixedPoint {
    /// What to train.
    pub config: MixedConfig,
    /// Untimed and timed repeats.
    pub repeats: Repeats,
}

/// A device without the type (lavapipe has no bf16) refuses here, not with a panic in a
/// kernel.
fn refuse_unsupported(device: &Device, p: Precision) -> Result<(), ExperimentError> {
    let Some(compute) = p.compute() else {
        return Ok(());
    };
    let dtype = burn::tensor::DType::from(backend::float_dtype(compute));
    if device.supports_dtype(dtype) {
        Ok(())
    } else {
        Err(ExperimentError::Unsupported {
            lacks: compute.name().to_string(),
        })
    }
}

/// The task of `c`: for the MLP, to match a fixed random linear teacher on a fixed batch; for
/// the transformer, the next token of a fixed batch of the Markov chain's sequences.
fn task(c: &MixedConfig, device: &Device) -> Batch {
    match c.shape {
        ModelShape::Mlp(shape) => {
            let x = Tensor::<2>::random(
                [c.batch, shape.width],
                Distribution::Normal(0.0, 1.0),
                device,
            );
            let teacher = Tensor::<2>::random(
                [shape.width, shape.width],
                Distribution::Normal(0.0, 1.0 / (shape.width as f64).sqrt()),
                device,
            );
            let y = Tensor::from_inner(x.clone().inner().matmul(teacher.inner()));
            Batch::Regression { x, y }
        }
        ModelShape::Transformer(_) | ModelShape::Llama(_) => c.shape.batch(c.batch, c.seed, device),
    }
}

/// Underflow at `model`'s weights: gradients as the optimizer would see them, with no loss
/// scale and with the first scale (halving from 2^16) whose gradients are finite, put into
/// `metrics` under `when`.
fn count_zeros(model: &Model, batch: &Batch, p: Precision, when: When, metrics: &mut Metrics) {
    let zeros_at = |scale: f64| zeros_at_scale(model, batch, p.compute(), scale);
    let (zeros, total, _) = zeros_at(1.0);
    metrics.put(when.unscaled_zeros(), zeros as f64);
    metrics.put(MixedMetric::GradElements, total as f64);
    if !p.loss_scaled() {
        return;
    }
    let mut scale = INITIAL_LOSS_SCALE;
    for _ in 0..32 {
        let (zeros, _, finite) = zeros_at(scale);
        if finite {
            metrics.put(when.scaled_zeros(), zeros as f64);
            metrics.put(when.finite_scale(), scale);
            return;
        }
        scale /= 2.0;
    }
}

/// A training run's state between steps: the model, Adam, the loss scale, and what the steps
/// recorded.
struct Run {
    model: Option<Model>,
    optim: ModuleOptimizer,
    scaler: Option<DynamicLossScale>,
    losses: Vec<f64>,
    scales: Vec<f64>,
    skipped: u64,
    optimizer_state_bytes: Option<u64>,
    /// Bytes in use before the first step: the first applied step's excess is Adam's state.
    after_runtime: u64,
}

impl Run {
    fn new(model: Model, p: Precision, after_runtime: u64) -> Self {
        Self {
            model: Some(model),
            optim: AdamConfig::new().init(),
            scaler: p
                .loss_scaled()
                .then(|| DynamicLossScale::new(INITIAL_LOSS_SCALE, GROWTH_INTERVAL)),
            losses: Vec::new(),
            scales: Vec::new(),
            skipped: 0,
            optimizer_state_bytes: None,
            after_runtime,
        }
    }

    /// Backward and the optimizer's step, the loss scaled and the step skipped on overflow
    /// where there is a scale; whether the step was applied.
    fn backward_and_step(
        &mut self,
        meter: &mut PhaseMeter<'_>,
        m: Model,
        l: Tensor<1>,
        lr: f64,
    ) -> (Model, bool) {
        let scale = self.scaler.as_ref().map_or(1.0, |s| s.scale);
        let scaled = self.scaler.is_some();
        let grads = meter.phase(Phase::Backward, || {
            if scaled {
                l.mul_scalar(scale).backward()
            } else {
                l.backward()
            }
        });
        meter.phase(Phase::Optimizer, || {
            let mut grads = GradientsParams::from_grads(grads, &m);
            let apply = match self.scaler.as_mut() {
                Some(s) => {
                    let finite = unscale(&m, &mut grads, scale);
                    s.update(finite)
                }
                None => true,
            };
            if apply {
                (self.optim.step(lr, m, grads), true)
            } else {
                (m, false)
            }
        })
    }

    /// One training step: its time (the device synchronised before the clock is read) and
    /// its phases.
    fn step(
        &mut self,
        probe: &dyn MemoryProbe,
        sync: &dyn Fn(),
        batch: &Batch,
        c: &MixedConfig,
    ) -> (Duration, Vec<PhaseMemory>) {
        let mut meter = PhaseMeter::new(probe, sync);
        let m = self
            .model
            .take()
            .expect("model is put back after each step");
        let scale = self.scaler.as_ref().map_or(1.0, |s| s.scale);
        let clock = Instant::now();
        let l = meter.phase(Phase::Forward, || loss(&m, batch, c.precision.compute()));
        self.losses.push(scalar(&l));
        self.scales.push(scale);
        let (m, applied) = self.backward_and_step(&mut meter, m, l, c.lr);
        sync();
        let elapsed = clock.elapsed();
        self.model = Some(m);
        if !applied {
            self.skipped += 1;
        } else if self.optimizer_state_bytes.is_none() {
            // The first applied step allocates Adam's moments.
            self.optimizer_state_bytes =
                Some(probe.read().in_use_bytes.saturating_sub(self.after_runtime));
        }
        (elapsed, meter.finish())
    }
}

/// The bytes the run read, before the steps and from their phases, into `metrics`.
fn put_memory_metrics(
    metrics: &mut Metrics,
    (start, after_model, after_inputs): (u64, u64, u64),
    optimizer_state_bytes: Option<u64>,
    phases: &[PhaseMemory],
    runs: &[Vec<PhaseMemory>],
) {
    metrics.put(Metric::ParamBytes, (after_model - start) as f64);
    metrics.put(Metric::ProcessBaselineBytes, start as f64);
    metrics.put(Metric::InputBytes, (after_inputs - after_model) as f64);
    metrics.put(
        Metric::OptimizerStateBytes,
        optimizer_state_bytes.map_or(f64::NAN, |b| b as f64),
    );
    let forward = phases.iter().find(|ph| ph.phase == Phase::Forward.name());
    let backward = phases.iter().find(|ph| ph.phase == Phase::Backward.name());
    if let (Some(f), Some(b)) = (forward, backward) {
        metrics.put(Metric::ActivationBytes, f.delta_bytes() as f64);
        metrics.put(
            Metric::GradBytes,
            b.live_after_bytes.saturating_sub(f.live_before_bytes) as f64,
        );
    }
    metrics.put(
        Metric::RepeatDeltaSpreadBytes,
        delta_spread_bytes(runs) as f64,
    );
}

/// Where the probe sees every allocation (the CPU), one more step, untimed, with its memory
/// timeline (the step's loss is kept in the loss curve).
fn timeline_step(
    probe: &dyn MemoryProbe,
    step: &mut dyn FnMut() -> Vec<PhaseMemory>,
) -> BTreeMap<Trace, Vec<f64>> {
    if timing::timing_only() || !probe.start_timeline() {
        return BTreeMap::new();
    }
    let phases = step();
    match probe.stop_timeline() {
        Some(t) if !t.cut => train::timeline_traces(&t, &phases),
        _ => BTreeMap::new(),
    }
}

impl OnBackend for MixedPoint {
    type Output = Result<PointResult, ExperimentError>;

    fn run(self, device: Device, probe: &dyn MemoryProbe) -> Result<PointResult, ExperimentError> {
        let c = self.config;
        let p = c.precision;
        refuse_unsupported(&device, p)?;
        let sync = || backend::sync(&device);
        let start = probe.read().in_use_bytes;
        device.seed(c.init_seed);
        let model = c.shape.init(&device);
        mlp::materialize(&model);
        sync();
        let after_model = probe.read().in_use_bytes;
        device.seed(c.seed);
        let batch = task(&c, &device);
        sync();
        let after_inputs = probe.read().in_use_bytes;
        let mut metrics = BTreeMap::new();
        count_zeros(&model, &batch, p, When::Initial, &mut metrics);
        sync();
        let mut run = Run::new(model, p, probe.read().in_use_bytes);
        self.repeats.warm_up(|| {
            run.step(probe, &sync, &batch, &c);
        });
        let (unit, units) = c.shape.units(c.batch);
        timing::offer(units, &mut || run.step(probe, &sync, &batch, &c).0);
        let (samples_s, runs): (Vec<f64>, Vec<_>) = (0..self.repeats.repeats.max(1))
            .map(|_| {
                let (elapsed, phases) = run.step(probe, &sync, &batch, &c);
                (elapsed.as_secs_f64(), phases)
            })
            .unzip();
        // On a probe without an exact peak, one more step, untimed, brackets the phases.
        let bracketed = bracketed_step(probe, |runs| {
            runs.push(run.step(probe, &sync, &batch, &c).1)
        });
        let timeline = timeline_step(probe, &mut || run.step(probe, &sync, &batch, &c).1);
        count_zeros(
            run.model.as_ref().expect("model is back"),
            &batch,
            p,
            When::Final,
            &mut metrics,
        );
        let phases = bracketed.unwrap_or_else(|| last_repeat(&runs));
        put_memory_metrics(
            &mut metrics,
            (start, after_model, after_inputs),
            run.optimizer_state_bytes,
            &phases,
            &runs,
        );
        metrics.put(MixedMetric::SkippedSteps, run.skipped as f64);
        metrics.put(Metric::NumParams, c.shape.num_params() as f64);
        let mut traces = timeline;
        traces.insert(Trace::LossByStep, run.losses);
        if p.loss_scaled() {
            traces.insert(Trace::LossScaleByStep, run.scales);
        }
        Ok(PointResult {
            metrics,
            traces,
            phase_times: PhaseTiming::of_runs(&runs),
            ..PointResult::new(probe.info(), phases, Timing::from_samples(samples_s), units)
                .in_unit(unit)
        })
    }
}
