//! Optimizer state: what a lighter optimizer saves.
//!
//! Question: how many bytes per parameter does each of Burn 0.22's optimizers keep, which
//! published rule does a whole Burn training step match, and what does the lighter optimizer
//! cost?
//! Method: one training step of the MLP (and, in quick runs and on CUDA, of the small
//! transformer; the CPU's full run has GPT-2 small's momentum cell instead) with SGD, SGD with
//! momentum, AdaGrad, RMSprop, Adam, AdamW and Adan (Burn's defaults), each in its own process; the
//! optimizer's state read as what stays live after the first step, set beside the tensors
//! `burn-optim`'s source keeps per parameter; the proof trains each from the same weights for
//! a few dozen steps and checks that its loss fell (no equality is expected between optimizers:
//! the curves are shown).
//! Answer: state is 0, 1, 2 or 4 f32 values per parameter as the source says (SGD 0, momentum
//! and AdaGrad 4 B, RMSprop, Adam and AdamW 8 B, Adan 16 B), so weights, gradients and Adam
//! state make the 16 bytes per parameter of accelerate's fp32 rule; Adam to momentum saves
//! 4 B per parameter of the step's fixed part.

mod analysis;
pub mod predict;
#[allow(dead_code, missing_docs)]
#[doc(hidden)]
pub mod snippet;

use results::TechniqueId;
use results::{Check, ComparisonSpec, DeviceKind, Profile, Trace};
use serde::{Deserialize, Serialize};

use crate::harness::models::{
    sweeps_the_small_transformer, training_mlp, training_transformer, ModelShape,
};
use crate::harness::optim::Optimizer;
use crate::harness::profile::{Repeats, Sizes};
use crate::harness::train::{run_train_point, Proof, TrainChecks, TrainConfig, Trained};
use crate::technique::{Measurement, Planned, Row, Technique};
use crate::workloads::HasModel;
use estimator::estimate::StepPlan;

/// The optimizer-state experiment.
pub struct OptimizerState;

/// The MLP's batch at each size.
fn mlp_batch(sizes: Sizes) -> usize {
    match sizes {
        Sizes::Quick => 64,
        Sizes::Full => 256,
        Sizes::FullCuda => 4096,
    }
}

/// The transformer's batch (sequences) at each size.
fn transformer_batch(sizes: Sizes) -> usize {
    match sizes {
        Sizes::Quick | Sizes::Full => 4,
        Sizes::FullCuda => 16,
    }
}

/// The optimizers the small transformer is stepped with in a quick run (all of them on CUDA,
/// none in the CPU's full run: [`sweeps_the_small_transformer`]): the lightest, the common one
/// and the heaviest. The MLP already shows every optimizer's state.
const CPU_TRANSFORMER: [Optimizer; 3] = [Optimizer::Sgd, Optimizer::Adam, Optimizer::Adan];

/// Steps of the proof's training run: 15 on the CPU, enough for the loss to fall (the slowest,
/// SGD's, by 0.003% at step 15), inside the run budget; 60 on a GPU.
fn proof_steps(sizes: Sizes) -> usize {
    match sizes {
        Sizes::Quick | Sizes::Full => 15,
        Sizes::FullCuda => 60,
    }
}

/// The learning rate each optimizer is run at: 1e-3 for the Adam family, LAMB and RMSprop,
/// 1e-2 for AdaGrad (PyTorch's defaults), 1e-4 for Lion (its sign update moves every weight by
/// the whole rate: its authors' advice is 3 to 10 times below Adam's), 1e-2 for Adafactor (its
/// relative step, `min(lr, 1/sqrt(t))` times each weight's RMS: Burn's doc gives 0.01 as the
/// paper's schedule), 1e-1 for SGD with and without momentum (which has no default; at 1e-2
/// the MLP's loss fell by 0.04% in 30 steps, chosen after seeing that). Memory does not depend
/// on it; the proof's loss curves do.
pub fn learning_rate(optimizer: Optimizer) -> f64 {
    match optimizer {
        Optimizer::Sgd | Optimizer::Momentum => 1e-1,
        Optimizer::AdaGrad | Optimizer::Adafactor => 1e-2,
        Optimizer::RmsProp => 1e-3,
        Optimizer::Adam | Optimizer::AdamW | Optimizer::Adan | Optimizer::Lamb => 1e-3,
        Optimizer::Lion => 1e-4,
    }
}

/// One point: a training step with one optimizer, and the length of its proof's run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OptimizerConfig {
    /// The measured training step (its optimizer and learning rate included).
    pub train: TrainConfig,
    /// Steps of the proof's training run.
    pub proof_steps: usize,
}

impl OptimizerConfig {
    /// The point that steps `shape` on `batch` with `optimizer`, at `sizes`.
    fn new(shape: impl Into<ModelShape>, batch: usize, optimizer: Optimizer, sizes: Sizes) -> Self {
        Self {
            train: TrainConfig {
                optimizer,
                lr: learning_rate(optimizer),
                ..TrainConfig::adam(shape, batch)
            },
            proof_steps: proof_steps(sizes),
        }
    }

