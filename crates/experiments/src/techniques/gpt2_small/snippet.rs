use burn::module::{Module, ModuleMapper, Param};
use burn::optim::{GradientsAccumulator, GradientsParams, ModuleOptimizer};
use burn::tensor::{Device, FloatDType, Int, Tensor};

/// The device the three activation fixes train on: checkpointing is a property of the
/// autodiff device (`Device::cuda(0).autodiff().gradient_checkpointing()` on a GPU).
pub fn training_device() -> Device {
    Device::flex().autodiff().gradient_checkpointing()
}

/// Every float parameter cast to `dtype`, as operations on the f32 originals: backward casts
/// each gradient back to f32.
struct Cast(FloatDType);

impl ModuleMapper for Cast {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let dtype = self.0;
        param.map(|t| t.cast(dtype))
    }
}

/// The three activation fixes on one step of any model `M` built on [`training_device`]: the
/// device recomputes (checkpointing), the batch runs as `k` micro-batches (accumulation), and
/// the forward pass computes in bf16 from f32 master weights (mixed precision). Gradients and
/// Adam's state stay f32. `loss` is your model's loss, computed in f32 from bf16 logits.
pub fn step<M: Module>(
    model: M,
    optim: &mut ModuleOptimizer,
    inputs: Tensor<2, Int>,
    targets: Tensor<2, Int>,
    k: usize,
    loss: impl Fn(&M, Tensor<2, Int>, Tensor<2, Int>) -> Tensor<1>,
) -> M {
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

/// Inference: the same module without autodiff, no graph (PyTorch's `torch.no_grad()`).
pub fn evaluate<M: Module>(model: &M) -> M {
    model.valid()
}
