//! The byte model of checkpointing: burn-autodiff's rules for what the forward pass keeps per
//! sample with and without the balanced strategy (see [`crate::harness::models::MlpShape`]), in the shared step rule
//! of [`estimator::estimate`].

use crate::harness::backend::Checkpointing;
use crate::harness::models::ModelShape;
use crate::harness::train::TrainConfig;
use estimator::estimate;

/// Bytes the forward pass keeps per sample: `2 x depth` widths without checkpointing,
/// `depth + 2` with the balanced strategy (each Linear output kept, ReLU's recomputed).
pub fn activation_bytes_per_sample(
    shape: impl Into<ModelShape>,
    checkpointing: Checkpointing,
) -> f64 {
    estimate::activation_bytes_per_sample(shape, checkpointing)
}

/// Parameter gradients: 4 bytes per parameter.
pub fn grad_bytes(shape: impl Into<ModelShape>) -> f64 {
    estimate::param_bytes(shape)
}

/// The forward pass's peak of a point.
pub fn forward_peak(config: &TrainConfig) -> f64 {
    estimate::forward_peak(config.shape, config.batch as f64, 1, config.checkpointing)
}

/// The step's peak of a point: model, Adam state and inputs, plus the larger of the forward
/// pass's activations and the parameter gradients.
pub fn step_peak(config: &TrainConfig) -> f64 {
    estimate::training_step_peak(config.shape, config.batch as f64, 1, config.checkpointing)
}
