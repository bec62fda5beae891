//! Attention over query chunks, and its backward (FlashAttention-2's, chunk by chunk).
//!
//! Forward: for each chunk of `chunk` query rows, the scores against every key it may see
//! (`[batch, heads, chunk, seq_k]`), masked, their softmax, the output rows and each row's
//! logsumexp; only the output and the logsumexp (`[batch, heads, seq_q, 1]`) outlive the chunk.
//! Backward: per chunk, the scores again, `P = exp(S - lse)`, then `dV += Pᵀ dO`, `dP = dO Vᵀ`,
//! `D = rowsum(P ∘ dP)` (equal to FlashAttention-2's `rowsum(dO ∘ O)`, so the output itself is
//! not kept), `dS = P ∘ (dP - D)`, `dQ = dS K`, `dK += dSᵀ Q`, each scaled.
//!
//! Grouped-query attention: the `heads / kv_heads` query heads of a key/value head are laid
//! out as rows of one matrix (`[batch, kv_heads, group x chunk, head_dim]`), so keys and values
//! are never repeated. Masks follow Burn's `attention`: `true` is masked out (the score set to
//! minus infinity), causal is aligned to the bottom-right corner, and a row with every key
//! masked gives zeros.

use core::ops::Range;

use burn::backend::tensor::{BoolTensor, FloatTensor};

use crate::chunks::{add_into, along, narrow, ranges, write_or_take};
use burn::backend::TensorMetadata;
use burn::backend::{get_or_init_device_settings, Backend, FloatDType, Shape, Slice};

/// How [`crate::attention`] runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AttentionOptions {
    /// Query rows per chunk: the scores held at once are `batch x heads x chunk x seq_k`.
    pub chunk: usize,
    /// Mask every key after the query's position (bottom-right aligned, as Burn's
    /// `attention`).
    pub causal: bool,
    /// The scores' scale; `None` is `1 / sqrt(head_dim)`.
    pub scale: Option<f64>,
}

impl AttentionOptions {
    /// Causal attention in chunks of `chunk` query rows, the default scale.
    pub fn causal(chunk: usize) -> Self {
        Self {
            chunk,
            causal: true,
            scale: None,
        }
    }

    /// Attention without the causal mask (a mask of your own may still be given).
    pub fn full(chunk: usize) -> Self {
        Self {
            causal: false,
            ..Self::causal(chunk)
        }
    }

    /// The same options with the scores scaled by `scale`.
    pub fn with_scale(self, scale: f64) -> Self {
        Self {
            scale: Some(scale),
            ..self
        }
    }
}

/// The forward pass's output and what its backward keeps.
pub(crate) struct Forward<B: Backend> {
    /// `[batch, heads, seq_q, value_dim]`.
    pub output: FloatTensor<B>,
    /// Each query row's logsumexp of its scaled, masked scores: `[batch, heads, seq_q, 1]`.
    pub logsumexp: FloatTensor<B>,
}

/// The gradients asked for; `None` where the input takes none.
pub(crate) struct Grads<B: Backend> {
    pub query: Option<FloatTensor<B>>,
    pub key: Option<FloatTensor<B>>,
    pub value: Option<FloatTensor<B>>,
}

/// The shapes of one call, checked once.
#[derive(Debug, Clone, Copy)]
struct Layout {
    batch: usize,
    heads: usize,
    kv_heads: usize,
    seq_q: usize,
    seq_k: usize,
    head_dim: usize,
    value_dim: usize,
    scale: f64,
    /// `seq_k - seq_q`: the causal mask's diagonal (Burn's bottom-right alignment).
    offset: i64,
    chunk: usize,
    causal: bool,
}

impl Layout {
    fn of<B: Backend>(
        query: &FloatTensor<B>,
        key: &FloatTensor<B>,
        value: &FloatTensor<B>,
        options: &AttentionOptions,
    ) -> Self {
        let [batch, heads, seq_q, head_dim] = dims4(&query.shape(), "query");
        let [kb, kv_heads, seq_k, kd] = dims4(&key.shape(), "key");
        let [vb, vh, vs, value_dim] = dims4(&value.shape(), "value");
        assert!(
            kb == batch && vb == batch && kd == head_dim && vh == kv_heads && vs == seq_k,
            "attention: query {:?}, key {:?} and value {:?} do not fit",
            query.shape(),
            key.shape(),
            value.shape()
        );
        assert!(
            kv_heads > 0 && heads % kv_heads == 0,
            "attention: {heads} query heads are not a multiple of {kv_heads} key/value heads"
        );
        assert!(options.chunk > 0, "attention: a chunk of 0 query rows");
        assert!(seq_q > 0 && seq_k > 0, "attention: no query or no key");
        Self {
            batch,
            heads,
            kv_heads,
            seq_q,
            seq_k,
            head_dim,
            value_dim,
            scale: options
                .scale
                .unwrap_or_else(|| 1.0 / (head_dim as f64).sqrt()),
            offset: seq_k as i64 - seq_q as i64,
            chunk: options.chunk,
            causal: options.causal,
        }
    }

