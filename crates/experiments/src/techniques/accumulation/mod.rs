//! Gradient accumulation: the gradient of a big batch from several small ones.
//!
//! Question: how much of a step's peak does splitting its batch into k micro-batches save, what
//! does it cost, and is it still the same step?
//! Method: one Adam step on an effective batch of B as k = 1, 2, 4, 8, 16 micro-batches of B/k
//! (`GradientsAccumulator`, each loss scaled by 1/k) on the MLP, and k = 1, 2, 4, 8 on the
//! small transformer in quick runs and on CUDA (the CPU's full run has GPT-2 small's cell
//! instead), each point in its own process; the proof
//! runs the training step the points measure from the same weights with k micro-batches and with
//! one batch, and compares the update of an SGD step (the gradient) and the parameters after an
//! Adam step.
//! Answer: only one micro-batch's activations are alive at a time, at the price of holding the
//! accumulated gradients and of k smaller, less efficient passes; the saving stops where a
//! micro-batch's activations fall below the gradients, and the step is the same (relative
//! differences below 1e-6).

mod analysis;
pub mod predict;
#[allow(dead_code, missing_docs)]
#[doc(hidden)]
pub mod snippet;

use burn::optim::{AdamConfig, SgdConfig};
use results::TechniqueId;
use results::{Check, ComparisonSpec, DeviceKind, Profile};

use crate::harness::models::mlp;
use crate::harness::models::{
    self, sweeps_the_small_transformer, training_mlp, training_transformer, Batch, Model,
};
use crate::harness::probe::{MemoryProbe, PhaseMeter};
use crate::harness::profile::{Repeats, Sizes};
use crate::harness::train::{run_train_point, Proof, TrainChecks, TrainConfig, Trained};
use crate::technique::{Measurement, Planned, Row, Technique};
use burn::optim::ModuleOptimizer;
use estimator::estimate::StepPlan;

/// Relative tolerance of the gradient and parameter comparisons: the same sums in another order
/// in f32 (measured differences are about 1e-7).
const TOLERANCE: f64 = 1e-5;

/// The gradient-accumulation experiment.
pub struct Accumulation;

/// The transformer's effective batch (sequences) at each size.
fn transformer_batch(sizes: Sizes) -> usize {
    match sizes {
        Sizes::Quick | Sizes::Full => 8,
        Sizes::FullCuda => 32,
    }
}

/// The effective batch at each size: large enough that activations dominate the peak.
fn effective_batch(sizes: Sizes) -> usize {
    match sizes {
        Sizes::Quick => 512,
        Sizes::Full => 1024,
        Sizes::FullCuda => 16384,
    }
}

impl Technique for Accumulation {
    type Config = TrainConfig;
    const ID: TechniqueId = TechniqueId::Accumulation;
    const SNIPPET: &'static str = include_str!("snippet.rs");

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Planned<TrainConfig>> {
        let sizes = Sizes::of(profile, device);
        let batch = effective_batch(sizes);
        let mlp = [1usize, 2, 4, 8, 16].into_iter().map(|k| {
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
        });
        let sequences = transformer_batch(sizes);
        let ks: &[usize] = if sweeps_the_small_transformer(sizes) {
            &[1, 2, 4, 8]
        } else {
            &[]
        };
        let transformer = ks.iter().map(|&k| {
            let config = TrainConfig {
                micro_batches: k,
                ..TrainConfig::adam(training_transformer(sizes), sequences)
            };
            Planned::new(
                format!("transformer-micro-{k}"),
                format!("transformer, {k} x {}", sequences / k),
                profile,
                config,
            )
        });
        mlp.chain(transformer).collect()
    }

    fn run_point(&self, config: &TrainConfig, repeats: Repeats, device: DeviceKind) -> Measurement {
        run_train_point(*config, repeats, device, AccumulationChecks)
    }

    fn step_plan(&self, config: &TrainConfig) -> Option<StepPlan> {
        Some(config.step_plan())
    }

