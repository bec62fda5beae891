use burn::module::AutodiffModule;
use burn::nn::loss::{MseLoss, Reduction};
use burn::nn::{Linear, LinearConfig};
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::Tensor;

/// Train on batches of `batch_size` rows: the forward pass keeps about
/// (bytes per sample) x batch_size for backward, on top of model, gradients and Adam state.
fn train<B: AutodiffBackend>(device: &B::Device, data: Tensor<B, 2>, batch_size: usize) {
    let mut model: Linear<B> = LinearConfig::new(1024, 1024).init(device);
    let mut optim = AdamConfig::new().init::<B, Linear<B>>();
    let rows = data.dims()[0];
    for start in (0..rows).step_by(batch_size) {
        let x = data.clone().narrow(0, start, batch_size.min(rows - start));
        let loss = MseLoss::new().forward(model.forward(x.clone()), x, Reduction::Mean);
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(1e-4, model, grads);
    }
    let _eval_model = model.valid();
}
