//! The byte rules of a training step, shared by every technique's predictions.
//!
//! Question: how many bytes does an Adam training step of a model hold at its peak?
//! Method: count them from shapes and bytes per value (weights, Adam's two moments, gradients,
//! inputs, and the activations the forward pass keeps for backward, which the model's shape
//! predicts per sample), the way burn-autodiff and Flex allocate them; for the transformer, the
//! rule of what a block keeps per token (op by op, see the sequence-length technique's
//! `predict` module for the derivation).
//! Answer: the techniques check these rules against their measurements on every page; a rule
//! changed here changes every prediction that uses it.

use results::{DeviceKind, FloatStorage};
use serde::{Deserialize, Serialize};

use crate::harness::backend::Checkpointing;
use crate::harness::models::{LlamaShape, LoraForm, ModelShape, TransformerShape};
use crate::harness::train::TrainConfig;

/// Whose rules decide which buffers a computation makes: the backend's operations and its
/// memory manager. The byte rules below are Flex's unless they take an `Allocator`; a rule that
/// does states where burn-cubecl keeps something else, read in its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Allocator {
    /// Burn's Flex on the CPU, counted by the process's counting allocator: every heap buffer,
    /// host copies included. An op writes in place into a uniquely owned, contiguous buffer.
    Flex,
    /// burn-cubecl (wgpu, CUDA) over CubeCL's memory manager, counted by the manager: device
    /// buffers only (a tensor's bytes read back to the host are not device memory). An op
    /// writes in place into a uniquely owned buffer whose elements do not overlap
    /// (`can_mut() && is_nonoverlapping()` in `kernel/unary_float.rs`): a transposed view
    /// qualifies, where Flex needs it contiguous. Fusion (burn-cubecl-fusion) writes a chain of
    /// element-wise ops in one kernel: intermediates read only inside the chain never exist.
    CubeCl,
}

impl Allocator {
    /// The rules `device`'s backend follows.
    pub fn of(device: DeviceKind) -> Self {
        match device {
            DeviceKind::Cpu => Self::Flex,
            DeviceKind::Wgpu | DeviceKind::Cuda => Self::CubeCl,
        }
    }

    /// Whether the probe sees the host's copies of a tensor's bytes (`to_data`, `from_data`'s
    /// staging): on the CPU they are heap buffers like any other; on a device they are not
    /// device memory.
    pub fn counts_host_copies(self) -> bool {
        self == Self::Flex
    }

    /// Whether a bf16 matmul runs through f32 copies of its operands and result (Flex's
    /// `matmul_bf16`); burn-cubecl multiplies bf16 in its kernel.
    pub fn bf16_matmul_via_f32(self) -> bool {
        self == Self::Flex
    }

    /// Bytes a quantized weight's value takes at `bits`: Flex unpacks every quantized tensor
    /// to one `i8` a value (burn-flex 0.22.1 `q_from_data`, `QuantStore::Native`), whatever
    /// the bits; CubeCL's default scheme packs the values into `u32` words
    /// (`QuantStore::PackedU32`), `bits / 8` bytes a value. Scales are apart: one f32 per
    /// tensor or per block.
    pub fn quantized_value_bytes(self, bits: u8) -> f64 {
        match self {
            Self::Flex => 1.0,
            Self::CubeCl => f64::from(bits) / 8.0,
        }
    }
}

/// Bytes of one f32 value.
pub const F32_BYTES: u64 = FloatStorage::F32.bytes();

/// Bytes of one token id (Flex and CubeCL store Burn's `Int` tensors as i32).
pub const TOKEN_BYTES: u64 = 4;

/// Values Adam keeps per parameter: its first and second moments.
pub const ADAM_MOMENTS: u64 = 2;

/// Attention-sized tensors a block keeps per head, as read in burn-autodiff after the first
/// measurement: the shifted scores (`exp`'s input), the exponentials and the weights.
pub const ATTENTION_VALUES_PER_HEAD: f64 = 3.0;

/// Bytes of the parameters of `shape` in f32.
pub fn param_bytes(shape: impl Into<ModelShape>) -> f64 {
    (shape.into().num_params() * F32_BYTES) as f64
}

/// Bytes of Adam's state for `shape` in f32.
pub fn adam_state_bytes(shape: impl Into<ModelShape>) -> f64 {
    (shape.into().num_params() * ADAM_MOMENTS * F32_BYTES) as f64
}

/// Values per token and block that a transformer block's forward pass keeps for backward in
/// Burn 0.22 (`d` = d_model, `h` = heads, `s` = sequence): `18 d + 3 h s + h + 2` without
/// checkpointing, `10 d + 2 h s + h + 4` under `BalancedCheckpointing`.
pub fn block_values_per_token(shape: &TransformerShape, checkpointing: Checkpointing) -> f64 {
    let (d, h, s) = (shape.d_model as f64, shape.heads as f64, shape.seq as f64);
    match checkpointing {
        Checkpointing::None => 18.0 * d + ATTENTION_VALUES_PER_HEAD * h * s + h + 2.0,
        Checkpointing::Balanced => 10.0 * d + 2.0 * h * s + h + 4.0,
    }
}

/// Values per token that the transformer's forward pass keeps outside its blocks: the final
/// layer norm (`3 d + 1`, as in a block), log-softmax's `exp` input over the vocabulary (`v`)
/// and its `log` input (1), and the token ids kept by the two embeddings' and the loss's
/// gathers (3, 4-byte ids counted as one value each): `v + 3 d + 5`. Written after the
/// sequence-length sweep had measured about 1,286 values per token outside the blocks at
/// d_model 256 and vocabulary 512 (`v + 3 d + 5` = 1,285): an explanation read in
/// burn-nn's cross-entropy and burn-tensor's `log_softmax` after the measurement, not a
/// prediction.
pub fn outside_values_per_token(shape: &TransformerShape) -> f64 {
    (shape.vocab + 3 * shape.d_model + 5) as f64
}

