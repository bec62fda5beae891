//! The measured training step shared by the techniques that train: model, Adam, inputs, a
//! warm-up pass, then metered steps, with the model's memory split into its components. A
//! technique that has something to prove hands its own [`TrainChecks`]; the step names none.

use crate::harness::models::BuildModel;
use std::collections::BTreeMap;

use burn::optim::{GradientsParams, ModuleOptimizer};
use burn::tensor::{Device, FloatDType};
use estimator::estimate::{Precision, StepPlan};
use results::{
    Check, DeviceKind, FloatStorage, Metric, Metrics, Phase, PhaseKey, PhaseMemory, PhaseTiming,
    PointResult, PutMetric, Timing, Trace,
};
use serde::{Deserialize, Serialize};

use crate::error::ExperimentError;
use crate::harness::backend::{self, Backends, Checkpointing, OnBackend, Pool, Setup};
use crate::harness::models::mlp;
use crate::harness::models::{self, Batch, Model, ModelShape};
use crate::harness::optim::{BuildOptimizer, Optimizer, UseOptimizer};
use crate::harness::probe::{
    bracketed_step, collapse_by_name, delta_spread_bytes, last_repeat, MemoryProbe, PhaseMeter,
    Timeline,
};
use crate::harness::profile::Repeats;
use crate::harness::timing;

/// The phases a step's memory timeline marks, by their code in
/// [`Trace::MemoryTimelinePhaseKind`] (0, 1, 2; any other phase is 3).
pub const TIMELINE_PHASES: [Phase; 3] = [Phase::Forward, Phase::Backward, Phase::Optimizer];

/// Configuration of one measured training point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    /// The model trained (the MLP or the transformer, with its sequence length).
    pub shape: ModelShape,
    /// Samples per step.
    pub batch: usize,
    /// Adam learning rate.
    pub lr: f64,
    /// Seed of the backend's generator (weights and data).
    pub seed: u64,
    /// Micro-batches the batch is split into, gradients accumulated (1: one plain step).
    #[serde(default = "one")]
    pub micro_batches: usize,
    /// What the autodiff backend keeps for backward.
    #[serde(default)]
    pub checkpointing: Checkpointing,
    /// The optimizer stepped (Adam, in records made before it could be chosen).
    #[serde(default)]
    pub optimizer: Optimizer,
    /// How a CubeCL device pools its memory: exclusive pages, so that each phase's peak is
    /// bracketed closely, unless a point measures the pool itself (written only then; records
    /// made before it could be chosen read as exclusive pages).
    #[serde(
        default = "exclusive_pages",
        skip_serializing_if = "is_exclusive_pages"
    )]
    pub pool: Pool,
    /// The float type the forward pass computes in, where it differs from storage: mixed
    /// precision (f32 master weights, gradients and optimizer state; the weights and inputs
    /// cast for the forward pass). Written only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute: Option<FloatStorage>,
}

fn one() -> usize {
    1
}

fn exclusive_pages() -> Pool {
    Pool::ExclusivePages
}

fn is_exclusive_pages(pool: &Pool) -> bool {
    *pool == Pool::ExclusivePages
}

impl TrainConfig {
    /// The step this point runs, as the estimator sees it: its model, batch, micro-batches,
    /// checkpointing and optimizer, in f32 or, where its forward pass computes in bf16, mixed
    /// bf16 (16-bit storage is a process's default float type, not the config's: the caller
    /// sets it).
    pub fn step_plan(&self) -> StepPlan {
        StepPlan {
            precision: match self.compute {
                Some(FloatStorage::Bf16) => Precision::MixedBf16,
                _ => Precision::F32,
            },
            micro_batches: self.micro_batches,
            checkpointing: self.checkpointing,
            optimizer: self.optimizer,
            ..StepPlan::f32_adam(self.shape, self.batch as f64)
        }
    }

