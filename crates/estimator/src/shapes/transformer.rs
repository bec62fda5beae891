//! The GPT-style decoder's shape: token and learned position embeddings, pre-norm blocks
//! (multi-head attention, a 4x MLP with GELU), a final norm and a linear head, or tied.

use serde::{Deserialize, Serialize};

use super::Chunked;

use crate::decoder::{Decoder, Family};

/// The shape of a GPT-style transformer (the experiments' `Transformer`) and of the sequences it trains on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransformerShape {
    /// Tokens in the vocabulary.
    pub vocab: usize,
    /// Width of the residual stream.
    pub d_model: usize,
    /// Blocks.
    pub layers: usize,
    /// Attention heads (`d_model` must be a multiple).
    pub heads: usize,
    /// Tokens per sequence.
    pub seq: usize,
    /// Whether the head reuses the token embedding's weights (GPT-2 and most LLMs tie them): no
    /// head weight or bias of its own. The measured experiments' models are untied.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tied_head: bool,
    /// burn-memory-efficient's attention and loss, where the step runs them.
    #[serde(default, skip_serializing_if = "Chunked::is_none")]
    pub chunked: Chunked,
}

impl TransformerShape {
    /// The parameter tensors' shapes, in the experiments' `BuildTransformer::init`'s order.
    pub fn param_shapes(&self) -> Vec<Vec<usize>> {
        let (v, d, s) = (self.vocab, self.d_model, self.seq);
        let linear = |i: usize, o: usize| [vec![i, o], vec![o]];
        let norm = || [vec![d], vec![d]];
        let block = || {
            let mut b: Vec<Vec<usize>> = norm().into();
            (0..4).for_each(|_| b.extend(linear(d, d)));
            b.extend(norm());
            b.extend(linear(d, 4 * d));
            b.extend(linear(4 * d, d));
            b
        };
        let mut shapes = vec![vec![v, d], vec![s, d]];
        (0..self.layers).for_each(|_| shapes.extend(block()));
        shapes.extend(norm());
        if !self.tied_head {
            shapes.extend(linear(d, v));
        }
        shapes
    }

    /// Parameters: embeddings, per block four `d x d` attention projections and the `d x 4d`
    /// and `4d x d` MLP (with biases) and two layer norms, the final norm and the head (with its
    /// bias; none when tied).
    pub fn num_params(&self) -> u64 {
        Decoder::from(self).params() as u64
    }

    /// Floating-point operations of the matrix products of one training step on `batch`
    /// sequences: forward `2 * tokens * (12 l d^2 + 2 l s d + d v)` (projections and MLP,
    /// attention scores and context, head), backward twice that.
    pub fn step_matmul_flop(&self, batch: usize) -> u64 {
        let (v, d, s, l) = (self.vocab, self.d_model, self.seq, self.layers);
        let tokens = (batch * s) as u64;
        let per_token = (12 * l * d * d + 2 * l * s * d + d * v) as u64;
        6 * tokens * per_token
    }

    /// Tokens in a batch of `batch` sequences.
    pub fn tokens(&self, batch: usize) -> u64 {
        (batch * self.seq) as u64
    }
}

impl From<&TransformerShape> for Decoder<f64> {
    fn from(s: &TransformerShape) -> Self {
        let n = |x: usize| x as f64;
        Decoder {
            family: Family::Gpt,
            vocab: n(s.vocab),
            d_model: n(s.d_model),
            layers: n(s.layers),
            heads: n(s.heads),
            kv_heads: n(s.heads),
            mlp: 0.0,
            seq: n(s.seq),
            tied: f64::from(u8::from(s.tied_head)),
            lora_rank: 0.0,
            attention_chunk: s.chunked.attention.map(n),
            loss_chunk: s.chunked.loss.map(n),
        }
    }
}
