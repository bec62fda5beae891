//! Mixed precision: store or compute in 16-bit floats.
//!
//! Storing every tensor in bf16 or f16 halves weights, optimizer state, gradients and
//! activations; mixed precision proper keeps f32 master weights (and so f32 gradients and Adam
//! state) and computes the forward pass in 16 bits, halving activations only. f16's narrow
//! range flushes small gradients to zero unless the loss is scaled up first. The experiment
//! trains a student network to match a fixed teacher for the same number of steps in each
//! precision, and reports memory by component, throughput, and how far each loss curve drifts
//! from f32's.

use std::collections::BTreeMap;
use std::time::Instant;

use burn::nn::loss::{MseLoss, Reduction};
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Distribution, FloatDType, Tensor};
use serde::{Deserialize, Serialize};

use crate::backend::{self, FloatStorage, OnBackend, Setup};
use crate::batch_size::F32_BYTES;
use crate::device::DeviceKind;
use crate::experiment::{
    parse_config, Analysis, Chart, Check, Comparison, Correctness, Experiment, ExperimentError,
    Headline, MeasuredPoint, Point, PointResult, Profile, PublishedFigure, Scale, Series, Sizes,
};
use crate::format::{self, mib};
use crate::models::{mlp, Mlp, MlpShape};
use crate::probe::host::HostProbe;
use crate::probe::{delta_spread_bytes, last_repeat, MemoryProbe, PhaseMeter};
use crate::snippets::mixed_precision::{forward_mixed, unscale, DynamicLossScale};
use crate::timing::{self, Timing};

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

    /// Predicted bytes of the forward pass's high point above what was live before it. Storage
    /// precisions keep the f32 structure (each hidden layer's Linear and ReLU outputs, the last
    /// output and the loss's difference) at `e` bytes a value. Mixed precision keeps the 16-bit
    /// Linear and ReLU outputs and the 16-bit copy of the input, the f32 output and difference,
    /// and the 16-bit copy of every weight whose input is tracked (all but the first layer's),
    /// which Linear keeps for the input's gradient.
    ///
    /// With `bf16_matmul_via_f32` (Flex, the CPU backend), a bf16 matmul converts both operands
    /// to f32, multiplies, and converts the f32 result back: at the last Linear that is an f32
    /// copy of its input, of its weight and of its output live beside the kept activations, more
    /// than the pass's own end state.
    pub fn predicted_forward_bytes(
        self,
        shape: MlpShape,
        batch: usize,
        bf16_matmul_via_f32: bool,
    ) -> u64 {
        let (b, w, d) = (batch as u64, shape.width as u64, shape.depth as u64);
        let compute = self.compute().unwrap_or(self.storage());
        let e = compute.bytes();
        // Kept through the pass: the hidden layers' Linear and ReLU outputs.
        let hidden = b * w * 2 * (d - 1) * e;
        // At the end of the pass: the last output and the loss's difference (f32 in mixed
        // precision, after the cast back), plus, in mixed precision, the 16-bit input copy and
        // weight copies.
        let end = match self.compute() {
            None => 2 * b * w * e,
            Some(_) => b * w * (e + 2 * F32_BYTES) + (d - 1) * w * w * e,
        };
        let last_matmul = if bf16_matmul_via_f32 && compute == FloatStorage::Bf16 {
            // f32 input, weight and output, and the bf16 output, during the last Linear.
            let mixed_extra = match self.compute() {
                None => 0,
                Some(_) => b * w * e + (d - 1) * w * w * e,
            };
            (2 * b * w + w * w) * F32_BYTES + b * w * e + mixed_extra
        } else {
            0
        };
        hidden + end.max(last_matmul)
    }
}

/// Configuration of one mixed-precision point: a training run of `warmup + repeats` steps.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MixedConfig {
    /// The student (and the shape of the teacher's data).
    pub shape: MlpShape,
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
}

/// The mixed-precision experiment.
pub struct MixedPrecision;

