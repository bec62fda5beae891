use burn::tensor::Tensor;

/// Takes the input by value: `x - mean` writes into x's buffer when nothing else holds it.
/// Only `square()` needs a buffer of its own (it reads `centered` twice).
pub fn layer_norm_owned(x: Tensor<2>, eps: f64) -> Tensor<2> {
    let mean = x.clone().mean_dim(1); // the clone is gone once mean_dim returns
    let centered = x - mean; // x is uniquely owned: in place
    let var = centered.clone().square().mean_dim(1);
    centered / var.add_scalar(eps).sqrt() // in place
}

/// Takes the input by reference, as code that needs `x` afterwards does (a residual): every
/// first write into a value of x's size needs a new buffer, one more than above.
pub fn layer_norm_borrowed(x: &Tensor<2>, eps: f64) -> Tensor<2> {
    let mean = x.clone().mean_dim(1);
    let centered = x.clone() - mean; // x is shared: a new buffer
    let var = centered.clone().square().mean_dim(1);
    centered / var.add_scalar(eps).sqrt()
}

/// An element-wise chain (softplus of x/2): the first op on a shared tensor allocates, every
/// later op runs in place on the unique intermediate. `chain(x)` reuses x's buffer;
/// `chain(x.clone())` while x is still needed allocates one tensor's worth, once.
pub fn chain(x: Tensor<2>) -> Tensor<2> {
    x.mul_scalar(0.5).exp().add_scalar(1.0).log()
}