    fn group(&self) -> usize {
        self.heads / self.kv_heads
    }

    /// The query rows of each chunk.
    fn chunks(&self) -> impl Iterator<Item = Range<usize>> {
        ranges(self.seq_q, self.chunk)
    }

    /// The keys rows `rows` may see: all of them, or under the causal mask those up to the
    /// last row's diagonal (at least one, so that a chunk of fully masked rows still has a
    /// score to mask).
    fn keys_seen(&self, rows: &Range<usize>) -> usize {
        if !self.causal {
            return self.seq_k;
        }
        (rows.end as i64 + self.offset).clamp(1, self.seq_k as i64) as usize
    }
}

fn dims4(shape: &Shape, name: &str) -> [usize; 4] {
    assert_eq!(shape.num_dims(), 4, "attention: {name} must have 4 dims");
    [shape[0], shape[1], shape[2], shape[3]]
}

fn zeros<B: Backend>(like: &FloatTensor<B>, dims: [usize; 4]) -> FloatTensor<B> {
    crate::chunks::zeros::<B>(Shape::new(dims), like)
}

impl Layout {
    /// `[batch, heads, rows, x]` as `[batch, kv_heads, group x rows, x]` (a copy where the rows
    /// are a view of a longer sequence).
    fn grouped<B: Backend>(&self, tensor: FloatTensor<B>) -> FloatTensor<B> {
        let [_, _, rows, x] = dims4(&tensor.shape(), "chunk");
        let shape = Shape::new([self.batch, self.kv_heads, self.group() * rows, x]);
        B::float_reshape(tensor, shape)
    }

    /// The inverse of [`Layout::grouped`].
    fn ungrouped<B: Backend>(&self, tensor: FloatTensor<B>, rows: usize) -> FloatTensor<B> {
        let [_, _, _, x] = dims4(&tensor.shape(), "chunk");
        B::float_reshape(tensor, Shape::new([self.batch, self.heads, rows, x]))
    }

    /// The scaled, masked scores of a grouped query chunk against the first `keys` keys:
    /// `[batch, heads, rows, keys]`.
    fn scores<B: Backend>(
        &self,
        query: FloatTensor<B>,
        key: FloatTensor<B>,
        mask: Option<&BoolTensor<B>>,
        rows: &Range<usize>,
    ) -> FloatTensor<B> {
        let keys = key.shape()[2];
        let scores = B::float_matmul(query, B::float_transpose(key));
        let scores = B::float_mul_scalar(scores, self.scale.into());
        let scores = self.ungrouped::<B>(scores, rows.len());
        match self.chunk_mask::<B>(mask, rows, keys, &scores) {
            Some(mask) => B::float_mask_fill(scores, mask, f32::NEG_INFINITY.into()),
            None => scores,
        }
    }

    /// The mask of a chunk's scores (`[batch, heads, rows, keys]`, `true` masked): the
    /// caller's, its rows and keys taken, or with the causal mask.
    fn chunk_mask<B: Backend>(
        &self,
        mask: Option<&BoolTensor<B>>,
        rows: &Range<usize>,
        keys: usize,
        scores: &FloatTensor<B>,
    ) -> Option<BoolTensor<B>> {
        let full = Shape::new([self.batch, self.heads, rows.len(), keys]);
        let given = mask.map(|m| {
            let shape = m.shape();
            let row_range = if shape[2] == 1 { 0..1 } else { rows.clone() };
            let mut slices = along(&shape, 2, row_range);
            slices[3] = Slice::from(0..keys);
            B::bool_expand(B::bool_slice(m.clone(), &slices), full.clone())
        });
        let causal = self
            .causal
            .then(|| B::bool_expand(self.causal_mask::<B>(rows, keys, scores), full));
        match (given, causal) {
            (Some(a), Some(b)) => Some(B::bool_or(a, b)),
            (a, b) => a.or(b),
        }
    }

    /// `[1, 1, rows, keys]`: true where the key comes after the row's diagonal.
    fn causal_mask<B: Backend>(
        &self,
        rows: &Range<usize>,
        keys: usize,
        like: &FloatTensor<B>,
    ) -> BoolTensor<B> {
        let device = like.device();
        let settings = get_or_init_device_settings::<B>(&device);
        let r = rows.start as i64 + self.offset..rows.end as i64 + self.offset;
        let diagonal = B::int_reshape(
            B::int_arange(r, &device, settings.int_dtype),
            Shape::new([rows.len(), 1]),
        );
        let columns = B::int_reshape(
            B::int_arange(0..keys as i64, &device, settings.int_dtype),
            Shape::new([1, keys]),
        );
        let mask = B::int_lower(diagonal, columns, settings.bool_dtype);
        B::bool_reshape(mask, Shape::new([1, 1, rows.len(), keys]))
    }
}

