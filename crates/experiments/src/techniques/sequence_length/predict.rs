//! The byte model of a transformer block against sequence length: what burn-autodiff keeps for
//! backward per token and layer, op by op, beside Korthikanti et al.'s published formula.
//!
//! Burn 0.22's autodiff has no layer-norm or softmax op: both are the backend's default
//! decompositions into basic ops, each of which keeps what its own backward needs
//! (`burn-backend` `layer_norm` and `softmax`; `burn-autodiff` `ops/tensor.rs`). Per block, in
//! f32 values per token (`d` = d_model, `h` = heads, `s` = sequence length):
//!
//! - layer norm (twice): `mean_dim`, `sub`, `add_scalar` keep nothing; `mul(c, c)` keeps the
//!   centred input (d); `sqrt` keeps its output and `div` its two inputs (the centred input
//!   again, and the 1-wide denominator: 1); `mul(gamma)` keeps the normalised tensor (d). The
//!   layer norm's output is kept by the next matmul (d). 3d + 1 each.
//! - attention: q, k and v projections keep nothing new (their input is the layer norm's
//!   output); `q k^T` keeps q and k (2d); the scaling, the causal `mask_fill` (it keeps the
//!   mask, shared by every block) and the shift by the detached maximum keep nothing; `exp`
//!   keeps its *input*, the shifted scores (h s), and recomputes itself in backward; `sum_dim`
//!   nothing; `div` keeps the exponentials (h s) and the 1-wide sums (h); the weights (the
//!   `div`'s output, h s) are kept by `weights v`, with v (d); the context, made contiguous by
//!   the reshape after `swap_dims`, is kept by the output projection (d).
//! - MLP: the up projection's output (4d) is kept by GELU, GELU's output (4d) by the down
//!   projection. Residual additions keep nothing.
//!
//! Total: `18 d + 3 h s + h + 2` values per token and layer. Korthikanti et al. (2022) count
//! `34 d + 5 h s` bytes per token and layer for 16-bit activations with dropout: in f32 without
//! dropout (their masks and dropout outputs gone, every value 4 bytes) that is `16 d + h s`
//! values. Burn keeps two tensors per layer norm where they count one (its input), and three
//! attention-sized tensors (the shifted scores, the exponentials, the weights) where they count
//! one (the softmax output).
//!
//! The rule was first written with `2 h s` (`exp` keeping its output, as its derivative
//! suggests); the first measurement gave `3 h s`, and `burn-autodiff`'s `float_exp` keeps its
//! input (`prep.checkpoint(&tensor)`, recomputing `exp` in backward). The attention term is
//! therefore an explanation after the measurement, not a prediction, and the page says so
//! ([`FIRST_ATTENTION_VALUES_PER_HEAD`] keeps the first rule).

//! Under `BalancedCheckpointing` (written before the first checkpointed measurement, from
//! `burn-autodiff`'s `checkpoint/strategy.rs`, `builder.rs` and `ops/base.rs`): an op marked
//! memory-bound whose parents are all tracked keeps nothing and is recomputed in backward; its
//! parents are backed up, which holds a parent's tensor only where the parent is compute-bound
//! (matmul, `mean_dim`, `sum_dim`, `mask_fill`); a memory-bound op with an untracked parent
//! (softmax's shift by the detached maximum) becomes compute-bound. Per block that leaves: the
//! four matmul outputs of the projections before their bias (q, k, v and output: 4d), the up
//! and down projections' (4d + d), the context before its reshape (d), the attention scores
//! (backed up by the scaling: h s), the shifted scores (h s, the shift being compute-bound now),
//! the softmax sums (h), and each layer norm's mean and variance (4): `10 d + 2 h s + h + 4`.

use crate::harness::backend::Checkpointing;
use crate::harness::models::TransformerShape;
use estimator::estimate::{self, F32_BYTES};

/// Attention-sized tensors a block keeps per head, as first predicted (before measuring).
pub const FIRST_ATTENTION_VALUES_PER_HEAD: f64 = 2.0;

pub use estimator::estimate::ATTENTION_VALUES_PER_HEAD;

/// Values per token and layer that a block's forward pass keeps for backward, in Burn 0.22
/// (the shared rule of [`estimator::estimate`]).
pub fn burn_values_per_token_layer(shape: &TransformerShape) -> f64 {
    estimate::block_values_per_token(shape, Checkpointing::None)
}

/// Values per token and layer kept under `BalancedCheckpointing` (module docs).
pub fn balanced_values_per_token_layer(shape: &TransformerShape) -> f64 {
    estimate::block_values_per_token(shape, Checkpointing::Balanced)
}

/// Bytes per token and layer under `BalancedCheckpointing`, in f32.
pub fn balanced_bytes_per_token_layer(shape: &TransformerShape) -> f64 {
    balanced_values_per_token_layer(shape) * F32_BYTES as f64
}

/// Bytes per token and layer, Burn's rule, in f32.
pub fn burn_bytes_per_token_layer(shape: &TransformerShape) -> f64 {
    burn_values_per_token_layer(shape) * F32_BYTES as f64
}

/// Korthikanti et al.'s bytes per token and layer as published: `34 d + 5 h s` (16-bit
/// activations, dropout masks of one byte).
pub fn korthikanti_bytes_per_token_layer(shape: &TransformerShape) -> f64 {
    let (d, h, s) = (shape.d_model as f64, shape.heads as f64, shape.seq as f64);
    34.0 * d + 5.0 * h * s
}

/// The same formula adapted to this workload: f32 values, no dropout: `4 (16 d + h s)`.
pub fn korthikanti_f32_no_dropout_bytes_per_token_layer(shape: &TransformerShape) -> f64 {
    let (d, h, s) = (shape.d_model as f64, shape.heads as f64, shape.seq as f64);
    (16.0 * d + h * s) * F32_BYTES as f64
}

/// The sequence length at which Burn's attention-sized term (`3 h s`) equals the rest of the
/// block (`18 d + h + 2`: the estimator's rule at a sequence of 0).
pub fn burn_crossover_seq(shape: &TransformerShape) -> f64 {
    let rest = TransformerShape { seq: 0, ..*shape };
    let rest = estimate::block_values_per_token(&rest, Checkpointing::None);
    rest / (ATTENTION_VALUES_PER_HEAD * shape.heads as f64)
}

/// Parameters in f32.
pub fn param_bytes(shape: &TransformerShape) -> f64 {
    estimate::param_bytes(*shape)
}

/// Adam's two moments in f32.
pub fn adam_state_bytes(shape: &TransformerShape) -> f64 {
    estimate::adam_state_bytes(*shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quadratic_term_overtakes_at_the_crossover() {
        let shape = TransformerShape {
            chunked: Default::default(),
            vocab: 512,
            d_model: 256,
            layers: 4,
            heads: 4,
            seq: 64,
            tied_head: false,
        };
        let s = burn_crossover_seq(&shape);
        let at = TransformerShape {
            seq: s.round() as usize,
            ..shape
        };
        let attention = ATTENTION_VALUES_PER_HEAD * 4.0 * at.seq as f64;
        let rest = burn_values_per_token_layer(&at) - attention;
        assert!((attention - rest).abs() / rest < 0.01, "{attention} {rest}");
        // Korthikanti's 16-bit figure with dropout is larger per value, smaller per layer norm.
        assert_eq!(
            korthikanti_bytes_per_token_layer(&shape),
            34.0 * 256.0 + 5.0 * 4.0 * 64.0
        );
    }
}
