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

use burn::backend::Autodiff;
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::backend::AutodiffBackend;
use results::{Check, ComparisonSpec, DeviceKind, PhaseTiming, PointResult, Profile};
use serde::{Deserialize, Serialize};

use crate::harness::backend::{self, Backends, Checkpointing, OnBackend, Setup};
use crate::harness::models::mlp::{flatten, materialize};
use crate::harness::models::transformer::{self, MarkovChain, TransformerShape};
use crate::harness::probe::{MemoryProbe, PhaseMeter};
use crate::harness::profile::{Repeats, Sizes};
use crate::harness::timing;
use crate::harness::train::{measured_steps, Readings};
use crate::technique::{Measurement, Planned, Row, Technique};

/// Successors of each token in the task's Markov chain.
const SUCCESSORS: usize = 4;

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
                vocab: 512,
                d_model: 128,
                layers: 2,
                heads: 4,
                seq: 0,
            },
            4,
            vec![64, 128, 256],
            [1, 2],
        ),
        Sizes::Full => (
            TransformerShape {
                vocab: 512,
                d_model: 256,
                layers: 4,
                heads: 4,
                seq: 0,
            },
            4,
            vec![64, 128, 256, 512, 1024],
            [1, 4],
        ),
        Sizes::FullCuda => (
            TransformerShape {
                vocab: 50257,
                d_model: 768,
                layers: 12,
                heads: 12,
                seq: 0,
            },
            8,
            vec![128, 256, 512, 1024],
            [1, 12],
        ),
    }
}

impl Technique for SequenceLength {
    type Config = SeqConfig;
    const ID: &'static str = "sequence-length";
    const TITLE: &'static str = "Sequence length (transformer)";
    const EXPLANATION: &'static str =
        "A transformer's forward pass keeps, for every token and block, tensors as wide as the \
         model (the layer norms' intermediates, the attention projections, the MLP's 4x hidden \
         layer) and, for attention, rows as long as the sequence: the attention weights are a \
         sequence-by-sequence matrix per head. Per token the first part is fixed and the second \
         grows with the length, so the memory of a batch of sequences grows with the square of \
         the length once attention dominates. Shorter sequences (or fewer per batch) are the \
         fix; the crossover says when attention, not the MLP, is what to attack (by \
         checkpointing or a fused attention kernel that does not keep the weights).";
    const ON_DEVICES: &'static str =
        "On wgpu and CUDA the probe is CubeCL's memory manager, read at phase boundaries after a \
         device sync: what the forward pass leaves for backward is exact, so the per-token \
         bytes compare directly with the CPU's; a fused attention kernel (which Burn 0.21 does \
         not use in this model) would not keep the sequence-by-sequence weights at all.";
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
        device.dispatch(
            Setup {
                checkpointing: config.checkpointing,
                ..Setup::default()
            },
            TransformerPoint {
                config: *config,
                repeats,
            },
        )
    }

    fn comparisons(&self, rows: &[Row<'_, SeqConfig>]) -> Vec<ComparisonSpec> {
        analysis::comparisons(rows)
    }
}

/// Largest relative difference allowed between gradients with and without checkpointing:
/// recomputing an op runs the same kernel on the same inputs, so they agree to rounding.
const GRADIENT_TOLERANCE: f64 = 1e-5;

/// Every parameter's gradient after one forward and backward from the seeded initial weights,
/// flattened in module order.
fn gradients<B: AutodiffBackend>(
    config: &SeqConfig,
    chain: &MarkovChain,
    device: &B::Device,
) -> Vec<f32> {
    B::seed(device, config.seed);
    let model = config.shape.init::<B>(device);
    materialize(&model);
    let (inputs, targets) = config
        .shape
        .batch::<B>(chain, config.batch, config.seed, device);
    let grads = GradientsParams::from_grads(
        transformer::loss(&model, inputs, targets).backward(),
        &model,
    );
    flatten(&model, Some(&grads))
}

/// Measures training steps of the transformer at one configuration.
struct TransformerPoint {
    config: SeqConfig,
    repeats: Repeats,
}

impl OnBackend for TransformerPoint {
    type Output = PointResult;

    fn run<B: AutodiffBackend>(self, device: B::Device, probe: &dyn MemoryProbe) -> PointResult {
        let c = self.config;
        let shape = c.shape;
        let sync = || backend::sync::<B>(&device);
        B::seed(&device, c.seed);
        let chain = MarkovChain::new(shape.vocab, SUCCESSORS, c.seed);

        let start = probe.read().in_use_bytes;
        let model = shape.init::<B>(&device);
        sync();
        let after_init = probe.read().in_use_bytes;
        materialize(&model);
        sync();
        let after_model = probe.read().in_use_bytes;
        let (inputs, targets) = shape.batch::<B>(&chain, c.batch, c.seed, &device);
        sync();
        let after_inputs = probe.read().in_use_bytes;
        drop(transformer::loss(&model, inputs.clone(), targets.clone()).backward());
        sync();
        let after_runtime = probe.read().in_use_bytes;

        let mut optim = AdamConfig::new().init();
        let mut model = Some(model);
        let step = |runs: &mut Vec<_>| {
            let mut meter = PhaseMeter::new(probe, &sync);
            let m = model.take().expect("model is put back after each step");
            let loss = meter.phase("forward", || {
                transformer::loss(&m, inputs.clone(), targets.clone())
            });
            let grads = meter.phase("backward", || loss.backward());
            model = Some(meter.phase("optimizer", || {
                let grads = GradientsParams::from_grads(grads, &m);
                optim.step(c.lr, m, grads)
            }));
            runs.push(meter.finish());
        };

        let tokens = shape.tokens(c.batch);
        let steps = measured_steps(probe, &sync, after_runtime, self.repeats, tokens, step);
        let metrics = Readings {
            start,
            after_init,
            after_model,
            after_inputs,
            after_runtime,
            optimizer_state_bytes: steps.optimizer_state_bytes,
        }
        .metrics(
            &steps.phases,
            &steps.runs,
            shape.num_params(),
            shape.step_matmul_flop(c.batch),
        );
        // Checkpointing must not change what is computed: the gradients of one step from the
        // initial weights, with and without it.
        let checks = if c.checkpointing == Checkpointing::None || timing::timing_only() {
            Vec::new()
        } else {
            vec![Check::compare(
                "parameter gradients with checkpointing against without",
                &gradients::<Autodiff<B::InnerBackend>>(&c, &chain, &device),
                &gradients::<B>(&c, &chain, &device),
                GRADIENT_TOLERANCE,
            )]
        };
        PointResult {
            metrics,
            checks,
            phase_times: PhaseTiming::of_runs(&steps.runs),
            ..PointResult::new(probe.info(), steps.phases, steps.timing, tokens)
        }
    }
}
