//! Offload: the optimizer on the host, forward and backward on the device.
//!
//! Question: how much device memory does moving Adam's state (and the master copy of the
//! weights) to the host save, the idea of ZeRO-Offload, and what does a step pay for the copies?
//! Method: the MLP's Adam step two ways, each in its own process: as usual on the device, and
//! offloaded: forward and backward on the device, the gradients read back to the host, Adam
//! stepped there on Flex (an autodiff copy of the model, the gradients handed in through
//! `GradientsParams` under the same parameter ids), the updated weights written back to the
//! device. Burn 0.22's only route between backends is `TensorData`, and a read of a device
//! tensor waits for the device: the copies are synchronous. Device bytes come from the device's
//! probe, host bytes from the counting allocator; the bytes copied are counted as they cross.
//! The proof trains a few steps both ways from the same weights and compares the parameters.
//! Answer: on a device, the state leaves the device (8 B per parameter for Adam) and each step
//! copies 8 B per parameter (gradients down, weights up); on the CPU the host is the device,
//! nothing moves, and the offloaded step only adds a second copy of the weights.

mod analysis;
pub mod predict;
#[allow(dead_code, missing_docs)]
#[doc(hidden)]
pub mod snippet;

use crate::harness::models::BuildModel;
use crate::harness::optim::BuildOptimizer;
use results::TechniqueId;
use std::cell::Cell;

use burn::optim::GradientsParams;
use results::{
    Check, ComparisonSpec, DeviceKind, Phase, PhaseTiming, PointResult, Profile, PutMetric,
};
use serde::{Deserialize, Serialize};

use crate::harness::backend::{self, Backends, OnBackend, Setup};
use crate::harness::models::{mlp, training_mlp, Batch, Model, ModelShape};
use crate::harness::optim::{Optimizer, UseOptimizer};
use crate::harness::probe::host::HostProbe;
use crate::harness::probe::{MemoryProbe, PhaseMeter};
use crate::harness::profile::{Repeats, Sizes};
use crate::harness::timing;
use crate::harness::train::{
    measured_steps, run_train_point, set_up, NoChecks, Readings, SetUp, TrainConfig,
};
use crate::harness::transfer::{gradients_on, load_params, read_params, take_gradients};
use crate::technique::{Measurement, Planned, Row, Technique};
use crate::workloads::HasModel;
use burn::optim::ModuleOptimizer;
use burn::tensor::Device;
use estimator::estimate::StepPlan;

results::phase_names! {
    /// The phases offload adds to a step: the copies between the device and the host.
    pub enum OffloadPhase {
        /// The gradients copied to the host.
        ToHost = "to host",
        /// The updated weights written back to the device.
        ToDevice = "to device",
    }
}

results::metric_keys! {
    /// What offload measures beyond the shared metrics.
    pub enum OffloadMetric {
        /// Bytes the host keeps between steps for an optimizer moved there: its copy of the
        /// weights and the optimizer's state.
        HostStateBytes = "host_state_bytes",
        /// Bytes one step moves between the device and the host, both ways.
        TransferBytes = "transfer_bytes",
    }
}

/// The offload experiment.
pub struct Offload;

/// Steps of the proof's two runs from the same weights.
pub const PROOF_STEPS: usize = 5;

/// Largest difference allowed between the two runs' parameters, relative to the largest
/// parameter: a few units in the last place of an f32 (its epsilon is 1.2e-7). The same
/// gradients reach the same Adam; only the backend that runs Adam's arithmetic differs.
/// Chosen before measuring.
pub const TOLERANCE: f64 = 1e-6;

/// The MLP's batch at each size: small, so that the weights and the optimizer's state, not the
/// activations, fill the device (the case offload is for).
fn batch(sizes: Sizes) -> usize {
    match sizes {
        Sizes::Quick => 64,
        Sizes::Full => 256,
        Sizes::FullCuda => 1024,
    }
}

/// Where the optimizer steps, and so where its state and the master weights live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// On the device, beside the model: the usual step.
    Device,
    /// On the host (Flex), the device keeping the weights it computes with.
    Host,
}

impl Placement {
    /// Both, the usual first.
    pub const ALL: [Placement; 2] = [Placement::Device, Placement::Host];

    /// Kebab-case name, as in ids.
    pub fn name(self) -> &'static str {
        match self {
            Placement::Device => "device",
            Placement::Host => "host",
        }
    }

    /// In words, for tables.
    pub fn label(self) -> &'static str {
        match self {
            Placement::Device => "optimizer on the device",
            Placement::Host => "optimizer on the host (offloaded)",
        }
    }
}

/// One point: a training step with its optimizer in one place.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OffloadConfig {
    /// The step (model, batch, optimizer, learning rate, seed).
    pub train: TrainConfig,
    /// Where the optimizer steps.
    pub placement: Placement,
}

impl HasModel for OffloadConfig {
    fn model(&self) -> ModelShape {
        self.train.shape
    }
}