/// Values per token kept outside the blocks beyond [`outside_values_per_token`] (or the Llama
/// model's) under `checkpointing`: under `BalancedCheckpointing` one more over the vocabulary,
/// held from the forward pass's end to backward's start. Measured on GPT-2 small (vocabulary
/// 50,257): 98 MiB more kept at 2 x 256 tokens and 206 MiB at 1 x 1,024, `v` a token to 3%;
/// the step's first backward moment frees it ([`transformer_backward_bytes`]). The Llama
/// model's loss is the same code (burn-nn's cross-entropy over log-softmax): counted there
/// too, not measured there at a real vocabulary.
pub fn checkpointed_loss_values_per_token(vocab: usize, checkpointing: Checkpointing) -> f64 {
    match checkpointing {
        Checkpointing::None => 0.0,
        Checkpointing::Balanced => vocab as f64,
    }
}

/// Bytes the forward pass keeps per sample for backward, in f32, with `checkpointing`: the
/// MLP's rule per layer; for the transformer the blocks' rule over a sequence plus what it keeps
/// outside the blocks ([`outside_values_per_token`]).
pub fn activation_bytes_per_sample(
    shape: impl Into<ModelShape>,
    checkpointing: Checkpointing,
) -> f64 {
    match shape.into() {
        ModelShape::Mlp(shape) => {
            (match checkpointing {
                Checkpointing::None => shape.predicted_activation_bytes_per_sample(F32_BYTES),
                Checkpointing::Balanced => {
                    shape.predicted_checkpointed_activation_bytes_per_sample(F32_BYTES)
                }
            }) as f64
        }
        ModelShape::Transformer(s) => {
            s.seq as f64
                * (s.layers as f64 * block_values_per_token(&s, checkpointing)
                    + outside_values_per_token(&s)
                    + checkpointed_loss_values_per_token(s.vocab, checkpointing))
                * F32_BYTES as f64
        }
        ModelShape::Llama(s) => {
            s.seq as f64
                * (s.layers as f64 * llama_block_values_per_token(&s, checkpointing)
                    + llama_outside_values_per_token(&s)
                    + checkpointed_loss_values_per_token(s.vocab, checkpointing))
                * F32_BYTES as f64
        }
    }
}

/// Values per token and block that a Llama-family block's forward pass keeps for backward in
/// Burn 0.22 (`d` = d_model, `m` = the SwiGLU width, `h` = heads, `s` = sequence, `r` = the
/// LoRA rank), read op by op in burn-autodiff as [`block_values_per_token`] was: each RMSNorm
/// keeps its input, its normalised input and its output (`3 d + 2`); attention keeps the
/// rotated queries, the keys and values repeated to every head and the context (`4 d`; the
/// rotations' `[.., d/2, 4]` products are transients), and the scores as the GPT block does
/// (`3 h s + h`); SwiGLU keeps its two projections, the sigmoid, the SiLU and their product
/// (`5 m`): `10 d + 5 m + 3 h s + h + 4`, which the TinyLlama-width block measured within
/// 0.1%. Under LoRA the frozen projections keep no input for a weight gradient: `4 d + 4 m +
/// 3 h s + h + 4 + 2 r` (the `4 d` fitted to that block's measurement, 2 d under the count
/// read in the source). Under `BalancedCheckpointing`, `4 d + 3 m + h s` fewer (fitted to the
/// same block's measurement: written after measuring, an explanation and not a prediction).
pub fn llama_block_values_per_token(shape: &LlamaShape, checkpointing: Checkpointing) -> f64 {
    let (d, m, h, s) = (
        shape.d_model as f64,
        shape.mlp as f64,
        shape.heads as f64,
        shape.seq as f64,
    );
    let scores = ATTENTION_VALUES_PER_HEAD * h * s + h;
    let full = match (shape.lora_rank, shape.lora_form) {
        (None, _) => 10.0 * d + 5.0 * m + scores + 4.0,
        // Burn's form keeps no `x @ a`: it composes the weight ([`llama_frozen_kept_bytes`]).
        (Some(_), LoraForm::Composed) => 4.0 * d + 4.0 * m + scores + 4.0,
        (Some(r), LoraForm::ActivationPath) => 4.0 * d + 4.0 * m + scores + 4.0 + 2.0 * r as f64,
    };
    match checkpointing {
        Checkpointing::None => full,
        Checkpointing::Balanced => full - (4.0 * d + 3.0 * m + h * s),
    }
}