    /// The point's optimizer.
    pub fn optimizer(&self) -> Optimizer {
        self.train.optimizer
    }
}

impl HasModel for OptimizerConfig {
    fn model(&self) -> ModelShape {
        self.train.shape
    }
}

impl Technique for OptimizerState {
    type Config = OptimizerConfig;
    const ID: TechniqueId = TechniqueId::OptimizerState;
    const SNIPPET: &'static str = include_str!("snippet.rs");

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Planned<OptimizerConfig>> {
        let sizes = Sizes::of(profile, device);
        let mlp = Optimizer::ALL.into_iter().map(|o| {
            Planned::new(
                format!("mlp-{}", o.name()),
                o.name().to_string(),
                profile,
                OptimizerConfig::new(training_mlp(sizes), mlp_batch(sizes), o, sizes),
            )
        });
        let transformer_optimizers: Vec<Optimizer> = match sizes {
            _ if !sweeps_the_small_transformer(sizes) => Vec::new(),
            Sizes::Quick | Sizes::Full => CPU_TRANSFORMER.to_vec(),
            Sizes::FullCuda => Optimizer::ALL.to_vec(),
        };
        let transformer = transformer_optimizers.into_iter().map(|o| {
            Planned::new(
                format!("transformer-{}", o.name()),
                format!("transformer, {}", o.name()),
                profile,
                OptimizerConfig::new(
                    training_transformer(sizes),
                    transformer_batch(sizes),
                    o,
                    sizes,
                ),
            )
        });
        mlp.chain(transformer).collect()
    }

    fn run_point(
        &self,
        config: &OptimizerConfig,
        repeats: Repeats,
        device: DeviceKind,
    ) -> Measurement {
        let steps = config.proof_steps;
        run_train_point(config.train, repeats, device, LossFalls { steps })
    }

    fn step_plan(&self, config: &OptimizerConfig) -> Option<StepPlan> {
        Some(config.train.step_plan())
    }

    fn comparisons(&self, rows: &[Row<'_, OptimizerConfig>]) -> Vec<ComparisonSpec> {
        analysis::comparisons(rows)
    }
}

/// The proof: from fresh weights (the point's seed), `steps` steps with a fresh optimizer of
/// the point's kind on the point's batch; the loss of every step is kept as the point's loss
/// curve, and the check is that the last loss is below the first (an optimizer that does not
/// train, or that diverges, fails it).
pub struct LossFalls {
    /// Steps of the run.
    pub steps: usize,
}

impl TrainChecks for LossFalls {
    fn checks(&self, t: Trained<'_>) -> Proof {
        let losses = t.loss_curve(self.steps);
        let mut proof = Proof::from(vec![loss_fell(&losses)]);
        proof.traces.insert(Trace::LossByStep, losses);
        proof
    }
}

/// The check on a loss curve: its last value below its first, both finite. The differences
/// are the fall (first minus last) and the last loss relative to the first; the tolerance is
/// 1 (the last may not reach the first).
pub fn loss_fell(losses: &[f64]) -> Check {
    let (first, last) = (
        losses.first().copied().unwrap_or(f64::NAN),
        losses.last().copied().unwrap_or(f64::NAN),
    );
    let ratio = last / first;
    Check {
        what: "loss-falls".into(),
        params: Default::default(),
        max_abs_diff: first - last,
        max_rel_diff: ratio,
        tolerance: 1.0,
        passed: first.is_finite() && last.is_finite() && ratio < 1.0,
    }
    .with("steps", losses.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_fails_when_the_loss_does_not_fall() {
        assert!(loss_fell(&[1.0, 0.8, 0.5]).passed);
        assert!(!loss_fell(&[1.0, 1.2]).passed, "a diverging run fails");
        assert!(
            !loss_fell(&[1.0, 1.0]).passed,
            "a run that does not train fails"
        );
        assert!(!loss_fell(&[1.0, f64::NAN]).passed, "a NaN loss fails");
        assert!(!loss_fell(&[]).passed, "no run fails");
    }

    #[test]
    fn every_optimizer_has_a_point_on_the_mlp_and_on_cudas_transformer() {
        let quick = OptimizerState.points(Profile::Quick, DeviceKind::Cpu);
        let full = OptimizerState.points(Profile::Full, DeviceKind::Cpu);
        let cuda = OptimizerState.points(Profile::Full, DeviceKind::Cuda);
        assert_eq!(quick.len(), Optimizer::ALL.len() + CPU_TRANSFORMER.len());
        // The CPU's full run leaves the transformer to GPT-2 small's momentum cell.
        assert_eq!(full.len(), Optimizer::ALL.len());
        assert_eq!(cuda.len(), 2 * Optimizer::ALL.len());
    }
}
