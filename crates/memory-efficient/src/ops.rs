//! The backend extension: the two ops as methods every backend answers.
//!
//! Their default bodies compose Burn's own tensor primitives (matmul, exp, sums, slices), so
//! Flex and the CubeCL backends (wgpu, CUDA) run them without a kernel of ours; the autodiff
//! backend overrides both with a node whose backward recomputes each chunk
//! ([`crate::autodiff`]).

use burn::backend::tensor::{BoolTensor, FloatTensor, IntTensor};
use burn::backend::{backend_extension, Backend, ExtensionType};

use crate::cross_entropy::Head;
use crate::{attention, cross_entropy, AttentionOptions};

/// Memory-efficient attention and the chunked linear cross-entropy, dispatched per backend.
///
/// Call them through [`crate::attention`] and [`crate::linear_cross_entropy`]; implement this
/// trait only to give a backend a kernel of its own.
#[backend_extension(
    Flex: cfg(feature = "flex"),
    Cube: cfg(any(feature = "wgpu", feature = "cuda")),
    Autodiff,
)]
pub trait MemoryEfficientOps: Backend {
    /// Attention over query chunks: `[batch, heads, seq_q, head_dim]` queries against
    /// `[batch, kv_heads, seq_k, head_dim]` keys and values; the output has the queries' shape
    /// with the values' width.
    fn chunked_attention(
        query: FloatTensor<Self>,
        key: FloatTensor<Self>,
        value: FloatTensor<Self>,
        #[extension_type] mask: AttentionMask<Self>,
        options: AttentionOptions,
    ) -> FloatTensor<Self> {
        attention::forward::<Self>(query, key, value, mask.into_option(), &options).output
    }

    /// Mean cross-entropy of `hidden @ weight` (`[tokens, d_model]` by `[d_model, vocab]`)
    /// against `targets` (`[tokens]`), over token chunks: a `[1]` tensor.
    fn linear_cross_entropy(
        hidden: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        targets: IntTensor<Self>,
        chunk: usize,
    ) -> FloatTensor<Self> {
        let head = Head { weight, bias: None };
        cross_entropy::forward::<Self>(hidden, head, targets, chunk, None).loss
    }

    /// [`MemoryEfficientOps::linear_cross_entropy`] of `hidden @ weight + bias` (`bias`:
    /// `[vocab]`).
    fn linear_cross_entropy_with_bias(
        hidden: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        targets: IntTensor<Self>,
        chunk: usize,
    ) -> FloatTensor<Self> {
        let bias = Some(bias);
        cross_entropy::forward::<Self>(hidden, Head { weight, bias }, targets, chunk, None).loss
    }
}

/// The caller's mask of [`MemoryEfficientOps::chunked_attention`], if any: an enum rather
/// than an `Option`, which Burn 0.22.1's extension macro does not map across backends.
#[derive(ExtensionType, Debug)]
pub enum AttentionMask<B: Backend> {
    /// No mask of the caller's (a causal mask is the options').
    None,
    /// `true` where a score is masked out.
    Given(BoolTensor<B>),
}

impl<B: Backend> From<Option<BoolTensor<B>>> for AttentionMask<B> {
    fn from(mask: Option<BoolTensor<B>>) -> Self {
        mask.map_or(Self::None, Self::Given)
    }
}

impl<B: Backend> AttentionMask<B> {
    /// The mask as an `Option`.
    pub fn into_option(self) -> Option<BoolTensor<B>> {
        match self {
            Self::None => None,
            Self::Given(mask) => Some(mask),
        }
    }
}

#[cfg(feature = "flex")]
impl MemoryEfficientOps for burn::backend::Flex {}

#[cfg(any(feature = "wgpu", feature = "cuda"))]
impl MemoryEfficientOps for burn::backend::Cube {}