/// Bytes backward holds at its peak above what the forward pass kept, for `micro` sequences of
/// a Llama-family model, activations at `act_bytes` and gradients at `param_bytes` a value
/// (`d` = d_model, `m` = the SwiGLU width, `h` = heads, `s` = sequence, `T` = `micro x s`).
/// The larger of three moments, read with the recorder on the TinyLlama-width block (batch x
/// sequence 1 x 256 to 1 x 1024 and 4 x 128 to 8 x 128, the peak's blocks named):
/// - the MLP's first weight gradient, every activation still kept: burn-backend's
///   `linear_weight_backward` computes a 3-D input's weight gradient per sequence as a
///   batched matmul `[micro, d, m]`, then sums it over the batch; two copies of that product are
///   live (`2 micro d m`, as the GPT block's [`BACKWARD_WEIGHT_GRADIENT_COPIES`]);
/// - the MLP's last weight gradient: two of its three `d x m` gradients made, the same two
///   copies (three `d x m` blocks at batch 1, where the batch's sum is one more), and four of
///   SwiGLU's five kept `m`-wide values a token already freed;
/// - attention's backward: the MLP's three gradients and the output projection's (`d x d`),
///   the gradient of the scores and of their softmax (`2 micro h s^2`), SwiGLU's kept values
///   freed;
/// - the head's weight gradient, the same two copies of `[micro, d, v]`: at the 512-token
///   vocabulary of the block's cells it is small, at 32,000 the largest (recorded on two
///   TinyLlama-width blocks, batch 2 x 256: three backward matmul blocks of 1,052.77 MB at the
///   peak, against `2 x 2 x 2048 x 32000 x 4` = 1,048.58 MB; the step's peak within 0.3%).
///
/// Under LoRA the frozen projections make no weight gradient: [`lora_backward_bytes`] and the
/// block's adapter gradients.
///
/// `via_f32`: the matmul runs on f32 copies (Flex's `matmul_bf16`, for 16-bit storage): the
/// two copies of the product are f32, and so are the operands, the input and the output's
/// gradient (`T (d + m)` values); read with the recorder on the same block in bf16 storage.
pub fn llama_backward_bytes(
    s: &LlamaShape,
    micro: f64,
    act_bytes: f64,
    param_bytes: f64,
    via_f32: bool,
) -> f64 {
    let (d, m, h, seq) = (s.d_model as f64, s.mlp as f64, s.heads as f64, s.seq as f64);
    let tokens = micro * seq;
    let block_grads = llama_block_trainable_params(s) * param_bytes;
    if s.lora_rank.is_some() {
        return lora_backward_bytes(s, tokens, act_bytes) + block_grads;
    }
    let dm = d * m;
    let f32_bytes = F32_BYTES as f64;
    // The per-sequence weight gradient of a `d x out` Linear on a 3-D input.
    let copies_of = |out: f64| {
        if via_f32 {
            BACKWARD_WEIGHT_GRADIENT_COPIES * micro * d * out * f32_bytes
                + tokens * (d + out) * f32_bytes
        } else {
            BACKWARD_WEIGHT_GRADIENT_COPIES * micro * d * out * act_bytes
        }
    };
    let copies = copies_of(m);
    // The head's weight gradient, backward's first, every activation still kept: at a real
    // vocabulary the largest of these moments.
    let head = copies_of(s.vocab as f64);
    let first = copies.max(head);
    let last =
        2.0 * dm * param_bytes + copies.max(3.0 * dm * act_bytes) - 4.0 * m * tokens * act_bytes;
    let attention = (3.0 * dm + d * d) * param_bytes + 2.0 * micro * h * seq * seq * act_bytes
        - 5.0 * m * tokens * act_bytes;
    first.max(last).max(attention)
}

/// Bytes backward holds at its peak above what the forward pass kept under LoRA, whose base
/// is frozen (no weight gradient but the adapters'), for `tokens` tokens of `s`: the larger of
/// - the loss's backward over the vocabulary: the cross-entropy's gradient (its gather
///   scattered into a zeroed `[tokens, v]` tensor) and log-softmax's gradient beside it
///   (`2 v` values a token; burn-nn's `CrossEntropyLoss`, burn-autodiff's `log_softmax`);
/// - attention's backward: the gradient of the scores and a quarter of them again
///   ([`LORA_ATTENTION_BACKWARD`] `h s` values a token).
///
/// Measured on Flex, backward's peak above what was kept: two blocks of TinyLlama's width at
/// a 32,000-token vocabulary, 65.5 MB at 256 tokens and 262.3 MB at 1,024 (`2 v` a token
/// to 0.1%); one such block at a 512-token vocabulary, 22.0 MB at 2 x 256 tokens and 165.7 MB
/// at 1 x 1,024 (`1.25 h s` to 5%, with one or two blocks, adapters on an f32 or quantized
/// base). Written after measuring: the `2 v` read in the source, the quarter fitted. On a
/// quantized base at 1 x 1,024 tokens (one block, vocabulary 512) the moment measured 44 MB,
/// a quarter of this rule's: the estimate is high there, the safe way.
pub fn lora_backward_bytes(s: &LlamaShape, tokens: f64, act_bytes: f64) -> f64 {
    let (h, seq, v) = (s.heads as f64, s.seq as f64, s.vocab as f64);
    let loss = 2.0 * v;
    let attention = LORA_ATTENTION_BACKWARD * h * seq;
    tokens * loss.max(attention) * act_bytes
}

/// Score-sized values a token that attention's backward holds under LoRA, per head and key
/// (fitted: see [`lora_backward_bytes`]).
pub const LORA_ATTENTION_BACKWARD: f64 = 1.25;

/// Values of one block's projection weights: the query, key, value and output projections and
/// the SwiGLU's three (QLoRA's quantized base).
pub fn llama_block_projection_values(s: &LlamaShape) -> f64 {
    let (d, m, k) = (s.d_model as f64, s.mlp as f64, s.kv_width() as f64);
    2.0 * d * d + 2.0 * d * k + 3.0 * d * m
}

/// Bytes of a Llama-family model's weights at `param_bytes` a value; under QLoRA
/// (`base_bits`) the blocks' projections at their quantized bytes on `allocator`'s backend
/// ([`Allocator::quantized_value_bytes`]; per-tensor scales, a few bytes, not counted).
pub fn llama_weight_bytes(s: &LlamaShape, param_bytes: f64, allocator: Allocator) -> f64 {
    let all = s.num_params() as f64 * param_bytes;
    match s.base_bits {
        Some(bits) => {
            let base = s.layers as f64 * llama_block_projection_values(s);
            all - base * (param_bytes - allocator.quantized_value_bytes(bits))
        }
        None => all,
    }
}