fn config(sizes: Sizes) -> (MlpShape, usize, usize, usize) {
    // (shape, batch, untimed steps, timed steps): 50 steps or more in all.
    match sizes {
        Sizes::Quick => (
            MlpShape {
                width: 128,
                depth: 4,
            },
            64,
            10,
            50,
        ),
        Sizes::Full => (
            MlpShape {
                width: 512,
                depth: 8,
            },
            256,
            20,
            100,
        ),
        Sizes::Gpu => (
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

impl Experiment for MixedPrecision {
    fn id(&self) -> &'static str {
        "mixed-precision"
    }

    fn title(&self) -> &'static str {
        "Mixed precision (bf16, f16)"
    }

    fn explanation(&self) -> &'static str {
        "Storing every tensor in bf16 or f16 halves weights, optimizer state, gradients and \
         activations; mixed precision proper keeps f32 master weights, gradients and optimizer \
         state and computes the forward pass in 16 bits, which halves activations only and adds \
         a 16-bit copy of the weights. f16's narrow range flushes small gradients to zero unless \
         the loss is scaled up before backward (a dynamic loss scale); bf16 has f32's range and \
         needs none. Every precision trains the same student on the same task for the same \
         steps, and its loss curve is compared with f32's."
    }

    fn on_devices(&self) -> &'static str {
        "On a GPU, 16-bit matmuls run on tensor cores, so mixed precision is expected to raise \
         throughput there, the opposite of what this CPU shows; that is an expectation, \
         not a figure of this guide until a GPU result set sits beside this one. A \
         device that lacks a type refuses its points (the software Vulkan driver has no \
         bf16): they appear as failed points saying so."
    }

    fn snippet(&self) -> &'static str {
        include_str!("snippets/mixed_precision.rs")
    }

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Point> {
        let (shape, batch, warmup, repeats) = config(Sizes::of(profile, device));
        let point = |id: &str, label: &str, precision, init_seed| Point {
            id: id.into(),
            label: label.into(),
            warmup,
            repeats,
            config: serde_json::to_value(MixedConfig {
                shape,
                batch,
                lr: 1e-3,
                seed: 17,
                init_seed,
                precision,
            })
            .expect("config serialises"),
        };
        let mut points: Vec<Point> = PRECISIONS
            .iter()
            .map(|&p| point(p.id(), p.name(), p, INIT_SEED))
            .collect();
        // The yardstick for drift: f32 again, from other initial weights.
        points.push(point(
            YARDSTICK_ID,
            "f32, other initial weights",
            Precision::F32,
            INIT_SEED + 1,
        ));
        points
    }

    fn run_point(&self, point: &Point, device: DeviceKind) -> Result<PointResult, ExperimentError> {
        let config: MixedConfig = parse_config(self.id(), point)?;
        // The outer error: no device; the inner one: the device lacks the float type.
        backend::dispatch_with(
            device,
            Setup {
                float: config.precision.storage(),
                ..Default::default()
            },
            MixedPoint {
                config,
                warmup: point.warmup,
                repeats: point.repeats,
            },
        )?
    }

    fn float_storage(&self, point: &Point) -> FloatStorage {
        parse_config::<MixedConfig>(self.id(), point)
            .map_or(FloatStorage::F32, |c| c.precision.storage())
    }

    fn analyse(&self, points: &[MeasuredPoint]) -> Analysis {
        analyse(points)
    }
}

/// The student's loss against the teacher's targets, the forward pass in `compute` if given.
fn loss<B: AutodiffBackend>(
    model: &Mlp<B>,
    x: Tensor<B, 2>,
    y: Tensor<B, 2>,
    compute: Option<FloatStorage>,
) -> Tensor<B, 1> {
    let out = match compute {
        None => model.forward(x),
        Some(c) => forward_mixed(&model.layers, x, c.dtype()),
    };
    MseLoss::new().forward(out, y, Reduction::Mean)
}

/// The value of a one-element tensor, read as f32 (the read synchronises the device).
fn scalar<B: AutodiffBackend>(t: &Tensor<B, 1>) -> f64 {
    t.clone()
        .inner()
        .cast(FloatDType::F32)
        .into_data()
        .to_vec::<f32>()
        .ok()
        .and_then(|v| v.first().copied())
        .map_or(f64::NAN, f64::from)
}

