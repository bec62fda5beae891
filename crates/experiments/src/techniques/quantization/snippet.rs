use burn::module::{Module, Quantizer};
use burn::nn::Linear;
use burn::tensor::quantization::{Calibration, QuantValue, ScaleDtype};
use burn::tensor::{Device, FloatDType, Tensor};

/// 8-bit weights with one f32 scale per block of 32 values, for inference. The device's
/// default scheme picks its storage (CubeCL packs values into u32 words; Flex keeps one byte
/// per value whatever the bits). Every forward dequantizes the whole weight to f32 first.
pub fn quantize_for_inference(model: Linear, device: &Device) -> Linear {
    let scheme = device
        .settings()
        .quantization
        .scheme
        .with_value(QuantValue::Q8S)
        .per_block([32], ScaleDtype::F32);
    model.quantize_weights(&mut Quantizer::new(Calibration::MinMax, scheme))
}

/// Check it before serving it: the same input through both, the largest difference against
/// the largest output.
pub fn largest_relative_difference(reference: &Linear, quantized: &Linear, x: Tensor<2>) -> f32 {
    let expected = reference.forward(x.clone());
    let scale: f32 = expected.clone().abs().max().into_scalar::<f32>();
    let got = quantized.forward(x).cast(FloatDType::F32);
    let diff: f32 = (got - expected).abs().max().into_scalar::<f32>();
    diff / scale
}