/// Weight-sized bytes a LoRA step's forward pass keeps, beyond its per-token rule. Burn's
/// autodiff matmul keeps its right operand for its left one's gradient, so a weight made for
/// the step (not the parameter itself) is kept where the layer's input needs a gradient:
/// - in Burn's form (`apply_lora`), each adapted weight composed dense, the query's `d x d`
///   and the value's `d x kv_width`, in every block but the first (whose query and value read
///   the frozen embedding's output);
/// - on a quantized base (QLoRA), the copy of each frozen projection dequantized for its
///   matmul: in the first block the output projection and the SwiGLU's three (the adapters'
///   output makes the residual stream tracked), in every later block all seven, less the
///   composed query and value.
///
/// Read in burn-autodiff's `float_matmul` and burn-nn's LoRA; measured on Flex with two
/// blocks of TinyLlama's width: Burn's form kept 18.9 MB more than the workbench's (the
/// second block's two composed weights), and Burn's QLoRA at 4 bits held the dequantized
/// copies as counted here (the step's peak within 0.1%).
pub fn llama_frozen_kept_bytes(s: &LlamaShape, value_bytes: f64) -> f64 {
    if s.lora_rank.is_none() {
        return 0.0;
    }
    let (d, m, k) = (s.d_model as f64, s.mlp as f64, s.kv_width() as f64);
    let later = s.layers.saturating_sub(1) as f64;
    let composed = match s.lora_form {
        LoraForm::Composed => later * (d * d + d * k),
        LoraForm::ActivationPath => 0.0,
    };
    let dequantized = match s.base_bits {
        Some(_) => {
            let first = d * d + 3.0 * d * m;
            first + later * llama_block_projection_values(s) - composed
        }
        None => 0.0,
    };
    (composed + dequantized) * value_bytes
}

/// The trainable parameters of one Llama-family block (its adapters under LoRA).
pub fn llama_block_trainable_params(shape: &LlamaShape) -> f64 {
    let (d, m, k) = (
        shape.d_model as f64,
        shape.mlp as f64,
        shape.kv_width() as f64,
    );
    match shape.lora_rank {
        Some(r) => r as f64 * (3.0 * d + k),
        None => 2.0 * d + 2.0 * d * d + 2.0 * d * k + 3.0 * d * m,
    }
}

/// Values per token a Llama-family decoder keeps outside its blocks: the final RMSNorm
/// (`3 d + 2`; `d + 2` under LoRA, whose frozen head keeps no input), log-softmax over the
/// vocabulary and its `log` input (`v + 1`), and the token ids kept by the embedding's and the
/// loss's gathers (2).
pub fn llama_outside_values_per_token(shape: &LlamaShape) -> f64 {
    let (d, v) = (shape.d_model as f64, shape.vocab as f64);
    let norm = if shape.lora_rank.is_some() {
        d + 2.0
    } else {
        3.0 * d + 2.0
    };
    norm + v + 3.0
}

/// Bytes of the key/value cache per generated token: for each block, the keys and the values
/// of every key/value head (`2 x kv_heads x head_dim` values), at `value_bytes` each. What
/// grouped-query attention divides: its key/value heads are fewer than the query heads.
pub fn kv_cache_bytes_per_token(shape: &LlamaShape, value_bytes: f64) -> f64 {
    (shape.layers * 2 * shape.kv_width()) as f64 * value_bytes
}

/// Values per prompt token that a Llama-family block holds at once in a forward pass without a
/// graph (the prompt's pass, prefill): the larger of attention's moment (the scores and their
/// softmax over `ctx` keys for every head; the residual and the queries; the keys and values
/// repeated to every head, where grouped-query attention shares them) and the SwiGLU MLP's (the
/// gate, the up projection and their product; the residual and the normed input). Read op by
/// op and measured on the Llama-family page (CPU, f32, prompts of 64 and 256 tokens, with
/// and without grouped-query attention).
pub fn llama_prefill_values_per_token(shape: &LlamaShape, ctx: usize) -> f64 {
    let (d, h, m) = (shape.d_model, shape.heads, shape.mlp);
    let repeated = if shape.kv_heads < shape.heads {
        2 * d
    } else {
        0
    };
    let attention = 2 * h * ctx + 2 * d + repeated;
    let mlp = 3 * m + 2 * d;
    attention.max(mlp) as f64
}

/// Bytes the prompt's pass holds above the weights and the cache, for `batch` prompts of `ctx`
/// tokens: one block's moment at `value_bytes` per value, or the f32 logits over the
/// vocabulary at the end of the pass, whichever is larger.
pub fn llama_prefill_bytes(shape: &LlamaShape, batch: usize, ctx: usize, value_bytes: f64) -> f64 {
    let tokens = (batch * ctx) as f64;
    let block = tokens * llama_prefill_values_per_token(shape, ctx) * value_bytes;
    block.max(tokens * shape.vocab as f64 * F32_BYTES as f64)
}

/// Bytes the loss holds for a moment at the forward pass's peak per sample, beyond what is
/// kept: for the transformer, log-softmax's output over the vocabulary (`v` values per token),
/// alive while the cross-entropy's gather reads the targets' entries from it (burn-backend's
/// `log_softmax`, burn-nn's `CrossEntropyLoss::forward_default`). Written after the
/// measurements (the forward pass's peak sat about `v` values per token above what it keeps):
/// an explanation, not a prediction. The MLP's rule already counts its loss.
pub fn loss_transient_bytes_per_sample(shape: impl Into<ModelShape>) -> f64 {
    match shape.into() {
        ModelShape::Mlp(_) => 0.0,
        ModelShape::Transformer(s) => (s.vocab * s.seq) as f64 * F32_BYTES as f64,
        ModelShape::Llama(s) => (s.vocab * s.seq) as f64 * F32_BYTES as f64,
    }
}

