use burn::module::{Module, ModuleVisitor, Param};
use burn::nn::Linear;
use burn::optim::GradientsParams;
use burn::tensor::activation::relu;
use burn::tensor::module::linear;
use burn::tensor::{Device, DeviceError, FloatDType, IntDType, Tensor};

/// Low-precision storage: the device's default float type, set before its first tensor exists
/// (once per device and process). Weights, optimizer state, activations and gradients are then
/// all 2 bytes per value.
pub fn bf16_storage(mut device: Device) -> Result<Device, DeviceError> {
    device.configure((FloatDType::BF16, IntDType::I32))?;
    Ok(device.autodiff())
}

/// Mixed precision proper: f32 master weights, the forward pass computed in `dtype`. Each
/// cast's backward casts the gradient back, so parameter gradients and Adam stay in f32.
pub fn forward_mixed(layers: &[Linear], x: Tensor<2>, dtype: FloatDType) -> Tensor<2> {
    let last = layers.len().saturating_sub(1);
    let mut h = x.cast(dtype);
    for (i, layer) in layers.iter().enumerate() {
        let weight = layer.weight.val().cast(dtype);
        let bias = layer.bias.as_ref().map(|b| b.val().cast(dtype));
        h = linear(h, weight, bias);
        if i < last {
            h = relu(h);
        }
    }
    h.cast(FloatDType::F32) // the loss in f32
}

/// A dynamic loss scale, as PyTorch's GradScaler: multiply the loss by `scale` before
/// backward so that small f16 gradients do not flush to zero; unscale before the step.
pub struct DynamicLossScale {
    pub scale: f64,
    pub growth_interval: usize,
    finite_steps: usize,
}

impl DynamicLossScale {
    pub fn new(scale: f64, growth_interval: usize) -> Self {
        Self {
            scale,
            growth_interval,
            finite_steps: 0,
        }
    }

    /// After a backward: returns whether to apply the step. Overflow halves the scale and
    /// skips the step; `growth_interval` finite steps in a row double it.
    pub fn update(&mut self, grads_finite: bool) -> bool {
        if !grads_finite {
            self.scale /= 2.0;
            self.finite_steps = 0;
            return false;
        }
        self.finite_steps += 1;
        if self.finite_steps == self.growth_interval {
            self.scale *= 2.0;
            self.finite_steps = 0;
        }
        true
    }
}

/// Divides every gradient by the loss scale (in the gradient's own dtype) and says whether
/// all of them are finite.
pub fn unscale<M: Module>(model: &M, grads: &mut GradientsParams, scale: f64) -> bool {
    struct Unscale<'a> {
        grads: &'a mut GradientsParams,
        factor: f64,
        finite: bool,
    }
    impl ModuleVisitor for Unscale<'_> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            if let Some(g) = self.grads.remove::<D>(param.id) {
                let g = g.mul_scalar(self.factor);
                // A NaN or an infinity anywhere makes the sum non-finite.
                let sum: f32 = g.clone().cast(FloatDType::F32).sum().into_scalar::<f32>();
                self.finite &= sum.is_finite();
                self.grads.register(param.id, g);
            }
        }
    }
    let mut visitor = Unscale {
        grads,
        factor: 1.0 / scale,
        finite: true,
    };
    model.visit(&mut visitor);
    visitor.finite
}