/// Parameter-gradient elements that are exactly zero, and all elements, as the optimizer would
/// see them after unscaling.
fn zero_gradients<B: AutodiffBackend>(model: &Mlp<B>, grads: &GradientsParams) -> (u64, u64) {
    let values = mlp::flatten(model, Some(grads));
    let zeros = values.iter().filter(|v| **v == 0.0).count();
    (zeros as u64, values.len() as u64)
}

/// One forward and backward at `scale`, unscaled as the training step does: the gradient
/// elements that are exactly zero, all elements, and whether all were finite.
fn zeros_at_scale<B: AutodiffBackend>(
    model: &Mlp<B>,
    x: &Tensor<B, 2>,
    y: &Tensor<B, 2>,
    compute: Option<FloatStorage>,
    scale: f64,
) -> (u64, u64, bool) {
    let grads = loss(model, x.clone(), y.clone(), compute)
        .mul_scalar(scale)
        .backward();
    let mut grads = GradientsParams::from_grads(grads, model);
    let finite = unscale(model, &mut grads, scale);
    let (zeros, total) = zero_gradients(model, &grads);
    (zeros, total, finite)
}

/// One training run in one precision.
pub struct MixedPoint {
    /// What to train.
    pub config: MixedConfig,
    /// Untimed steps first (their losses are recorded).
    pub warmup: usize,
    /// Timed steps.
    pub repeats: usize,
}

impl OnBackend for MixedPoint {
    type Output = Result<PointResult, ExperimentError>;

