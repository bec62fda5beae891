use burn::module::Module;
use burn::nn::loss::{MseLoss, Reduction};
use burn::nn::{Linear, LinearConfig};
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, Tensor};

/// Train on batches of `batch_size` rows: the forward pass keeps about
/// (bytes per sample) x batch_size for backward, on top of model, gradients and Adam state.
pub fn train(device: &Device, data: Tensor<2>, batch_size: usize) {
    let device = device.clone().autodiff();
    let data = data.to_device(&device);
    let mut model: Linear = LinearConfig::new(1024, 1024).init(&device);
    let mut optim = AdamConfig::new().init();
    let rows = data.dims()[0];
    for start in (0..rows).step_by(batch_size) {
        let x = data.clone().narrow(0, start, batch_size.min(rows - start));
        let loss = MseLoss::new().forward(model.forward(x.clone()), x, Reduction::Mean);
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(1e-4, model, grads);
    }
    let _eval_model = model.valid();
}
