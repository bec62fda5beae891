use burn::module::Module;
use burn::nn::loss::{MseLoss, Reduction};
use burn::nn::{Linear, LinearConfig};
use burn::optim::momentum::MomentumConfig;
use burn::optim::{GradientsParams, SgdConfig};
use burn::tensor::{Device, Tensor};

/// SGD with momentum instead of Adam: one velocity per parameter (4 bytes in f32) instead of
/// two moments (8 bytes). Burn's dampening default is 0.1; PyTorch's is 0: set it to match.
pub fn train(device: &Device, x: Tensor<2>, y: Tensor<2>) {
    let mut model: Linear = LinearConfig::new(1024, 1024).init(device);
    let momentum = MomentumConfig::new().with_momentum(0.9).with_dampening(0.0);
    let mut optim = SgdConfig::new().with_momentum(Some(momentum)).init();
    for _ in 0..100 {
        let loss = MseLoss::new().forward(model.forward(x.clone()), y.clone(), Reduction::Mean);
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(1e-2, model, grads);
    }
    let _eval_model = model.valid();
}
