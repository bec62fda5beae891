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

use results::FloatStorage;
use serde::{Deserialize, Serialize};

use crate::checkpointing::Checkpointing;
use crate::decoder::{step_bytes, Decoder, Step, ValueBytes};
pub use crate::decoder::{
    Allocator, PeakSplit, StepBytes, ATTENTION_VALUES_PER_HEAD, BACKWARD_WEIGHT_GRADIENT_COPIES,
    BALANCED_FIRST_BLOCK_SCORES, F32_BYTES, FREED_BEFORE_ATTENTION_D, LORA_ATTENTION_BACKWARD,
    TOKEN_BYTES,
};
use crate::shapes::{LlamaShape, ModelShape, TransformerShape};

/// Values Adam keeps per parameter: its first and second moments.
pub const ADAM_MOMENTS: u64 = 2;

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
    Decoder::from(shape).block_values_per_token(checkpointing)
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
    Decoder::from(shape).outside_values_per_token()
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
        ModelShape::Transformer(s) => Decoder::from(&s).kept_bytes_per_sample(checkpointing),
        ModelShape::Llama(s) => Decoder::from(&s).kept_bytes_per_sample(checkpointing),
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
    Decoder::from(shape).block_values_per_token(checkpointing)
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
    let bytes = ValueBytes {
        param: param_bytes,
        activation: act_bytes,
        weight_copy: 0.0,
        via_f32,
    };
    Decoder::from(s).backward_bytes(micro, bytes, Checkpointing::None)
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
    Decoder::from(s).lora_backward_bytes(tokens, act_bytes, Checkpointing::None)
}

/// Values of one block's projection weights: the query, key, value and output projections and
/// the SwiGLU's three (QLoRA's quantized base).
pub fn llama_block_projection_values(s: &LlamaShape) -> f64 {
    Decoder::from(s).block_projection_values()
}

/// Bytes of a Llama-family model's weights at `param_bytes` a value; under QLoRA
/// (`base_bits`) the blocks' projections at their quantized bytes on `allocator`'s backend
/// ([`Allocator::quantized_value_bytes`]; per-tensor scales, a few bytes, not counted).
pub fn llama_weight_bytes(s: &LlamaShape, param_bytes: f64, allocator: Allocator) -> f64 {
    Decoder::from(s).weight_bytes(param_bytes, allocator)
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
    Decoder::from(s).frozen_kept_bytes(value_bytes)
}

/// The trainable parameters of one Llama-family block (its adapters under LoRA).
pub fn llama_block_trainable_params(shape: &LlamaShape) -> f64 {
    Decoder::from(shape).block_trainable_params()
}

/// Values per token a Llama-family decoder keeps outside its blocks: the final RMSNorm
/// (`3 d + 2`; `d + 2` under LoRA, whose frozen head keeps no input), log-softmax over the
/// vocabulary and its `log` input (`v + 1`), and the token ids kept by the embedding's and the
/// loss's gathers (2).
pub fn llama_outside_values_per_token(shape: &LlamaShape) -> f64 {
    Decoder::from(shape).outside_values_per_token()
}

/// Bytes of memory-efficient attention's backward at its peak for `micro` sequences of `s`, at
/// `act_bytes` a value (none where `s` writes the scores out): burn-memory-efficient's
/// `attention::backward` recomputes one chunk's scores against every key it sees and holds
/// [`crate::decoder::EFFICIENT_ATTENTION_BACKWARD_CHUNKS`] tensors of them at once (the
/// probabilities, their gradient and their product summed for the softmax's backward): `3 x
/// micro x heads x chunk x seq` values. Under LoRA, what backward has freed by then is taken off:
/// [`crate::decoder::LORA_FREED_BEFORE_ATTENTION`] `(d + m)` values a token (the last block's
/// SwiGLU and output projection's kept values; fitted). Measured on Flex with two blocks of
/// TinyLlama's width (vocabulary 32,000, one sequence, LoRA rank 8, the chunked loss beside it):
/// 9.4, 18.9, 37.7 and 75.5 MB above what the forward pass kept at 256 to 2,048 tokens, the
/// rule's 9.5 to 75.4.
pub fn efficient_attention_backward_bytes(s: &LlamaShape, micro: f64, act_bytes: f64) -> f64 {
    Decoder::from(s).efficient_attention_backward_bytes(micro, act_bytes)
}

