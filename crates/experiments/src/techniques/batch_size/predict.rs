//! The byte model of a training step against batch size: what each component should take,
//! from shapes and bytes per value (the shared rules of [`estimator::estimate`]).

use crate::harness::backend::Checkpointing;
use crate::harness::models::ModelShape;
use estimator::estimate;

/// Parameters: 4 bytes each.
pub fn param_bytes(shape: impl Into<ModelShape>) -> f64 {
    estimate::param_bytes(shape)
}

/// Adam's two moments: 8 bytes per parameter.
pub fn adam_state_bytes(shape: impl Into<ModelShape>) -> f64 {
    estimate::adam_state_bytes(shape)
}

/// Parameter gradients: 4 bytes per parameter.
pub fn grad_bytes(shape: impl Into<ModelShape>) -> f64 {
    estimate::param_bytes(shape)
}

/// Bytes the forward pass holds at its high point per sample, above what was live before it.
pub fn activation_bytes_per_sample(shape: impl Into<ModelShape>) -> f64 {
    estimate::activation_bytes_per_sample(shape, Checkpointing::None)
}

/// The forward pass's peak at `batch`: model + Adam state + inputs + activations + the loss's
/// transient.
pub fn forward_peak(shape: impl Into<ModelShape>, batch: f64) -> f64 {
    estimate::forward_peak(shape, batch, 1, Checkpointing::None)
}

/// The step's peak at `batch`: model + Adam state + inputs + max(activations, gradients).
pub fn step_peak(shape: impl Into<ModelShape>, batch: f64) -> f64 {
    estimate::training_step_peak(shape, batch, 1, Checkpointing::None)
}
