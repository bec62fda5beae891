use burn::optim::{GradientsParams, Optimizer};
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{ElementConversion, Tensor};

use crate::harness::models::mlp::{self, Mlp};

/// One training step that leaves nothing behind: the loss is read as a number
/// (`into_scalar`), never kept as a tensor, and evaluation runs on `model.valid()`, whose
/// tensors carry no autodiff graph.
pub fn step<B: AutodiffBackend, O: Optimizer<Mlp<B>, B>>(
    model: Mlp<B>,
    optim: &mut O,
    x: Tensor<B, 2>,
    y: Tensor<B, 2>,
    losses: &mut Vec<f64>,
) -> Mlp<B> {
    let loss = mlp::loss(&model, x, y);
    losses.push(loss.clone().into_scalar().elem::<f64>());
    let grads = GradientsParams::from_grads(loss.backward(), &model);
    optim.step(1e-3, model, grads)
}

/// Evaluation without a graph: `valid()` is the model on the inner backend.
pub fn evaluate<B: AutodiffBackend>(model: &Mlp<B>, x: Tensor<B::InnerBackend, 2>) -> f64 {
    use burn::module::AutodiffModule;
    model.valid().forward(x).mean().into_scalar().elem::<f64>()
}

// A data loader that makes batches on a thread of its own gives each thread a CubeCL stream,
// and each stream a pool. The workaround reported in burn#4971 (whether it holds on a backend
// is what the page's reading of every pool says), in `cubecl.toml` beside the binary:
//
// [streaming]
// max_streams = 1
