// LoRA on a frozen Llama-family base in Burn 0.21: freeze the base with `no_grad()` (no
// gradient, no optimizer state), train only the adapters.
use burn::module::Module;
use burn::nn::{Initializer, Linear, LinearConfig};
use burn::tensor::backend::Backend;
use burn::tensor::Tensor;

#[derive(Module, Debug)]
pub struct LoraLinear<B: Backend> {
    base: Linear<B>,
    down: Linear<B>,
    up: Linear<B>,
}

impl<B: Backend> LoraLinear<B> {
    pub fn new(
        base: Linear<B>,
        d_in: usize,
        d_out: usize,
        rank: usize,
        device: &B::Device,
    ) -> Self {
        Self {
            // Frozen: Adam keeps no state for it and backward computes no weight gradient.
            base: base.no_grad(),
            down: LinearConfig::new(d_in, rank).with_bias(false).init(device),
            // B starts at zero: the adapted model starts as the base.
            up: LinearConfig::new(rank, d_out)
                .with_bias(false)
                .with_initializer(Initializer::Zeros)
                .init(device),
        }
    }

    pub fn forward(&self, x: Tensor<B, 3>) -> Tensor<B, 3> {
        self.base.forward(x.clone()) + self.up.forward(self.down.forward(x)).mul_scalar(2.0)
    }
}
