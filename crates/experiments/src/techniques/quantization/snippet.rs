use burn::module::{Module, Quantizer};
use burn::nn::Linear;
use burn::tensor::backend::Backend;
use burn::tensor::ops::QuantizedTensor;
use burn::tensor::quantization::{
    Calibration, QTensorPrimitive, QuantLevel, QuantParam, QuantValue,
};
use burn::tensor::{ElementConversion, FloatDType, Tensor};

/// 8-bit weights with one f32 scale per block of 32 values, for inference. The backend's
/// default scheme picks its storage (CubeCL packs values into u32 words; Flex keeps one byte
/// per value whatever the bits). Every forward dequantizes the whole weight to f32 first.
fn quantize_for_inference<B: Backend>(model: Linear<B>) -> Linear<B> {
    let scheme = <QuantizedTensor<B> as QTensorPrimitive>::default_scheme()
        .with_value(QuantValue::Q8S)
        .with_level(QuantLevel::block([32]))
        .with_param(QuantParam::F32);
    model.quantize_weights(&mut Quantizer {
        calibration: Calibration::MinMax,
        scheme,
    })
}

/// Check it before serving it: the same input through both, the largest difference against
/// the largest output.
fn largest_relative_difference<B: Backend>(
    reference: &Linear<B>,
    quantized: &Linear<B>,
    x: Tensor<B, 2>,
) -> f32 {
    let expected = reference.forward(x.clone());
    let scale: f32 = expected.clone().abs().max().into_scalar().elem();
    let got = quantized.forward(x).cast(FloatDType::F32);
    let diff: f32 = (got - expected).abs().max().into_scalar().elem();
    diff / scale
}