/// Bytes backward holds for a moment per sample beyond what the forward pass kept, at its peak:
/// for the transformer, the weight gradient of its largest Linear computed per sequence. For a
/// 3-D input, burn-backend's `linear_weight_backward` multiplies the swapped input by the output
/// gradient as a batched matmul, `[batch, d_in, d_out]`, and only then sums over the batch: a
/// transient of `max(4 d^2, d v)` values per sequence (the MLP block's projections, or the
/// head). The peak measured about twice that (2.0 to 2.1 times at d_model 128 to 512 and
/// vocabularies 512 to 4096, for every batch), the second copy not traced in the source: the
/// factor is fitted, written after measuring, an explanation and not a prediction. The MLP's
/// Linear layers take 2-D inputs, whose weight gradient is one matmul: nothing of the kind.
pub fn backward_transient_bytes_per_sample(shape: impl Into<ModelShape>) -> f64 {
    match shape.into() {
        ModelShape::Mlp(_) => 0.0,
        ModelShape::Transformer(s) => {
            let (d, v) = (s.d_model as f64, s.vocab as f64);
            BACKWARD_WEIGHT_GRADIENT_COPIES * (4.0 * d * d).max(d * v) * F32_BYTES as f64
        }
        // One sequence, every value in f32 ([`llama_backward_bytes`]).
        ModelShape::Llama(s) => {
            llama_backward_bytes(&s, 1.0, F32_BYTES as f64, F32_BYTES as f64, false)
        }
    }
}

/// Copies of the per-sequence weight gradient alive at backward's peak (fitted: see
/// [`backward_transient_bytes_per_sample`]).
pub const BACKWARD_WEIGHT_GRADIENT_COPIES: f64 = 2.0;

/// Values a token the last block's MLP backward has freed when attention's backward runs, in
/// units of `d_model` (fitted: see [`transformer_backward_bytes`]).
pub const FREED_BEFORE_ATTENTION_D: f64 = 15.0;

/// Score-sized values per head a token that the first block's backward holds under
/// `BalancedCheckpointing` (fitted: see [`transformer_backward_bytes`]).
pub const BALANCED_FIRST_BLOCK_SCORES: f64 = 2.5;

/// Bytes backward holds at its peak above what the forward pass kept, for `micro` sequences of
/// a GPT-style transformer (`d` = d_model, `h` = heads, `s` = sequence, `T` = `micro s`
/// tokens, `L` = blocks), activations at `act_bytes` and gradients at `param_bytes` a value:
/// the largest of three moments.
/// - The largest weight gradient computed per sequence
///   ([`backward_transient_bytes_per_sample`]): short sequences. In 16-bit storage on Flex
///   (`matmul_bf16` through f32) its two copies are f32 and so are the operands (`T (d +
///   out)`), as [`llama_backward_bytes`] reads, under mixed bf16 too. Measured on GPT-2 small
///   at 2 x 256 tokens: 690.4 MiB in bf16 storage against 688.6 by this rule, 567.6 under
///   mixed bf16 against 688.6 (high by 4% of the step's peak; on the mixed-precision page's
///   transformer of d_model 64 the operand copies are needed). Flex multiplies f16 natively:
///   f16 storage, estimated as bf16, is estimated high. Under `BalancedCheckpointing`, less
///   the value over the vocabulary a token kept till then
///   ([`checkpointed_loss_values_per_token`]): on GPT-2 small at 1 x 1,024 backward's peak was
///   its start.
/// - Attention's backward in the last block, as in [`llama_backward_bytes`]: the block's
///   gradients made (`12 d^2`), the gradient of the scores and of their softmax
///   (`2 micro h s^2`), less what the MLP's backward has freed by then
///   ([`FREED_BEFORE_ATTENTION_D`] `d` a token: the MLP's 4 d-wide values and its norm's, of the
///   `18 d` a block keeps). Fitted on Flex at sequence 1,024: one block of d_model 256 (15.1)
///   and two of GPT-2 small's width (14.5). Where Flex multiplies bf16 through f32 the two
///   score gradients are f32 (two GPT-2-small blocks at 2 x 1,024 tokens: the step's peak to
///   3% in bf16 storage and under mixed bf16).
/// - Under `BalancedCheckpointing`, the first block's backward, every later block's kept
///   values freed: it recomputes what the strategy dropped and holds
///   [`BALANCED_FIRST_BLOCK_SCORES`] score-sized values per head a token above its kept ones
///   (fitted on one block of d_model 256 at sequences 256 to 1,024; a later block's recompute
///   measured no rise above the forward pass's end, which this rule does not explain).
///
/// Written after measuring: an explanation of the sequence-length sweep and the regime's
/// cells, not a prediction.
pub fn transformer_backward_bytes(
    s: &TransformerShape,
    micro: f64,
    precision: Precision,
    allocator: Allocator,
    checkpointing: Checkpointing,
) -> f64 {
    let (d, h, seq) = (s.d_model as f64, s.heads as f64, s.seq as f64);
    let (act, param) = (
        precision.activation_bytes() as f64,
        precision.param_bytes() as f64,
    );
    let f32_bytes = F32_BYTES as f64;
    let tokens = micro * seq;
    let via_f32 = precision != Precision::F32 && allocator.bf16_matmul_via_f32();
    let out = (4.0 * d).max(s.vocab as f64);
    // The weight gradient is made at the parameters' bytes, and through f32 copies of the
    // product and its operands where Flex multiplies bf16.
    let per_sequence =
        if via_f32 {
            BACKWARD_WEIGHT_GRADIENT_COPIES * micro * d * out * f32_bytes
                + tokens * (d + out) * f32_bytes
        } else {
            BACKWARD_WEIGHT_GRADIENT_COPIES * micro * d * out * param
        } - tokens * checkpointed_loss_values_per_token(s.vocab, checkpointing) * act;
    // The gradients of the scores and of their softmax: two at the activations' bytes, in f32
    // where Flex multiplies bf16.
    let score_bytes = 2.0 * if via_f32 { f32_bytes } else { act };
    let attention = 12.0 * d * d * param + micro * h * seq * seq * score_bytes
        - FREED_BEFORE_ATTENTION_D * d * tokens * act;
    let first_block = match checkpointing {
        Checkpointing::None => 0.0,
        Checkpointing::Balanced => {
            let later =
                s.layers.saturating_sub(1) as f64 * block_values_per_token(s, checkpointing);
            (BALANCED_FIRST_BLOCK_SCORES * h * seq - later) * tokens * act
        }
    };
    per_sequence.max(attention).max(first_block)
}

