//! The words of no-grad evaluation: what an evaluation pass adds on the autodiff backend and
//! through `valid()`, and the graph a dropped pass leaves behind.

use results::format;
use results::keys::no_grad::Key;

use super::Said;

/// What the byte rule of `valid()`'s pass counts.
const VALID_RULE: &str = "a layer's input and its output (width x 4 bytes each), every other op \
                          running in place on a uniquely owned buffer";

pub(super) fn word(key: Key, s: &Said<'_>) -> String {
    match key {
        Key::LabelAutodiffBackend => "autodiff backend".into(),
        Key::LabelValid => "valid()".into(),
        Key::LabelThroughputTokensS => "throughput (tokens/s)".into(),
        Key::LabelBatchSizeSequences => "batch size (sequences)".into(),
        Key::LabelTransformerEvaluationThroughput => "Transformer: evaluation throughput".into(),
        Key::LabelBytes => "bytes".into(),
        Key::LabelEvaluationPeakAboveTheModelAnd => {
            "evaluation peak above the model and inputs".into()
        }
        Key::LabelBytesStillHeld => "bytes still held".into(),
        Key::LabelPassWarmUpIncluded => "pass (warm-up included)".into(),
        Key::LabelThroughputSamplesS => "throughput (samples/s)".into(),
        Key::LabelBatchSizeSamples => "batch size (samples)".into(),
        Key::LabelEvaluationThroughput => "Evaluation throughput".into(),
        Key::LabelValidPredicted => "valid() (predicted)".into(),
        Key::LabelValidMeasured => "valid() (measured)".into(),
        Key::LabelAutodiffBackendMeasured => "autodiff backend (measured)".into(),
        Key::LabelPeakAboveLiveBytes => "peak above live bytes".into(),
        Key::PerSample => format!(
            "A forward pass adds {} per sample at its peak on the autodiff backend and {} per \
             sample through valid() (fits over {} batch sizes).",
            s.bytes("autodiff"),
            s.bytes("valid"),
            s.count("sizes")
        ),
        Key::FitAutodiff => {
            "evaluation peak above the model and inputs against batch size, autodiff".into()
        }
        Key::FitValid => {
            "evaluation peak above the model and inputs against batch size, valid()".into()
        }
        Key::Trap => format!(
            "The trap: at batch {}, each autodiff pass whose output is dropped without backward \
             leaves {} behind; after {} passes {} were still held. A backward() through the \
             model on a single row brought that to {}. Through valid(), {} passes left {}.",
            s.count("batch"),
            s.bytes("per_pass"),
            s.count("passes"),
            s.bytes("held_before"),
            s.bytes("held_after"),
            s.count("valid_passes"),
            s.bytes("valid_held"),
        ),
        Key::Time => format!(
            "Time per sample at batch {}, valid() against the autodiff backend, each pass timed \
             with the graphs of earlier passes released (outside the clock): {}.",
            s.count("batch"),
            s.cost("timing"),
        ),
        Key::BracketRule => "what was live before + a layer's input and its output per sample; \
                           with fusion the bias add and ReLU are written by the matmul's kernel, \
                           so no third buffer"
            .into(),
        Key::BracketPoint => format!("valid() at batch {}", s.count("batch")),
        Key::GraphQuantity => format!(
            "graph left by one autodiff pass, batch {}",
            s.count("batch")
        ),
        Key::GraphNote => {
            "the Linear and ReLU outputs of every hidden layer, saved for a backward \
                         that never comes; measured as the slope of bytes held against passes"
                .into()
        }
        Key::RetainedSeries => format!("{} batch {}", s.name("mode"), s.count("batch")),
        Key::Headline => format!(
            "evaluation at batch {}: autodiff backend against valid() (peak above the model and \
             inputs; time per sample)",
            s.count("batch")
        ),
        Key::Transformer => {
            let (retained, predicted) = (s.num("retained"), s.num("predicted"));
            format!(
                "Transformer ({}), batch {}: an evaluation pass peaks {} above the model and \
                 inputs on the autodiff backend, {} with valid(); a pass on the autodiff backend \
                 whose output is dropped leaves {} recorded (the rule of what the forward pass \
                 keeps for backward: {}, {:+.1}%); outputs of both ways: {}.",
                s.name("model"),
                s.count("batch"),
                s.bytes("autodiff"),
                s.bytes("valid"),
                s.bytes("retained"),
                s.bytes("predicted"),
                format::diff_pct(predicted, retained),
                if s.num("passed") > 0.0 {
                    "identical within the check's tolerance"
                } else {
                    "different (the check failed)"
                }
            )
        }
        Key::TransformerQuantity => format!(
            "transformer, batch {}: recorded per autodiff pass",
            s.count("batch")
        ),
        Key::TransformerNote => "what the forward pass keeps for backward: 18 d + 3 h s + h + 2 \
                               f32 values per token and block, and v + 3 d + 5 outside the \
                               blocks; measured as the slope of what stays held pass after pass"
            .into(),
        Key::ValidQuantity => "valid(): bytes per sample at the pass's peak".into(),
        Key::ValidNoteBracket => format!(
            "{VALID_RULE}; with fusion the bias add and ReLU are written by the kernel that reads \
             the matmul's output, so no third buffer; measured at batch {}: the pass's bracket \
             above what was live before it, per sample",
            s.num("batch")
        ),
        Key::ValidNoteFit => format!(
            "{VALID_RULE}. A measured excess of one width per sample is a third buffer live at \
             the peak; the matmul's packing of its input is the likely source (not separated \
             here); measured as the slope of the fit"
        ),
        // Chart titles, axes and legends.
        Key::LabelMemoryAnEvaluationPassAddsAbove => {
            "Memory an evaluation pass adds above the model and inputs".into()
        }
        Key::LabelMemoryHeldAfterEachPassWhose => {
            "Memory held after each pass whose output was dropped".into()
        }

        Key::LabelTransformerEvaluationPeakAboveTheModel => {
            "Transformer: evaluation peak above the model and inputs".into()
        }
        Key::LabelAutodiffBackendMedianBarsFastestAnd => {
            "autodiff backend (median; bars: fastest and slowest)".into()
        }
        Key::LabelValidMedianBarsFastestAndSlowest => {
            "valid() (median; bars: fastest and slowest)".into()
        }
    }
}
