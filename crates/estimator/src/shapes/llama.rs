//! The Llama-family decoder's shape: token embedding, pre-norm blocks (RMSNorm; causal
//! attention with rotary positions and grouped-query attention; a SwiGLU MLP), a final RMSNorm and
//! a head; no biases. With a LoRA rank, the base is frozen and the query and value projections
//! carry adapters of that rank, the only trainable parameters.

use serde::{Deserialize, Serialize};

use super::Chunked;

pub use crate::decoder::LoraForm;
use crate::decoder::{Decoder, Family};

/// The shape of a Llama-family decoder (the experiments' `Llama`) and of the sequences it trains on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LlamaShape {
    /// Tokens in the vocabulary.
    pub vocab: usize,
    /// Width of the residual stream.
    pub d_model: usize,
    /// Blocks.
    pub layers: usize,
    /// Query heads (`d_model` must be a multiple).
    pub heads: usize,
    /// Key/value heads (`heads` must be a multiple; equal to `heads`: multi-head attention).
    pub kv_heads: usize,
    /// Width of the SwiGLU MLP's hidden layer.
    pub mlp: usize,
    /// Tokens per sequence.
    pub seq: usize,
    /// Whether the head reuses the token embedding's weights.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tied_head: bool,
    /// LoRA rank on the query and value projections, the base frozen (none: full training).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lora_rank: Option<usize>,
    /// How the adapters of a LoRA rank are applied (the workbench's own on the activation
    /// path, in records made before Burn had its own).
    #[serde(default, skip_serializing_if = "LoraForm::is_activation_path")]
    pub lora_form: LoraForm,
    /// Bits of the frozen base's block projections under LoRA (QLoRA: 8 or 4), quantized with
    /// min-max calibration and one f32 scale per tensor; none: f32.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_bits: Option<u8>,
    /// Whether attention runs Burn's fused `attention` instead of the written-out scores.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fused_attention: bool,
    /// burn-memory-efficient's attention and loss, where the step runs them.
    #[serde(default, skip_serializing_if = "Chunked::is_none")]
    pub chunked: Chunked,
}

impl LlamaShape {
    /// Width of one head.
    pub fn head_dim(&self) -> usize {
        self.d_model / self.heads
    }

    /// Width of the key (and of the value) projection: key/value heads x head width.
    pub fn kv_width(&self) -> usize {
        self.kv_heads * self.head_dim()
    }

    /// Parameters of the base model: the embedding, per block two RMSNorm scales, the query
    /// and output projections (`d x d`), the key and value projections (`d x kv_width`), the
    /// SwiGLU MLP (`3 d m`), the final norm and the head (none when tied); no biases.
    pub fn base_params(&self) -> u64 {
        Decoder::from(self).base_params() as u64
    }

    /// Parameters of the LoRA adapters: per block `r (d + d)` on the query and `r (d +
    /// kv_width)` on the value projection (none without a rank).
    pub fn adapter_params(&self) -> u64 {
        Decoder::from(self).adapter_params() as u64
    }

    /// The shapes of the tensors a step trains: the adapters' factors under LoRA (`[d_in, r]`
    /// and `[r, d_out]` on the query and value projections), every parameter otherwise.
    pub fn trainable_shapes(&self) -> Vec<Vec<usize>> {
        let (v, d, m, k) = (self.vocab, self.d_model, self.mlp, self.kv_width());
        if let Some(r) = self.lora_rank {
            let adapters = [vec![d, r], vec![r, d], vec![d, r], vec![r, k]];
            return (0..self.layers).flat_map(|_| adapters.clone()).collect();
        }
        let block = [
            vec![d],
            vec![d, d],
            vec![d, k],
            vec![d, k],
            vec![d, d],
            vec![d],
            vec![d, m],
            vec![d, m],
            vec![m, d],
        ];
        let mut shapes = vec![vec![v, d]];
        (0..self.layers).for_each(|_| shapes.extend(block.clone()));
        shapes.push(vec![d]);
        if !self.tied_head {
            shapes.push(vec![d, v]);
        }
        shapes
    }

    /// Every parameter, adapters included.
    pub fn num_params(&self) -> u64 {
        self.base_params() + self.adapter_params()
    }

    /// The parameters a step trains (gradients and optimizer state): the adapters under LoRA,
    /// every parameter otherwise.
    pub fn trainable_params(&self) -> u64 {
        match self.lora_rank {
            Some(_) => self.adapter_params(),
            None => self.num_params(),
        }
    }

    /// Floating-point operations of the matrix products of one training step on `batch`
    /// sequences: forward `2 * tokens * (l (2 d^2 + 2 d k + 3 d m) + 2 l s d + d v)`, backward
    /// twice that (an approximation under LoRA, whose base needs no weight gradient).
    pub fn step_matmul_flop(&self, batch: usize) -> u64 {
        let (v, d, s, l, m, k) = (
            self.vocab,
            self.d_model,
            self.seq,
            self.layers,
            self.mlp,
            self.kv_width(),
        );
        let per_token = (l * (2 * d * d + 2 * d * k + 3 * d * m) + 2 * l * s * d + d * v) as u64;
        6 * (batch * s) as u64 * per_token
    }

    /// Tokens in a batch of `batch` sequences.
    pub fn tokens(&self, batch: usize) -> u64 {
        (batch * self.seq) as u64
    }

    /// The shape in words.
    pub fn describe(&self) -> String {
        format!(
            "Llama-family d_model {}, {} blocks, {} heads ({} key/value), SwiGLU {}, sequence {}, \
             vocabulary {}",
            self.d_model, self.layers, self.heads, self.kv_heads, self.mlp, self.seq, self.vocab
        )
    }
}

impl From<&LlamaShape> for Decoder<f64> {
    fn from(s: &LlamaShape) -> Self {
        let n = |x: usize| x as f64;
        Decoder {
            family: Family::Llama {
                lora: s.lora_rank.map(|_| s.lora_form),
                base_bits: s.base_bits,
            },
            vocab: n(s.vocab),
            d_model: n(s.d_model),
            layers: n(s.layers),
            heads: n(s.heads),
            kv_heads: n(s.kv_heads),
            mlp: n(s.mlp),
            seq: n(s.seq),
            tied: f64::from(u8::from(s.tied_head)),
            lora_rank: n(s.lora_rank.unwrap_or(0)),
            attention_chunk: s.chunked.attention.map(n),
            loss_chunk: s.chunked.loss.map(n),
        }
    }
}