impl Technique for Offload {
    type Config = OffloadConfig;
    const ID: TechniqueId = TechniqueId::Offload;
    const SNIPPET: &'static str = include_str!("snippet.rs");

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Planned<OffloadConfig>> {
        let sizes = Sizes::of(profile, device);
        Placement::ALL
            .into_iter()
            .map(|placement| {
                Planned::new(
                    format!("optimizer-on-{}", placement.name()),
                    placement.label().to_string(),
                    profile,
                    OffloadConfig {
                        train: TrainConfig::adam(training_mlp(sizes), batch(sizes)),
                        placement,
                    },
                )
            })
            .collect()
    }

    fn run_point(
        &self,
        config: &OffloadConfig,
        repeats: Repeats,
        device: DeviceKind,
    ) -> Measurement {
        match config.placement {
            Placement::Device => run_train_point(config.train, repeats, device, NoChecks),
            Placement::Host => device.dispatch(
                Setup {
                    pool: config.train.pool,
                    ..Default::default()
                },
                OffloadPoint {
                    config: config.train,
                    repeats,
                },
            ),
        }
    }

    fn step_plan(&self, config: &OffloadConfig) -> Option<StepPlan> {
        // The estimator models the usual step only.
        (config.placement == Placement::Device).then(|| config.train.step_plan())
    }

    fn comparisons(&self, rows: &[Row<'_, OffloadConfig>]) -> Vec<ComparisonSpec> {
        analysis::comparisons(rows)
    }
}

/// One offloaded training step, each phase metered on the device's probe: forward and backward
/// on the device, the gradients read back and handed to the host's copy of the model ("to
/// host"), the host's optimizer step ("optimizer"), the updated weights written back to the
/// device ("to device"). Returns both models and the bytes that crossed, both ways.
#[allow(clippy::too_many_arguments)]
pub fn offloaded_step(
    meter: &mut PhaseMeter<'_>,
    model: Model,
    host: Model,
    optim: &mut ModuleOptimizer,
    lr: f64,
    batch: &Batch,
    device: &Device,
) -> (Model, Model, u64) {
    let host_device = host_device();
    let loss = meter.phase(Phase::Forward, || model.loss(batch));
    let grads = meter.phase(Phase::Backward, || loss.backward());
    let (host_grads, down) = meter.phase(OffloadPhase::ToHost, || {
        let mut grads = GradientsParams::from_grads(grads, &model);
        let moved = take_gradients(&model, &mut grads);
        let down = moved.bytes();
        (gradients_on(&host, moved, &host_device), down)
    });
    let host = meter.phase(Phase::Optimizer, || optim.step(lr, host, host_grads));
    let (model, up) = meter.phase(OffloadPhase::ToDevice, || {
        let moved = read_params(&host);
        let up = moved.bytes();
        (load_params(model, moved, device), up)
    });
    (model, host, down + up)
}

/// The host's device: Flex with autodiff (Burn's optimizers step the parameters of a model
/// that trains).
pub fn host_device() -> Device {
    Device::flex().autodiff()
}

/// The host's copy of a device model: the same values under the same parameter ids, on
/// [`host_device`], in the host's own heap
/// ([`Moved::owned`](crate::harness::transfer::Moved::owned): a first run on wgpu found the
/// master weights left in the device's mapped staging buffers, unseen by the host's counter).
pub fn host_copy(shape: ModelShape, model: &Model) -> Model {
    let host_device = host_device();
    load_params(
        shape.init(&host_device),
        read_params(model).owned(),
        &host_device,
    )
}

/// Measures the offloaded step of one configuration.
struct OffloadPoint {
    config: TrainConfig,
    repeats: Repeats,
}

impl OnBackend for OffloadPoint {
    type Output = PointResult;

    fn run(self, device: Device, probe: &dyn MemoryProbe) -> PointResult {
        let c = self.config;
        // The device's side, set up and read as every training point is.
        let SetUp {
            model,
            batch,
            readings,
        } = set_up(&c, &device, probe);

        // The host's side: Flex's matmul workspaces made before anything is read there (a
        // no-op repeat on the CPU), then the host's copy of the model.
        backend::warm_matmul_workspaces();
        let host_before = HostProbe.read().in_use_bytes;
        let host = host_copy(c.shape, &model);
        c.optimizer.with(HostSteps {
            point: self,
            device: &device,
            probe,
            model,
            host,
            batch: &batch,
            readings,
            host_before,
        })
    }
}

/// The measured steps of an offloaded point, once the host's optimizer is built.
struct HostSteps<'a> {
    point: OffloadPoint,
    device: &'a Device,
    probe: &'a dyn MemoryProbe,
    model: Model,
    host: Model,
    batch: &'a Batch,
    readings: Readings,
    host_before: u64,
}

