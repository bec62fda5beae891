//! Batch size: the first knob to turn on an OOM, and what it trades.
//!
//! Question: how much memory does a smaller batch save, and what does it cost in throughput?
//! Method: one Adam training step of an MLP at batch sizes over a 32x (quick) to 128x (full)
//! range, and of the transformer over a 16x range, each in its own process; the step's peak
//! split into parameters, Adam state, inputs, backend buffers, activations (fitted against the
//! batch) and gradients.
//! Answer: the peak is the model, its Adam state and the inputs plus the larger of the
//! activations (linear in the batch) and the parameter gradients (fixed): below the crossover a
//! smaller batch saves almost nothing; above it memory grows by a fixed number of bytes per
//! sample, while throughput falls as batches shrink.

mod analysis;
pub mod predict;
#[allow(dead_code, missing_docs)]
#[doc(hidden)]
pub mod snippet;

use results::TechniqueId;
use results::{ComparisonSpec, DeviceKind, Profile};

use crate::harness::models::{training_mlp, training_transformer};
use crate::harness::profile::{Repeats, Sizes};
use crate::harness::train::{run_train_point, NoChecks, TrainConfig};
use crate::technique::{Measurement, Planned, Row, Technique};
use estimator::estimate::StepPlan;

/// The batch-size sweep.
pub struct BatchSize;

/// The transformer's batch sizes (sequences per step): a 16x range.
pub fn transformer_batches(sizes: Sizes) -> Vec<usize> {
    match sizes {
        Sizes::Quick => vec![1, 2, 4, 8, 16],
        Sizes::Full => vec![1, 2, 4, 8],
        Sizes::FullCuda => vec![1, 2, 4, 8, 16, 32],
    }
}

/// The batch sizes: a 32x range in quick, 64x in full, 256x on a GPU.
pub fn batches(sizes: Sizes) -> Vec<usize> {
    match sizes {
        Sizes::Quick => vec![8, 16, 32, 64, 128, 256],
        Sizes::Full => vec![16, 32, 64, 128, 256, 512, 1024],
        Sizes::FullCuda => vec![64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384],
    }
}

impl Technique for BatchSize {
    type Config = TrainConfig;
    const ID: TechniqueId = TechniqueId::BatchSize;
    const SNIPPET: &'static str = include_str!("snippet.rs");

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Planned<TrainConfig>> {
        let sizes = Sizes::of(profile, device);
        let mlp = batches(sizes).into_iter().map(|batch| {
            let config = TrainConfig::adam(training_mlp(sizes), batch);
            Planned::new(
                format!("batch-{batch}"),
                format!("batch {batch}"),
                profile,
                config,
            )
        });
        let transformer = transformer_batches(sizes).into_iter().map(|batch| {
            let config = TrainConfig::adam(training_transformer(sizes), batch);
            Planned::new(
                format!("transformer-batch-{batch}"),
                format!("transformer, batch {batch}"),
                profile,
                config,
            )
        });
        mlp.chain(transformer).collect()
    }

    fn run_point(&self, config: &TrainConfig, repeats: Repeats, device: DeviceKind) -> Measurement {
        run_train_point(*config, repeats, device, NoChecks)
    }

    fn step_plan(&self, config: &TrainConfig) -> Option<StepPlan> {
        Some(config.step_plan())
    }

    fn comparisons(&self, rows: &[Row<'_, TrainConfig>]) -> Vec<ComparisonSpec> {
        analysis::comparisons(rows)
    }
}