    fn run<B: AutodiffBackend>(
        self,
        device: B::Device,
        probe: &dyn MemoryProbe,
    ) -> Result<PointResult, ExperimentError> {
        let c = self.config;
        let p = c.precision;
        // A device without the type (lavapipe has no bf16) refuses here, not with a panic in a
        // kernel.
        if let Some(compute) = p.compute() {
            let dtype = burn::tensor::DType::from(compute.dtype());
            if !B::supports_dtype(&device, dtype) {
                return Err(ExperimentError::Backend(format!(
                    "this device does not support {dtype:?}"
                )));
            }
        }
        let sync = || backend::sync::<B>(&device);

        let start = probe.read().in_use_bytes;
        B::seed(&device, c.init_seed);
        let model = c.shape.init::<B>(&device);
        mlp::materialize(&model);
        sync();
        let after_model = probe.read().in_use_bytes;
        B::seed(&device, c.seed);
        // The task: match a fixed random linear teacher on a fixed batch.
        let x = Tensor::<B, 2>::random(
            [c.batch, c.shape.width],
            Distribution::Normal(0.0, 1.0),
            &device,
        );
        let teacher = Tensor::<B, 2>::random(
            [c.shape.width, c.shape.width],
            Distribution::Normal(0.0, 1.0 / (c.shape.width as f64).sqrt()),
            &device,
        );
        let y = Tensor::from_inner(x.clone().inner().matmul(teacher.inner()));
        sync();
        let after_inputs = probe.read().in_use_bytes;

        // Underflow at the initial weights (and, below, the trained ones): gradients as the
        // optimizer would see them, with no loss scale and with the first scale (halving from
        // 2^16) whose gradients are finite.
        let mut metrics = BTreeMap::new();
        let mut count_zeros = |model: &Mlp<B>, when: &str| {
            let zeros_at = |scale: f64| zeros_at_scale(model, &x, &y, p.compute(), scale);
            let (zeros, total, _) = zeros_at(1.0);
            metrics.insert(format!("zero_grad_elements_unscaled_{when}"), zeros as f64);
            metrics.insert("grad_elements".into(), total as f64);
            if p.loss_scaled() {
                let mut scale = INITIAL_LOSS_SCALE;
                for _ in 0..32 {
                    let (zeros, _, finite) = zeros_at(scale);
                    if finite {
                        metrics.insert(format!("zero_grad_elements_scaled_{when}"), zeros as f64);
                        metrics.insert(format!("finite_loss_scale_{when}"), scale);
                        break;
                    }
                    scale /= 2.0;
                }
            }
        };
        count_zeros(&model, "initial");
        sync();
        let after_runtime = probe.read().in_use_bytes;

        let mut optim = AdamConfig::new().init::<B, Mlp<B>>();
        let mut scaler = p
            .loss_scaled()
            .then(|| DynamicLossScale::new(INITIAL_LOSS_SCALE, GROWTH_INTERVAL));
        let mut model = Some(model);
        let mut losses = Vec::new();
        let mut scales = Vec::new();
        let mut skipped = 0_u64;
        let mut optimizer_state_bytes = None;
        // One training step: its time (the device synchronised before the clock is read) and
        // its phases.
        let mut train_step = || {
            let mut meter = PhaseMeter::new(probe, &sync);
            let m = model.take().expect("model is put back after each step");
            let scale = scaler.as_ref().map_or(1.0, |s| s.scale);
            let clock = Instant::now();
            let l = meter.phase("forward", || loss(&m, x.clone(), y.clone(), p.compute()));
            losses.push(scalar(&l));
            scales.push(scale);
            let grads = meter.phase("backward", || {
                if scaler.is_some() {
                    l.mul_scalar(scale).backward()
                } else {
                    l.backward()
                }
            });
            let (m, applied) = meter.phase("optimizer", || {
                let mut grads = GradientsParams::from_grads(grads, &m);
                let apply = match scaler.as_mut() {
                    Some(s) => {
                        let finite = unscale(&m, &mut grads, scale);
                        s.update(finite)
                    }
                    None => true,
                };
                if apply {
                    (optim.step(c.lr, m, grads), true)
                } else {
                    (m, false)
                }
            });
            sync();
            let elapsed = clock.elapsed();
            model = Some(m);
            if !applied {
                skipped += 1;
            } else if optimizer_state_bytes.is_none() {
                // The first applied step allocates Adam's moments.
                optimizer_state_bytes =
                    Some(probe.read().in_use_bytes.saturating_sub(after_runtime));
            }
            (elapsed, meter.finish())
        };
        for _ in 0..self.warmup {
            train_step();
        }
        timing::offer(c.batch as u64, &mut || train_step().0);
        let (samples_s, runs): (Vec<f64>, Vec<_>) = (0..self.repeats.max(1))
            .map(|_| {
                let (elapsed, phases) = train_step();
                (elapsed.as_secs_f64(), phases)
            })
            .unzip();
        count_zeros(model.as_ref().expect("model is back"), "final");
        let timing = Timing::from_samples(samples_s);
        let phases = last_repeat(&runs);
        let forward = phases.iter().find(|ph| ph.phase == "forward");
        let backward = phases.iter().find(|ph| ph.phase == "backward");

        metrics.insert("param_bytes".into(), (after_model - start) as f64);
        metrics.insert("input_bytes".into(), (after_inputs - after_model) as f64);
        metrics.insert(
            "optimizer_state_bytes".into(),
            optimizer_state_bytes.map_or(f64::NAN, |b| b as f64),
        );
        if let (Some(f), Some(b)) = (forward, backward) {
            metrics.insert("activation_bytes".into(), f.delta_bytes() as f64);
            metrics.insert(
                "grad_bytes".into(),
                b.live_after_bytes.saturating_sub(f.live_before_bytes) as f64,
            );
        }
        metrics.insert("skipped_steps".into(), skipped as f64);
        metrics.insert("num_params".into(), c.shape.num_params() as f64);
        metrics.insert(
            "repeat_delta_spread_bytes".into(),
            delta_spread_bytes(&runs) as f64,
        );
        let mut traces = BTreeMap::new();
        traces.insert("loss_by_step".into(), losses);
        if p.loss_scaled() {
            traces.insert("loss_scale_by_step".into(), scales);
        }
        Ok(PointResult {
            probe: probe.info(),
            phases,
            samples_per_s: timing.per_second(c.batch as f64),
            step: timing,
            samples_per_step: c.batch as u64,
            metrics,
            traces,
            checks: vec![],
        })
    }
}

struct Row {
    config: MixedConfig,
    result: PointResult,
}

impl Row {
    fn losses(&self) -> &[f64] {
        self.result
            .traces
            .get("loss_by_step")
            .map_or(&[], Vec::as_slice)
    }

    fn peak(&self) -> f64 {
        self.result.peak_bytes() as f64
    }
}