/// Bytes of one sample's inputs and targets: two f32 rows of the MLP's width, or two sequences
/// of token ids.
pub fn input_bytes_per_sample(shape: impl Into<ModelShape>) -> f64 {
    match shape.into() {
        ModelShape::Mlp(s) => (2 * s.width as u64 * F32_BYTES) as f64,
        ModelShape::Transformer(s) => (2 * s.seq as u64 * TOKEN_BYTES) as f64,
        ModelShape::Llama(s) => (2 * s.seq as u64 * TOKEN_BYTES) as f64,
    }
}

/// How a training step stores and computes its values: the estimator's precisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Precision {
    /// Everything in f32: the precision every rule above was measured in.
    F32,
    /// Everything stored in bf16: weights, gradients, optimizer state and activations at 2
    /// bytes a value (the mixed-precision page's "bf16 storage").
    Bf16,
    /// f32 master weights, gradients and optimizer state; the forward pass computes in bf16 and
    /// keeps its activations at 2 bytes, plus a bf16 copy of the weights for backward (the
    /// mixed-precision page's rule, measured on the MLP).
    MixedBf16,
}

impl Precision {
    /// Every precision.
    pub const ALL: [Precision; 3] = [Self::F32, Self::Bf16, Self::MixedBf16];

    /// Its name on the command line and in tables.
    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::Bf16 => "bf16",
            Self::MixedBf16 => "mixed-bf16",
        }
    }

    /// Bytes of a stored parameter, gradient and optimizer value.
    pub fn param_bytes(self) -> u64 {
        match self {
            Self::F32 | Self::MixedBf16 => F32_BYTES,
            Self::Bf16 => FloatStorage::Bf16.bytes(),
        }
    }

    /// Bytes of an activation value the forward pass keeps.
    pub fn activation_bytes(self) -> u64 {
        match self {
            Self::F32 => F32_BYTES,
            Self::Bf16 | Self::MixedBf16 => FloatStorage::Bf16.bytes(),
        }
    }

    /// Bytes of the 16-bit copy of each weight kept for backward (mixed precision only).
    pub fn weight_copy_bytes(self) -> u64 {
        match self {
            Self::MixedBf16 => FloatStorage::Bf16.bytes(),
            Self::F32 | Self::Bf16 => 0,
        }
    }
}

/// The optimizer, by the values it keeps per parameter: the harness's (Burn 0.22's
/// optimizers, each with its state as read in `burn-optim`'s source).
pub use crate::harness::optim::Optimizer;

/// One training step as the rules see it: the model, the batch, and the techniques applied.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepPlan {
    /// The model.
    pub shape: ModelShape,
    /// Samples (sequences) per optimizer step.
    pub batch: f64,
    /// Micro-batches the batch is accumulated over (1: no accumulation).
    pub micro_batches: usize,
    /// What the forward pass keeps for backward.
    pub checkpointing: Checkpointing,
    /// How values are stored and computed.
    pub precision: Precision,
    /// The optimizer.
    pub optimizer: Optimizer,
}

impl StepPlan {
    /// An Adam step in f32 without accumulation or checkpointing: what the experiments
    /// measure unless they vary one of these.
    pub fn f32_adam(shape: impl Into<ModelShape>, batch: f64) -> Self {
        Self {
            shape: shape.into(),
            batch,
            micro_batches: 1,
            checkpointing: Checkpointing::None,
            precision: Precision::F32,
            optimizer: Optimizer::Adam,
        }
    }

    /// The step a workbench training point runs: a step of its model, batch, micro-batches,
    /// checkpointing and optimizer, in f32 or, where its forward pass computes in bf16, mixed
    /// bf16 (16-bit storage is a process's default float type, not the config's: the caller
    /// sets it).
    pub fn of_training(config: &TrainConfig) -> Self {
        Self {
            precision: match config.compute {
                Some(FloatStorage::Bf16) => Precision::MixedBf16,
                _ => Precision::F32,
            },
            micro_batches: config.micro_batches,
            checkpointing: config.checkpointing,
            optimizer: config.optimizer,
            ..Self::f32_adam(config.shape, config.batch as f64)
        }
    }

