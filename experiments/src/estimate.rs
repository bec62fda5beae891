//! The byte rules of a training step, shared by every technique's predictions.
//!
//! Question: how many bytes does an Adam training step of a model hold at its peak?
//! Method: count them from shapes and bytes per value (weights, Adam's two moments, gradients,
//! inputs, and the activations the forward pass keeps for backward, which the model's shape
//! predicts per sample), the way burn-autodiff and Flex allocate them.
//! Answer: the techniques check these rules against their measurements on every page; a rule
//! changed here changes every prediction that uses it.

use results::FloatStorage;

use crate::harness::backend::Checkpointing;
use crate::harness::models::MlpShape;

/// Bytes of one f32 value.
pub const F32_BYTES: u64 = FloatStorage::F32.bytes();

/// Values Adam keeps per parameter: its first and second moments.
pub const ADAM_MOMENTS: u64 = 2;

/// Bytes of the parameters of `shape` in f32.
pub fn param_bytes(shape: MlpShape) -> f64 {
    (shape.num_params() * F32_BYTES) as f64
}

/// Bytes of Adam's state for `shape` in f32.
pub fn adam_state_bytes(shape: MlpShape) -> f64 {
    (shape.num_params() * ADAM_MOMENTS * F32_BYTES) as f64
}

/// Bytes the forward pass keeps per sample for backward, in f32, with `checkpointing`.
pub fn activation_bytes_per_sample(shape: MlpShape, checkpointing: Checkpointing) -> f64 {
    (match checkpointing {
        Checkpointing::None => shape.predicted_activation_bytes_per_sample(F32_BYTES),
        Checkpointing::Balanced => {
            shape.predicted_checkpointed_activation_bytes_per_sample(F32_BYTES)
        }
    }) as f64
}

/// Predicted peak of one Adam step in f32: model, Adam state and inputs, plus the larger of one
/// micro-batch's activations and the parameter gradients (backward frees activations as it
/// produces gradients), plus, when accumulating over `micro_batches`, the accumulated gradients
/// held across micro-batches.
pub fn training_step_peak(
    shape: MlpShape,
    batch: f64,
    micro_batches: usize,
    checkpointing: Checkpointing,
) -> f64 {
    let fixed = param_bytes(shape) + adam_state_bytes(shape);
    let inputs = 2.0 * batch * shape.width as f64 * F32_BYTES as f64;
    let micro = batch / micro_batches.max(1) as f64;
    let activations = micro * activation_bytes_per_sample(shape, checkpointing);
    let grads = param_bytes(shape);
    let accumulated = if micro_batches > 1 { grads } else { 0.0 };
    fixed + inputs + activations.max(grads) + accumulated
}
