//! The byte model of evaluation, per sample: what a pass without a graph holds at its peak, and
//! what a pass on the autodiff backend leaves recorded (see [`MlpShape`]'s rules).

use crate::harness::backend::Checkpointing;
use crate::harness::models::{MlpShape, ModelShape};
use estimator::estimate::{self, F32_BYTES};

/// Bytes an evaluation pass without a graph holds at its peak per sample: a layer's input and
/// its output.
pub fn inference_bytes_per_sample(shape: MlpShape) -> f64 {
    shape.predicted_inference_bytes_per_sample(F32_BYTES) as f64
}

/// Bytes a pass on the autodiff backend leaves recorded per sample once its output is dropped:
/// the MLP's rule, or for the transformer what its blocks keep for backward (the shared rule
/// of [`estimator::estimate`]).
pub fn graph_bytes_per_sample(shape: impl Into<ModelShape>) -> f64 {
    match shape.into() {
        ModelShape::Mlp(shape) => shape.predicted_graph_bytes_per_sample(F32_BYTES) as f64,
        transformer => estimate::activation_bytes_per_sample(transformer, Checkpointing::None),
    }
}
