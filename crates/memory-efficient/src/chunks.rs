//! Slicing a tensor into chunks and writing the chunks' results back: what both ops share.

use core::ops::Range;

use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, FloatDType, Shape, Slice, TensorMetadata};

/// `0..len` in consecutive ranges of `size` (the last shorter).
pub(crate) fn ranges(len: usize, size: usize) -> impl Iterator<Item = Range<usize>> {
    (0..len).step_by(size).map(move |r| r..(r + size).min(len))
}

/// The full slices of `shape`, with `range` on `dim`.
pub(crate) fn along(shape: &Shape, dim: usize, range: Range<usize>) -> Vec<Slice> {
    (0..shape.num_dims())
        .map(|d| {
            if d == dim {
                Slice::from(range.clone())
            } else {
                Slice::from(0..shape[d])
            }
        })
        .collect()
}

/// `tensor`'s rows `range` along `dim` (a view where the backend has views).
pub(crate) fn narrow<B: Backend>(
    tensor: FloatTensor<B>,
    dim: usize,
    range: Range<usize>,
) -> FloatTensor<B> {
    let slices = along(&tensor.shape(), dim, range);
    B::float_slice(tensor, &slices)
}

/// `accumulator` with `part` added into its rows `range` along `dim`.
pub(crate) fn add_into<B: Backend>(
    accumulator: FloatTensor<B>,
    dim: usize,
    range: Range<usize>,
    part: FloatTensor<B>,
) -> FloatTensor<B> {
    let slices = along(&accumulator.shape(), dim, range);
    let sum = B::float_add(B::float_slice(accumulator.clone(), &slices), part);
    B::float_slice_assign(accumulator, &slices, sum)
}

/// `accumulator` with `part` written into its rows `range` along `dim`.
pub(crate) fn write_into<B: Backend>(
    accumulator: FloatTensor<B>,
    dim: usize,
    range: Range<usize>,
    part: FloatTensor<B>,
) -> FloatTensor<B> {
    let slices = along(&accumulator.shape(), dim, range);
    B::float_slice_assign(accumulator, &slices, part)
}

/// `part` written into the rows `range` along `dim` of a result whose size there is `len`,
/// made (zeros) on the first chunk; the part itself where it is the whole result, so that a
/// result is never held beside a copy of itself.
pub(crate) fn write_or_take<B: Backend>(
    result: Option<FloatTensor<B>>,
    dim: usize,
    range: Range<usize>,
    len: usize,
    part: FloatTensor<B>,
) -> FloatTensor<B> {
    if range.len() == len {
        return part;
    }
    let result = result.unwrap_or_else(|| {
        let mut dims = part.shape();
        dims[dim] = len;
        zeros::<B>(dims, &part)
    });
    write_into::<B>(result, dim, range, part)
}

/// Zeros of `shape` on `like`'s device and in its float type, made as one buffer: Flex's
/// `float_zeros` builds its bytes unaligned and copies them once aligned (a transient the
/// size of the result, measured at a weight's gradient), where `float_full` fills a typed
/// buffer in place.
pub(crate) fn zeros<B: Backend>(shape: Shape, like: &FloatTensor<B>) -> FloatTensor<B> {
    let dtype = FloatDType::from(like.dtype());
    B::float_full(shape, 0.0f64.into(), &like.device(), dtype)
}
