#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod attention;
mod autodiff;
mod chunks;
mod cross_entropy;
pub(crate) mod mutation;
mod ops;

use burn::backend::Dispatch;
use burn::tensor::{Bool, Int, Tensor};

pub use attention::AttentionOptions;
pub use ops::{AttentionMask, MemoryEfficientOps};

/// Scaled dot-product attention, `softmax(Q Kᵀ x scale) V`, over chunks of
/// `options.chunk` query rows.
///
/// - `query`: `[batch, heads, seq_q, head_dim]`.
/// - `key`, `value`: `[batch, kv_heads, seq_k, head_dim]` (and `value_dim`); `heads` a
///   multiple of `kv_heads` (grouped-query attention, no repetition needed).
/// - `mask`: `true` where a score is masked out, broadcastable to
///   `[batch, heads, seq_q, seq_k]` (`[batch, 1, 1, seq_k]` for padding); with
///   `options.causal`, both apply.
///
/// Returns `[batch, heads, seq_q, value_dim]`, as Burn's `attention` with the same mask,
/// causal flag and scale. Under autodiff the graph keeps the inputs and a `[batch, heads,
/// seq_q, 1]` logsumexp; backward holds at most a few `[batch, heads, chunk, seq_k]` tensors.
pub fn attention(
    query: Tensor<4>,
    key: Tensor<4>,
    value: Tensor<4>,
    mask: Option<Tensor<4, Bool>>,
    options: AttentionOptions,
) -> Tensor<4> {
    let output = <Dispatch as MemoryEfficientOps>::chunked_attention(
        query.into_dispatch(),
        key.into_dispatch(),
        value.into_dispatch(),
        mask.map(Tensor::into_dispatch).into(),
        options,
    );
    Tensor::from_dispatch(output)
}

/// The mean cross-entropy of the logits `hidden @ weight (+ bias)` against `targets`, over
/// chunks of `chunk` tokens: the `[tokens, vocab]` logits never exist whole.
///
/// - `hidden`: `[tokens, d_model]` (a decoder's last hidden states, flattened).
/// - `weight`: `[d_model, vocab]`, Burn's `Linear` layout (`head.weight.val()`; for a head
///   tied to the embedding, `embedding.weight.val().transpose()`); `bias`: `[vocab]`, if the
///   head has one (`head.bias.as_ref().map(|b| b.val())`).
/// - `targets`: `[tokens]`, each in `0..vocab`.
///
/// Returns a `[1]` tensor, in f32 at least (the statistics of a bf16 or f16 step are computed
/// in f32). Backward gives `hidden`, `weight` and `bias` their gradients; a frozen head gets
/// none and costs none.
pub fn linear_cross_entropy(
    hidden: Tensor<2>,
    weight: Tensor<2>,
    bias: Option<Tensor<1>>,
    targets: Tensor<1, Int>,
    chunk: usize,
) -> Tensor<1> {
    let (hidden, weight) = (hidden.into_dispatch(), weight.into_dispatch());
    let targets = targets.into_dispatch();
    let loss = match bias {
        None => {
            <Dispatch as MemoryEfficientOps>::linear_cross_entropy(hidden, weight, targets, chunk)
        }
        Some(bias) => <Dispatch as MemoryEfficientOps>::linear_cross_entropy_with_bias(
            hidden,
            weight,
            bias.into_dispatch(),
            targets,
            chunk,
        ),
    };
    Tensor::from_dispatch(loss)
}

#[cfg(test)]
mod tests;
