//! The decoders' byte rules written once, generic over the number they compute with ([`Scalar`]):
//! the estimator runs them on `f64`, the guide's calculator on the programs they record.
//!
//! Question: what does a GPT-style or Llama-family training step, or generation, hold at its
//! peak, for any shape?
//! Method: each rule's derivation is on its wrapper in [`crate::estimate`] (read in Burn's code,
//! checked on the guide's measurements); here is its arithmetic, once. What is structural (the
//! family, LoRA and its form, checkpointing, a quantized base, whether bf16 matmuls run through
//! f32 copies) is a Rust value; every size is a number of `T`.
//! Answer: [`step_bytes`], [`inference_bytes`] and [`usable_bytes`], used by the estimator, and
//! by [`crate::calculator`] to emit the page's programs; beside them what the rules share (the
//! [`Allocator`]s, the fitted constants, a step's parts: [`StepBytes`]).

use results::{DeviceKind, FloatStorage};
use serde::{Deserialize, Serialize};

use crate::checkpointing::Checkpointing;
use crate::scalar::Scalar;

/// Where a LoRA adapter meets the frozen base.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoraForm {
    /// The workbench's adapters: `base(x) + scale * up(down(x))`, each applied to the input;
    /// no weight-shaped tensor is ever made.
    #[default]
    ActivationPath,
    /// Burn 0.22's own `Module::apply_lora` (`apply_qlora` on a quantized base): the weight
    /// composed dense, `base + scale * (a @ b)`, then applied to the input.
    Composed,
}

impl LoraForm {
    /// Whether this is the activation-path form (the default, left out of records).
    pub fn is_activation_path(&self) -> bool {
        *self == LoraForm::ActivationPath
    }
}

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

/// Attention-sized tensors a block keeps per head, as read in burn-autodiff after the first
/// measurement: the shifted scores (`exp`'s input), the exponentials and the weights.
pub const ATTENTION_VALUES_PER_HEAD: f64 = 3.0;

/// Score-sized values a token that attention's backward holds under LoRA, per head and key
/// (fitted: see [`crate::estimate::lora_backward_bytes`]).
pub const LORA_ATTENTION_BACKWARD: f64 = 1.25;

/// Copies of the per-sequence weight gradient alive at backward's peak (fitted: see
/// [`crate::estimate::backward_transient_bytes_per_sample`]).
pub const BACKWARD_WEIGHT_GRADIENT_COPIES: f64 = 2.0;

/// Values a token the last block's MLP backward has freed when attention's backward runs, in
/// units of `d_model` (fitted: see [`crate::estimate::transformer_backward_bytes`]).
pub const FREED_BEFORE_ATTENTION_D: f64 = 15.0;

/// Score-sized values per head a token that the first block's backward holds under
/// `BalancedCheckpointing` (fitted: see [`crate::estimate::transformer_backward_bytes`]).
pub const BALANCED_FIRST_BLOCK_SCORES: f64 = 2.5;

/// Values a token and block that burn-memory-efficient's attention keeps in place of the
/// scores: its logsumexp, one a head (`[batch, heads, seq, 1]`, read in the crate's
/// `attention::forward`).
pub const EFFICIENT_ATTENTION_VALUES_PER_HEAD: f64 = 1.0;

/// Under LoRA, the `d_model` share a token and block that memory-efficient attention keeps
/// less than the written-out block's rule says beyond its scores (fitted: see
/// [`crate::estimate::llama_block_values_per_token`]).
pub const EFFICIENT_LORA_FEWER_D: f64 = 0.25;

/// Chunk-sized tensors of memory-efficient attention's backward alive at its peak, each
/// `micro x heads x chunk x seq` values: the chunk's probabilities, their gradient and the
/// product summed for the softmax's backward (read in burn-memory-efficient's
/// `attention::backward`; see [`crate::estimate::efficient_attention_backward_bytes`]).
pub const EFFICIENT_ATTENTION_BACKWARD_CHUNKS: f64 = 3.0;

/// Under LoRA, the values a token that backward has freed when the last block's attention
/// runs, in units of `d_model + mlp` (fitted: see
/// [`crate::estimate::efficient_attention_backward_bytes`]).
pub const LORA_FREED_BEFORE_ATTENTION: f64 = 2.0;

