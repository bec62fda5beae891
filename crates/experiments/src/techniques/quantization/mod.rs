//! Quantized weights: what 16-, 8-, 4- and 2-bit weights save at inference.
//!
//! Question: how many bytes do a model's weights take in f16, bf16 and Burn 0.22's
//! quantization schemes (8, 4 and 2-bit values, one scale per tensor or per block of 32), what
//! does an inference pass then peak at, what does it cost in time, and how far does the output
//! move from f32's?
//! Method: one process per format: the MLP built in f32 (the process's float type), its output
//! on a fixed input kept as the reference, then its weights cast or quantized
//! (`quantize_weights`, min-max calibration, symmetric values); the weights' bytes read as the
//! change in live bytes across that conversion; evaluation passes through the converted model
//! (the inner backend, no graph), metered and timed; its output set against the reference.
//! Answer: the weights shrink as the bits say on CubeCL (values packed in u32 words), but Flex
//! stores every quantized value in one byte, so 4- and 2-bit save nothing over 8-bit there; and
//! Burn's `Linear` dequantizes its whole weight to f32 on every forward, so the pass holds one
//! layer's f32 weight on top of the activations. 8-bit and 16-bit weights keep the output within
//! the check's tolerance; 4- and 2-bit round-to-nearest do not on this model.

mod analysis;
pub mod predict;
#[allow(dead_code, missing_docs)]
#[doc(hidden)]
pub mod snippet;

use crate::harness::models::BuildMlp;
use results::TechniqueId;
use std::collections::BTreeMap;

use burn::module::{Module, Quantizer};
use burn::tensor::quantization::{Calibration, QuantScheme, QuantValue, ScaleDtype};
use burn::tensor::{Distribution, FloatDType, Tensor};
use results::{
    Check, ComparisonSpec, DeviceKind, FloatStorage, Metric, PointResult, Profile, PutMetric,
};
use serde::{Deserialize, Serialize};

use crate::harness::backend::{self, Backends, OnBackend, Pool, Setup};
use crate::harness::models::mlp::{self, Mlp};
use crate::harness::models::{training_mlp, MlpShape};
use crate::harness::probe::{evaluation_passes, MemoryProbe};
use crate::harness::profile::{Repeats, Sizes};
use crate::technique::{Measurement, Planned, Row, Technique};
use burn::tensor::Device;

results::metric_keys! {
    /// What quantized weights measure beyond the shared metrics.
    pub enum QuantMetric {
        /// Root-mean-square of an output's difference from the f32 reference, over the reference's
        /// root-mean-square (a ratio, no unit).
        OutputRmsRelativeError = "output_rms_relative_error",
        /// A model's weights as stored in the point's format (quantized values with their scales,
        /// or floats of the point's type).
        WeightBytes = "weight_bytes",
    }
}

/// The check's tolerance: the largest difference from f32's output, relative to the largest
/// magnitude of f32's output. Chosen before any measurement as what a user would still call the
/// same model's output (5%), not derived from the format: a format that misses it changed the
/// result (a finding of this model and calibration, not a bug of Burn's).
pub const TOLERANCE: f64 = 5e-2;

/// Values per block in the block-wise schemes (a block is 32 consecutive values of a row, each
/// with its own f32 scale: the granularity of GGML's Q4_0 and Q8_0).
pub const BLOCK: u8 = 32;

/// Bits of a quantized value (Burn's symmetric values: Q8S in [-127, 127], Q4S in [-7, 7], Q2S
/// in [-1, 1]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bits {
    /// 8-bit values.
    Q8,
    /// 4-bit values.
    Q4,
    /// 2-bit values.
    Q2,
}

impl Bits {
    /// Bits per value.
    pub fn bits(self) -> u64 {
        match self {
            Bits::Q8 => 8,
            Bits::Q4 => 4,
            Bits::Q2 => 2,
        }
    }