/// Bytes the chunked loss holds at the forward pass's end for `micro` sequences of `s`: a
/// chunk of `min(chunk, tokens)` tokens' f32 logits and their exponentials,
/// [`crate::decoder::CHUNKED_LOSS_LOGIT_CHUNKS`] `x chunk x vocab` values, read in
/// burn-memory-efficient's `cross_entropy::forward` (the logits stay until the target's is
/// gathered; the exponentials are the softmax, written in place). Measured on Flex at the
/// reader's model (vocabulary 32,000, chunk 512): 131.1 MB a step at 512 to 2,048 tokens, the
/// rule's 131.07; 63.4 MB at 256 tokens (a chunk of 256), the rule's 65.5.
pub fn chunked_loss_transient_bytes(s: &LlamaShape, micro: f64, act_bytes: f64) -> f64 {
    Decoder::from(s).loss_transient_bytes(micro, act_bytes / F32_BYTES as f64)
}

/// Bytes of the key/value cache per generated token: for each block, the keys and the values
/// of every key/value head (`2 x kv_heads x head_dim` values), at `value_bytes` each. What
/// grouped-query attention divides: its key/value heads are fewer than the query heads.
pub fn kv_cache_bytes_per_token(shape: &LlamaShape, value_bytes: f64) -> f64 {
    Decoder::from(shape).kv_cache_bytes_per_token(value_bytes)
}

/// Values per prompt token that a Llama-family block holds at once in a forward pass without a
/// graph (the prompt's pass, prefill): the larger of attention's moment (the scores and their
/// softmax over `ctx` keys for every head; the residual and the queries; the keys and values
/// repeated to every head, where grouped-query attention shares them) and the SwiGLU MLP's (the
/// gate, the up projection and their product; the residual and the normed input). Read op by
/// op and measured on the Llama-family page (CPU, f32, prompts of 64 and 256 tokens, with
/// and without grouped-query attention).
pub fn llama_prefill_values_per_token(shape: &LlamaShape, ctx: usize) -> f64 {
    Decoder::from(shape).prefill_values_per_token(ctx as f64)
}

/// Bytes the prompt's pass holds above the weights and the cache, for `batch` prompts of `ctx`
/// tokens: one block's moment at `value_bytes` per value, or the f32 logits over the
/// vocabulary at the end of the pass, whichever is larger.
pub fn llama_prefill_bytes(shape: &LlamaShape, batch: usize, ctx: usize, value_bytes: f64) -> f64 {
    Decoder::from(shape).prefill_bytes(batch as f64, ctx as f64, value_bytes)
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
        ModelShape::Transformer(s) => Decoder::from(&s).loss_bytes_per_sample(),
        ModelShape::Llama(s) => Decoder::from(&s).loss_bytes_per_sample(),
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
            let f32_bytes = F32_BYTES as f64;
            let bytes = ValueBytes {
                param: f32_bytes,
                activation: f32_bytes,
                weight_copy: 0.0,
                via_f32: false,
            };
            Decoder::from(&s).largest_weight_gradient_bytes(1.0, bytes)
        }
        // One sequence, every value in f32 ([`llama_backward_bytes`]).
        ModelShape::Llama(s) => {
            llama_backward_bytes(&s, 1.0, F32_BYTES as f64, F32_BYTES as f64, false)
        }
    }
}

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
    let bytes = ValueBytes {
        param: precision.param_bytes() as f64,
        activation: precision.activation_bytes() as f64,
        weight_copy: precision.weight_copy_bytes() as f64,
        via_f32: precision != Precision::F32 && allocator.bf16_matmul_via_f32(),
    };
    Decoder::from(s).backward_bytes(micro, bytes, checkpointing)
}

