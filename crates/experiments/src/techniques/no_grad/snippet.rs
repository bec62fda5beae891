use burn::module::AutodiffModule;
use burn::nn::Linear;
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::Tensor;

/// Evaluate without a graph: `valid()` returns the module on the inner backend,
/// `inner()` the input. Nothing is recorded for backward, and nothing lingers.
fn evaluate<B: AutodiffBackend>(model: &Linear<B>, x: Tensor<B, 2>) -> Tensor<B::InnerBackend, 2> {
    let eval_model = model.valid();
    eval_model.forward(x.inner())
}

/// The trap: on the autodiff backend this pass records a graph, and dropping
/// the output does not free it; it stays alive until the next `backward()`.
fn evaluate_on_autodiff<B: AutodiffBackend>(model: &Linear<B>, x: Tensor<B, 2>) -> Tensor<B, 2> {
    model.forward(x)
}
