use burn::module::{Lora, Module, ParamGroup, QLora, Quantizer};
use burn::nn::{Initializer, Linear, LinearConfig};
use burn::tensor::quantization::{Calibration, QuantValue, ScaleDtype};
use burn::tensor::{Device, Tensor};

/// Burn's own LoRA, one call on any module: adapters on the query and value weights (their
/// paths), every other float parameter frozen, norms included. Each adapted weight is composed
/// dense, `base + scale * (a @ b)`, on every forward pass, and autodiff keeps it.
pub fn burn_lora<M: Module>(model: M, rank: usize) -> M {
    let adapted = ParamGroup::from_regex(r"\.(query|value)\.weight$").expect("a valid pattern");
    model.apply_lora(Lora::new(rank, 2.0 * rank as f64).set_param_group(adapted))
}

/// Burn's QLoRA: the same adapters on a base whose weights are quantized to 4 bits (per
/// tensor, min-max), one call. CubeCL packs the values; Flex keeps each in a byte.
pub fn burn_qlora<M: Module>(model: M, rank: usize, device: &Device) -> M {
    let adapted = ParamGroup::from_regex(r"\.(query|value)\.weight$").expect("a valid pattern");
    let scheme = device.settings().quantization.scheme;
    let scheme = scheme
        .with_value(QuantValue::Q4S)
        .per_tensor(ScaleDtype::F32);
    let mut quantizer = Quantizer::new(Calibration::MinMax, scheme);
    quantizer.set_param_group(ParamGroup::from_regex(r"\.weight$").expect("a valid pattern"));
    let lora = Lora::new(rank, 2.0 * rank as f64).set_param_group(adapted);
    model.apply_qlora(QLora::new(lora, quantizer))
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