    /// Bytes of the optimizer's state: its values for what trains, in the parameters' bytes
    /// (Adafactor's statistics stay f32).
    pub fn optimizer_bytes(&self) -> f64 {
        let shape = self.shape;
        let values = self
            .optimizer
            .state_values(&shape.trainable_shapes(), shape.trainable_params());
        let bytes = if self.optimizer.state_in_f32() {
            F32_BYTES
        } else {
            self.precision.param_bytes()
        };
        (values * bytes) as f64
    }

    /// The components of the step's memory, by the rules alone (a device's: what the
    /// projections to a card use).
    pub fn bytes(&self) -> StepBytes {
        self.bytes_on(Allocator::CubeCl)
    }

    /// The components of the step's memory on a backend following `allocator`'s rules (on
    /// Flex, a 16-bit step's matmuls run on f32 copies: [`llama_backward_bytes`]).
    pub fn bytes_on(&self, allocator: Allocator) -> StepBytes {
        let shape = self.shape;
        let micro = self.batch / self.micro_batches.max(1) as f64;
        let params = shape.num_params() as f64;
        // Gradients and optimizer state only for what trains (LoRA's adapters).
        let trainable = shape.trainable_params() as f64;
        let p = self.precision;
        // Activation rules are counted in f32 values; a precision that keeps them at fewer
        // bytes scales them (the mixed-precision page's rule, measured on the MLP).
        let act = p.activation_bytes() as f64 / F32_BYTES as f64;
        let weights = match shape.llama() {
            Some(s) => llama_weight_bytes(&s, p.param_bytes() as f64, allocator),
            None => params * p.param_bytes() as f64,
        };
        let grads = trainable * p.param_bytes() as f64;
        let frozen_kept = shape
            .llama()
            .map_or(0.0, |s| llama_frozen_kept_bytes(&s, p.param_bytes() as f64));
        StepBytes {
            weights,
            optimizer: self.optimizer_bytes(),
            weight_copies: params * p.weight_copy_bytes() as f64,
            inputs: self.batch * input_bytes_per_sample(shape),
            kept: micro * activation_bytes_per_sample(shape, self.checkpointing) * act
                + frozen_kept,
            loss_transient: micro * loss_transient_bytes_per_sample(shape) * act,
            backward_transient: match shape.llama() {
                Some(s) => llama_backward_bytes(
                    &s,
                    micro,
                    p.activation_bytes() as f64,
                    p.param_bytes() as f64,
                    p == Precision::Bf16 && allocator.bf16_matmul_via_f32(),
                ),
                None => match shape.transformer() {
                    Some(s) => {
                        transformer_backward_bytes(&s, micro, p, allocator, self.checkpointing)
                    }
                    None => micro * backward_transient_bytes_per_sample(shape) * act,
                },
            },
            grads,
            update_transient: largest_trainable_values(shape) * p.param_bytes() as f64,
            accumulated: if self.micro_batches > 1 { grads } else { 0.0 },
        }
    }
}

/// Values of the largest tensor a step trains (the embedding or head at a real vocabulary,
/// an adapter under LoRA).
pub fn largest_trainable_values(shape: ModelShape) -> f64 {
    shape
        .trainable_shapes()
        .iter()
        .map(|s| s.iter().product::<usize>())
        .max()
        .unwrap_or(0) as f64
}

/// The components of one training step that its peaks are made of, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepBytes {
    /// The model's weights.
    pub weights: f64,
    /// The optimizer's state.
    pub optimizer: f64,
    /// 16-bit copies of the weights kept for backward (mixed precision).
    pub weight_copies: f64,
    /// The whole batch's inputs and targets.
    pub inputs: f64,
    /// One micro-batch's activations: what the forward pass keeps.
    pub kept: f64,
    /// The loss's transient at the forward pass's end, for one micro-batch.
    pub loss_transient: f64,
    /// Backward's transient at its peak, for one micro-batch (for a Llama-family model, with
    /// the gradients made by then: [`llama_backward_bytes`]).
    pub backward_transient: f64,
    /// The parameter gradients.
    pub grads: f64,
    /// Beside every gradient, one tensor the size of the largest trained parameter: Burn
    /// 0.22.1's Adam (`AdaptiveMomentum::transform`) multiplies `grad.clone()` by `1 - beta_1`,
    /// and a shared handle cannot be written in place, so each parameter's update allocates a
    /// copy of its gradient while every gradient is live; the embedding's backward makes a
    /// zeroed tensor of its shape the same way. Measured on Flex with two blocks of
    /// TinyLlama's width at a 32,000-token vocabulary: the optimizer phase's peak is weights,
    /// state and gradients plus 262.14 MB, the head's 32,000 x 2,048 f32 values.
    #[serde(default)]
    pub update_transient: f64,
    /// The accumulated gradients held across micro-batches (none without accumulation).
    pub accumulated: f64,
}

/// A step's peak in parts that add up to it ([`StepBytes::step_peak`]): what is held through the
/// whole step, then, at backward's peak, either the activations (what the forward pass kept,
/// the 16-bit weight copies, the larger transient) or the gradients, whichever is larger (the
/// other is zero here: backward frees activations as it makes gradients).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PeakSplit {
    /// The weights.
    pub weights: f64,
    /// The optimizer's state.
    pub optimizer: f64,
    /// The whole batch's inputs and targets.
    pub inputs: f64,
    /// The gradients accumulated across micro-batches.
    pub accumulated: f64,
    /// What the forward pass keeps, where activations set the peak.
    pub kept: f64,
    /// The 16-bit weight copies kept for backward, where activations set the peak.
    pub weight_copies: f64,
    /// The larger of the loss's and backward's transients, where activations set the peak.
    pub transient: f64,
    /// The parameter gradients, where they set the peak.
    pub grads: f64,
    /// The optimizer's copy of the largest parameter, where the gradients set the peak.
    #[serde(default)]
    pub update_transient: f64,
}

