//! The byte model of evaluation, per sample: what a pass without a graph holds at its peak, and
//! what a pass on the autodiff backend leaves recorded (see [`MlpShape`]'s rules).

use crate::estimate::F32_BYTES;
use crate::harness::models::MlpShape;

/// Bytes an evaluation pass without a graph holds at its peak per sample: a layer's input and
/// its output.
pub fn inference_bytes_per_sample(shape: MlpShape) -> f64 {
    shape.predicted_inference_bytes_per_sample(F32_BYTES) as f64
}

/// Bytes a pass on the autodiff backend leaves recorded per sample once its output is dropped.
pub fn graph_bytes_per_sample(shape: MlpShape) -> f64 {
    shape.predicted_graph_bytes_per_sample(F32_BYTES) as f64
}
