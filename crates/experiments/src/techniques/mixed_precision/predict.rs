//! The byte model of each precision: weights, Adam state and gradients at the bytes per stored
//! value, and the forward pass's high point from the model's shape.

use results::FloatStorage;

use super::Precision;
use crate::harness::models::MlpShape;
use estimator::estimate::F32_BYTES;

/// Predicted bytes of the weights of `params` parameters stored as `storage`.
pub fn weight_bytes(params: f64, storage: FloatStorage) -> f64 {
    params * storage.bytes() as f64
}

/// Predicted bytes of the forward pass's high point above what was live before it. Storage
/// precisions keep the f32 structure (each hidden layer's Linear and ReLU outputs, the last
/// output and the loss's difference) at `e` bytes a value. Mixed precision keeps the 16-bit
/// Linear and ReLU outputs and the 16-bit copy of the input, the f32 output and difference,
/// and the 16-bit copy of every weight whose input is tracked (all but the first layer's),
/// which Linear keeps for the input's gradient.
///
/// With `bf16_matmul_via_f32` (Flex, the CPU backend), a bf16 matmul converts both operands
/// to f32, multiplies, and converts the f32 result back: at the last Linear that is an f32
/// copy of its input, of its weight and of its output live beside the kept activations, more
/// than the pass's own end state.
pub fn forward_bytes(
    precision: Precision,
    shape: MlpShape,
    batch: usize,
    bf16_matmul_via_f32: bool,
) -> u64 {
    let (b, w, d) = (batch as u64, shape.width as u64, shape.depth as u64);
    let compute = precision.compute().unwrap_or(precision.storage());
    let e = compute.bytes();
    // Kept through the pass: the hidden layers' Linear and ReLU outputs.
    let hidden = b * w * 2 * (d - 1) * e;
    // At the end of the pass: the last output and the loss's difference (f32 in mixed
    // precision, after the cast back), plus, in mixed precision, the 16-bit input copy and
    // weight copies.
    let end = match precision.compute() {
        None => 2 * b * w * e,
        Some(_) => b * w * (e + 2 * F32_BYTES) + (d - 1) * w * w * e,
    };
    let last_matmul = if bf16_matmul_via_f32 && compute == FloatStorage::Bf16 {
        // f32 input, weight and output, and the bf16 output, during the last Linear.
        let mixed_extra = match precision.compute() {
            None => 0,
            Some(_) => b * w * e + (d - 1) * w * w * e,
        };
        (2 * b * w + w * w) * F32_BYTES + b * w * e + mixed_extra
    } else {
        0
    };
    hidden + end.max(last_matmul)
}
