use burn::tensor::{Int, Tensor};
use burn_memory_efficient::{attention, linear_cross_entropy, AttentionOptions};

/// In a block: q `[batch, heads, seq, head_dim]`, k and v at their own key/value heads.
pub fn attend(q: Tensor<4>, k: Tensor<4>, v: Tensor<4>) -> Tensor<4> {
    attention(q, k, v, None, AttentionOptions::causal(256))
}

/// The head and the loss: hidden `[tokens, d_model]`, the head's weight `[d_model, vocab]`.
pub fn loss(hidden: Tensor<2>, head: Tensor<2>, targets: Tensor<1, Int>) -> Tensor<1> {
    linear_cross_entropy(hidden, head, None, targets, 512)
}