/// Chunk-sized tensors of logits (`chunk x vocab` values, in f32) the chunked loss holds at
/// its forward pass's peak: the chunk's logits and their exponentials (read in
/// burn-memory-efficient's `cross_entropy::forward`; measured: see
/// [`crate::estimate::chunked_loss_transient_bytes`]).
pub const CHUNKED_LOSS_LOGIT_CHUNKS: f64 = 2.0;

/// The components of one training step that its peaks are made of, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepBytes<T = f64> {
    /// The model's weights.
    pub weights: T,
    /// The optimizer's state.
    pub optimizer: T,
    /// 16-bit copies of the weights kept for backward (mixed precision).
    pub weight_copies: T,
    /// The whole batch's inputs and targets.
    pub inputs: T,
    /// One micro-batch's activations: what the forward pass keeps.
    pub kept: T,
    /// The loss's transient at the forward pass's end, for one micro-batch.
    pub loss_transient: T,
    /// Backward's transient at its peak, for one micro-batch (for a Llama-family model, with
    /// the gradients made by then: [`crate::estimate::llama_backward_bytes`]).
    pub backward_transient: T,
    /// The parameter gradients.
    pub grads: T,
    /// Beside every gradient, one tensor the size of the largest trained parameter: Burn
    /// 0.22.1's Adam (`AdaptiveMomentum::transform`) multiplies `grad.clone()` by `1 - beta_1`,
    /// and a shared handle cannot be written in place, so each parameter's update allocates a
    /// copy of its gradient while every gradient is live; the embedding's backward makes a
    /// zeroed tensor of its shape the same way. Measured on Flex with two blocks of
    /// TinyLlama's width at a 32,000-token vocabulary: the optimizer phase's peak is weights,
    /// state and gradients plus 262.14 MB, the head's 32,000 x 2,048 f32 values.
    #[serde(default)]
    pub update_transient: T,
    /// The accumulated gradients held across micro-batches (none without accumulation).
    pub accumulated: T,
}

/// A step's peak in parts that add up to it ([`StepBytes::step_peak`]): what is held through the
/// whole step, then, at backward's peak, either the activations (what the forward pass kept,
/// the 16-bit weight copies, the larger transient) or the gradients, whichever is larger (the
/// other is zero here: backward frees activations as it makes gradients).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PeakSplit<T = f64> {
    /// The weights.
    pub weights: T,
    /// The optimizer's state.
    pub optimizer: T,
    /// The whole batch's inputs and targets.
    pub inputs: T,
    /// The gradients accumulated across micro-batches.
    pub accumulated: T,
    /// What the forward pass keeps, where activations set the peak.
    pub kept: T,
    /// The 16-bit weight copies kept for backward, where activations set the peak.
    pub weight_copies: T,
    /// The larger of the loss's and backward's transients, where activations set the peak.
    pub transient: T,
    /// The parameter gradients, where they set the peak.
    pub grads: T,
    /// The optimizer's copy of the largest parameter, where the gradients set the peak.
    #[serde(default)]
    pub update_transient: T,
}

impl<T: Scalar> PeakSplit<T> {
    /// The parts' sum: the step's peak.
    pub fn total(&self) -> T {
        (self.weights + self.optimizer)
            + self.inputs
            + ((self.kept + self.weight_copies + self.transient)
                .max(self.grads + self.update_transient))
            + self.accumulated
    }
}

impl<T: Scalar> StepBytes<T> {
    /// The step's peak in parts that add up to it (where the two sides tie, the activations').
    pub fn at_peak(&self) -> PeakSplit<T> {
        let gradients_over = self.gradients_at_peak() - self.activations_at_peak();
        let zero = T::num(0.0);
        let on_activations = |v: T| gradients_over.positive_or(zero, v);
        let on_gradients = |v: T| gradients_over.positive_or(v, zero);
        PeakSplit {
            weights: self.weights,
            optimizer: self.optimizer,
            inputs: self.inputs,
            accumulated: self.accumulated,
            kept: on_activations(self.kept),
            weight_copies: on_activations(self.weight_copies),
            transient: on_activations(self.loss_transient.max(self.backward_transient)),
            grads: on_gradients(self.grads),
            update_transient: on_gradients(self.update_transient),
        }
    }

    /// The gradient side of backward's peak: every gradient and the optimizer's copy of the
    /// largest parameter.
    pub fn gradients_at_peak(&self) -> T {
        self.grads + self.update_transient
    }

    /// Model and optimizer state: held through the whole step.
    pub fn fixed(&self) -> T {
        self.weights + self.optimizer
    }

