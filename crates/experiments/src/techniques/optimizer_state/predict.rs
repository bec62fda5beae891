//! The byte model of optimizer state: each optimizer's values of state (read in `burn-optim`
//! 0.22's source: [`Optimizer::values_per_param`] parameter-sized tensors, or Adafactor's
//! factored rows and columns, [`Optimizer::state_values`]) times the 4 bytes of an f32, and the
//! step's fixed part (weights, gradients and that state) per parameter, against which the
//! published per-parameter rules are set.

use crate::harness::models::ModelShape;
use crate::harness::optim::Optimizer;
use estimator::estimate::F32_BYTES;

/// Bytes of state `optimizer` keeps for `shape`'s parameters in f32.
pub fn state_bytes(shape: ModelShape, optimizer: Optimizer) -> f64 {
    let values = optimizer.state_values(&shape.trainable_shapes(), shape.trainable_params());
    (values * F32_BYTES) as f64
}

/// Bytes per parameter of `shape`'s step's fixed part in f32: the weight, its gradient and the
/// optimizer's state (16 for Adam: accelerate's fp32 rule).
pub fn fixed_bytes_per_param(shape: ModelShape, optimizer: Optimizer) -> f64 {
    (2.0 + optimizer.values_per_param_of(&shape)) * F32_BYTES as f64
}
