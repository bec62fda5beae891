//! The head's matmul and the cross-entropy over token chunks, and its backward.
//!
//! Forward: for each chunk of `chunk` tokens, the logits `hidden_c @ weight (+ bias)`
//! (`[chunk, vocab]`), their logsumexp and the target's logit; only the loss and each token's
//! logsumexp (`[tokens, 1]`) outlive the chunk. Backward: per chunk of the vocabulary's
//! columns (every token), the logits again, `G = (softmax - onehot(target)) x dLoss /
//! tokens`, then `dWeight_c = hiddenᵀ G` and `dBias_c = colsum(G)`, each written once, and
//! `dHidden += G weight_cᵀ`: the only accumulator is hidden-sized, where chunks of tokens would
//! have added weight-sized parts into a weight-sized sum. The softmax statistics are computed in f32 at least (a bf16 or
//! f16 step's logits are cast per chunk), as a mixed-precision loss is.

use core::ops::Range;

use burn::backend::tensor::{FloatTensor, IndexingUpdateOp, IntTensor};
use burn::backend::{
    get_or_init_device_settings, Backend, FloatDType, Shape, Slice, TensorMetadata,
};

use crate::chunks::{narrow, ranges, write_or_take};

/// The forward pass's loss and what its backward keeps.
pub(crate) struct Forward<B: Backend> {
    /// The mean loss, `[1]`, in the statistics' float type.
    pub loss: FloatTensor<B>,
    /// Each token's logsumexp, `[tokens, 1]`, in the statistics' float type.
    pub logsumexp: FloatTensor<B>,
    /// A frozen head's gradients for a loss gradient of 1, where they were asked for.
    pub eager: Option<Grads<B>>,
}

/// The gradients asked for; `None` where the input takes none.
#[derive(Debug, Clone)]
pub(crate) struct Grads<B: Backend> {
    pub hidden: Option<FloatTensor<B>>,
    pub weight: Option<FloatTensor<B>>,
    pub bias: Option<FloatTensor<B>>,
}

/// The head: its weight `[d_model, vocab]` and its bias `[vocab]`, if it has one.
#[derive(Debug, Clone)]
pub(crate) struct Head<B: Backend> {
    pub weight: FloatTensor<B>,
    pub bias: Option<FloatTensor<B>>,
}

/// The shapes of one call, checked once.
struct Layout {
    tokens: usize,
    vocab: usize,
    chunk: usize,
}

impl Layout {
    fn of<B: Backend>(
        hidden: &FloatTensor<B>,
        head: &Head<B>,
        targets: &IntTensor<B>,
        chunk: usize,
    ) -> Self {
        let (h, w, t) = (hidden.shape(), head.weight.shape(), targets.shape());
        assert!(
            h.num_dims() == 2 && w.num_dims() == 2 && t.num_dims() == 1,
            "linear_cross_entropy: hidden [tokens, d_model], weight [d_model, vocab] and \
             targets [tokens] expected, got {h:?}, {w:?} and {t:?}"
        );
        assert!(
            h[1] == w[0] && h[0] == t[0],
            "linear_cross_entropy: hidden {h:?}, weight {w:?} and targets {t:?} do not fit"
        );
        if let Some(bias) = &head.bias {
            assert_eq!(
                bias.shape().as_slice(),
                &[w[1]],
                "linear_cross_entropy: the bias must be [vocab]"
            );
        }
        assert!(chunk > 0, "linear_cross_entropy: a chunk of 0 tokens");
        assert!(
            h[0] > 0 && w[1] > 0,
            "linear_cross_entropy: no token or no logit"
        );
        Self {
            tokens: h[0],
            vocab: w[1],
            chunk,
        }
    }

    fn chunks(&self) -> impl Iterator<Item = Range<usize>> {
        ranges(self.tokens, self.chunk)
    }

    /// The vocabulary's columns in chunks of as many logits as a chunk of tokens has.
    fn vocab_chunks(&self) -> impl Iterator<Item = Range<usize>> {
        let width = (self.chunk * self.vocab).div_ceil(self.tokens.max(1));
        ranges(self.vocab, width.clamp(1, self.vocab.max(1)))
    }
}

/// The float type of the softmax statistics: the input's, and at least f32.
fn stats_dtype(dtype: FloatDType) -> FloatDType {
    match dtype {
        FloatDType::F64 => FloatDType::F64,
        _ => FloatDType::F32,
    }
}

fn dtype_of<B: Backend>(tensor: &FloatTensor<B>) -> FloatDType {
    FloatDType::from(tensor.dtype())
}

/// `tensor` in `dtype` (itself where it already is).
fn cast<B: Backend>(tensor: FloatTensor<B>, dtype: FloatDType) -> FloatTensor<B> {
    if dtype_of::<B>(&tensor) == dtype {
        tensor
    } else {
        B::float_cast(tensor, dtype)
    }
}