    fn value(self) -> QuantValue {
        match self {
            Bits::Q8 => QuantValue::Q8S,
            Bits::Q4 => QuantValue::Q4S,
            Bits::Q2 => QuantValue::Q2S,
        }
    }
}

/// How the weights are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum WeightFormat {
    /// Floats of one type (the model cast from f32).
    Float {
        /// The float type.
        float: FloatStorage,
    },
    /// Quantized values with f32 scales.
    Quantized {
        /// Bits per value.
        bits: Bits,
        /// Values per scale: `None` for one scale per tensor, else a block of that many.
        block: Option<u8>,
    },
}

impl WeightFormat {
    /// Every format measured, in the guide's order: the baseline first, then fewer bits.
    pub const ALL: [WeightFormat; 8] = [
        Self::Float {
            float: FloatStorage::F32,
        },
        Self::Float {
            float: FloatStorage::F16,
        },
        Self::Float {
            float: FloatStorage::Bf16,
        },
        Self::Quantized {
            bits: Bits::Q8,
            block: None,
        },
        Self::Quantized {
            bits: Bits::Q8,
            block: Some(BLOCK),
        },
        Self::Quantized {
            bits: Bits::Q4,
            block: None,
        },
        Self::Quantized {
            bits: Bits::Q4,
            block: Some(BLOCK),
        },
        Self::Quantized {
            bits: Bits::Q2,
            block: Some(BLOCK),
        },
    ];

    /// The baseline: f32 weights.
    pub const F32: WeightFormat = Self::ALL[0];
    /// 8-bit values, one scale per tensor.
    pub const Q8_TENSOR: WeightFormat = Self::ALL[3];
    /// The headline's format: 8-bit values, a scale per block.
    pub const Q8_BLOCK: WeightFormat = Self::ALL[4];
    /// The second index row's format: 4-bit values, a scale per block.
    pub const Q4_BLOCK: WeightFormat = Self::ALL[6];

    /// Kebab-case id (`f32`, `q8-block-32`, `q4-tensor`).
    pub fn id(self) -> String {
        match self {
            Self::Float { float } => float.name().into(),
            Self::Quantized { bits, block } => format!("q{}-{}", bits.bits(), granularity(block)),
        }
    }

    /// What a reader sees (`8-bit, block of 32`).
    pub fn label(self) -> String {
        match self {
            Self::Float { float } => float.name().into(),
            Self::Quantized { bits, block } => format!(
                "{}-bit, {}",
                bits.bits(),
                match block {
                    None => "per tensor".to_string(),
                    Some(b) => format!("block of {b}"),
                }
            ),
        }
    }

    /// A chart's category: short enough to sit under a tick (`q8 /32`: 8-bit values, a scale
    /// per block of 32; `q8 tensor`: one scale per tensor).
    pub fn short(self) -> String {
        match self {
            Self::Float { float } => float.name().into(),
            Self::Quantized { bits, block } => format!(
                "q{} {}",
                bits.bits(),
                block.map_or_else(|| "tensor".to_string(), |b| format!("/{b}"))
            ),
        }
    }

    /// The float type a cast model computes in, if the format is a float one other than f32.
    fn cast_to(self) -> Option<FloatDType> {
        match self {
            Self::Float {
                float: FloatStorage::F32,
            }
            | Self::Quantized { .. } => None,
            Self::Float { float } => Some(backend::float_dtype(float)),
        }
    }

    /// Bytes of a value the converted model computes with: the float type's, or f32's for
    /// quantized weights (dequantized to the process's float type).
    pub fn compute_bytes(self) -> u64 {
        match self {
            Self::Float { float } => float.bytes(),
            Self::Quantized { .. } => FloatStorage::F32.bytes(),
        }
    }

