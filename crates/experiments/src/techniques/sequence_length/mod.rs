//! Sequence length: what a transformer's training step holds as its sequences grow.
//!
//! Question: how does the memory of a transformer's training step grow with the sequence
//! length, and where does attention's term in the square of the length take over?
//! Method: one Adam step of a small decoder-only transformer (Burn's own modules) on sequences
//! from a seeded Markov chain, at sequence lengths over a 4x (quick) to 16x (full) range, each
//! at one block and at several, in its own process; the step's peak split into weights, Adam
//! state, gradients and activations. The difference between the two depths, per token, is what
//! one block keeps for backward; it is fitted as `a + b s` and set beside Burn's op-by-op rule
//! and Korthikanti et al.'s formula.
//! Answer: per token and layer, a block keeps a fixed `18 d` values plus `3 h s` for attention
//! (softmax's shifted scores, its exponentials and its output): at d_model 256 and 4 heads the
//! attention term overtakes the rest at a sequence of about 384 tokens.

mod analysis;
pub mod predict;
#[allow(dead_code, missing_docs)]
#[doc(hidden)]
pub mod snippet;

use results::TechniqueId;
use results::{ComparisonSpec, DeviceKind, Profile};
use serde::{Deserialize, Serialize};

use crate::harness::backend::Checkpointing;
use crate::harness::models::TransformerShape;
use crate::harness::profile::{Repeats, Sizes};
use crate::harness::train::{run_train_point, CheckpointingCheck, TrainConfig};
use crate::technique::{Measurement, Planned, Row, Technique};
use estimator::estimate::StepPlan;

/// One point: a transformer shape (its sequence length and depth included) and a batch.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SeqConfig {
    /// The model and its sequence length.
    pub shape: TransformerShape,
    /// Sequences per step.
    pub batch: usize,
    /// Adam learning rate.
    pub lr: f64,
    /// Seed of the weights, the chain and the data.
    pub seed: u64,
    /// What the autodiff backend keeps for backward.
    #[serde(default)]
    pub checkpointing: Checkpointing,
}

/// The sequence-length sweep.
pub struct SequenceLength;

/// The model at each size (its sequence length set per point), the batch, the lengths, and
/// the depths measured at each length (one block, and the model's).
pub fn plan(sizes: Sizes) -> (TransformerShape, usize, Vec<usize>, [usize; 2]) {
    match sizes {
        Sizes::Quick => (
            TransformerShape {
                chunked: Default::default(),
                vocab: 512,
                d_model: 128,
                layers: 2,
                heads: 4,
                seq: 0,
                tied_head: false,
            },
            2,
            vec![64, 128, 256],
            [1, 2],
        ),
        Sizes::Full => (
            TransformerShape {
                chunked: Default::default(),
                vocab: 512,
                d_model: 256,
                layers: 4,
                heads: 4,
                seq: 0,
                tied_head: false,
            },
            // Two sequences: bytes per token are the same at any batch, and the longest
            // point's step (8 s at batch 4) halves.
            2,
            vec![64, 128, 256, 512, 1024],
            [1, 4],
        ),
        Sizes::FullCuda => (
            TransformerShape {
                chunked: Default::default(),
                vocab: 50257,
                d_model: 768,
                layers: 12,
                heads: 12,
                seq: 0,
                tied_head: false,
            },
            8,
            vec![128, 256, 512, 1024],
            [1, 12],
        ),
    }
}

impl Technique for SequenceLength {
    type Config = SeqConfig;
    const ID: TechniqueId = TechniqueId::SequenceLength;
    const SNIPPET: &'static str = include_str!("snippet.rs");

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Planned<SeqConfig>> {
        let sizes = Sizes::of(profile, device);
        let (shape, batch, lengths, depths) = plan(sizes);
        // Memory is the same at every step; the time of a step here describes the point
        // (the comparison is timed in pairs): the first step as warm-up, one timed step.
        let repeats = Repeats {
            warmup: 1,
            repeats: 1,
            ..Repeats::of(profile)
        };
        lengths
            .into_iter()
            .flat_map(|seq| {
                depths.into_iter().flat_map(move |layers| {
                    [Checkpointing::None, Checkpointing::Balanced].map(|checkpointing| {
                        let config = SeqConfig {
                            shape: TransformerShape {
                                seq,
                                layers,
                                ..shape
                            },
                            batch,
                            lr: 1e-3,
                            seed: 42,
                            checkpointing,
                        };
                        let (id, name) = match checkpointing {
                            Checkpointing::None => ("", ""),
                            Checkpointing::Balanced => ("-balanced", ", balanced checkpointing"),
                        };
                        Planned {
                            repeats,
                            ..Planned::new(
                                format!("seq-{seq}-layers-{layers}{id}"),
                                format!(
                                    "sequence {seq}, {layers} block{}{name}",
                                    if layers == 1 { "" } else { "s" }
                                ),
                                profile,
                                config,
                            )
                        }
                    })
                })
            })
            .collect()
    }

    fn run_point(&self, config: &SeqConfig, repeats: Repeats, device: DeviceKind) -> Measurement {
        run_train_point(
            config.train(),
            repeats,
            device,
            CheckpointingCheck {
                tolerance: GRADIENT_TOLERANCE,
            },
        )
    }

    fn step_plan(&self, config: &SeqConfig) -> Option<StepPlan> {
        Some(StepPlan {
            checkpointing: config.checkpointing,
            ..StepPlan::f32_adam(config.shape, config.batch as f64)
        })
    }

    fn comparisons(&self, rows: &[Row<'_, SeqConfig>]) -> Vec<ComparisonSpec> {
        analysis::comparisons(rows)
    }
}

/// Largest relative difference allowed between gradients with and without checkpointing:
/// recomputing an op runs the same kernel on the same inputs, so they agree to rounding.
const GRADIENT_TOLERANCE: f64 = 1e-5;

impl SeqConfig {
    /// The shared training point's configuration of this point: one plain Adam step of the
    /// transformer, no accumulation.
    pub fn train(&self) -> TrainConfig {
        TrainConfig {
            lr: self.lr,
            seed: self.seed,
            checkpointing: self.checkpointing,
            ..TrainConfig::adam(self.shape, self.batch)
        }
    }
}
