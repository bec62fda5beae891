//! The shapes of the models the estimator knows: the MLP, the GPT-style decoder and the
//! Llama-family decoder, from which parameters, FLOPs and the byte rules' inputs are counted.
//! (Building a model of a shape is the experiments' half: `BuildModel`.)

mod llama;
mod mlp;
mod transformer;

pub use llama::{LlamaShape, LoraForm};
pub use mlp::MlpShape;
use results::Unit;
use serde::{Deserialize, Serialize};
pub use transformer::TransformerShape;

/// Which of burn-memory-efficient's ops a decoder runs in place of Burn's (none by default),
/// with their chunks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunked {
    /// Memory-efficient attention over chunks of this many query rows, in place of the
    /// written-out scores (or Burn's fused call, which autodiff writes out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attention: Option<usize>,
    /// The head's matmul and the cross-entropy over chunks of this many tokens, in place of
    /// the whole logits and Burn's `CrossEntropyLoss`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<usize>,
}

impl Chunked {
    /// Query rows per chunk of the workbench's memory-efficient attention: a few `[heads,
    /// 256, seq]` tensors at once in backward, an eighth of one score tensor at 2,048 tokens.
    pub const ATTENTION_ROWS: usize = 256;
    /// Tokens per chunk of the workbench's chunked loss: `512 x vocabulary` logits at once.
    pub const LOSS_TOKENS: usize = 512;

    /// Burn's own ops: nothing chunked (left out of records).
    pub fn is_none(&self) -> bool {
        self.attention.is_none() && self.loss.is_none()
    }

    /// Memory-efficient attention at the workbench's chunk.
    pub fn attention() -> Self {
        Self {
            attention: Some(Self::ATTENTION_ROWS),
            loss: None,
        }
    }

    /// The chunked loss at the workbench's chunk.
    pub fn loss() -> Self {
        Self {
            attention: None,
            loss: Some(Self::LOSS_TOKENS),
        }
    }

    /// Both, at the workbench's chunks.
    pub fn both() -> Self {
        Self {
            attention: Some(Self::ATTENTION_ROWS),
            loss: Some(Self::LOSS_TOKENS),
        }
    }
}

/// Which model a point trains, with its shape. Serialised as the shape alone (the fields tell
/// the two apart), so that records written before the transformer existed still read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ModelShape {
    /// The Llama-family decoder (first: its key/value heads and MLP width tell it from the
    /// GPT-style transformer, whose fields it has).
    Llama(LlamaShape),
    /// The decoder-only transformer.
    Transformer(TransformerShape),
    /// The MLP.
    Mlp(MlpShape),
}

impl From<MlpShape> for ModelShape {
    fn from(shape: MlpShape) -> Self {
        ModelShape::Mlp(shape)
    }
}

impl From<LlamaShape> for ModelShape {
    fn from(shape: LlamaShape) -> Self {
        ModelShape::Llama(shape)
    }
}

impl From<TransformerShape> for ModelShape {
    fn from(shape: TransformerShape) -> Self {
        ModelShape::Transformer(shape)
    }
}

impl ModelShape {
    /// The MLP's shape, if this is the MLP.
    pub fn mlp(&self) -> Option<MlpShape> {
        match self {
            ModelShape::Mlp(s) => Some(*s),
            _ => None,
        }
    }

    /// The transformer's shape, if this is the transformer.
    pub fn transformer(&self) -> Option<TransformerShape> {
        match self {
            ModelShape::Transformer(s) => Some(*s),
            _ => None,
        }
    }

    /// The Llama-family decoder's shape, if this is it.
    pub fn llama(&self) -> Option<LlamaShape> {
        match self {
            ModelShape::Llama(s) => Some(*s),
            _ => None,
        }
    }

    /// The same model running `chunked`'s ops (the MLP has no attention or loss to chunk).
    pub fn with_chunked(self, chunked: Chunked) -> Self {
        match self {
            ModelShape::Llama(s) => ModelShape::Llama(LlamaShape { chunked, ..s }),
            ModelShape::Transformer(s) => {
                ModelShape::Transformer(TransformerShape { chunked, ..s })
            }
            mlp => mlp,
        }
    }

