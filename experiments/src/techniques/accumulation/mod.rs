//! Gradient accumulation: the gradient of a big batch from several small ones.
//!
//! Question: how much of a step's peak does splitting its batch into k micro-batches save, what
//! does it cost, and is it still the same step?
//! Method: one Adam step on an effective batch of B as k = 1, 2, 4, 8, 16 micro-batches of B/k
//! (`GradientsAccumulator`, each loss scaled by 1/k), each point in its own process; the proof
//! compares the accumulated gradients with the whole batch's, and the parameters after one Adam
//! step from each.
//! Answer: only one micro-batch's activations are alive at a time, at the price of holding the
//! accumulated gradients and of k smaller, less efficient passes; the saving stops where a
//! micro-batch's activations fall below the gradients, and the step is the same (relative
//! differences below 1e-6).

mod analysis;
pub mod predict;
#[allow(dead_code, missing_docs)]
#[doc(hidden)]
pub mod snippet;

use burn::optim::{AdamConfig, GradientsAccumulator, GradientsParams, Optimizer};
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::Tensor;
use results::{Check, DeviceKind, Profile};

use crate::harness::models::mlp::{self, Mlp};
use crate::harness::models::training_mlp;
use crate::harness::profile::{Repeats, Sizes};
use crate::harness::train::{run_train_point, TrainChecks, TrainConfig, Trained};
use crate::technique::{Measurement, Planned, Technique};

/// Relative tolerance of the gradient and parameter comparisons: the same sums in another order
/// in f32 (measured differences are about 1e-7).
const TOLERANCE: f64 = 1e-5;

/// The gradient-accumulation experiment.
pub struct Accumulation;

/// The effective batch at each size: large enough that activations dominate the peak.
fn effective_batch(sizes: Sizes) -> usize {
    match sizes {
        Sizes::Quick => 512,
        Sizes::Full => 2048,
        Sizes::FullCuda => 16384,
    }
}

impl Technique for Accumulation {
    type Config = TrainConfig;
    const ID: &'static str = "accumulation";
    const TITLE: &'static str = "Gradient accumulation";
    const EXPLANATION: &'static str =
        "Gradient accumulation splits a batch of B samples into k micro-batches of B/k, \
         back-propagates each with its loss scaled by 1/k, adds up the gradients, and takes one \
         optimizer step: the same step as the big batch, with the activations of only one \
         micro-batch alive at a time. It costs the accumulated gradients (one more copy of the \
         parameter gradients) and the speed of k smaller passes.";
    const ON_DEVICES: &'static str =
        "On the device backends the accumulated gradients and each micro-batch's activations \
         are device memory, read from CubeCL's memory manager at phase boundaries, and each \
         phase also shows the bytes the pools had reserved at its end: what a GPU runs out of \
         is reserved memory, which the pools do not return until memory_cleanup().";
    const SNIPPET: &'static str = include_str!("snippet.rs");

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Planned<TrainConfig>> {
        let sizes = Sizes::of(profile, device);
        let batch = effective_batch(sizes);
        [1usize, 2, 4, 8, 16]
            .into_iter()
            .map(|k| {
                let config = TrainConfig {
                    micro_batches: k,
                    ..TrainConfig::adam(training_mlp(sizes), batch)
                };
                Planned::new(
                    format!("micro-{k}"),
                    format!("{k} x {}", batch / k),
                    profile,
                    config,
                )
            })
            .collect()
    }

    fn run_point(&self, config: &TrainConfig, repeats: Repeats, device: DeviceKind) -> Measurement {
        run_train_point(*config, repeats, device, AccumulationChecks)
    }
}

/// The proof of an accumulated step, run by the training point on its own inputs (nothing to
/// prove for one micro-batch).
struct AccumulationChecks;

impl TrainChecks for AccumulationChecks {
    fn checks<B: AutodiffBackend>(&self, t: Trained<'_, B>) -> Vec<Check> {
        if t.config.micro_batches > 1 {
            checks(t.config, t.x, t.y, t.model)
        } else {
            Vec::new()
        }
    }
}

/// The proof: gradients accumulated over `k` micro-batches against the whole batch's, and the
/// parameters after one Adam step from each (fresh optimizers, same starting model).
pub fn checks<B: AutodiffBackend>(
    config: &TrainConfig,
    x: &Tensor<B, 2>,
    y: &Tensor<B, 2>,
    model: Mlp<B>,
) -> Vec<Check> {
    checks_with_loss_scale(config, x, y, model, 1.0 / config.micro_batches as f64)
}

/// [`checks`] with each micro-batch's loss multiplied by `loss_scale` (1/k is right; anything
/// else changes the step, which the checks must catch).
pub fn checks_with_loss_scale<B: AutodiffBackend>(
    config: &TrainConfig,
    x: &Tensor<B, 2>,
    y: &Tensor<B, 2>,
    model: Mlp<B>,
    loss_scale: f64,
) -> Vec<Check> {
    let k = config.micro_batches;
    let reference =
        GradientsParams::from_grads(mlp::loss(&model, x.clone(), y.clone()).backward(), &model);
    let mut accumulator = GradientsAccumulator::<Mlp<B>>::new();
    for (xi, yi) in mlp::micro_batch_slices(x, y, k) {
        let loss = mlp::loss(&model, xi, yi).mul_scalar(loss_scale);
        accumulator.accumulate(&model, GradientsParams::from_grads(loss.backward(), &model));
    }
    let accumulated = accumulator.grads();
    let grads_check = Check::compare(
        "accumulated gradients against the whole batch's",
        &mlp::flatten(&model, Some(&reference)),
        &mlp::flatten(&model, Some(&accumulated)),
        TOLERANCE,
    );
    let step = |grads: GradientsParams| {
        let mut optim = AdamConfig::new().init::<B, Mlp<B>>();
        mlp::flatten(&optim.step(config.lr, model.clone(), grads), None)
    };
    let params_check = Check::compare(
        "parameters after one Adam step",
        &step(reference),
        &step(accumulated),
        TOLERANCE,
    );
    vec![grads_check, params_check]
}
