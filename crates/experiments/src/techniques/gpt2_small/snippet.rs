use burn::backend::autodiff::checkpoint::strategy::BalancedCheckpointing;
use burn::backend::{Autodiff, Flex};
use burn::module::AutodiffModule;
use burn::optim::{GradientsAccumulator, GradientsParams, Optimizer};
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{FloatDType, Int, Tensor};

use crate::harness::models::{cast, transformer, Transformer};

/// The three activation fixes on one step: the backend type recomputes (checkpointing), the
/// batch runs as `k` micro-batches (accumulation), the forward pass computes in bf16 from f32
/// master weights (mixed precision). Gradients and Adam's state stay f32.
type Train = Autodiff<Flex, BalancedCheckpointing>;

fn step<O: Optimizer<Transformer<Train>, Train>>(
    model: Transformer<Train>,
    optim: &mut O,
    inputs: Tensor<Train, 2, Int>,
    targets: Tensor<Train, 2, Int>,
    k: usize,
) -> Transformer<Train> {
    let rows = inputs.dims()[0];
    let mut accumulator = GradientsAccumulator::<Transformer<Train>>::new();
    for i in 0..k {
        let (start, len) = (i * rows / k, rows / k);
        let logits = cast(model.clone(), FloatDType::BF16)
            .forward(inputs.clone().narrow(0, start, len))
            .cast(FloatDType::F32); // the loss in f32
        let loss = transformer::cross_entropy(logits, targets.clone().narrow(0, start, len));
        let grads = loss.div_scalar(k as f64).backward();
        accumulator.accumulate(&model, GradientsParams::from_grads(grads, &model));
    }
    optim.step(1e-4, model, accumulator.grads())
}

/// Inference: the inner backend, no graph (PyTorch's `torch.no_grad()`).
fn evaluate<B: AutodiffBackend>(model: &Transformer<B>, inputs: Tensor<B, 2, Int>) -> Tensor<B::InnerBackend, 3> {
    model.valid().forward(inputs.inner())
}