    /// One plain Adam step (learning rate 1e-4, seed 42) of `shape` on `batch` samples: no
    /// accumulation, no checkpointing. Techniques change what they vary from here.
    pub fn adam(shape: impl Into<ModelShape>, batch: usize) -> Self {
        Self {
            shape: shape.into(),
            batch,
            lr: 1e-4,
            seed: 42,
            micro_batches: 1,
            checkpointing: Checkpointing::None,
            optimizer: Optimizer::Adam,
            pool: Pool::ExclusivePages,
            compute: None,
        }
    }

    /// Burn's float type of the forward pass, where it differs from storage.
    pub fn compute_dtype(&self) -> Option<FloatDType> {
        self.compute.map(backend::float_dtype)
    }
}

/// What a training point hands its technique's proof once the measured steps are done.
pub struct Trained<'a> {
    /// The point's configuration.
    pub config: &'a TrainConfig,
    /// The step's batch.
    pub batch: &'a Batch,
    /// The model after the measured steps.
    pub model: Model,
    /// The device it ran on.
    pub device: &'a Device,
    /// The point's memory probe (a proof that runs a metered step reads it).
    pub probe: &'a dyn MemoryProbe,
    /// The loss of every step the point ran, the first (from the seeded weights) first, where
    /// the proof asked for it ([`TrainChecks::reads_losses`]); empty otherwise.
    pub losses: Vec<f64>,
    /// [`models::GRADIENT_SAMPLE`] values of the first step's gradients (from the seeded
    /// weights), where the proof asked for them ([`TrainChecks::samples_gradients`]); empty
    /// otherwise.
    pub gradients: Vec<f32>,
}

impl Trained<'_> {
    /// A fresh run of `steps` steps from the point's seed (its weights drawn anew, the
    /// measured model dropped first), with a fresh optimizer of the point's kind on the point's
    /// batch: the loss of every step, read before the step updates the weights.
    pub fn loss_curve(self, steps: usize) -> Vec<f64> {
        drop(self.model);
        let c = self.config;
        self.device.seed(c.seed);
        let model = c.shape.init(self.device);
        c.optimizer.with(Curve {
            model,
            batch: self.batch,
            lr: c.lr,
            steps,
        })
    }
}

/// A training run that records its losses.
struct Curve<'a> {
    model: Model,
    batch: &'a Batch,
    lr: f64,
    steps: usize,
}

impl UseOptimizer for Curve<'_> {
    type Output = Vec<f64>;

    fn with(self, mut optim: ModuleOptimizer) -> Vec<f64> {
        let mut model = self.model;
        let mut losses = Vec::with_capacity(self.steps);
        for _ in 0..self.steps {
            let loss = model.loss(self.batch);
            losses.push(loss.clone().into_scalar::<f64>());
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(self.lr, model, grads);
        }
        losses
    }
}

/// What a technique's proof gives: its checks, and the traces it recorded on the way (a loss
/// curve), kept in the point's result.
#[derive(Debug, Default)]
pub struct Proof {
    /// The checks (empty where there is nothing to prove).
    pub checks: Vec<Check>,
    /// Traces the proof recorded.
    pub traces: BTreeMap<Trace, Vec<f64>>,
}

impl From<Vec<Check>> for Proof {
    fn from(checks: Vec<Check>) -> Self {
        Self {
            checks,
            traces: BTreeMap::new(),
        }
    }
}