    /// What no batch size changes: weights, gradients, optimizer state and the 16-bit weight
    /// copies, at their precision.
    pub fn per_parameter(&self) -> T {
        self.weights + self.grads + self.optimizer + self.weight_copies
    }

    /// Activations at their peak: what is kept (with the weight copies), plus the larger of
    /// the loss's and backward's transients.
    pub fn activations_at_peak(&self) -> T {
        self.kept + self.weight_copies + self.loss_transient.max(self.backward_transient)
    }

    /// The forward pass's peak: model, optimizer state, inputs, one micro-batch's activations
    /// and the loss's transient, and the accumulated gradients.
    pub fn forward_peak(&self) -> T {
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
    pub fn step_peak(&self) -> T {
        self.fixed()
            + self.inputs
            + self.activations_at_peak().max(self.gradients_at_peak())
            + self.accumulated
    }
}

/// Which decoder, and what about it is structural.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// The GPT-style transformer.
    Gpt,
    /// The Llama-family decoder.
    Llama {
        /// LoRA's form, where the base is frozen under adapters.
        lora: Option<LoraForm>,
        /// Bits of a quantized base (QLoRA).
        base_bits: Option<u8>,
    },
}

/// A decoder's sizes as numbers of `T`, with its [`Family`].
#[derive(Debug, Clone, Copy)]
pub struct Decoder<T> {
    /// Which decoder.
    pub family: Family,
    /// Tokens in the vocabulary.
    pub vocab: T,
    /// Width of the residual stream.
    pub d_model: T,
    /// Blocks.
    pub layers: T,
    /// Query heads.
    pub heads: T,
    /// Key/value heads (the GPT block's: its heads).
    pub kv_heads: T,
    /// The SwiGLU width (none in the GPT block).
    pub mlp: T,
    /// Tokens per sequence.
    pub seq: T,
    /// 1 where the head is the token embedding's weights, 0 where it has its own.
    pub tied: T,
    /// LoRA's rank (0 without).
    pub lora_rank: T,
    /// Query rows per chunk of burn-memory-efficient's attention (none: the scores written
    /// out, or Burn's fused call, which autodiff writes out).
    pub attention_chunk: Option<T>,
    /// Tokens per chunk of burn-memory-efficient's loss (none: the whole logits, then Burn's
    /// cross-entropy).
    pub loss_chunk: Option<T>,
}

impl<T: Scalar> Decoder<T> {
    fn zero() -> T {
        T::num(0.0)
    }

    fn lora(&self) -> Option<LoraForm> {
        match self.family {
            Family::Llama { lora, .. } => lora,
            Family::Gpt => None,
        }
    }

    /// Width of the key (and value) projection: key/value heads x head width.
    pub fn kv_width(&self) -> T {
        self.kv_heads * (self.d_model / self.heads).floor()
    }

    /// The head's weights (none when tied).
    fn head_params(&self, own: T) -> T {
        self.tied.positive_or(Self::zero(), own)
    }

    /// Every parameter, adapters included (the shapes' `base_params`,
    /// `num_params`).
    pub fn params(&self) -> T {
        let (v, d, l) = (self.vocab, self.d_model, self.layers);
        match self.family {
            Family::Gpt => {
                let block =
                    (d * d + d) * 4.0 + (d * d * 4.0 + d * 4.0) + (d * d * 4.0 + d) + d * 2.0 * 2.0;
                let head = self.head_params(d * v + v);
                v * d + self.seq * d + l * block + d * 2.0 + head
            }
            Family::Llama { .. } => self.base_params() + self.adapter_params(),
        }
    }

    /// The Llama-family base's parameters, adapters left out ([`Decoder::params`]).
    pub fn base_params(&self) -> T {
        let (v, d, l, m, k) = (
            self.vocab,
            self.d_model,
            self.layers,
            self.mlp,
            self.kv_width(),
        );
        let block = d * 2.0 + d * d * 2.0 + d * k * 2.0 + d * m * 3.0;
        v * d + l * block + d + self.head_params(d * v)
    }

    /// LoRA's adapters' parameters (none without a rank).
    pub fn adapter_params(&self) -> T {
        let (d, k) = (self.d_model, self.kv_width());
        match self.lora() {
            Some(_) => self.layers * self.lora_rank * (d * 2.0 + d + k),
            None => Self::zero(),
        }
    }

    /// The parameters a step trains: the adapters under LoRA.
    pub fn trainable_params(&self) -> T {
        match self.lora() {
            Some(_) => self.adapter_params(),
            None => self.params(),
        }
    }

