//! The byte model of quantized and cast weights, and of an inference pass through them, per
//! backend. Read in the sources before anything was measured: `burn-flex`'s `ops/qtensor.rs`
//! (every scheme unpacked to one `i8` per value, scales a `Vec<f32>`), `burn-cubecl`'s
//! `ops/qtensor.rs` (values packed into u32 words, scales a tensor of their own), `burn-nn`'s
//! `Linear::forward` and `burn-tensor`'s `linear`, which takes the weight's float primitive and
//! so dequantizes the whole weight on every call, and `burn-flex`'s `matmul_bf16`, which
//! multiplies through f32 copies of both operands.

use results::FloatStorage;

use super::WeightFormat;
use crate::harness::models::MlpShape;
use estimator::capacity;
use estimator::estimate::{Allocator, F32_BYTES};

/// Bytes of one scale (the schemes here use f32 scales, `QuantParam::F32`).
const SCALE_BYTES: f64 = F32_BYTES as f64;

/// The tensors of `shape`'s parameters, as value counts: each layer's weight and bias.
fn tensors(shape: MlpShape) -> impl Iterator<Item = u64> {
    let w = shape.width as u64;
    (0..shape.depth).flat_map(move |_| [w * w, w])
}

/// Bytes of `shape`'s weights stored in `format` on `allocator`'s backend: floats at their
/// type's bytes; quantized values at one byte each on Flex and packed into u32 words on CubeCL
/// ([`capacity::weight_bytes`]), plus one f32 scale per tensor or per block.
pub fn weight_bytes(shape: MlpShape, format: WeightFormat, allocator: Allocator) -> f64 {
    match format {
        WeightFormat::Float { float } => (shape.num_params() * float.bytes()) as f64,
        WeightFormat::Quantized { bits, block } => tensors(shape)
            .map(|n| {
                let scales = block.map_or(1, |b| n.div_ceil(b as u64));
                capacity::weight_bytes(n, bits.bits() as u32, allocator == Allocator::CubeCl)
                    + scales as f64 * SCALE_BYTES
            })
            .sum(),
    }
}

/// Bytes an inference pass adds at its peak above what was live before it, on `batch` samples
/// (b) of width w, in the layer where it peaks:
/// - f32 and f16: the layer's input and its output, 2 b w values (the bias add and ReLU run in
///   place);
/// - bf16 on Flex: the input (2 bytes), its f32 copy, the f32 copy of the weight and the f32
///   product (`matmul_bf16`): 10 b w + 4 w^2 bytes; on CubeCL 2 b w values of 2 bytes;
/// - quantized: the weight and the bias dequantized to f32 (4 w^2 + 4 w), the input and the
///   output in f32 (8 b w): `linear` dequantizes the whole weight before it multiplies.
pub fn eval_bytes(
    shape: MlpShape,
    format: WeightFormat,
    batch: usize,
    allocator: Allocator,
) -> f64 {
    let (b, w) = (batch as f64, shape.width as f64);
    let f32 = F32_BYTES as f64;
    match format {
        WeightFormat::Float {
            float: FloatStorage::Bf16,
        } if allocator.bf16_matmul_via_f32() => 10.0 * b * w + f32 * w * w,
        WeightFormat::Float { float } => 2.0 * b * w * float.bytes() as f64,
        WeightFormat::Quantized { .. } => f32 * (w * w + w) + 2.0 * b * w * f32,
    }
}

/// The part of [`eval_bytes`] that is a dequantized or widened copy of one layer's weight (and
/// bias): what the pass holds because the weights are not f32.
pub fn weight_copy_bytes(shape: MlpShape, format: WeightFormat, allocator: Allocator) -> f64 {
    let w = shape.width as f64;
    let f32 = F32_BYTES as f64;
    match format {
        WeightFormat::Float {
            float: FloatStorage::Bf16,
        } if allocator.bf16_matmul_via_f32() => f32 * w * w,
        WeightFormat::Float { .. } => 0.0,
        WeightFormat::Quantized { .. } => f32 * (w * w + w),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Bits, BLOCK};
    use super::*;

    const SHAPE: MlpShape = MlpShape {
        width: 1024,
        depth: 8,
    };

    #[test]
    fn four_bits_save_over_eight_only_where_values_are_packed() {
        let q = |bits| WeightFormat::Quantized {
            bits,
            block: Some(BLOCK),
        };
        let flex = |f| weight_bytes(SHAPE, f, Allocator::Flex);
        let cube = |f| weight_bytes(SHAPE, f, Allocator::CubeCl);
        assert_eq!(flex(q(Bits::Q4)), flex(q(Bits::Q8)));
        let params = SHAPE.num_params() as f64;
        // Values plus one f32 scale per 32 values: 1/8 of a byte per value.
        assert_eq!(cube(q(Bits::Q8)), params * (1.0 + 4.0 / 32.0));
        assert_eq!(cube(q(Bits::Q4)), params * (0.5 + 4.0 / 32.0));
        assert_eq!(
            flex(WeightFormat::F32),
            params * 4.0,
            "f32 weights are 4 bytes each"
        );
    }
}