/// A technique's proof that its training step computes the same thing, run by the training
/// point after its measured steps.
pub trait TrainChecks {
    /// The proof of the trained point (empty where it has nothing to prove).
    fn checks(&self, trained: Trained<'_>) -> Proof;

    /// Whether the proof reads the measured steps' losses ([`Trained::losses`]): each is read
    /// from the device between the forward and backward phases, a sync the other points'
    /// steps do without.
    fn reads_losses(&self) -> bool {
        false
    }

    /// Whether the proof reads a sample of the first step's gradients
    /// ([`Trained::gradients`]), to be set against another point's when the guide renders.
    fn samples_gradients(&self) -> bool {
        false
    }
}

/// Nothing to prove: a sweep, not a substitute.
pub struct NoChecks;

impl TrainChecks for NoChecks {
    fn checks(&self, _: Trained<'_>) -> Proof {
        Proof::default()
    }
}

/// Measures a training point of `config` on `device`, proving it with `checks`.
pub fn run_train_point<K: TrainChecks>(
    config: TrainConfig,
    repeats: Repeats,
    device: DeviceKind,
    checks: K,
) -> Result<PointResult, ExperimentError> {
    run_train_point_stored(config, FloatStorage::F32, repeats, device, checks, true)
}

/// Measures a training point of `config` whose tensors are stored in `float` (the device's
/// default float type: weights, gradients, optimizer state and activations), with a memory
/// timeline of one more step where `timeline` asks (a step of a large model on a CPU takes
/// seconds: a point that shows no timeline spares it).
pub fn run_train_point_stored<K: TrainChecks>(
    config: TrainConfig,
    float: FloatStorage,
    repeats: Repeats,
    device: DeviceKind,
    checks: K,
    timeline: bool,
) -> Result<PointResult, ExperimentError> {
    device.dispatch(
        Setup {
            checkpointing: config.checkpointing,
            pool: config.pool,
            float,
            compute: config.compute,
        },
        TrainPoint {
            config,
            repeats,
            checks,
            timeline,
        },
    )
}

/// What the measured loop of a training point gave.
pub struct MeasuredSteps {
    /// What stayed live after the first step (which allocates the optimizer's state) above
    /// what was live before it.
    pub optimizer_state_bytes: u64,
    /// The timed steps.
    pub timing: Timing,
    /// The phases of every timed step.
    pub runs: Vec<Vec<PhaseMemory>>,
    /// The phases of the last timed step, one per name; on a probe without an exact peak,
    /// those of one more step, measured for its memory with each phase's peak bracketed.
    pub phases: Vec<PhaseMemory>,
    /// Where the probe sees every allocation (the CPU), one more step, untimed, with its
    /// memory timeline, as the point's traces ([`timeline_traces`]); empty elsewhere.
    pub timeline: BTreeMap<Trace, Vec<f64>>,
}

/// The measured loop of a training point: the first step, which allocates the optimizer's
/// state (read as what stays live after it above `after_runtime`), the rest of the warm-up,
/// then the timed steps, each processing `samples_per_step`, then (where `timeline` asks and
/// the probe sees every allocation) one more step for its memory timeline. `step` runs one
/// metered step and pushes its phases.
pub fn measured_steps(
    probe: &dyn MemoryProbe,
    sync: &dyn Fn(),
    after_runtime: u64,
    repeats: Repeats,
    samples_per_step: u64,
    timeline: bool,
    mut step: impl FnMut(&mut Vec<Vec<PhaseMemory>>),
) -> MeasuredSteps {
    let mut warm_runs = Vec::new();
    step(&mut warm_runs);
    sync();
    let optimizer_state_bytes = probe.read().in_use_bytes.saturating_sub(after_runtime);
    Repeats {
        warmup: repeats.warmup.saturating_sub(1),
        ..repeats
    }
    .warm_up(|| step(&mut warm_runs));
    let mut runs = Vec::new();
    let timing = timing::repeat(0, repeats.repeats, samples_per_step, || step(&mut runs));
    let phases =
        collapse_by_name(bracketed_step(probe, &mut step).unwrap_or_else(|| last_repeat(&runs)));
    let timeline = if timeline && !timing::timing_only() && probe.start_timeline() {
        // Room for the step's phases made before the timeline starts: nothing of the harness
        // is allocated inside it.
        let mut timeline_runs: Vec<Vec<PhaseMemory>> = Vec::with_capacity(1);
        step(&mut timeline_runs);
        let recorded = probe.stop_timeline();
        match (recorded, timeline_runs.pop()) {
            // A step of more events than the buffer holds is left without a timeline rather
            // than shown cut short.
            (Some(t), Some(phases)) if !t.cut => timeline_traces(&t, &phases),
            _ => BTreeMap::new(),
        }
    } else {
        BTreeMap::new()
    };
    MeasuredSteps {
        optimizer_state_bytes,
        timing,
        runs,
        phases,
        timeline,
    }
}

/// Points of a timeline kept in a record, at most: each the highest or the lowest of its
/// stretch of events, so that the peak and the troughs survive.
pub const TIMELINE_POINTS: usize = 240;

/// A step's timeline as a point's traces: the events kept ([`TIMELINE_POINTS`], the highest
/// and lowest of each stretch), the bytes after each, and each phase's first event and kind.
pub fn timeline_traces(t: &Timeline, phases: &[PhaseMemory]) -> BTreeMap<Trace, Vec<f64>> {
    let mut traces = BTreeMap::new();
    if t.bytes.is_empty() {
        return traces;
    }
    let stretch = t.bytes.len().div_ceil(TIMELINE_POINTS / 2).max(1);
    let (mut events, mut bytes) = (Vec::new(), Vec::new());
    for (k, chunk) in t.bytes.chunks(stretch).enumerate() {
        let at = k * stretch;
        let (lo, hi) = chunk.iter().enumerate().fold((0, 0), |(lo, hi), (i, &b)| {
            (
                if b < chunk[lo] { i } else { lo },
                if b > chunk[hi] { i } else { hi },
            )
        });
        let mut keep = [lo, hi];
        keep.sort_unstable();
        for i in keep
            .iter()
            .copied()
            .collect::<std::collections::BTreeSet<_>>()
        {
            events.push((at + i) as f64);
            bytes.push(chunk[i] as f64);
        }
    }
    let kind = |name: &str| {
        TIMELINE_PHASES
            .iter()
            .position(|p| p.name() == name)
            .unwrap_or(TIMELINE_PHASES.len()) as f64
    };
    traces.insert(Trace::MemoryTimelineEvent, events);
    traces.insert(Trace::MemoryTimelineBytes, bytes);
    traces.insert(
        Trace::MemoryTimelinePhaseStart,
        t.phase_starts.iter().map(|&e| e as f64).collect(),
    );
    traces.insert(
        Trace::MemoryTimelinePhaseKind,
        phases.iter().map(|p| kind(&p.phase)).collect(),
    );
    traces
}

/// The probe's readings as a training point sets up, in bytes in use.
pub struct Readings {
    /// Before the model was built.
    pub start: u64,
    /// Right after `init()` (parameters are allocated lazily).
    pub after_init: u64,
    /// After every parameter was read once.
    pub after_model: u64,
    /// After the inputs were made.
    pub after_inputs: u64,
    /// After one forward and backward without an optimizer step.
    pub after_runtime: u64,
    /// What stayed live after the first optimizer step, above `after_runtime`.
    pub optimizer_state_bytes: u64,
}

impl Readings {
    /// The training step's memory split into its components, from these readings and the
    /// phases of the last measured step (`phases`; all steps' `runs`).
    pub fn metrics(
        &self,
        phases: &[PhaseMemory],
        runs: &[Vec<PhaseMemory>],
        num_params: u64,
        step_flop: u64,
    ) -> Metrics {
        let forward = phases.iter().find(|p| p.phase == Phase::Forward.name());
        let backward = phases.iter().find(|p| p.phase == Phase::Backward.name());
        let mut metrics = Metrics::new();
        metrics.put(Metric::ParamBytes, (self.after_model - self.start) as f64);
        metrics.put(
            Metric::ParamBytesAfterInit,
            (self.after_init - self.start) as f64,
        );
        metrics.put(Metric::ProcessBaselineBytes, self.start as f64);
        metrics.put(
            Metric::RuntimeBytes,
            self.after_runtime.saturating_sub(self.after_inputs) as f64,
        );
        metrics.put(
            Metric::InputBytes,
            (self.after_inputs - self.after_model) as f64,
        );
        metrics.put(
            Metric::OptimizerStateBytes,
            self.optimizer_state_bytes as f64,
        );
        if let (Some(f), Some(b)) = (forward, backward) {
            metrics.put(Metric::ActivationBytes, f.delta_bytes() as f64);
            metrics.put(
                Metric::GraphBytes,
                f.live_after_bytes.saturating_sub(f.live_before_bytes) as f64,
            );
            metrics.put(
                Metric::GradBytes,
                b.live_after_bytes.saturating_sub(f.live_before_bytes) as f64,
            );
            metrics.put(Metric::LiveBeforeStepBytes, f.live_before_bytes as f64);
        }
        metrics.put(Metric::NumParams, num_params as f64);
        metrics.put(Metric::StepFlop, step_flop as f64);
        metrics.put(
            Metric::RepeatDeltaSpreadBytes,
            delta_spread_bytes(runs) as f64,
        );
        metrics
    }
}

/// A training point's model and inputs, built as every training point builds them, with the
/// probe's readings along the way.
pub struct SetUp {
    /// The model, every parameter materialised.
    pub model: Model,
    /// The inputs.
    pub batch: Batch,
    /// The readings (no optimizer state yet: `optimizer_state_bytes` is 0).
    pub readings: Readings,
}

/// Seeds the backend, builds `c`'s model and inputs on `device`, and runs one forward and
/// backward without an optimizer step (per micro-batch), reading `probe` after each, each
/// reading after a sync: what a training step's components are measured from.
pub fn set_up(c: &TrainConfig, device: &Device, probe: &dyn MemoryProbe) -> SetUp {
    let sync = || backend::sync(device);
    device.seed(c.seed);

    let start = probe.read().in_use_bytes;
    let model = c.shape.init(device);
    sync();
    let after_init = probe.read().in_use_bytes;
    mlp::materialize(&model);
    sync();
    let after_model = probe.read().in_use_bytes;
    let batch = c.shape.batch(c.batch, c.seed, device);
    sync();
    let after_inputs = probe.read().in_use_bytes;
    // One forward and backward without an optimizer step, so that the backend's own buffers
    // exist before the optimizer state is read. On the CPU (the thread pool, the matmul
    // workspaces) the least input does it: one sample, a sequence's first 8 tokens; what it
    // leaves live did not depend on the batch, and at GPT-2's size the whole batch's pass took
    // most of a step. On a device the step's own shapes compile and autotune their kernels,
    // whose host-side caches would otherwise land in the first step (the offload page reads
    // the host's bytes there): the batch as the step runs it.
    if probe.info().kind == results::ProbeInfo::HOST {
        drop(model.loss_in(&batch.first(8), c.compute_dtype()).backward());
    } else {
        for slice in batch.slices(c.micro_batches) {
            drop(model.loss_in(&slice, c.compute_dtype()).backward());
        }
    }
    sync();
    let after_runtime = probe.read().in_use_bytes;
    SetUp {
        model,
        batch,
        readings: Readings {
            start,
            after_init,
            after_model,
            after_inputs,
            after_runtime,
            optimizer_state_bytes: 0,
        },
    }
}

/// Measures training steps of one configuration.
pub struct TrainPoint<K> {
    /// What to train.
    pub config: TrainConfig,
    /// Untimed and timed repeats.
    pub repeats: Repeats,
    /// The technique's proof.
    pub checks: K,
    /// Whether to record one more step's memory timeline (where the probe can).
    pub timeline: bool,
}

impl<K: TrainChecks> OnBackend for TrainPoint<K> {
    type Output = PointResult;