    /// Values of the largest tensor a step trains ([`crate::estimate::largest_trainable_values`]).
    pub fn largest_trainable(&self) -> T {
        let (v, d) = (self.vocab, self.d_model);
        match (self.family, self.lora()) {
            (_, Some(_)) => d * self.lora_rank,
            (Family::Gpt, None) => (v * d).max(d * d * 4.0).max(self.seq * d),
            (Family::Llama { .. }, None) => (v * d).max(d * self.mlp).max(d * d),
        }
    }

    /// What one block keeps per token ([`crate::estimate::block_values_per_token`],
    /// [`crate::estimate::llama_block_values_per_token`]).
    pub fn block_values_per_token(&self, checkpointing: Checkpointing) -> T {
        let (d, h, s, m) = (self.d_model, self.heads, self.seq, self.mlp);
        let balanced = checkpointing == Checkpointing::Balanced;
        if self.family == Family::Gpt {
            return match (balanced, self.attention_chunk.is_some()) {
                (false, _) => d * 18.0 + self.attention_values_per_token() + 2.0,
                (true, false) => d * 10.0 + h * 2.0 * s + h + 4.0,
                (true, true) => d * 10.0 + self.attention_values_per_token() + 4.0,
            };
        }
        let scores = self.attention_values_per_token();
        let full = match self.lora() {
            None => d * 10.0 + m * 5.0 + scores + 4.0,
            Some(LoraForm::Composed) => d * 4.0 + m * 4.0 + scores + 4.0,
            Some(LoraForm::ActivationPath) => {
                d * 4.0 + m * 4.0 + scores + 4.0 + self.lora_rank * 2.0
            }
        };
        match (balanced, self.attention_chunk.is_some()) {
            (false, _) => full,
            // Under LoRA the frozen projections' outputs are kept as without (fitted).
            (true, false) if self.lora().is_some() => full - (d + h * s),
            (true, false) => full - (d * 4.0 + m * 3.0 + h * s),
            // Memory-efficient attention is one compute-bound node: balanced checkpointing
            // keeps it and what it reads, and recomputes little else in the block.
            (true, true) => full,
        }
    }

    /// What a block's attention keeps a token beyond its projections
    /// ([`crate::estimate::llama_block_values_per_token`]): the scores, their softmax and
    /// their exponentials written out (`3 h s + h`), or memory-efficient attention's
    /// logsumexp (`h`), with the keys and values at their own heads where the written-out
    /// block keeps them repeated to every head (`2 (d - kv_width)` fewer in full training;
    /// [`EFFICIENT_LORA_FEWER_D`] `d` under LoRA, fitted).
    pub fn attention_values_per_token(&self) -> T {
        let (d, h) = (self.d_model, self.heads);
        if self.attention_chunk.is_none() {
            return h * ATTENTION_VALUES_PER_HEAD * self.seq + h;
        }
        let fewer = match (self.family, self.lora()) {
            (Family::Gpt, _) => Self::zero(),
            (_, None) => (d - self.kv_width()) * 2.0,
            (_, Some(_)) => d * EFFICIENT_LORA_FEWER_D,
        };
        h * EFFICIENT_ATTENTION_VALUES_PER_HEAD - fewer
    }

    /// What the model keeps per token outside its blocks
    /// ([`crate::estimate::outside_values_per_token`],
    /// [`crate::estimate::llama_outside_values_per_token`]).
    pub fn outside_values_per_token(&self) -> T {
        let d = self.d_model;
        match (self.family, self.lora()) {
            (Family::Gpt, _) => self.loss_values_per_token() + d * 3.0 + 4.0,
            (_, Some(_)) => d + 2.0 + self.loss_values_per_token() + 2.0,
            (_, None) => d * 3.0 + 2.0 + self.loss_values_per_token() + 2.0,
        }
    }

    /// What the loss keeps a token ([`crate::estimate::llama_outside_values_per_token`]):
    /// log-softmax over the vocabulary and its `log` input (`v + 1`), or the chunked loss's
    /// logsumexp (1) and, under LoRA, the hidden state a frozen head's matmul would not have
    /// kept and the loss's gradient of it, made with the loss (`2 d`).
    pub fn loss_values_per_token(&self) -> T {
        match (self.loss_chunk.is_some(), self.lora()) {
            (false, _) => self.vocab + 1.0,
            (true, None) => T::num(1.0),
            (true, Some(_)) => self.d_model * 2.0 + 1.0,
        }
    }