/// Attention in chunks of query rows, keeping each row's logsumexp for the backward.
pub(crate) fn forward<B: Backend>(
    query: FloatTensor<B>,
    key: FloatTensor<B>,
    value: FloatTensor<B>,
    mask: Option<BoolTensor<B>>,
    options: &AttentionOptions,
) -> Forward<B> {
    let l = Layout::of::<B>(&query, &key, &value, options);
    let info = FloatDType::from(query.dtype()).finfo();
    let (mut output, mut logsumexp) = (None, None);
    for rows in l.chunks() {
        let keys = l.keys_seen(&rows);
        let q = l.grouped::<B>(narrow::<B>(query.clone(), 2, rows.clone()));
        let k = narrow::<B>(key.clone(), 2, 0..keys);
        let scores = l.scores::<B>(q, k, mask.as_ref(), &rows);
        // Burn's NaN-safe softmax: a fully masked row's max is clamped to the most negative
        // finite value and its sum to the least positive one, so it gives zeros.
        let max = B::float_clamp_min(B::float_max_dim(scores.clone(), 3), info.min.into());
        let exp = B::float_exp(B::float_sub(scores, max.clone()));
        let sum = B::float_clamp_min(B::float_sum_dim(exp.clone(), 3), info.min_positive.into());
        let probabilities = l.grouped::<B>(B::float_div(exp, sum.clone()));
        let v = narrow::<B>(value.clone(), 2, 0..keys);
        let rows_out = l.ungrouped::<B>(B::float_matmul(probabilities, v), rows.len());
        output = Some(write_or_take::<B>(
            output,
            2,
            rows.clone(),
            l.seq_q,
            rows_out,
        ));
        let lse = B::float_add(max, B::float_log(sum));
        logsumexp = Some(write_or_take::<B>(logsumexp, 2, rows, l.seq_q, lse));
    }
    Forward {
        output: output.expect("a query row"),
        logsumexp: logsumexp.expect("a query row"),
    }
}

/// The gradients of [`forward`]'s output for `grad_output`, the scores recomputed chunk by
/// chunk; only the inputs in `wanted` (query, key, value) get one.
#[allow(clippy::too_many_arguments)]
pub(crate) fn backward<B: Backend>(
    query: FloatTensor<B>,
    key: FloatTensor<B>,
    value: FloatTensor<B>,
    mask: Option<BoolTensor<B>>,
    logsumexp: FloatTensor<B>,
    grad_output: FloatTensor<B>,
    options: &AttentionOptions,
    wanted: [bool; 3],
) -> Grads<B> {
    let l = Layout::of::<B>(&query, &key, &value, options);
    let [want_q, want_k, want_v] = wanted;
    let mut grads = Grads {
        query: None,
        key: want_k.then(|| zeros::<B>(&key, [l.batch, l.kv_heads, l.seq_k, l.head_dim])),
        value: want_v.then(|| zeros::<B>(&value, [l.batch, l.kv_heads, l.seq_k, l.value_dim])),
    };
    for rows in l.chunks() {
        let keys = l.keys_seen(&rows);
        let q = l.grouped::<B>(narrow::<B>(query.clone(), 2, rows.clone()));
        let k = narrow::<B>(key.clone(), 2, 0..keys);
        let v = narrow::<B>(value.clone(), 2, 0..keys);
        let scores = l.scores::<B>(q.clone(), k.clone(), mask.as_ref(), &rows);
        let lse = narrow::<B>(logsumexp.clone(), 2, rows.clone());
        let p = l.grouped::<B>(B::float_exp(B::float_sub(scores, lse)));
        let d_out = l.grouped::<B>(narrow::<B>(grad_output.clone(), 2, rows.clone()));
        if let Some(dv) = grads.value.take() {
            let part = B::float_matmul(B::float_transpose(p.clone()), d_out.clone());
            grads.value = Some(add_into::<B>(dv, 2, 0..keys, part));
        }
        let d_p = B::float_matmul(d_out, B::float_transpose(v));
        let d_scores = B::float_mul_scalar(softmax_backward::<B>(p, d_p), l.scale.into());
        if want_q {
            let part = B::float_matmul(d_scores.clone(), k);
            let part = l.ungrouped::<B>(part, rows.len());
            let dq = write_or_take::<B>(grads.query.take(), 2, rows.clone(), l.seq_q, part);
            grads.query = Some(dq);
        }
        if let Some(dk) = grads.key.take() {
            let part = B::float_matmul(B::float_transpose(d_scores), q);
            grads.key = Some(add_into::<B>(dk, 2, 0..keys, part));
        }
    }
    grads
}

/// `dS = P ∘ (dP - rowsum(P ∘ dP))`: the softmax's backward, rows on the last dim.
fn softmax_backward<B: Backend>(p: FloatTensor<B>, d_p: FloatTensor<B>) -> FloatTensor<B> {
    if crate::mutation::drops_softmax_delta() {
        return B::float_mul(p, d_p);
    }
    let delta = B::float_sum_dim(B::float_mul(p.clone(), d_p.clone()), 3);
    B::float_mul(p, B::float_sub(d_p, delta))
}
