//! The words of quantized weights: the weights' bytes per parameter, the inference pass's peak
//! and its dequantized copy, the output's error against f32, and the usual rule for weights beside ours.

use super::Said;
use results::keys::quantization::Key;

/// The peak the index rows compare.
const PEAK: &str = "inference peak above the process's own bytes";

/// What the byte rule of an inference pass counts.
const PASS_RULE: &str = "the layer where the pass peaks: its input and output, plus the f32 copy \
                         of its weight and bias a quantized weight is dequantized into (and, for \
                         bf16 on Flex, the f32 copies matmul_bf16 multiplies)";

pub(super) fn word(key: Key, s: &Said<'_>) -> String {
    let host = s.yes("host");
    match key {
        Key::LabelThroughputSamplesS => "throughput (samples/s)".into(),
        Key::LabelInferenceThroughput => "Inference throughput".into(),
        Key::LabelTheCheckSTolerance => "the check's tolerance".into(),
        Key::LabelWeights => "weights".into(),
        Key::LabelBytes => "bytes".into(),
        Key::LabelPredictedThisBackendSStorage => "predicted (this backend's storage)".into(),
        Key::LabelMeasured => "measured".into(),
        Key::LabelBytesPerParameter => "bytes per parameter".into(),
        Key::Summary => format!(
            "The MLP ({} parameters, {} layers of width {}) at batch {}: its weights take {} in \
             f32 and {} as 8-bit values with a scale per block of 32 ({:.3} bytes per \
             parameter); an inference pass peaks {} above the process's own bytes with f32 \
             weights and {} with 8-bit ones.",
            s.count("params"),
            s.count("depth"),
            s.count("width"),
            s.count("batch"),
            s.bytes("f32"),
            s.bytes("q8"),
            s.num("q8_per_param"),
            s.bytes("f32_peak"),
            s.bytes("q8_peak"),
        ),
        Key::Row => format!(
            "{}: weights {} ({:.3} B per parameter, {} predicted); the pass adds {} at its peak \
             above what was live ({} predicted, of which {} is a layer's weight dequantized or \
             widened to f32); output against f32: RMS error {:.2e} of the output's RMS, largest \
             difference {:.2e} of the largest output ({}).",
            s.name("point"),
            s.bytes("weights"),
            s.num("per_param"),
            s.bytes("predicted_weights"),
            s.bytes("pass"),
            s.bytes("predicted_pass"),
            s.bytes("copy"),
            s.num("rms_error"),
            s.num("max_error"),
            if s.num("passed") > 0.0 {
                "within the check's tolerance"
            } else {
                "the check FAILED: the output changed"
            },
        ),
        Key::Excess => {
            let batch = s.num("batch");
            format!(
                "Every format's pass measured {} to {} above its rule at batch {} ({} to {} per \
                 sample): a buffer of about a layer's width per sample in f32 that the rule does \
                 not count. valid()'s pass on the no-grad page shows the same excess; its source \
                 is not separated here.",
                s.bytes("least"),
                s.bytes("most"),
                s.count("batch"),
                results::format::bytes(s.num("least") / batch),
                results::format::bytes(s.num("most") / batch),
            )
        }
        Key::FourBits => format!(
            "4-bit against 8-bit values (a scale per block of 32 each): {} against {} ({:+.1}%). \
             {}",
            s.bytes("q4"),
            s.bytes("q8"),
            (s.num("q4") / s.num("q8") - 1.0) * 100.0,
            if host {
                "Flex stores every quantized value in one byte (`i8`), so fewer bits save no \
                 memory on the CPU backend; they only lose precision."
            } else {
                "CubeCL packs the values into u32 words: eight 4-bit values where four 8-bit ones \
                 go."
            }
        ),
        Key::Dequantized => format!(
            "The price of storing weights in fewer bytes is paid at run time: Burn 0.22's \
             `Linear` hands its weight to `linear` as a float tensor, which dequantizes the whole \
             weight (and bias) to f32 on every forward. The pass through 8-bit weights adds {} at \
             its peak against {} through f32 weights: the f32 copy of one layer's weight ({}) \
             sits on top of the activations. At a small batch it is the largest buffer of the \
             pass; it is one layer's, not the model's, so the saving grows with depth.",
            s.bytes("q8_pass"),
            s.bytes("f32_pass"),
            s.bytes("copy"),
        ),
        Key::Time => format!(
            "Time per sample against f32 weights, each pass dequantizing every layer's weight: \
             8-bit with a scale per block of 32 {}; 8-bit with one scale per tensor {}.",
            s.cost("block"),
            s.cost("tensor")
        ),
        Key::Tolerance => format!(
            "The check holds every format's output to {} of the largest f32 output, chosen \
             before measuring. A format that misses it changed this model's result: a finding of \
             round-to-nearest quantization with min-max scales on this model, not a bug. Methods \
             that fit the quantization to the data (GPTQ, AWQ) or train with it are not in Burn \
             0.22 and were not measured. The weights here are Burn's uniform initialisation, \
             without the outliers of trained weights, so per-tensor and per-block scales err \
             alike here; on trained weights the block scales are the ones to trust.",
            s.num("tolerance")
        ),
        Key::WeightsQuantity => format!("weights, {}", s.name("point")),
        Key::WeightsNote => {
            "values at their stored bytes (quantized: one byte each on Flex, packed \
                           in u32 words on CubeCL) plus one f32 scale per tensor or per block; \
                           measured: the change in live bytes across the conversion, added to \
                           the f32 model's"
                .into()
        }
        Key::PassQuantity => format!("pass above live bytes, {}", s.name("point")),
        Key::PassNote => PASS_RULE.into(),
        Key::PassNoteBracket => format!("{PASS_RULE}; measured: the pass's bracket"),
        Key::PassChart => format!("One inference pass, batch {}", s.count("batch")),
        Key::PublishedSource => {
            "the usual rule for weights alone (parameters times bytes per value)".into()
        }
        Key::PublishedClaim => "7B parameters take 14 GB in 16 bits, 7 GB in 8 bits, 3.5 GB in 4 \
                              bits: 2, 1 and 0.5 bytes per parameter"
            .into(),
        Key::PublishedOurs => {
            let per_param = |name: &str| {
                if s.has(name) {
                    format!("{:.2}", s.num(name))
                } else {
                    "not measured".to_string()
                }
            };
            format!(
                "{} (f16), {} (8-bit, block of 32) and {} (4-bit, block of 32) bytes per \
                 parameter measured on this backend, scales included{}",
                per_param("f16"),
                per_param("q8"),
                per_param("q4"),
                if host {
                    ": Flex keeps 4-bit values in a byte each, so the rule's 4-bit figure holds \
                     only on CubeCL backends"
                } else {
                    ""
                }
            )
        }
        Key::Q4Headline => format!(
            "inference at batch {}: f32 weights against 4-bit weights, a scale per block of 32 \
             ({PEAK})",
            s.count("batch")
        ),
        Key::Headline => format!(
            "inference at batch {}: f32 weights against 8-bit weights, a scale per block of 32 \
             ({PEAK}; time per sample)",
            s.count("batch")
        ),
        // Chart titles, axes and legends.
        Key::LabelInferencePeakAboveTheProcessS => {
            "inference peak above the process's own bytes".into()
        }
        Key::LabelWeightFormatQ8328Bit => {
            "weight format (q8 /32: 8-bit values, a scale per block of 32)".into()
        }
        Key::LabelTheWeightsBytesPerParameter => "The weights' bytes per parameter".into(),
        Key::LabelThePassSPeakAboveLive => "the pass's peak above live bytes".into(),
        Key::LabelHowFarTheOutputMovesFrom => "How far the output moves from f32's".into(),
        Key::LabelErrorRelativeToTheF32Output => "error relative to the f32 output".into(),
        Key::LabelRmsDifferenceRmsOutput => "RMS difference / RMS output".into(),
        Key::LabelLargestDifferenceLargestOutputTheCheck => {
            "largest difference / largest output (the check)".into()
        }
        Key::LabelMedianBarsFastestAndSlowest => "median; bars: fastest and slowest".into(),
    }
}