    /// One more value over the vocabulary a token under checkpointing
    /// ([`crate::estimate::checkpointed_loss_values_per_token`]).
    pub fn checkpointed_loss_values_per_token(&self, checkpointing: Checkpointing) -> T {
        match (checkpointing, self.loss_chunk.is_some()) {
            (Checkpointing::Balanced, false) => self.vocab,
            _ => Self::zero(),
        }
    }

    /// Bytes the forward pass keeps per sequence, in f32.
    pub fn kept_bytes_per_sample(&self, checkpointing: Checkpointing) -> T {
        self.seq
            * (self.layers * self.block_values_per_token(checkpointing)
                + self.outside_values_per_token()
                + self.checkpointed_loss_values_per_token(checkpointing))
            * F32_BYTES as f64
    }

    /// Bytes of the loss's transient per sequence, in f32: log-softmax over the vocabulary.
    pub fn loss_bytes_per_sample(&self) -> T {
        self.vocab * self.seq * F32_BYTES as f64
    }

    /// Bytes of the loss's transient at the forward pass's end for `micro` sequences, at
    /// `act` times f32's bytes a value: log-softmax's output over the vocabulary, or the
    /// chunked loss's [`CHUNKED_LOSS_LOGIT_CHUNKS`] chunks of f32 logits
    /// ([`crate::estimate::chunked_loss_transient_bytes`]).
    pub fn loss_transient_bytes(&self, micro: T, act: T) -> T {
        match self.loss_chunk {
            None => micro * self.loss_bytes_per_sample() * act,
            Some(chunk) => {
                let rows = smaller(chunk, micro * self.seq);
                rows * self.vocab * CHUNKED_LOSS_LOGIT_CHUNKS * F32_BYTES as f64
            }
        }
    }

    /// Bytes of memory-efficient attention's backward for `micro` sequences, at `act_bytes` a
    /// value: [`EFFICIENT_ATTENTION_BACKWARD_CHUNKS`] tensors of a chunk's scores against
    /// every key (none where the scores are written out)
    /// ([`crate::estimate::efficient_attention_backward_bytes`]).
    pub fn efficient_attention_backward_bytes(&self, micro: T, act_bytes: T) -> T {
        match self.attention_chunk {
            None => Self::zero(),
            Some(chunk) => {
                let rows = smaller(chunk, self.seq);
                micro
                    * EFFICIENT_ATTENTION_BACKWARD_CHUNKS
                    * self.heads
                    * rows
                    * self.seq
                    * act_bytes
            }
        }
    }

    /// Bytes of a sequence's inputs and targets.
    pub fn input_bytes_per_sample(&self) -> T {
        self.seq * 2.0 * TOKEN_BYTES as f64
    }

    /// The trainable parameters of one Llama-family block
    /// ([`crate::estimate::llama_block_trainable_params`]).
    pub fn block_trainable_params(&self) -> T {
        let (d, m, k) = (self.d_model, self.mlp, self.kv_width());
        match self.lora() {
            Some(_) => self.lora_rank * (d * 3.0 + k),
            None => d * 2.0 + d * d * 2.0 + d * k * 2.0 + d * m * 3.0,
        }
    }

    /// Copies of the per-sequence weight gradient of a `d x out` Linear on `micro` sequences,
    /// at `bytes` a value, or through f32 copies of it and its operands
    /// ([`crate::estimate::llama_backward_bytes`]).
    fn weight_gradient_copies(&self, micro: T, out: T, bytes: T, via_f32: bool) -> T {
        let (d, f32_bytes) = (self.d_model, F32_BYTES as f64);
        match via_f32 {
            true => {
                micro * BACKWARD_WEIGHT_GRADIENT_COPIES * d * out * f32_bytes
                    + micro * self.seq * (d + out) * f32_bytes
            }
            false => micro * BACKWARD_WEIGHT_GRADIENT_COPIES * d * out * bytes,
        }
    }

    /// Backward's peak above what was kept ([`crate::estimate::transformer_backward_bytes`],
    /// [`crate::estimate::llama_backward_bytes`]).
    pub fn backward_bytes(&self, micro: T, bytes: ValueBytes<T>, ck: Checkpointing) -> T {
        match self.family {
            Family::Gpt => self.gpt_backward_bytes(micro, bytes, ck),
            Family::Llama { .. } => self.llama_backward_bytes(micro, bytes, ck),
        }
    }