impl PeakSplit {
    /// The parts' sum: the step's peak.
    pub fn total(&self) -> f64 {
        (self.weights + self.optimizer)
            + self.inputs
            + ((self.kept + self.weight_copies + self.transient)
                .max(self.grads + self.update_transient))
            + self.accumulated
    }
}

impl StepBytes {
    /// The step's peak in parts that add up to it.
    pub fn at_peak(&self) -> PeakSplit {
        let activations = self.activations_at_peak() >= self.gradients_at_peak();
        let when = |on: bool, v: f64| if on { v } else { 0.0 };
        PeakSplit {
            weights: self.weights,
            optimizer: self.optimizer,
            inputs: self.inputs,
            accumulated: self.accumulated,
            kept: when(activations, self.kept),
            weight_copies: when(activations, self.weight_copies),
            transient: when(
                activations,
                self.loss_transient.max(self.backward_transient),
            ),
            grads: when(!activations, self.grads),
            update_transient: when(!activations, self.update_transient),
        }
    }

    /// The gradient side of backward's peak: every gradient and the optimizer's copy of the
    /// largest parameter.
    pub fn gradients_at_peak(&self) -> f64 {
        self.grads + self.update_transient
    }

    /// Model and optimizer state: held through the whole step.
    pub fn fixed(&self) -> f64 {
        self.weights + self.optimizer
    }

    /// What no batch size changes: weights, gradients, optimizer state and the 16-bit weight
    /// copies, at their precision.
    pub fn per_parameter(&self) -> f64 {
        self.weights + self.grads + self.optimizer + self.weight_copies
    }

    /// Activations at their peak: what is kept (with the weight copies), plus the larger of
    /// the loss's and backward's transients.
    pub fn activations_at_peak(&self) -> f64 {
        self.kept + self.weight_copies + self.loss_transient.max(self.backward_transient)
    }

    /// The forward pass's peak: model, optimizer state, inputs, one micro-batch's activations
    /// and the loss's transient, and the accumulated gradients.
    pub fn forward_peak(&self) -> f64 {
        self.fixed()
            + self.inputs
            + self.kept
            + self.weight_copies
            + self.loss_transient
            + self.accumulated
    }

    /// The step's peak: model, optimizer state and inputs, plus the largest of one
    /// micro-batch's activations with the loss's transient (the forward pass's end), the same
    /// activations with backward's transient (backward's start, every activation alive), and
    /// the parameter gradients with the optimizer's copy of the largest parameter (backward
    /// frees activations as it produces gradients), plus the accumulated gradients.
    pub fn step_peak(&self) -> f64 {
        self.fixed()
            + self.inputs
            + self.activations_at_peak().max(self.gradients_at_peak())
            + self.accumulated
    }
}

/// Predicted peak of the forward pass of one Adam step in f32: model, Adam state and inputs,
/// one micro-batch's activations and the loss's transient, plus, when accumulating over
/// `micro_batches`, the accumulated gradients held across micro-batches.
pub fn forward_peak(
    shape: impl Into<ModelShape>,
    batch: f64,
    micro_batches: usize,
    checkpointing: Checkpointing,
) -> f64 {
    StepPlan {
        micro_batches,
        checkpointing,
        ..StepPlan::f32_adam(shape, batch)
    }
    .bytes()
    .forward_peak()
}

/// Predicted peak of one Adam step in f32 ([`StepBytes::step_peak`]).
pub fn training_step_peak(
    shape: impl Into<ModelShape>,
    batch: f64,
    micro_batches: usize,
    checkpointing: Checkpointing,
) -> f64 {
    StepPlan {
        micro_batches,
        checkpointing,
        ..StepPlan::f32_adam(shape, batch)
    }
    .bytes()
    .step_peak()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::preset;

    fn llama(id: &str) -> LlamaShape {
        preset(id)
            .and_then(|p| p.shape.llama())
            .expect("a Llama preset")
    }

    #[test]
    fn a_7b_cache_of_2048_tokens_in_16_bits_is_one_gibibyte() {
        // 32 blocks x 2 x 4,096 values x 2 bytes = 512 KiB a token (the articles' "about 1 GB
        // at 2,048 tokens"); grouped-query attention with 8 key/value heads divides it by 4.
        let per_token = kv_cache_bytes_per_token(&llama("llama-2-7b"), 2.0);
        assert_eq!(per_token * 2048.0, (1u64 << 30) as f64);
        let gqa = kv_cache_bytes_per_token(&llama("mistral-7b"), 2.0);
        assert_eq!(gqa * 4.0, per_token);
    }

    #[test]
    fn lora_trains_only_its_adapters() {
        let base = llama("tinyllama-1.1b");
        let lora = LlamaShape {
            lora_rank: Some(8),
            ..base
        };
        // Per block: rank x (d + d) on the query, rank x (d + kv width) on the value.
        assert_eq!(lora.trainable_params(), 22 * 8 * (2 * 2048 + 2048 + 256));
        let full = StepPlan::f32_adam(base, 1.0).bytes();
        let adapted = StepPlan::f32_adam(lora, 1.0).bytes();
        assert_eq!(adapted.grads, lora.trainable_params() as f64 * 4.0);
        assert_eq!(adapted.optimizer, 2.0 * adapted.grads);
        assert!(
            adapted.weights > full.weights,
            "the adapters are weights too"
        );
        assert!(
            adapted.kept < full.kept,
            "a frozen projection keeps no input"
        );
    }
}