    /// The format's scheme on `device`, from the device's default (its own storage: Flex
    /// keeps one value per byte, CubeCL packs values into u32 words), with f32 scales per
    /// tensor or per block; `None` for a float format.
    pub fn scheme(self, device: &Device) -> Option<QuantScheme> {
        let Self::Quantized { bits, block } = self else {
            return None;
        };
        let scheme = device
            .settings()
            .quantization
            .scheme
            .with_value(bits.value());
        Some(match block {
            Some(b) => scheme.per_block([b], ScaleDtype::F32),
            None => scheme.per_tensor(ScaleDtype::F32),
        })
    }
}

fn granularity(block: Option<u8>) -> String {
    block.map_or_else(|| "tensor".into(), |b| format!("block-{b}"))
}

/// Configuration of one quantization point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QuantConfig {
    /// The model (built in f32, then converted).
    pub shape: MlpShape,
    /// Samples per evaluation pass.
    pub batch: usize,
    /// How its weights are stored.
    pub format: WeightFormat,
    /// Seed of the backend's generator (weights and input).
    pub seed: u64,
}

/// The quantization experiment.
pub struct Quantization;

/// Samples per evaluation pass: a serving batch, small enough that the weights, not the
/// activations, fill the memory.
fn batch(sizes: Sizes) -> usize {
    match sizes {
        Sizes::Quick => 16,
        Sizes::Full => 64,
        Sizes::FullCuda => 1024,
    }
}

impl Technique for Quantization {
    type Config = QuantConfig;
    const ID: TechniqueId = TechniqueId::Quantization;
    const SNIPPET: &'static str = include_str!("snippet.rs");

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Planned<QuantConfig>> {
        let sizes = Sizes::of(profile, device);
        WeightFormat::ALL
            .into_iter()
            .map(|format| {
                Planned::new(
                    format.id(),
                    format.label(),
                    profile,
                    QuantConfig {
                        shape: training_mlp(sizes),
                        batch: batch(sizes),
                        format,
                        seed: 11,
                    },
                )
            })
            .collect()
    }

    fn comparisons(&self, rows: &[Row<'_, QuantConfig>]) -> Vec<ComparisonSpec> {
        analysis::comparisons(rows)
    }

    fn run_point(&self, config: &QuantConfig, repeats: Repeats, device: DeviceKind) -> Measurement {
        device.dispatch(
            Setup {
                pool: Pool::ExclusivePages,
                compute: match config.format {
                    WeightFormat::Float { float } => Some(float),
                    WeightFormat::Quantized { .. } => None,
                },
                ..Setup::default()
            },
            QuantPoint {
                config: *config,
                repeats,
            },
        )
    }
}

/// Measures one format: the weights' bytes, evaluation passes and the output's error.
pub struct QuantPoint {
    /// The model, batch and format.
    pub config: QuantConfig,
    /// Untimed and timed passes.
    pub repeats: Repeats,
}

impl OnBackend for QuantPoint {
    type Output = PointResult;

