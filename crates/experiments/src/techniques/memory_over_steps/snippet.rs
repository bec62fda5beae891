use burn::module::Module;
use burn::optim::{GradientsParams, ModuleOptimizer};
use burn::tensor::Tensor;

use crate::harness::models::mlp::{self, Mlp};

/// One training step that leaves nothing behind: the loss is read as a number
/// (`into_scalar`), never kept as a tensor, and evaluation runs on `model.valid()`, whose
/// tensors carry no autodiff graph.
pub fn step(
    model: Mlp,
    optim: &mut ModuleOptimizer,
    x: Tensor<2>,
    y: Tensor<2>,
    losses: &mut Vec<f64>,
) -> Mlp {
    let loss = mlp::loss(&model, x, y);
    losses.push(loss.clone().into_scalar::<f64>());
    let grads = GradientsParams::from_grads(loss.backward(), &model);
    optim.step(1e-3, model, grads)
}

/// Evaluation without a graph: `valid()` is the model without autodiff, and the input is
/// taken off the autodiff device with `inner()`.
pub fn evaluate(model: &Mlp, x: Tensor<2>) -> f64 {
    model.valid().forward(x.inner()).mean().into_scalar::<f64>()
}