/// Bytes of one sample's inputs and targets: two f32 rows of the MLP's width, or two sequences
/// of token ids.
pub fn input_bytes_per_sample(shape: impl Into<ModelShape>) -> f64 {
    match shape.into() {
        ModelShape::Mlp(s) => (2 * s.width as u64 * F32_BYTES) as f64,
        ModelShape::Transformer(s) => Decoder::from(&s).input_bytes_per_sample(),
        ModelShape::Llama(s) => Decoder::from(&s).input_bytes_per_sample(),
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

/// The optimizer, by the values it keeps per parameter (Burn 0.22's
/// optimizers, each with its state as read in `burn-optim`'s source).
pub use crate::optimizer::Optimizer;

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

    /// Bytes of the optimizer's state: its values for what trains, in the parameters' bytes
    /// (Adafactor's statistics stay f32).
    pub fn optimizer_bytes(&self) -> f64 {
        self.optimizer_values() * self.optimizer_value_bytes()
    }

    /// Bytes of one value of the optimizer's state: the parameters' (Adafactor's: f32).
    fn optimizer_value_bytes(&self) -> f64 {
        match self.optimizer.state_in_f32() {
            true => F32_BYTES as f64,
            false => self.precision.param_bytes() as f64,
        }
    }

    /// The components of the step's memory, by the rules alone (a device's: what the
    /// projections to a card use).
    pub fn bytes(&self) -> StepBytes {
        self.bytes_on(Allocator::CubeCl)
    }

    /// The components of the step's memory on a backend following `allocator`'s rules (on
    /// Flex, a 16-bit step's matmuls run on f32 copies: [`llama_backward_bytes`]).
    pub fn bytes_on(&self, allocator: Allocator) -> StepBytes {
        let (model, matmul_via_f32) = match self.shape {
            ModelShape::Mlp(_) => return self.mlp_bytes(),
            ModelShape::Transformer(s) => (Decoder::from(&s), self.precision != Precision::F32),
            ModelShape::Llama(s) => (Decoder::from(&s), self.precision == Precision::Bf16),
        };
        let p = self.precision;
        step_bytes(&Step {
            model,
            batch: self.batch,
            micro_batches: self.micro_batches.max(1) as f64,
            optimizer_values: self.optimizer_values(),
            optimizer_value_bytes: self.optimizer_value_bytes(),
            bytes: ValueBytes {
                param: p.param_bytes() as f64,
                activation: p.activation_bytes() as f64,
                weight_copy: p.weight_copy_bytes() as f64,
                via_f32: matmul_via_f32 && allocator.bf16_matmul_via_f32(),
            },
            checkpointing: self.checkpointing,
            allocator,
        })
    }

    /// Values of the optimizer's state for what trains.
    fn optimizer_values(&self) -> f64 {
        let shape = self.shape;
        self.optimizer
            .state_values(&shape.trainable_shapes(), shape.trainable_params()) as f64
    }

    /// The MLP's step: its own rules per layer (no transient beyond them).
    fn mlp_bytes(&self) -> StepBytes {
        let shape = self.shape;
        let micro = self.batch / self.micro_batches.max(1) as f64;
        let p = self.precision;
        let act = p.activation_bytes() as f64 / F32_BYTES as f64;
        let params = shape.num_params() as f64;
        let grads = params * p.param_bytes() as f64;
        StepBytes {
            weights: params * p.param_bytes() as f64,
            optimizer: self.optimizer_bytes(),
            weight_copies: params * p.weight_copy_bytes() as f64,
            inputs: self.batch * input_bytes_per_sample(shape),
            kept: micro * activation_bytes_per_sample(shape, self.checkpointing) * act,
            loss_transient: 0.0,
            backward_transient: 0.0,
            grads,
            update_transient: largest_trainable_values(shape) * p.param_bytes() as f64,
            accumulated: if self.micro_batches > 1 { grads } else { 0.0 },
        }
    }
}

/// Values of the largest tensor a step trains (the embedding or head at a real vocabulary,
/// an adapter under LoRA).
pub fn largest_trainable_values(shape: ModelShape) -> f64 {
    match shape {
        ModelShape::Mlp(s) => (s.width * s.width) as f64,
        ModelShape::Transformer(s) => Decoder::from(&s).largest_trainable(),
        ModelShape::Llama(s) => Decoder::from(&s).largest_trainable(),
    }
}

/// The bytes of one Adam step in f32 of `shape` at `batch`, accumulated over `micro_batches`,
/// with `checkpointing`: what [`forward_peak`] and [`training_step_peak`] read.
fn f32_adam_bytes(
    shape: impl Into<ModelShape>,
    batch: f64,
    micro_batches: usize,
    checkpointing: Checkpointing,
) -> StepBytes {
    StepPlan {
        micro_batches,
        checkpointing,
        ..StepPlan::f32_adam(shape, batch)
    }
    .bytes()
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
    f32_adam_bytes(shape, batch, micro_batches, checkpointing).forward_peak()
}

/// Predicted peak of one Adam step in f32 ([`StepBytes::step_peak`]).
pub fn training_step_peak(
    shape: impl Into<ModelShape>,
    batch: f64,
    micro_batches: usize,
    checkpointing: Checkpointing,
) -> f64 {
    f32_adam_bytes(shape, batch, micro_batches, checkpointing).step_peak()
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
