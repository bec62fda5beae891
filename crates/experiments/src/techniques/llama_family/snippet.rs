use burn::module::{Lora, Module, ParamGroup};
use burn::nn::{Initializer, Linear, LinearConfig};
use burn::tensor::{Device, Tensor};

/// Burn's own LoRA, one call on any module: adapters on the query and value weights (their
/// paths), every other float parameter frozen, norms included. Each adapted weight is composed
/// dense, `base + scale * (a @ b)`, on every forward pass, and autodiff keeps it.
pub fn burn_lora<M: Module>(model: M, rank: usize) -> M {
    let adapted = ParamGroup::from_regex(r"\.(query|value)\.weight$").expect("a valid pattern");
    model.apply_lora(Lora::new(rank, 2.0 * rank as f64).set_param_group(adapted))
}

/// LoRA on the activation path: the frozen base (`no_grad()`: no gradient, no optimizer
/// state) and the adapter each applied to the input, their outputs added; no weight-shaped
/// tensor is ever composed. Only the adapters train.
#[derive(Module, Debug)]
pub struct LoraLinear {
    base: Linear,
    down: Linear,
    up: Linear,
}

impl LoraLinear {
    pub fn new(base: Linear, d_in: usize, d_out: usize, rank: usize, device: &Device) -> Self {
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

    pub fn forward(&self, x: Tensor<3>) -> Tensor<3> {
        self.base.forward(x.clone()) + self.up.forward(self.down.forward(x)).mul_scalar(2.0)
    }
}