impl UseOptimizer for HostSteps<'_> {
    type Output = PointResult;

    fn with(self, mut optim: ModuleOptimizer) -> PointResult {
        let HostSteps {
            point,
            device,
            probe,
            model,
            host,
            batch,
            mut readings,
            host_before,
        } = self;
        let c = point.config;
        let sync = || backend::sync(device);
        let mut models = Some((model, host));
        let moved_bytes = Cell::new(0_u64);
        // Host bytes after the first step (which makes the host optimizer's state).
        let host_after_first = Cell::new(None::<u64>);
        let step = |runs: &mut Vec<_>| {
            let mut meter = PhaseMeter::new(probe, &sync);
            let (m, h) = models
                .take()
                .expect("the models are put back after each step");
            let (m, h, moved) = offloaded_step(&mut meter, m, h, &mut optim, c.lr, batch, device);
            models = Some((m, h));
            moved_bytes.set(moved);
            if host_after_first.get().is_none() {
                host_after_first.set(Some(HostProbe.read().in_use_bytes));
            }
            runs.push(meter.finish());
        };
        let (unit, units) = c.shape.units(c.batch);
        let steps = measured_steps(
            probe,
            &sync,
            readings.after_runtime,
            point.repeats,
            units,
            true,
            step,
        );
        readings.optimizer_state_bytes = steps.optimizer_state_bytes;
        let mut metrics = readings.metrics(
            &steps.phases,
            &steps.runs,
            c.shape.num_params(),
            c.shape.step_matmul_flop(c.batch),
        );
        metrics.put(OffloadMetric::TransferBytes, moved_bytes.get() as f64);
        if HostProbe::is_installed() {
            if let Some(after) = host_after_first.get() {
                metrics.put(
                    OffloadMetric::HostStateBytes,
                    after.saturating_sub(host_before) as f64,
                );
            }
        }

        drop(models);
        let checks = if timing::timing_only() {
            Vec::new()
        } else {
            vec![same_parameters(&c, batch, device, probe)]
        };
        PointResult {
            metrics,
            checks,
            traces: steps.timeline,
            phase_times: PhaseTiming::of_runs(&steps.runs),
            ..PointResult::new(probe.info(), steps.phases, steps.timing, units).in_unit(unit)
        }
    }
}

/// The proof: [`PROOF_STEPS`] steps from the point's seed with the optimizer on the device and
/// as many offloaded, from the same weights on the same batch; every parameter compared within
/// [`TOLERANCE`].
fn same_parameters(
    c: &TrainConfig,
    batch: &Batch,
    device: &Device,
    probe: &dyn MemoryProbe,
) -> Check {
    let fresh = || {
        device.seed(c.seed);
        let model = c.shape.init(device);
        mlp::materialize(&model);
        model
    };
    let on_device = c.optimizer.with(OnDevice {
        model: fresh(),
        batch,
        lr: c.lr,
    });
    let model = fresh();
    let host = host_copy(c.shape, &model);
    let offloaded = c.optimizer.with(Offloaded {
        model,
        host,
        batch,
        lr: c.lr,
        device,
        probe,
    });
    Check::compare("offloaded-params", &on_device, &offloaded, TOLERANCE).with("steps", PROOF_STEPS)
}

/// [`PROOF_STEPS`] usual steps; the parameters after them.
struct OnDevice<'a> {
    model: Model,
    batch: &'a Batch,
    lr: f64,
}

impl UseOptimizer for OnDevice<'_> {
    type Output = Vec<f32>;

    fn with(self, mut optim: ModuleOptimizer) -> Vec<f32> {
        let mut model = self.model;
        for _ in 0..PROOF_STEPS {
            let grads = GradientsParams::from_grads(model.loss(self.batch).backward(), &model);
            model = optim.step(self.lr, model, grads);
        }
        mlp::flatten(&model, None)
    }
}

/// [`PROOF_STEPS`] offloaded steps; the device's parameters after them.
struct Offloaded<'a> {
    model: Model,
    host: Model,
    batch: &'a Batch,
    lr: f64,
    device: &'a Device,
    probe: &'a dyn MemoryProbe,
}

impl UseOptimizer for Offloaded<'_> {
    type Output = Vec<f32>;

    fn with(self, mut optim: ModuleOptimizer) -> Vec<f32> {
        let sync = || backend::sync(self.device);
        let (mut model, mut host) = (self.model, self.host);
        for _ in 0..PROOF_STEPS {
            let mut meter = PhaseMeter::new(self.probe, &sync);
            (model, host, _) = offloaded_step(
                &mut meter,
                model,
                host,
                &mut optim,
                self.lr,
                self.batch,
                self.device,
            );
        }
        mlp::flatten(&model, None)
    }
}

/// The optimizer every point steps (Adam, the state offload is for).
pub const OPTIMIZER: Optimizer = Optimizer::Adam;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_placements_are_planned_with_adam() {
        for (profile, device) in [
            (Profile::Quick, DeviceKind::Cpu),
            (Profile::Full, DeviceKind::Wgpu),
            (Profile::Full, DeviceKind::Cuda),
        ] {
            let points = Offload.points(profile, device);
            assert_eq!(points.len(), 2);
            assert!(points.iter().all(|p| p.config.train.optimizer == OPTIMIZER));
            assert_eq!(points[0].config.placement, Placement::Device);
        }
    }
}