    fn run(self, device: Device, probe: &dyn MemoryProbe) -> PointResult {
        let c = self.config;
        // Room for the proof's readings made before the first reading of the probe, so that on
        // the CPU (whose probe counts the heap) none of the harness's allocations falls between
        // measured phases or into the optimizer's state.
        let losses = Vec::with_capacity(if self.checks.reads_losses() {
            self.repeats.warmup + self.repeats.repeats + 2
        } else {
            0
        });
        let gradients = Vec::with_capacity(if self.checks.samples_gradients() {
            models::GRADIENT_SAMPLE
        } else {
            0
        });
        let SetUp {
            model,
            batch,
            readings,
        } = set_up(&c, &device, probe);
        c.optimizer.with(Steps {
            point: self,
            device: &device,
            probe,
            model,
            batch: &batch,
            readings,
            losses,
            gradients,
        })
    }
}

/// The measured steps of a training point with its optimizer, once built.
struct Steps<'a, K> {
    point: TrainPoint<K>,
    device: &'a Device,
    probe: &'a dyn MemoryProbe,
    model: Model,
    batch: &'a Batch,
    readings: Readings,
    losses: Vec<f64>,
    gradients: Vec<f32>,
}

impl<K: TrainChecks> UseOptimizer for Steps<'_, K> {
    type Output = PointResult;

    fn with(self, mut optim: ModuleOptimizer) -> PointResult {
        let Steps {
            point,
            device,
            probe,
            model,
            batch,
            mut readings,
            mut losses,
            mut gradients,
        } = self;
        let c = point.config;
        let sync = || backend::sync(device);
        let mut model = Some(model);
        let reads_losses = point.checks.reads_losses();
        // The first step's gradients, from the seeded weights: the same in every point of the
        // same seed, whatever its optimizer did since.
        let mut sample_next = point.checks.samples_gradients();
        let step = |runs: &mut Vec<_>| {
            let mut meter = PhaseMeter::new(probe, &sync);
            let m = model.take().expect("model is put back after each step");
            let (lr, micro, compute) = (c.lr, c.micro_batches, c.compute_dtype());
            model = Some(models::train_step(
                &mut meter,
                m,
                &mut optim,
                lr,
                batch,
                micro,
                compute,
                models::StepReads {
                    losses: reads_losses.then_some(&mut losses),
                    gradients: std::mem::take(&mut sample_next).then_some(&mut gradients),
                },
            ));
            runs.push(meter.finish());
        };

        let (unit, units) = c.shape.units(c.batch);
        let steps = measured_steps(
            probe,
            &sync,
            readings.after_runtime,
            point.repeats,
            units,
            point.timeline,
            step,
        );
        readings.optimizer_state_bytes = steps.optimizer_state_bytes;
        let metrics = readings.metrics(
            &steps.phases,
            &steps.runs,
            c.shape.num_params(),
            c.shape.step_matmul_flop(c.batch),
        );

        let model = model.take().expect("model is back");
        let proof = if timing::timing_only() {
            Proof::default()
        } else {
            point.checks.checks(Trained {
                config: &c,
                batch,
                model,
                device,
                probe,
                losses,
                gradients,
            })
        };
        let mut traces = steps.timeline;
        traces.extend(proof.traces);
        PointResult {
            metrics,
            checks: proof.checks,
            traces,
            phase_times: PhaseTiming::of_runs(&steps.runs),
            ..PointResult::new(probe.info(), steps.phases, steps.timing, units).in_unit(unit)
        }
    }
}