    /// What burn-memory-efficient runs in the model (nothing for the MLP).
    pub fn chunked(&self) -> Chunked {
        match self {
            ModelShape::Llama(s) => s.chunked,
            ModelShape::Transformer(s) => s.chunked,
            ModelShape::Mlp(_) => Chunked::default(),
        }
    }

    /// Tokens per sequence of a decoder (none for the MLP).
    pub fn seq(&self) -> Option<usize> {
        match self {
            ModelShape::Mlp(_) => None,
            ModelShape::Transformer(s) => Some(s.seq),
            ModelShape::Llama(s) => Some(s.seq),
        }
    }

    /// The parameters a step trains: every one, but the adapters alone under LoRA.
    pub fn trainable_params(&self) -> u64 {
        match self {
            ModelShape::Llama(s) => s.trainable_params(),
            _ => self.num_params(),
        }
    }

    /// The shapes of the parameter tensors a step trains (the adapters alone under LoRA), for
    /// the rules whose state follows the tensors' shapes (Adafactor's).
    pub fn trainable_shapes(&self) -> Vec<Vec<usize>> {
        match self {
            ModelShape::Mlp(s) => s.param_shapes(),
            ModelShape::Transformer(s) => s.param_shapes(),
            ModelShape::Llama(s) => s.trainable_shapes(),
        }
    }

    /// Layers of the MLP, blocks of the transformer.
    pub fn depth(&self) -> usize {
        match self {
            ModelShape::Mlp(s) => s.depth,
            ModelShape::Transformer(s) => s.layers,
            ModelShape::Llama(s) => s.layers,
        }
    }

    /// Whether this is a decoder (the GPT-style transformer or the Llama family).
    pub fn is_transformer(&self) -> bool {
        !matches!(self, ModelShape::Mlp(_))
    }

    /// A short name for labels and ids (`mlp`, `transformer`).
    pub fn kind(&self) -> &'static str {
        match self {
            ModelShape::Mlp(_) => "mlp",
            ModelShape::Transformer(_) => "transformer",
            ModelShape::Llama(_) => "llama",
        }
    }

    /// The shape in words (`MLP 8 x 1024`, `transformer d_model 256, 4 blocks, 4 heads,
    /// sequence 128, vocabulary 512`).
    pub fn describe(&self) -> String {
        match self {
            ModelShape::Mlp(s) => format!("MLP {} x {}", s.depth, s.width),
            ModelShape::Transformer(s) => format!(
                "transformer d_model {}, {} blocks, {} heads, sequence {}, vocabulary {}",
                s.d_model, s.layers, s.heads, s.seq, s.vocab
            ),
            ModelShape::Llama(s) => s.describe(),
        }
    }

    /// Number of parameters.
    pub fn num_params(&self) -> u64 {
        match self {
            ModelShape::Mlp(s) => s.num_params(),
            ModelShape::Transformer(s) => s.num_params(),
            ModelShape::Llama(s) => s.num_params(),
        }
    }

    /// Floating-point operations of the matrix products of one training step on `batch`.
    pub fn step_matmul_flop(&self, batch: usize) -> u64 {
        match self {
            ModelShape::Mlp(s) => s.step_matmul_flop(batch),
            ModelShape::Transformer(s) => s.step_matmul_flop(batch),
            ModelShape::Llama(s) => s.step_matmul_flop(batch),
        }
    }

    /// What throughput counts (samples for the MLP, tokens for the transformer) and how many
    /// of them a batch of `batch` holds.
    pub fn units(&self, batch: usize) -> (Unit, u64) {
        match self {
            ModelShape::Mlp(_) => (Unit::Samples, batch as u64),
            ModelShape::Transformer(s) => (Unit::Tokens, s.tokens(batch)),
            ModelShape::Llama(s) => (Unit::Tokens, s.tokens(batch)),
        }
    }
}
