//! The words of gradient accumulation: the step peak against the number of micro-batches,
//! where the saving stops, and Hugging Face's figures beside ours.

use super::{change, Said};
use results::keys::accumulation::Key;

pub(super) fn word(key: Key, s: &Said<'_>) -> String {
    match key {
        Key::LabelBackwardPeakMeasured => "backward peak (measured)".into(),
        Key::LabelForwardPeakMeasured => "forward peak (measured)".into(),
        Key::LabelStepPeakMeasured => "step peak (measured)".into(),
        Key::LabelMicroBatchesK => "micro-batches k (batch B/k each)".into(),
        Key::LabelThroughputSamplesS => "throughput (samples/s)".into(),
        Key::LabelTrainingThroughputWithAccumulation => {
            "Training throughput with accumulation".into()
        }
        Key::LabelStepPeakPredicted => "step peak (predicted)".into(),
        Key::LabelBytesInUse => "bytes in use".into(),
        Key::Peaks => format!(
            "One step on {} samples peaks at {}; as {} micro-batches of {} it peaks at {} ({} of \
             the plain step's peak).",
            s.count("batch"),
            s.bytes("plain"),
            s.count("k"),
            s.count("micro_batch"),
            s.bytes("accumulated"),
            change(s.num("plain"), s.num("accumulated")),
        ),
        Key::ChosenK => format!(
            "The index row uses k = {}: the smallest k whose saving reaches {:.0}% of the largest \
             measured ({} at k = {}); it saves {}.",
            s.count("k"),
            s.num("share") * 100.0,
            s.bytes("best"),
            s.count("best_k"),
            s.bytes("saved"),
        ),
        Key::Floor => format!(
            "The saving stops where activations of a micro-batch fall below the gradients: every \
             step still holds the parameter gradients ({}) and, when accumulating, the \
             accumulated ones (as much again).",
            s.bytes("gradients")
        ),
        Key::StepQuantity => format!("step peak, {} micro-batches", s.count("k")),
        Key::StepNote => format!(
            "model + Adam state + inputs + max(activations of B/k, gradients) + accumulated \
             gradients when k > 1. Not predicted: {} live in the process before the model was \
             built (thread pool, matmul slabs), {} of backend buffers allocated by the first \
             pass, and temporaries inside backward",
            s.bytes("process"),
            s.bytes("runtime")
        ),
        Key::PeakChart => format!("Peak memory of one step on {} samples", s.count("batch")),
        Key::PublishedSource => {
            "Hugging Face Transformers, \"efficient training on a single GPU\" \
                               (bert-large, V100 16 GB, NVML)"
                .into()
        }
        Key::PublishedClaim => "batch 4 -> batch 1 + accumulation 4: 14949 -> 8681 MB (-41.9%), \
                              8.86 -> 7.75 samples/s (-12.5%)"
            .into(),
        Key::PublishedOurs => format!(
            "1 x {} -> 4 x {}: {} -> {} ({}); time per sample {}",
            s.count("batch"),
            s.count("micro_batch"),
            s.bytes("plain"),
            s.bytes("accumulated"),
            change(s.num("plain"), s.num("accumulated")),
            if s.has("timing") {
                s.cost("timing")
            } else {
                format!("timed in pairs at k = {} only (above)", s.count("timed_k"))
            },
        ),
        Key::PublishedOursUnmeasured => "k = 4 was not measured".into(),
        Key::Headline => format!(
            "one batch of {} against {} micro-batches of {}, the smallest k that gives {:.0}% of \
             the largest saving (step peak; time per sample)",
            s.count("batch"),
            s.count("k"),
            s.count("micro_batch"),
            s.num("share") * 100.0
        ),
        Key::TransformerNote => "model + Adam state + token ids + what the forward pass keeps for \
                               B/k sequences and log-softmax's output (the batch-size page's \
                               rule) + the accumulated gradients when k > 1"
            .into(),
        Key::TransformerPeaks => format!(
            "Transformer: one step on {} sequences peaks at {}; as {} micro-batches of {} at {} \
             ({}). The accumulated step is checked against the plain one as on the MLP: {}.",
            s.count("batch"),
            s.bytes("plain"),
            s.count("k"),
            s.count("micro_batch"),
            s.bytes("accumulated"),
            change(s.num("plain"), s.num("accumulated")),
            match s.count("failed") {
                0 => "every check passed".to_string(),
                n => format!("{n} checks failed"),
            }
        ),
        // Chart titles, axes and legends.
        Key::LabelMicroBatchesKBatchBK => "micro-batches k (batch B/k each)".into(),
        Key::LabelSamplesSMedianBarsFastestAnd => {
            "samples/s (median; bars: fastest and slowest repeat)".into()
        }
        Key::LabelMemoryThroughOneTrainingStepOne => {
            "Memory through one training step: one batch against micro-batches".into()
        }
    }
}
