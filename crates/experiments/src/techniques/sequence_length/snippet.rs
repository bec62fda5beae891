use burn::nn::attention::{generate_autoregressive_mask, MhaInput, MultiHeadAttentionConfig};
use burn::tensor::{Device, Distribution, Tensor};

/// What one attention layer keeps for backward grows with the square of the sequence: the
/// weights are [batch, heads, seq, seq]. Burn keeps three such tensors (softmax's shifted
/// scores, its exponentials and its output), 3 x heads x seq values per token. Set dropout to 0: burn-nn's default
/// of 0.1 is active under autodiff.
pub fn attention_memory(device: &Device, batch: usize, seq: usize) {
    let attention = MultiHeadAttentionConfig::new(256, 4)
        .with_dropout(0.0)
        .init(device);
    let x = Tensor::<3>::random([batch, seq, 256], Distribution::Normal(0.0, 1.0), device);
    let mask = generate_autoregressive_mask(batch, seq, device);
    let out = attention.forward(MhaInput::self_attn(x).mask_attn(mask));
    // Halving `seq` halves the per-token attention term: a quarter of the weights' bytes.
    let _grads = out.context.sum().backward();
}