    fn gpt_backward_bytes(&self, micro: T, b: ValueBytes<T>, ck: Checkpointing) -> T {
        let (d, h, seq) = (self.d_model, self.heads, self.seq);
        let (act, tokens) = (b.activation, micro * seq);
        let largest = match self.loss_chunk {
            None => self.largest_weight_gradient_bytes(micro, b),
            Some(_) => {
                let mlp = self.weight_gradient_copies(micro, d * 4.0, b.param, b.via_f32);
                mlp.max(self.head_backward_bytes(micro, b))
            }
        };
        let per_sequence = largest - tokens * self.checkpointed_loss_values_per_token(ck) * act;
        let score_bytes = match b.via_f32 {
            true => T::num(2.0 * F32_BYTES as f64),
            false => act * 2.0,
        };
        let scores = match self.attention_chunk {
            None => micro * h * seq * seq * score_bytes,
            Some(_) => self.efficient_attention_backward_bytes(micro, act),
        };
        let attention =
            d * d * 12.0 * b.param + scores - d * FREED_BEFORE_ATTENTION_D * tokens * act;
        let first_block = match ck {
            Checkpointing::None => Self::zero(),
            Checkpointing::Balanced => {
                let later = (self.layers - 1.0).max(Self::zero()) * self.block_values_per_token(ck);
                (h * BALANCED_FIRST_BLOCK_SCORES * seq - later) * tokens * act
            }
        };
        per_sequence.max(attention).max(first_block)
    }

    fn llama_backward_bytes(&self, micro: T, b: ValueBytes<T>, ck: Checkpointing) -> T {
        let (d, m, h, seq) = (self.d_model, self.mlp, self.heads, self.seq);
        let (act, tokens) = (b.activation, micro * seq);
        let block_grads = self.block_trainable_params() * b.param;
        if self.lora().is_some() {
            return self.lora_backward_bytes(tokens, act, ck) + block_grads;
        }
        let dm = d * m;
        let copies = self.weight_gradient_copies(micro, m, act, b.via_f32);
        let head = self.head_backward_bytes(micro, b);
        let last = dm * 2.0 * b.param + copies.max(dm * 3.0 * act) - m * 4.0 * tokens * act;
        let scores = match self.attention_chunk {
            None => micro * 2.0 * h * seq * seq * act,
            Some(_) => self.efficient_attention_backward_bytes(micro, act),
        };
        let attention = (dm * 3.0 + d * d) * b.param + scores - m * 5.0 * tokens * act;
        copies.max(head).max(last).max(attention)
    }

    /// The head's weight gradient at backward's peak ([`crate::estimate::llama_backward_bytes`]):
    /// two copies of its per-sequence product (`[micro, d, v]`), or under the chunked loss the
    /// gradient itself with one chunk of its columns, and that chunk's f32 logits over every
    /// token (a chunk of `chunk x v` values: [`CHUNKED_LOSS_LOGIT_CHUNKS`] of them).
    pub fn head_backward_bytes(&self, micro: T, b: ValueBytes<T>) -> T {
        let (d, v) = (self.d_model, self.vocab);
        match self.loss_chunk {
            None => self.weight_gradient_copies(micro, v, b.activation, b.via_f32),
            Some(chunk) => {
                let rows = smaller(chunk, micro * self.seq);
                let columns = smaller(rows * v / (micro * self.seq), v);
                d * (v + columns) * b.param
                    + rows * v * CHUNKED_LOSS_LOGIT_CHUNKS * F32_BYTES as f64
            }
        }
    }

    /// Values of one block's projection weights.
    pub fn block_projection_values(&self) -> T {
        let (d, m, k) = (self.d_model, self.mlp, self.kv_width());
        d * d * 2.0 + d * k * 2.0 + d * m * 3.0
    }

    /// The weights' bytes ([`crate::estimate::llama_weight_bytes`]).
    pub fn weight_bytes(&self, param_bytes: T, allocator: Allocator) -> T {
        let all = self.params() * param_bytes;
        match self.family {
            Family::Llama {
                base_bits: Some(bits),
                ..
            } => {
                let base = self.layers * self.block_projection_values();
                all - base * (param_bytes - allocator.quantized_value_bytes(bits))
            }
            _ => all,
        }
    }

