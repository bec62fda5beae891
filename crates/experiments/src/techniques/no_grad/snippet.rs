use burn::module::Module;
use burn::nn::Linear;
use burn::tensor::Tensor;

/// Evaluate without a graph: `valid()` returns the module without autodiff, `inner()` the
/// input. Nothing is recorded for backward, and nothing lingers.
pub fn evaluate(model: &Linear, x: Tensor<2>) -> Tensor<2> {
    let eval_model = model.valid();
    eval_model.forward(x.inner())
}

/// The trap: on the autodiff device this pass records a graph, and dropping the output does
/// not free it; it stays alive until the next `backward()`.
pub fn evaluate_on_autodiff(model: &Linear, x: Tensor<2>) -> Tensor<2> {
    model.forward(x)
}