/// The largest difference between two loss curves over the run, relative to the reference's
/// largest loss (its initial one, for a run that learns).
pub fn drift(reference: &[f64], candidate: &[f64]) -> f64 {
    drift_check(reference, candidate, "", f64::INFINITY).max_rel_diff
}

/// A precision's loss curve against f32's, as a check: its [`drift`] held to `tolerance` (the
/// drift between two f32 runs from different initial weights; NaN when that run is missing,
/// which fails the check).
pub fn drift_check(reference: &[f64], candidate: &[f64], name: &str, tolerance: f64) -> Check {
    let as_f32 = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<_>>();
    Check::compare(
        &format!("{name}: loss over {} steps against f32", reference.len()),
        &as_f32(reference),
        &as_f32(candidate),
        tolerance,
    )
}

/// The analysis of the mixed-precision experiment.
pub fn analyse(points: &[MeasuredPoint]) -> Analysis {
    let rows: Vec<Row> = points
        .iter()
        .filter_map(|p| {
            Some(Row {
                config: p.config()?,
                result: p.result()?.clone(),
            })
        })
        .collect();
    let (yardstick, rows): (Vec<Row>, Vec<Row>) = rows
        .into_iter()
        .partition(|r| r.config.init_seed != INIT_SEED);
    let find = |p: Precision| rows.iter().find(|r| r.config.precision == p);
    let Some(f32_row) = find(Precision::F32) else {
        return Analysis::unmeasured(Correctness::Unknown);
    };
    let reference = f32_row.losses();
    // The tolerance: how far f32 drifts from itself when only the initial weights change.
    let tolerance = yardstick
        .first()
        .map(|y| drift(reference, y.losses()))
        .unwrap_or(f64::NAN);
    let checks: Vec<(Precision, Check)> = rows
        .iter()
        .filter(|r| r.config.precision != Precision::F32)
        .map(|r| {
            let p = r.config.precision;
            (p, drift_check(reference, r.losses(), p.name(), tolerance))
        })
        .collect();

    let mut findings = Vec::new();
    if let (Some(first), Some(last)) = (reference.first(), reference.last()) {
        findings.push(format!(
            "The task is learned: in f32 the loss falls from {first:.4} to {last:.4} over {} \
             steps ({}). The yardstick: f32 from other initial weights ends at {} and drifts \
             from it by up to {:.2}% of the initial loss; a precision whose curve stays within \
             that drift has not changed the result beyond what the choice of initial weights \
             does.",
            reference.len(),
            format::pct((last / first - 1.0) * 100.0),
            yardstick
                .first()
                .and_then(|y| y.losses().last())
                .map_or("n/a".into(), |l| format!("{l:.4}")),
            tolerance * 100.0
        ));
    }
    for r in &rows {
        let p = r.config.precision;
        let losses = r.losses();
        let drift = checks.iter().find(|(q, _)| *q == p).map(|(_, c)| c);
        let mut sentence = format!(
            "{}: step peak {}, final loss {:.4}",
            format::capitalise(p.name()),
            format::bytes(r.peak()),
            losses.last().copied().unwrap_or(f64::NAN),
        );
        if let Some(c) = drift {
            sentence.push_str(&format!(
                ", largest drift from f32 {:.3e} ({:.2}% of the initial loss){}",
                c.max_abs_diff,
                c.max_rel_diff * 100.0,
                if c.passed {
                    ": within the yardstick"
                } else {
                    ": beyond the yardstick, the result changed"
                }
            ));
        }
        let m = |name: &str| r.result.metric(name);
        sentence.push_str(&format!(
            "; gradient elements exactly zero (of {}), without a loss scale: {} at the initial \
             weights, {} at the trained ones",
            m("grad_elements"),
            m("zero_grad_elements_unscaled_initial"),
            m("zero_grad_elements_unscaled_final"),
        ));
        if p.loss_scaled() {
            sentence.push_str(&format!(
                "; with the loss scale: {} (scale {}) and {} (scale {}); {} of {} steps were \
                 skipped on overflow",
                m("zero_grad_elements_scaled_initial"),
                m("finite_loss_scale_initial"),
                m("zero_grad_elements_scaled_final"),
                m("finite_loss_scale_final"),
                m("skipped_steps"),
                losses.len()
            ));
        }
        sentence.push('.');
        findings.push(sentence);
    }
    let zeros = |r: &Row, name: &str| r.result.metric(name);
    if let (Some(mixed), Some(pure)) = (find(Precision::MixedF16), find(Precision::F16)) {
        let (without, with) = (
            zeros(mixed, "zero_grad_elements_unscaled_initial"),
            zeros(mixed, "zero_grad_elements_scaled_initial"),
        );
        let (pure_without, pure_with) = (
            zeros(pure, "zero_grad_elements_unscaled_final"),
            zeros(pure, "zero_grad_elements_scaled_final"),
        );
        findings.push(format!(
            "What the loss scale does: with f32 master weights (mixed f16), {without} gradient \
             elements are exactly zero at the initial weights without a scale and {with} with it \
             (f32: {}){}. With f16 storage, at the trained weights: {pure_without} without and \
             {pure_with} with the scale{}.",
            zeros(f32_row, "zero_grad_elements_unscaled_initial"),
            if with < without {
                format!(
                    ": the scale kept {} small gradients from flushing to zero in the f16 \
                     backward pass",
                    without - with
                )
            } else {
                ": here the scale recovered none".into()
            },
            if pure_with >= 0.9 * pure_without {
                ": the scale cannot help much there, because the unscaled gradients go back \
                 into f16 (and Adam's moments are f16 too)"
            } else {
                ""
            },
        ));
    }
    if let Some(mixed) = find(Precision::MixedBf16) {
        let act = |r: &Row| r.result.metric("activation_bytes");
        findings.push(format!(
            "Mixed precision against f32 at batch {}: forward activations {} -> {}, step peak {} \
             -> {} ({}). Weights, gradients and Adam state stay f32; the 16-bit weight copies \
             kept for backward ({} predicted) eat into the activations saved, so mixed \
             precision lowers the peak only where activations dominate it.",
            mixed.config.batch,
            format::bytes(act(f32_row)),
            format::bytes(act(mixed)),
            format::bytes(f32_row.peak()),
            format::bytes(mixed.peak()),
            format::pct((mixed.peak() / f32_row.peak() - 1.0) * 100.0),
            format::bytes(
                ((mixed.config.shape.depth - 1) * mixed.config.shape.width.pow(2)) as f64 * 2.0
            ),
        ));
    }
    let bf16 = find(Precision::Bf16);
    let f16 = find(Precision::F16);
    if let Some(b) = bf16 {
        findings.push(format!(
            "Measured on this CPU (Flex): bf16 storage runs at {} samples/s against {} for f32 \
             ({}): Flex converts bf16 to f32 for the matmul and back, so bf16 saves memory and \
             costs time here.{} On a GPU with bf16/f16 tensor cores (an H100 or H200), 16-bit \
             matmuls are expected to run faster than f32 ones; that is not measured in this run \
             (see the published figure below and the GPU result set where there is one).",
            format::rate(b.result.samples_per_s),
            format::rate(f32_row.result.samples_per_s),
            format::pct((b.result.samples_per_s / f32_row.result.samples_per_s - 1.0) * 100.0),
            match f16 {
                Some(h) => format!(
                    " f16 storage runs at {} samples/s ({}), through gemm's f16 matmul, \
                     which converts blocks to f32 as it packs them.",
                    format::rate(h.result.samples_per_s),
                    format::pct(
                        (h.result.samples_per_s / f32_row.result.samples_per_s - 1.0) * 100.0
                    )
                ),
                None => String::new(),
            }
        ));
    }

    let mut comparisons = Vec::new();
    for r in &rows {
        let p = r.config.precision;
        let (shape, e) = (r.config.shape, p.storage().bytes() as f64);
        let params = shape.num_params() as f64;
        for (quantity, predicted, metric, note) in [
            (
                "weights",
                params * e,
                "param_bytes",
                "parameters x bytes per stored value",
            ),
            (
                "Adam state",
                2.0 * params * e,
                "optimizer_state_bytes",
                "two moments per parameter, stored like the parameters",
            ),
            (
                "gradients",
                params * e,
                "grad_bytes",
                "one gradient per parameter, in the parameters' type",
            ),
            (
                "forward activations",
                p.predicted_forward_bytes(
                    shape,
                    r.config.batch,
                    r.result.probe.kind == HostProbe.info().kind,
                ) as f64,
                "activation_bytes",
                forward_note(p),
            ),
        ] {
            comparisons.push(Comparison {
                quantity: format!("{}: {quantity}", p.name()),
                predicted_bytes: predicted,
                measured_bytes: r.result.metric(metric),
                note: note.into(),
            });
        }
    }

    let component_series = |metric: &str, label: &str| -> Series {
        Series::line(
            label,
            false,
            PRECISIONS
                .iter()
                .enumerate()
                .filter_map(|(i, &p)| {
                    find(p).map(|r| ((i + 1) as f64, mib(r.result.metric(metric))))
                })
                .collect(),
        )
    };
    let mut loss_series = Vec::new();
    for r in &rows {
        loss_series.push(Series::line(
            r.config.precision.name(),
            false,
            r.losses()
                .iter()
                .enumerate()
                .map(|(i, &l)| ((i + 1) as f64, l))
                .collect(),
        ));
    }
    let mut scale_series = Vec::new();
    for r in &rows {
        if let Some(trace) = r.result.traces.get("loss_scale_by_step") {
            scale_series.push(Series::line(
                r.config.precision.name(),
                false,
                trace
                    .iter()
                    .enumerate()
                    .map(|(i, &s)| ((i + 1) as f64, s.log2()))
                    .collect(),
            ));
        }
    }
    let index_note = PRECISIONS
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{} {}", i + 1, p.id()))
        .collect::<Vec<_>>()
        .join(", ");
    let charts = vec![
        Chart {
            id: "memory-by-component".into(),
            title: "Memory by component and precision".into(),
            x_label: format!("precision ({index_note})"),
            y_label: "bytes (MiB)".into(),
            x_scale: Scale::Linear,
            series: vec![
                Series {
                    name: "step peak".into(),
                    predicted: false,
                    points: Series::line(
                        "",
                        false,
                        PRECISIONS
                            .iter()
                            .enumerate()
                            .filter_map(|(i, &p)| find(p).map(|r| ((i + 1) as f64, mib(r.peak()))))
                            .collect(),
                    )
                    .points,
                },
                component_series("param_bytes", "weights"),
                component_series("optimizer_state_bytes", "Adam state"),
                component_series("grad_bytes", "gradients"),
                component_series("activation_bytes", "forward activations"),
            ],
        },
        Chart {
            id: "throughput-by-precision".into(),
            title: "Training throughput by precision (this CPU)".into(),
            x_label: format!("precision ({index_note})"),
            y_label: "throughput (samples/s)".into(),
            x_scale: Scale::Linear,
            series: vec![Series::throughput(
                "median; bars: fastest and slowest step",
                PRECISIONS
                    .iter()
                    .enumerate()
                    .filter_map(|(i, &p)| find(p).map(|r| ((i + 1) as f64, &r.result))),
            )],
        },
        Chart {
            id: "loss-by-step".into(),
            title: "Loss over the training run".into(),
            x_label: "step".into(),
            y_label: "MSE loss".into(),
            x_scale: Scale::Linear,
            series: loss_series,
        },
        Chart {
            id: "loss-scale-by-step".into(),
            title: "Dynamic loss scale".into(),
            x_label: "step".into(),
            y_label: "log2 of the loss scale".into(),
            x_scale: Scale::Linear,
            series: scale_series,
        },
    ];

    let published = vec![
        PublishedFigure {
            source: "Hugging Face Transformers, \"efficient training on a single GPU\" \
                     (bert-large, V100 16 GB, batch 4)"
                .into(),
            claim: "fp16 mixed precision: 8.86 -> 18.64 samples/s (+110%), 14949 -> 13939 MB \
                    (-6.8%); mixed precision keeps an fp32 and a half copy of the weights"
                .into(),
            ours: match find(Precision::MixedF16) {
                Some(m) => format!(
                    "mixed f16 on this CPU: {} -> {} samples/s ({}), step peak {} -> {} ({}); \
                     a GPU result set is needed for the speed comparison",
                    format::rate(f32_row.result.samples_per_s),
                    format::rate(m.result.samples_per_s),
                    format::pct(
                        (m.result.samples_per_s / f32_row.result.samples_per_s - 1.0) * 100.0
                    ),
                    format::bytes(f32_row.peak()),
                    format::bytes(m.peak()),
                    format::pct((m.peak() / f32_row.peak() - 1.0) * 100.0)
                ),
                None => "not measured".into(),
            },
        },
        PublishedFigure {
            source: "Micikevicius et al. 2018, \"Mixed Precision Training\"".into(),
            claim: "half precision nearly halves activation memory; f32 master weights, loss \
                    scaling and f32 accumulation keep accuracy; bf16 needs no loss scaling"
                .into(),
            ours: match (find(Precision::MixedBf16), bf16) {
                (Some(m), _) => format!(
                    "forward activations {} (f32) -> {} (mixed bf16, {})",
                    format::bytes(f32_row.result.metric("activation_bytes")),
                    format::bytes(m.result.metric("activation_bytes")),
                    format::pct(
                        (m.result.metric("activation_bytes")
                            / f32_row.result.metric("activation_bytes")
                            - 1.0)
                            * 100.0
                    )
                ),
                (None, _) => "not measured".into(),
            },
        },
    ];

    // The index compares f32 with 16-bit storage, the largest saving: bf16, or f16 on a device
    // without bf16. Its verdict is that precision's drift.
    let headline = match bf16.or(f16) {
        Some(b) => {
            let check = checks
                .iter()
                .find(|(p, _)| *p == b.config.precision)
                .map(|(_, c)| c);
            Headline {
                compared: format!(
                    "f32 against {}, {} training steps (step peak; samples/s)",
                    b.config.precision.name(),
                    reference.len()
                ),
                memory_saved_bytes: Some(f32_row.peak() - b.peak()),
                memory_saved_pct: Some((f32_row.peak() - b.peak()) / f32_row.peak() * 100.0),
                throughput_cost_pct: Some(
                    (f32_row.result.samples_per_s - b.result.samples_per_s)
                        / f32_row.result.samples_per_s
                        * 100.0,
                ),
                correctness: match check {
                    Some(c) if c.passed => Correctness::Passed,
                    Some(_) => Correctness::Failed,
                    None => Correctness::Unknown,
                },
                correctness_detail: checks
                    .iter()
                    .map(|(_, c)| {
                        format!(
                            "{}: largest drift {:.2}% of the initial loss (tolerance {:.2}%, \
                             the drift between two f32 runs){}",
                            c.what,
                            c.max_rel_diff * 100.0,
                            c.tolerance * 100.0,
                            if c.passed { "" } else { ", FAILED" }
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("; "),
            }
        }
        None => Analysis::unmeasured(Correctness::Unknown).headline,
    };
    Analysis {
        headline,
        findings,
        comparisons,
        fits: vec![],
        charts,
        published,
    }
}

/// How the forward activations of `p` are predicted, and what is not.
fn forward_note(p: Precision) -> &'static str {
    match (p.compute(), p.storage()) {
        (None, FloatStorage::Bf16) => {
            "each hidden layer's Linear and ReLU outputs in bf16, plus, during the last Linear, \
             the f32 copies of its input, weight and output that the CPU backend's bf16 matmul \
             works in"
        }
        (None, FloatStorage::F16) => {
            "each hidden layer's Linear and ReLU outputs, the last output and the loss's \
             difference in f16. Not predicted: the CPU's f16 matmul (gemm-f16 0.19) packs blocks \
             of both operands into f32 buffers it allocates on every call"
        }
        (None, _) => {
            "each hidden layer's Linear and ReLU outputs, the last output and the loss's \
             difference"
        }
        (Some(FloatStorage::Bf16), _) => {
            "bf16 Linear and ReLU outputs and input copy, f32 output and loss difference, the \
             bf16 weight copies Linear keeps for backward (all layers but the first), and during \
             the last Linear the f32 working copies of the CPU backend's bf16 matmul"
        }
        (Some(_), _) => {
            "f16 Linear and ReLU outputs and input copy, f32 output and loss difference, the f16 \
             weight copies Linear keeps for backward (all layers but the first). Not predicted: \
             the f32 packing buffers the CPU's f16 matmul allocates on every call"
        }
    }
}