/// A chunk's targets as gather indices, `[rows, 1]`.
fn target_rows<B: Backend>(targets: &IntTensor<B>, rows: &Range<usize>) -> IntTensor<B> {
    let slice = B::int_slice(targets.clone(), &[Slice::from(rows.clone())]);
    B::int_reshape(slice, Shape::new([rows.len(), 1]))
}

/// A chunk's logits in the statistics' type.
fn logits<B: Backend>(
    hidden: &FloatTensor<B>,
    head: &Head<B>,
    rows: &Range<usize>,
) -> FloatTensor<B> {
    let h = narrow::<B>(hidden.clone(), 0, rows.clone());
    let logits = B::float_matmul(h, head.weight.clone());
    let logits = match &head.bias {
        Some(bias) => B::float_add(logits, B::float_reshape(bias.clone(), bias_row::<B>(bias))),
        None => logits,
    };
    cast::<B>(logits, stats_dtype(dtype_of::<B>(hidden)))
}

/// `[1, vocab]`: the bias as a row of logits.
fn bias_row<B: Backend>(bias: &FloatTensor<B>) -> Shape {
    Shape::new([1, bias.shape()[0]])
}

/// The mean cross-entropy, chunk by chunk, keeping each token's logsumexp. With `eager`
/// (which inputs take a gradient: hidden, weight, bias), where the weight takes none, the
/// gradients of the hidden states and the bias for a loss gradient of 1 as well, in the same
/// pass: a frozen head's backward then scales them instead of computing the logits again.
pub(crate) fn forward<B: Backend>(
    hidden: FloatTensor<B>,
    head: Head<B>,
    targets: IntTensor<B>,
    chunk: usize,
    eager: Option<[bool; 3]>,
) -> Forward<B> {
    let l = Layout::of::<B>(&hidden, &head, &targets, chunk);
    let dtype = stats_dtype(dtype_of::<B>(&hidden));
    let device = hidden.device();
    let eager = eager.filter(|wanted| !wanted[1]);
    let mut total = B::float_full(Shape::new([1]), 0.0f64.into(), &device, dtype);
    let (mut logsumexp, mut grads) = (None, eager.map(|_| Grads::none()));
    for rows in l.chunks() {
        let logits = logits::<B>(&hidden, &head, &rows);
        let max = B::float_max_dim(logits.clone(), 1);
        let shifted = B::float_exp(B::float_sub(logits.clone(), max.clone()));
        let sum = B::float_sum_dim(shifted.clone(), 1);
        let targets = target_rows::<B>(&targets, &rows);
        let target = B::float_gather(1, logits, targets.clone());
        if let (Some(g), Some(wanted)) = (grads.as_mut(), eager) {
            let softmax = B::float_div(shifted, sum.clone());
            let d_logits = minus_target::<B>(softmax, &targets, &(0..l.vocab));
            let d_logits = B::float_div_scalar(d_logits, (l.tokens as f64).into());
            g.add_rows(&l, &head, &rows, d_logits, wanted, dtype_of::<B>(&hidden));
        }
        let lse = B::float_add(max, B::float_log(sum));
        let part = B::float_sum(B::float_sub(lse.clone(), target));
        total = B::float_add(total, part);
        logsumexp = Some(write_or_take::<B>(logsumexp, 0, rows, l.tokens, lse));
    }
    Forward {
        loss: B::float_div_scalar(total, (l.tokens as f64).into()),
        logsumexp: logsumexp.expect("a token"),
        eager: grads,
    }
}

impl<B: Backend> Grads<B> {
    fn none() -> Self {
        Self {
            hidden: None,
            weight: None,
            bias: None,
        }
    }

    /// A chunk of rows' part of a frozen head's gradients, from its logits' gradient: the
    /// hidden states' rows written, the bias's summed.
    fn add_rows(
        &mut self,
        l: &Layout,
        head: &Head<B>,
        rows: &Range<usize>,
        d_logits: FloatTensor<B>,
        wanted: [bool; 3],
        h_dtype: FloatDType,
    ) {
        if wanted[2] {
            if let Some(bias) = &head.bias {
                let part = B::float_sum_dim(d_logits.clone(), 0);
                let part = cast::<B>(B::float_reshape(part, bias.shape()), dtype_of::<B>(bias));
                self.bias = Some(match self.bias.take() {
                    Some(db) => B::float_add(db, part),
                    None => part,
                });
            }
        }
        if wanted[0] {
            let d_logits = cast::<B>(d_logits, h_dtype);
            let part = B::float_matmul(d_logits, B::float_transpose(head.weight.clone()));
            let dh = write_or_take::<B>(self.hidden.take(), 0, rows.clone(), l.tokens, part);
            self.hidden = Some(dh);
        }
    }

