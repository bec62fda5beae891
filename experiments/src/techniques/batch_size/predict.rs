//! The byte model of a training step against batch size: what each component should take,
//! from shapes and bytes per value (the shared rules of [`crate::estimate`]).

use crate::estimate::{self, F32_BYTES};
use crate::harness::backend::Checkpointing;
use crate::harness::models::MlpShape;

/// Parameters: 4 bytes each.
pub fn param_bytes(shape: MlpShape) -> f64 {
    estimate::param_bytes(shape)
}

/// Adam's two moments: 8 bytes per parameter.
pub fn adam_state_bytes(shape: MlpShape) -> f64 {
    estimate::adam_state_bytes(shape)
}

/// Parameter gradients: 4 bytes per parameter.
pub fn grad_bytes(shape: MlpShape) -> f64 {
    estimate::param_bytes(shape)
}

/// Bytes the forward pass holds at its high point per sample, above what was live before it.
pub fn activation_bytes_per_sample(shape: MlpShape) -> f64 {
    shape.predicted_activation_bytes_per_sample(F32_BYTES) as f64
}

/// The step's peak at `batch`: model + Adam state + inputs + max(activations, gradients).
pub fn step_peak(shape: MlpShape, batch: f64) -> f64 {
    estimate::training_step_peak(shape, batch, 1, Checkpointing::None)
}
