use burn::backend::autodiff::checkpoint::strategy::BalancedCheckpointing;
use burn::backend::{Autodiff, Flex};
use burn::module::{AutodiffModule, ModuleMapper, Param};
use burn::optim::{GradientsAccumulator, GradientsParams, Optimizer};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{FloatDType, Int, Tensor};

/// The three activation fixes on one step of any model `M`: the backend type recomputes
/// (checkpointing), the batch runs as `k` micro-batches (accumulation), and the forward pass
/// computes in bf16 from f32 master weights (mixed precision). Gradients and Adam's state
/// stay f32. `loss` is your model's loss, computed in f32 from bf16 logits.
type Train = Autodiff<Flex, BalancedCheckpointing>;

/// Every float parameter cast to `dtype`, as operations on the f32 originals: backward casts
/// each gradient back to f32.
struct Cast(FloatDType);

impl<B: Backend> ModuleMapper<B> for Cast {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<B, D>>) -> Param<Tensor<B, D>> {
        let dtype = self.0;
        param.map(|t| t.cast(dtype))
    }
}

fn step<M, O>(
    model: M,
    optim: &mut O,
    inputs: Tensor<Train, 2, Int>,
    targets: Tensor<Train, 2, Int>,
    k: usize,
    loss: impl Fn(&M, Tensor<Train, 2, Int>, Tensor<Train, 2, Int>) -> Tensor<Train, 1>,
) -> M
where
    M: AutodiffModule<Train>,
    O: Optimizer<M, Train>,
{
    let rows = inputs.dims()[0];
    let mut accumulator = GradientsAccumulator::<M>::new();
    for i in 0..k {
        let (start, len) = (i * rows / k, rows / k);
        let half = model.clone().map(&mut Cast(FloatDType::BF16));
        let micro = loss(
            &half,
            inputs.clone().narrow(0, start, len),
            targets.clone().narrow(0, start, len),
        );
        let grads = micro.div_scalar(k as f64).backward();
        accumulator.accumulate(&model, GradientsParams::from_grads(grads, &model));
    }
    optim.step(1e-4, model, accumulator.grads())
}

/// Inference: the same module on the inner backend, no graph (PyTorch's `torch.no_grad()`).
fn evaluate<B: AutodiffBackend, M: AutodiffModule<B>>(model: &M) -> M::InnerModule {
    model.valid()
}
