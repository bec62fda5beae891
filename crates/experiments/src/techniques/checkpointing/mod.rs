//! Gradient checkpointing: keep fewer activations, recompute them in backward.
//!
//! Question: how much of a training step's peak does Burn's checkpointing save, from which
//! depth and batch on, at what cost in time, and are the gradients unchanged?
//! Method: `Autodiff` against `Autodiff<BalancedCheckpointing>` (the training code is the
//! same, generic over the backend) across depth at a fixed batch and across batch at a fixed
//! depth, each point in its own process; forward activations predicted per layer from
//! burn-autodiff's rules; the proof compares one step's gradients with and without.
//! Answer: the balanced strategy recomputes the outputs of memory-bound operations (ReLU) from
//! the nearest kept output of a compute-bound one (a Linear): activations fall to about half,
//! which lowers the step's peak only once activations, not parameter gradients, set it; the
//! gradients are identical.

mod analysis;
pub mod predict;
#[allow(dead_code, missing_docs)]
#[doc(hidden)]
pub mod snippet;

use results::TechniqueId;
use results::{Check, ComparisonSpec, DeviceKind, Profile};

use crate::harness::backend::Checkpointing;
use crate::harness::models::{
    sweeps_the_small_transformer, training_transformer, MlpShape, TransformerShape,
};
use crate::harness::profile::{Repeats, Sizes};
use crate::harness::train::{
    gradients_unchanged_by_checkpointing, run_train_point, CheckpointingCheck, TrainConfig,
};
use crate::technique::{Measurement, Planned, Row, Technique};
use burn::tensor::Device;
use estimator::estimate::StepPlan;

/// Recomputation runs the same kernels on the same values: the gradients must be identical up
/// to a reordered reduction.
const TOLERANCE: f64 = 1e-6;

/// The checkpointing experiment.
pub struct GradientCheckpointing;

/// The sweeps of a profile: width, the depths (at a fixed batch), and the batches (at a
/// fixed depth).
struct Sweeps {
    width: usize,
    depths: Vec<usize>,
    depth_sweep_batch: usize,
    batches: Vec<usize>,
    batch_sweep_depth: usize,
}

/// The transformer's depths (blocks), at its training shape and batch 4.
fn transformer_blocks(sizes: Sizes) -> Vec<usize> {
    match sizes {
        _ if !sweeps_the_small_transformer(sizes) => Vec::new(),
        Sizes::FullCuda => vec![6, 12, 24],
        Sizes::Quick | Sizes::Full => vec![1, 2, 4],
    }
}

fn sweeps(sizes: Sizes) -> Sweeps {
    match sizes {
        Sizes::Quick => Sweeps {
            width: 128,
            depths: vec![4, 16, 64],
            depth_sweep_batch: 256,
            batches: vec![16, 64, 256, 1024],
            batch_sweep_depth: 16,
        },
        Sizes::Full => Sweeps {
            width: 512,
            depths: vec![4, 8, 16, 32],
            depth_sweep_batch: 1024,
            batches: vec![64, 128, 256, 512, 1024],
            batch_sweep_depth: 16,
        },
        Sizes::FullCuda => Sweeps {
            width: 2048,
            depths: vec![4, 8, 16, 32, 64],
            depth_sweep_batch: 4096,
            batches: vec![256, 512, 1024, 2048, 4096, 8192, 16384],
            batch_sweep_depth: 16,
        },
    }
}

impl Technique for GradientCheckpointing {
    type Config = TrainConfig;
    const ID: TechniqueId = TechniqueId::Checkpointing;
    const SNIPPET: &'static str = include_str!("snippet.rs");

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Planned<TrainConfig>> {
        let s = sweeps(Sizes::of(profile, device));
        let mut configs: Vec<(usize, usize)> = s
            .depths
            .iter()
            .map(|&d| (d, s.depth_sweep_batch))
            .chain(s.batches.iter().map(|&b| (s.batch_sweep_depth, b)))
            .collect();
        configs.sort_unstable();
        configs.dedup();
        let mut points = Vec::new();
        for (depth, batch) in configs {
            for checkpointing in [Checkpointing::None, Checkpointing::Balanced] {
                let name = match checkpointing {
                    Checkpointing::None => "plain",
                    Checkpointing::Balanced => "balanced",
                };
                let shape = MlpShape {
                    width: s.width,
                    depth,
                };
                let config = TrainConfig {
                    seed: 5,
                    checkpointing,
                    ..TrainConfig::adam(shape, batch)
                };
                points.push(Planned::new(
                    format!("depth-{depth}-batch-{batch}-{name}"),
                    format!("depth {depth}, batch {batch}, {name}"),
                    profile,
                    config,
                ));
            }
        }
        let shape = training_transformer(Sizes::of(profile, device));
        for layers in transformer_blocks(Sizes::of(profile, device)) {
            for checkpointing in [Checkpointing::None, Checkpointing::Balanced] {
                let name = match checkpointing {
                    Checkpointing::None => "plain",
                    Checkpointing::Balanced => "balanced",
                };
                let config = TrainConfig {
                    seed: 5,
                    checkpointing,
                    ..TrainConfig::adam(TransformerShape { layers, ..shape }, 4)
                };
                points.push(Planned::new(
                    format!("transformer-blocks-{layers}-{name}"),
                    format!("transformer, {layers} blocks, batch 4, {name}"),
                    profile,
                    config,
                ));
            }
        }
        points
    }

    fn run_point(&self, config: &TrainConfig, repeats: Repeats, device: DeviceKind) -> Measurement {
        run_train_point(
            *config,
            repeats,
            device,
            CheckpointingCheck {
                tolerance: TOLERANCE,
            },
        )
    }

    fn step_plan(&self, config: &TrainConfig) -> Option<StepPlan> {
        Some(config.step_plan())
    }

    fn comparisons(&self, rows: &[Row<'_, TrainConfig>]) -> Vec<ComparisonSpec> {
        analysis::comparisons(rows)
    }
}

/// The gradients of one step from fresh weights, with and without checkpointing, compared.
pub fn check(config: &TrainConfig, device: &Device) -> Check {
    gradients_unchanged_by_checkpointing(config, device, TOLERANCE)
}
