//! The byte model of offload, from the tensors a step keeps (Adam's two moments per parameter,
//! read in `burn-optim` 0.22's source, [`Optimizer::state_values`]) and what crosses
//! between the backends (every gradient down, every weight up, in f32).

use crate::harness::models::ModelShape;
use crate::harness::optim::Optimizer;
use estimator::estimate::F32_BYTES;

/// Device bytes the offloaded step no longer keeps between steps: the optimizer's state. (The
/// device keeps the weights it computes with; the host keeps the master copy.)
pub fn device_saved_between_steps(shape: ModelShape, optimizer: Optimizer) -> f64 {
    let values = optimizer.state_values(&shape.trainable_shapes(), shape.trainable_params());
    (values * F32_BYTES) as f64
}

/// Host bytes the offloaded optimizer keeps between steps: its copy of the weights and its
/// state.
pub fn host_state(shape: ModelShape, optimizer: Optimizer) -> f64 {
    (shape.num_params() * F32_BYTES) as f64 + device_saved_between_steps(shape, optimizer)
}

/// Bytes one offloaded step moves: every gradient to the host and every weight back.
pub fn transfer_per_step(shape: ModelShape) -> f64 {
    (2 * shape.num_params() * F32_BYTES) as f64
}

/// On a backend whose device is the host (the CPU), what the offloaded step keeps between
/// steps beyond the usual one: the second copy of the weights.
pub fn same_memory_extra(shape: ModelShape) -> f64 {
    (shape.num_params() * F32_BYTES) as f64
}
