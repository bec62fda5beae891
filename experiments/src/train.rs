//! The measured training step shared by the experiments that train: model, Adam, inputs, a
//! warm-up pass, then metered steps, with the model's memory split into its components.

use std::collections::BTreeMap;

use burn::optim::AdamConfig;
use burn::tensor::backend::AutodiffBackend;
use serde::{Deserialize, Serialize};

use crate::backend::{self, Checkpointing, OnBackend};
use crate::device::DeviceKind;
use crate::experiment::{parse_config, ExperimentError, Point, PointResult, Profile};
use crate::models::{mlp, MlpShape};
use crate::probe::{collapse_by_name, delta_spread_bytes, last_repeat, MemoryProbe, PhaseMeter};
use crate::timing;

/// Configuration of one measured training point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    /// The model trained.
    pub shape: MlpShape,
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
}

fn one() -> usize {
    1
}

impl TrainConfig {
    /// The point measuring this configuration, with the profile's warm-up and repeats.
    pub fn point(&self, id: String, label: String, profile: Profile) -> Point {
        let (warmup, repeats) = crate::batch_size::repeats(profile);
        Point {
            id,
            label,
            warmup,
            repeats,
            config: serde_json::to_value(self).expect("config serialises"),
        }
    }
}

/// Measures a point whose config is a [`TrainConfig`], for the experiment `experiment`.
pub fn run_train_point(
    experiment: &'static str,
    point: &Point,
    device: DeviceKind,
) -> Result<PointResult, ExperimentError> {
    let config: TrainConfig = parse_config(experiment, point)?;
    backend::dispatch_with(
        device,
        backend::Setup {
            checkpointing: config.checkpointing,
            ..Default::default()
        },
        TrainPoint {
            config,
            warmup: point.warmup,
            repeats: point.repeats,
        },
    )
}

/// Measures training steps of one configuration.
pub struct TrainPoint {
    /// What to train.
    pub config: TrainConfig,
    /// Untimed steps first (at least one: the first step allocates the Adam state).
    pub warmup: usize,
    /// Measured steps.
    pub repeats: usize,
}

impl OnBackend for TrainPoint {
    type Output = PointResult;

    fn run<B: AutodiffBackend>(self, device: B::Device, probe: &dyn MemoryProbe) -> PointResult {
        let c = self.config;
        let sync = || backend::sync::<B>(&device);
        B::seed(&device, c.seed);

        let start = probe.read().in_use_bytes;
        let model = c.shape.init::<B>(&device);
        sync();
        let after_init = probe.read().in_use_bytes;
        mlp::materialize(&model);
        sync();
        let after_model = probe.read().in_use_bytes;
        let (x, y) = c.shape.batch::<B>(c.batch, &device);
        sync();
        let after_inputs = probe.read().in_use_bytes;
        // One forward and backward without an optimizer step, so that the backend's own buffers
        // (matmul packing workspaces, the thread pool) exist before the optimizer state is read.
        for (xi, yi) in mlp::micro_batch_slices(&x, &y, c.micro_batches) {
            drop(mlp::loss(&model, xi, yi).backward());
        }
        sync();
        let after_runtime = probe.read().in_use_bytes;

        let mut optim = AdamConfig::new().init::<B, mlp::Mlp<B>>();
        let mut model = Some(model);
        let mut step = |runs: &mut Vec<_>| {
            let mut meter = PhaseMeter::new(probe, &sync);
            let m = model.take().expect("model is put back after each step");
            model = Some(mlp::train_step(
                &mut meter,
                m,
                &mut optim,
                c.lr,
                &x,
                &y,
                c.micro_batches,
            ));
            runs.push(meter.finish());
        };

        // The first step allocates Adam's moments: what stays live after it is optimizer state.
        let mut warm_runs = Vec::new();
        step(&mut warm_runs);
        sync();
        let optimizer_state_bytes = probe.read().in_use_bytes.saturating_sub(after_runtime);
        for _ in 1..self.warmup {
            step(&mut warm_runs);
        }
        let mut runs = Vec::new();
        let timing = timing::repeat(0, self.repeats, c.batch as u64, || step(&mut runs));
        let phases = collapse_by_name(last_repeat(&runs));

        let forward = phases.iter().find(|p| p.phase == "forward");
        let backward = phases.iter().find(|p| p.phase == "backward");
        let mut metrics = BTreeMap::new();
        metrics.insert("param_bytes".into(), (after_model - start) as f64);
        metrics.insert("param_bytes_after_init".into(), (after_init - start) as f64);
        metrics.insert("process_baseline_bytes".into(), start as f64);
        metrics.insert(
            "runtime_bytes".into(),
            after_runtime.saturating_sub(after_inputs) as f64,
        );
        metrics.insert("input_bytes".into(), (after_inputs - after_model) as f64);
        metrics.insert("optimizer_state_bytes".into(), optimizer_state_bytes as f64);
        if let (Some(f), Some(b)) = (forward, backward) {
            metrics.insert("activation_bytes".into(), f.delta_bytes() as f64);
            metrics.insert(
                "graph_bytes".into(),
                f.live_after_bytes.saturating_sub(f.live_before_bytes) as f64,
            );
            metrics.insert(
                "grad_bytes".into(),
                b.live_after_bytes.saturating_sub(f.live_before_bytes) as f64,
            );
            metrics.insert("live_before_step_bytes".into(), f.live_before_bytes as f64);
        }
        metrics.insert("num_params".into(), c.shape.num_params() as f64);
        metrics.insert(
            "repeat_delta_spread_bytes".into(),
            delta_spread_bytes(&runs) as f64,
        );

        let checks = if c.micro_batches > 1 {
            crate::accumulation::checks::<B>(&c, &x, &y, model.take().expect("model is back"))
        } else if c.checkpointing != Checkpointing::None {
            drop(model.take());
            vec![crate::checkpointing::check::<B>(&c, &device)]
        } else {
            Vec::new()
        };
        PointResult {
            probe: probe.info(),
            phases,
            samples_per_s: timing.per_second(c.batch as f64),
            step: timing,
            samples_per_step: c.batch as u64,
            metrics,
            traces: BTreeMap::new(),
            checks,
        }
    }
}
