//! The byte model of an accumulated step: the plain step's rule (see [`estimator::estimate`]) with
//! one micro-batch's activations and, for k > 1, the accumulated gradients held across
//! micro-batches.

use crate::harness::backend::Checkpointing;
use crate::harness::models::ModelShape;
use estimator::estimate;

/// The forward pass's peak on `batch` samples as `micro_batches` micro-batches.
pub fn forward_peak(shape: impl Into<ModelShape>, batch: f64, micro_batches: usize) -> f64 {
    estimate::forward_peak(shape, batch, micro_batches, Checkpointing::None)
}

/// The step's peak on `batch` samples as `micro_batches` micro-batches: model + Adam state +
/// inputs + max(activations of B/k, gradients) + accumulated gradients when k > 1.
pub fn step_peak(shape: impl Into<ModelShape>, batch: f64, micro_batches: usize) -> f64 {
    estimate::training_step_peak(shape, batch, micro_batches, Checkpointing::None)
}