    fn run(self, device: Device, probe: &dyn MemoryProbe) -> PointResult {
        // Inference: the inner backend throughout, no graph.
        let device = device.without_autodiff();
        let c = self.config;
        let sync = || backend::sync(&device);
        sync();
        let process_bytes = probe.read().in_use_bytes;

        device.seed(c.seed);
        let model: Mlp = c.shape.init(&device);
        mlp::materialize(&model);
        sync();
        let f32_bytes = probe.read().in_use_bytes.saturating_sub(process_bytes);
        let x = Tensor::<2>::random(
            [c.batch, c.shape.width],
            Distribution::Normal(0.0, 1.0),
            &device,
        );
        let reference = outputs(model.forward(x.clone()));
        // The input in the type the converted model computes in, before the conversion's
        // readings.
        let x = match c.format.cast_to() {
            Some(dtype) => x.cast(dtype),
            None => x,
        };
        let input_bytes = (c.batch * c.shape.width) as u64 * c.format.compute_bytes();

        // The conversion, read as the change in live bytes across it.
        sync();
        let before = probe.read().in_use_bytes;
        let model = convert(model, c.format, &device);
        sync();
        let weight_bytes = (f32_bytes + probe.read().in_use_bytes).saturating_sub(before);

        let (timing, phases, output) =
            evaluation_passes(probe, &sync, self.repeats, c.batch as u64, || {
                model.forward(x.clone())
            });
        let candidate = outputs(output);
        let check = output_check(&reference, &candidate);

        let mut metrics = BTreeMap::new();
        metrics.put(Metric::ProcessBaselineBytes, process_bytes as f64);
        metrics.put(Metric::ParamBytes, f32_bytes as f64);
        metrics.put(QuantMetric::WeightBytes, weight_bytes as f64);
        metrics.put(Metric::NumParams, c.shape.num_params() as f64);
        metrics.put(Metric::InputBytes, input_bytes as f64);
        metrics.put(
            QuantMetric::OutputRmsRelativeError,
            rms_relative_error(&reference, &candidate),
        );
        if let Some(phase) = phases.first() {
            metrics.put(Metric::EvalBytes, phase.delta_bytes() as f64);
            metrics.put(Metric::LiveBeforeBytes, phase.live_before_bytes as f64);
        }
        PointResult {
            metrics,
            checks: vec![check],
            ..PointResult::new(probe.info(), phases, timing, c.batch as u64)
        }
    }
}

/// The model with its weights in `format`: cast to a 16-bit float, or quantized with min-max
/// calibration (every float parameter, biases included, as `quantize_weights` does).
pub fn convert(model: Mlp, format: WeightFormat, device: &Device) -> Mlp {
    if let Some(dtype) = format.cast_to() {
        return crate::harness::models::cast(model, dtype);
    }
    match format.scheme(device) {
        Some(scheme) => model.quantize_weights(&mut Quantizer::new(Calibration::MinMax, scheme)),
        None => model,
    }
}

/// The proof: `candidate` (the converted model's output) against `reference` (f32 weights'
/// output on the same input), the largest difference over the largest output held to
/// [`TOLERANCE`].
pub fn output_check(reference: &[f32], candidate: &[f32]) -> Check {
    Check::compare("quantized-outputs", reference, candidate, TOLERANCE)
}

/// A model's output as f32 values (16-bit outputs widen exactly).
pub fn outputs(y: Tensor<2>) -> Vec<f32> {
    y.cast(FloatDType::F32)
        .into_data()
        .try_to_vec::<f32>()
        .unwrap_or_default()
}

/// The root-mean-square of `candidate - reference` over that of `reference`; NaN where the two
/// differ in length or the reference is zero.
pub fn rms_relative_error(reference: &[f32], candidate: &[f32]) -> f64 {
    if reference.len() != candidate.len() || reference.is_empty() {
        return f64::NAN;
    }
    let (mut diff, mut norm) = (0.0_f64, 0.0_f64);
    for (r, c) in reference.iter().zip(candidate) {
        let (r, c) = (*r as f64, *c as f64);
        diff += (c - r) * (c - r);
        norm += r * r;
    }
    (diff / norm).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_has_a_point_with_a_unique_id() {
        let points = Quantization.points(Profile::Quick, DeviceKind::Cpu);
        assert_eq!(points.len(), WeightFormat::ALL.len());
        let mut ids: Vec<_> = points.iter().map(|p| p.id.clone()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), points.len());
        assert_eq!(WeightFormat::Q8_BLOCK.id(), "q8-block-32");
        assert_eq!(WeightFormat::F32.id(), "f32");
    }

    #[test]
    fn rms_error_is_zero_for_equal_outputs_and_grows_with_the_difference() {
        assert_eq!(rms_relative_error(&[1.0, -2.0], &[1.0, -2.0]), 0.0);
        let e = rms_relative_error(&[1.0, 1.0], &[1.1, 0.9]);
        assert!((e - 0.1).abs() < 1e-6, "{e}");
        assert!(rms_relative_error(&[1.0], &[1.0, 2.0]).is_nan());
    }
}
