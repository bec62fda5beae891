use burn::tensor::Tensor;

/// Free: slices, narrow, transpose/swap_dims, a reshape of a contiguous tensor, expand.
/// They share the parent's buffer and only change shape, strides and offset.
pub fn free_views(x: &Tensor<2>) -> [Tensor<2>; 3] {
    let [rows, cols] = x.dims();
    [
        x.clone().narrow(0, 0, rows / 2),
        x.clone().transpose(),
        x.clone().reshape([cols, rows]),
    ]
}

/// Copies: a reshape that the strides cannot express, or an element-wise op on a strided view.
pub fn copies(x: &Tensor<2>) -> Tensor<1> {
    let [rows, cols] = x.dims();
    x.clone().transpose().reshape([rows * cols])
}

/// The trap: a one-row view keeps the whole parent buffer alive after the parent is dropped.
pub fn first_row_view(x: Tensor<2>) -> Tensor<2> {
    x.narrow(0, 0, 1)
}

/// The fix: copy the row out (into_data copies just the row) so the parent can be freed.
pub fn first_row_copy(x: Tensor<2>) -> Tensor<2> {
    let device = x.device();
    Tensor::from_data(x.narrow(0, 0, 1).into_data(), &device)
}