    /// Weight-sized bytes a LoRA step keeps ([`crate::estimate::llama_frozen_kept_bytes`]).
    pub fn frozen_kept_bytes(&self, value_bytes: T) -> T {
        let (Family::Llama { base_bits, .. }, Some(form)) = (self.family, self.lora()) else {
            return Self::zero();
        };
        let (d, m, k) = (self.d_model, self.mlp, self.kv_width());
        let later = (self.layers - 1.0).max(Self::zero());
        let composed = match form {
            LoraForm::Composed => later * (d * d + d * k),
            LoraForm::ActivationPath => Self::zero(),
        };
        let dequantized = match base_bits {
            Some(_) => d * d + d * m * 3.0 + later * self.block_projection_values() - composed,
            None => Self::zero(),
        };
        (composed + dequantized) * value_bytes
    }

    /// The largest weight gradient computed per sequence, for `micro` sequences of the GPT
    /// block ([`crate::estimate::backward_transient_bytes_per_sample`]).
    pub fn largest_weight_gradient_bytes(&self, micro: T, bytes: ValueBytes<T>) -> T {
        let out = (self.d_model * 4.0).max(self.vocab);
        self.weight_gradient_copies(micro, out, bytes.param, bytes.via_f32)
    }

    /// Backward's peak under LoRA above what was kept, for `tokens` tokens, without the
    /// adapters' gradients ([`crate::estimate::lora_backward_bytes`]).
    pub fn lora_backward_bytes(&self, tokens: T, act_bytes: T, ck: Checkpointing) -> T {
        let loss = match self.loss_chunk {
            None => tokens * self.vocab * 2.0 * act_bytes,
            // The frozen head's gradients were made with the loss: backward scales them.
            Some(_) => Self::zero(),
        };
        let attention = match self.attention_chunk {
            None => tokens * self.heads * LORA_ATTENTION_BACKWARD * self.seq * act_bytes,
            Some(_) => {
                let freed = (self.d_model + self.mlp) * LORA_FREED_BEFORE_ATTENTION;
                self.efficient_attention_backward_bytes(tokens / self.seq, act_bytes)
                    - tokens * freed * act_bytes
            }
        };
        // Under balanced checkpointing the loss's backward first frees what the loss kept and
        // the checkpointed copy beside it (fitted: see `crate::estimate::lora_backward_bytes`).
        let freed = match (ck, self.loss_chunk.is_some()) {
            (Checkpointing::Balanced, false) => {
                tokens * (self.loss_values_per_token() + self.vocab) * act_bytes
            }
            _ => Self::zero(),
        };
        (loss.max(attention) - freed).max(Self::zero())
    }

    /// Bytes of the key/value cache per token ([`crate::estimate::kv_cache_bytes_per_token`]).
    pub fn kv_cache_bytes_per_token(&self, value_bytes: T) -> T {
        let width = match self.family {
            Family::Llama { .. } => self.kv_width(),
            Family::Gpt => self.d_model,
        };
        self.layers * 2.0 * width * value_bytes
    }

    /// Values per prompt token a Llama-family block holds at once without a graph
    /// ([`crate::estimate::llama_prefill_values_per_token`]).
    pub fn prefill_values_per_token(&self, ctx: T) -> T {
        let (d, h) = (self.d_model, self.heads);
        let repeated = (h - self.kv_heads).positive_or(d * 2.0, Self::zero());
        let attention = h * 2.0 * ctx + d * 2.0 + repeated;
        attention.max(self.mlp * 3.0 + d * 2.0)
    }

    /// Bytes the prompt's pass holds above the weights and the cache
    /// ([`crate::estimate::llama_prefill_bytes`]; the GPT block's: its scores and their
    /// softmax in 16 bits and the f32 logits, projected, not measured).
    pub fn prefill_bytes(&self, batch: T, ctx: T, value_bytes: T) -> T {
        let (v, tokens) = (self.vocab, batch * ctx);
        match self.family {
            Family::Llama { .. } => {
                let block = tokens * self.prefill_values_per_token(ctx) * value_bytes;
                block.max(tokens * v * F32_BYTES as f64)
            }
            Family::Gpt => batch * (self.heads * 2.0 * ctx * ctx * 2.0 + ctx * v * 4.0),
        }
    }
}

/// The smaller of `a` and `b`, in the operations a [`Scalar`] records (`a - max(a - b, 0)`).
fn smaller<T: Scalar>(a: T, b: T) -> T {
    a - (a - b).max(T::num(0.0))
}

