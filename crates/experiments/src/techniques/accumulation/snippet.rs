use burn::nn::loss::{MseLoss, Reduction};
use burn::nn::Linear;
use burn::optim::{GradientsAccumulator, GradientsParams, ModuleOptimizer};
use burn::tensor::Tensor;

/// One optimizer step on `x` as `k` micro-batches: scale each loss by 1/k so that the
/// accumulated gradient equals the whole batch's mean-loss gradient.
pub fn accumulated_step(
    mut model: Linear,
    optim: &mut ModuleOptimizer,
    x: Tensor<2>,
    y: Tensor<2>,
    k: usize,
) -> Linear {
    let rows = x.dims()[0];
    let mut accumulator = GradientsAccumulator::<Linear>::new();
    for i in 0..k {
        let (start, len) = (i * rows / k, rows / k);
        let xi = x.clone().narrow(0, start, len);
        let yi = y.clone().narrow(0, start, len);
        let loss = MseLoss::new().forward(model.forward(xi), yi, Reduction::Mean);
        let grads = loss.div_scalar(k as f64).backward();
        accumulator.accumulate(&model, GradientsParams::from_grads(grads, &model));
    }
    model = optim.step(1e-4, model, accumulator.grads());
    model
}