    /// The gradients scaled by the loss's gradient `grad_loss` (`[1]`).
    pub(crate) fn scaled(self, grad_loss: FloatTensor<B>) -> Self {
        let scale = |g: FloatTensor<B>| {
            let mut dims = g.shape();
            dims.iter_mut().for_each(|d| *d = 1);
            let factor = cast::<B>(grad_loss.clone(), dtype_of::<B>(&g));
            let factor = B::float_reshape(factor, dims);
            B::float_mul(g, factor)
        };
        Self {
            hidden: self.hidden.map(scale),
            weight: self.weight.map(scale),
            bias: self.bias.map(scale),
        }
    }
}

/// The gradients of [`forward`]'s loss for `grad_loss` (`[1]`), the logits recomputed a
/// chunk of the vocabulary at a time (every token, `chunk x vocab / tokens` columns: the
/// forward pass's chunk of logits), so that each column of the weight's gradient is written
/// once, and only the hidden states' gradient (`[tokens, d_model]`) is accumulated. Only the
/// inputs in `wanted` (hidden, weight, bias) get one.
pub(crate) fn backward<B: Backend>(
    hidden: FloatTensor<B>,
    head: Head<B>,
    targets: IntTensor<B>,
    logsumexp: FloatTensor<B>,
    grad_loss: FloatTensor<B>,
    chunk: usize,
    wanted: [bool; 3],
) -> Grads<B> {
    let l = Layout::of::<B>(&hidden, &head, &targets, chunk);
    let (h_dtype, w_dtype) = (dtype_of::<B>(&hidden), dtype_of::<B>(&head.weight));
    // dLoss / tokens, broadcast over a chunk's logits.
    let scale = B::float_div_scalar(
        B::float_reshape(
            cast::<B>(grad_loss, stats_dtype(h_dtype)),
            Shape::new([1, 1]),
        ),
        (l.tokens as f64).into(),
    );
    let targets = B::int_reshape(targets, Shape::new([l.tokens, 1]));
    let mut grads = Grads {
        hidden: None,
        weight: None,
        bias: None,
    };
    for cols in l.vocab_chunks() {
        let columns = Head {
            weight: narrow::<B>(head.weight.clone(), 1, cols.clone()),
            bias: head.bias.clone().map(|b| narrow::<B>(b, 0, cols.clone())),
        };
        let logits = logits::<B>(&hidden, &columns, &(0..l.tokens));
        let softmax = B::float_exp(B::float_sub(logits, logsumexp.clone()));
        let d_logits = minus_target::<B>(softmax, &targets, &cols);
        let d_logits = cast::<B>(B::float_mul(d_logits, scale.clone()), h_dtype);
        if wanted[1] {
            let part = B::float_matmul(B::float_transpose(hidden.clone()), d_logits.clone());
            let part = cast::<B>(part, w_dtype);
            let dw = write_or_take::<B>(grads.weight.take(), 1, cols.clone(), l.vocab, part);
            grads.weight = Some(dw);
        }
        if wanted[2] && head.bias.is_some() {
            let part = B::float_sum_dim(d_logits.clone(), 0);
            let part = cast::<B>(part, w_dtype);
            let db = write_or_take::<B>(grads.bias.take(), 1, cols.clone(), l.vocab, part);
            grads.bias = Some(db);
        }
        if wanted[0] {
            let part = B::float_matmul(d_logits, B::float_transpose(columns.weight));
            grads.hidden = Some(match grads.hidden.take() {
                Some(dh) => B::float_add(dh, part),
                None => part,
            });
        }
    }
    grads.bias = grads
        .bias
        .map(|b| B::float_reshape(b, Shape::new([l.vocab])));
    grads
}

/// The softmax's gradient of the cross-entropy over the vocabulary's columns `cols`: the
/// softmax less one at each row's target (`targets`, `[rows, 1]`) where it falls in them.
fn minus_target<B: Backend>(
    softmax: FloatTensor<B>,
    targets: &IntTensor<B>,
    cols: &Range<usize>,
) -> FloatTensor<B> {
    if crate::mutation::drops_target_term() {
        return softmax;
    }
    let device = softmax.device();
    let settings = get_or_init_device_settings::<B>(&device);
    let local = B::int_sub_scalar(targets.clone(), (cols.start as i64).into());
    let inside = B::bool_and(
        B::int_greater_equal_elem(local.clone(), 0i64.into(), settings.bool_dtype),
        B::int_lower_elem(
            local.clone(),
            (cols.len() as i64).into(),
            settings.bool_dtype,
        ),
    );
    // -1 at the target's column where it is one of these, 0 (at column 0) where it is not.
    let minus_one = B::float_neg(B::bool_into_float(inside, dtype_of::<B>(&softmax)));
    let index = B::int_clamp(local, 0i64.into(), (cols.len() as i64 - 1).into());
    B::float_scatter(1, softmax, index, minus_one, IndexingUpdateOp::Add)
}