    fn comparisons(&self, rows: &[Row<'_, TrainConfig>]) -> Vec<ComparisonSpec> {
        let mut rows = rows.to_vec();
        rows.sort_by_key(|r| r.config.micro_batches);
        analysis::comparisons(&rows)
    }
}

/// The proof of an accumulated step, run by the training point on its own inputs and from its
/// trained weights (nothing to prove for one micro-batch).
struct AccumulationChecks;

impl TrainChecks for AccumulationChecks {
    fn checks(&self, t: Trained<'_>) -> Proof {
        if t.config.micro_batches > 1 {
            checks(t.config, t.batch, t.model, t.probe).into()
        } else {
            Proof::default()
        }
    }
}

/// A training step as the harness takes it: [`models::train_step`], or a stand-in a test
/// breaks.
pub trait TrainStep {
    /// One step of `model` on `batch` as `micro_batches` micro-batches, metered by `meter`.
    fn step(
        &self,
        meter: &mut PhaseMeter<'_>,
        model: Model,
        optim: &mut ModuleOptimizer,
        lr: f64,
        batch: &Batch,
        micro_batches: usize,
    ) -> Model;
}

/// The harness's training step, the one every accumulation point measures.
pub struct HarnessStep;

impl TrainStep for HarnessStep {
    fn step(
        &self,
        meter: &mut PhaseMeter<'_>,
        model: Model,
        optim: &mut ModuleOptimizer,
        lr: f64,
        batch: &Batch,
        micro_batches: usize,
    ) -> Model {
        models::train_step(
            meter,
            model,
            optim,
            lr,
            batch,
            micro_batches,
            None,
            models::StepReads::default(),
        )
    }
}

/// The proof, through the training step the points measure ([`HarnessStep`]).
pub fn checks(
    config: &TrainConfig,
    batch: &Batch,
    model: Model,
    probe: &dyn MemoryProbe,
) -> Vec<Check> {
    checks_with_step(config, batch, model, probe, &HarnessStep)
}

/// Learning rate of the SGD check: large, so that the update (the gradient times this) dwarfs
/// the parameters and `after - before` is not lost to f32 rounding of the parameters (at
/// 1.0, that rounding alone was 1.7e-5 of the largest update at full size).
const SGD_CHECK_LR: f64 = 1e3;

/// The proof of `step`: from the same weights, one step with `k` micro-batches against one
/// step on the whole batch, each with a fresh optimizer: the parameters after an Adam step (the
/// step the points measure), and the update an SGD step makes, which is the gradient itself
/// (Adam's first update is nearly the gradient's sign, blind to a wrong gradient scale).
pub fn checks_with_step<S: TrainStep>(
    config: &TrainConfig,
    batch: &Batch,
    model: Model,
    probe: &dyn MemoryProbe,
    step: &S,
) -> Vec<Check> {
    let device = batch.device();
    let sync = || crate::harness::backend::sync(&device);
    let k = config.micro_batches;
    let before = mlp::flatten(&model, None);
    let adam = |micro_batches: usize| {
        let mut meter = PhaseMeter::new(probe, &sync);
        let mut optim = AdamConfig::new().init();
        let after = step.step(
            &mut meter,
            model.clone(),
            &mut optim,
            config.lr,
            batch,
            micro_batches,
        );
        mlp::flatten(&after, None)
    };
    let sgd_update = |micro_batches: usize| {
        let mut meter = PhaseMeter::new(probe, &sync);
        let mut optim = SgdConfig::new().init();
        let after = step.step(
            &mut meter,
            model.clone(),
            &mut optim,
            SGD_CHECK_LR,
            batch,
            micro_batches,
        );
        mlp::flatten(&after, None)
            .iter()
            .zip(&before)
            .map(|(a, b)| a - b)
            .collect::<Vec<f32>>()
    };
    vec![
        Check::compare(
            "sgd-update-micro-batches",
            &sgd_update(1),
            &sgd_update(k),
            TOLERANCE,
        ),
        Check::compare("adam-params-micro-batches", &adam(1), &adam(k), TOLERANCE),
    ]
}