/// The proof of a checkpointed training point: [`gradients_unchanged_by_checkpointing`] within
/// `tolerance` (nothing to prove without checkpointing).
pub struct CheckpointingCheck {
    /// Largest relative difference allowed between the two sets of gradients.
    pub tolerance: f64,
}

impl TrainChecks for CheckpointingCheck {
    fn checks(&self, t: Trained<'_>) -> Proof {
        drop(t.model);
        if t.config.checkpointing == Checkpointing::None {
            Proof::default()
        } else {
            vec![gradients_unchanged_by_checkpointing(
                t.config,
                t.device,
                self.tolerance,
            )]
            .into()
        }
    }
}

/// The gradients of one step from fresh weights, computed on `B` (checkpointing as its type
/// says) and on the same inner backend without checkpointing, compared within `tolerance`:
/// recomputing an op runs the same kernel on the same values, so what the backend keeps for
/// backward must not change what is computed.
pub fn gradients_unchanged_by_checkpointing(
    config: &TrainConfig,
    device: &Device,
    tolerance: f64,
) -> Check {
    let plain = gradients(config, &device.clone().without_autodiff().autodiff());
    let candidate = gradients(config, device);
    Check::compare("gradients-checkpointed", &plain, &candidate, tolerance)
}

/// Every parameter's gradient after one forward and backward from the seeded initial weights,
/// flattened in module order.
fn gradients(config: &TrainConfig, device: &Device) -> Vec<f32> {
    device.seed(config.seed);
    let model = config.shape.init(device);
    mlp::materialize(&model);
    let batch = config.shape.batch(config.batch, config.seed, device);
    let grads = GradientsParams::from_grads(model.loss(&batch).backward(), &model);
    mlp::flatten(&model, Some(&grads))
}