/// Bytes a value of each kind takes in a step, and whether its matmuls run through f32 copies.
#[derive(Debug, Clone, Copy)]
pub struct ValueBytes<T> {
    /// A stored parameter, gradient and optimizer value.
    pub param: T,
    /// A kept activation.
    pub activation: T,
    /// The 16-bit weight copy kept for backward (mixed precision; 0 otherwise).
    pub weight_copy: T,
    /// Whether the backend multiplies 16-bit values through f32 copies (Flex).
    pub via_f32: bool,
}

/// A decoder's training step: its sizes and what it is run with.
#[derive(Debug, Clone, Copy)]
pub struct Step<T> {
    /// The model.
    pub model: Decoder<T>,
    /// Sequences per optimizer step.
    pub batch: T,
    /// Micro-batches the batch is accumulated over (1: none).
    pub micro_batches: T,
    /// Values of the optimizer's state.
    pub optimizer_values: T,
    /// Bytes of an optimizer state value.
    pub optimizer_value_bytes: T,
    /// Bytes of each kind of value.
    pub bytes: ValueBytes<T>,
    /// What the forward pass keeps.
    pub checkpointing: Checkpointing,
    /// Whose rules decide the buffers.
    pub allocator: Allocator,
}

/// The components of a decoder's training step ([`crate::estimate::StepPlan::bytes_on`]).
pub fn step_bytes<T: Scalar>(step: &Step<T>) -> StepBytes<T> {
    let (s, b, ck) = (&step.model, step.bytes, step.checkpointing);
    let micro = step.batch / step.micro_batches.max(T::num(1.0));
    let act = b.activation / F32_BYTES as f64;
    let grads = s.trainable_params() * b.param;
    StepBytes {
        weights: s.weight_bytes(b.param, step.allocator),
        optimizer: step.optimizer_values * step.optimizer_value_bytes,
        weight_copies: s.params() * b.weight_copy,
        inputs: step.batch * s.input_bytes_per_sample(),
        kept: micro * s.kept_bytes_per_sample(ck) * act + s.frozen_kept_bytes(b.param),
        loss_transient: s.loss_transient_bytes(micro, act),
        backward_transient: s.backward_bytes(micro, b, ck),
        grads,
        update_transient: s.largest_trainable() * b.param,
        accumulated: (step.micro_batches - 1.0).positive_or(grads, T::num(0.0)),
    }
}

/// The parts of generation's peak ([`crate::capacity::InferencePlan::bytes`]).
#[derive(Debug, Clone, Copy)]
pub struct Generation<T> {
    /// The model (its adapters merged: the base's count).
    pub model: Decoder<T>,
    /// Sequences generated at once.
    pub batch: T,
    /// Tokens per sequence.
    pub context: T,
    /// Bits per weight.
    pub weight_bits: T,
    /// Bits per cached key or value.
    pub kv_bits: T,
}

/// Generation's bytes: weights, key/value cache, working copy, prefill (in that order).
pub fn inference_bytes<T: Scalar>(g: &Generation<T>) -> [T; 4] {
    let s = &g.model;
    let (d, v) = (s.d_model, s.vocab);
    let largest = match s.family {
        Family::Llama { .. } => (d * s.mlp).max(d * v),
        Family::Gpt => (d * d * 4.0).max(d * v),
    };
    [
        s.params() * (g.weight_bits / 8.0),
        g.batch * g.context * s.kv_cache_bytes_per_token(g.kv_bits / 8.0),
        (T::num(16.0) - g.weight_bits).positive_or(largest * 4.0, T::num(0.0)),
        s.prefill_bytes(g.batch, g.context, T::num(2.0)),
    ]
}

/// Generation's peak: every part held at once (the prompt's pass ends with the cache full).
pub fn inference_peak<T: Scalar>([weights, kv_cache, working_copy, prefill]: [T; 4]) -> T {
    weights + kv_cache + working_copy + prefill
}

/// Bytes a CUDA card loses before the first tensor: the CUDA context and the framework's own
/// allocations. The Hugging Face single-GPU guide reads 1,343 MB in use after CUDA's
/// initialisation alone on a V100; VRAM calculators reserve 300 MiB to 2 GiB. Every "fits"
/// answer takes it off the card first.
pub const CUDA_CONTEXT_BYTES: f64 = 1_343e6;

/// The bytes of a card of `card_bytes` a plan may use: the card less [`CUDA_CONTEXT_BYTES`],
/// less `margin` of the rest.
pub fn usable_bytes<T: Scalar>(card_bytes: T, margin: T) -> T {
    ((card_bytes - CUDA_CONTEXT_BYTES) * (T::num(1.0) - margin)).max(T::num(0.0))
}
