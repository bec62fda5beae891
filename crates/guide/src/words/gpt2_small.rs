//! The words of the GPT-2-small table: each fix's name, the workload, what each cell's check
//! compared, and why the cells were not timed in pairs where they were not.

use results::keys::gpt2_small::Key;
use results::{format, Fix};

use super::Said;

/// A fix's name, as every page names it.
pub fn fix_name(fix: Fix) -> &'static str {
    match fix {
        Fix::Plain => "plain step (Adam, f32)",
        Fix::HalfBatch => "half the batch",
        Fix::Accumulation => "accumulation (2 micro-batches)",
        Fix::MixedBf16 => "mixed bf16",
        Fix::Bf16Storage => "bf16 storage",
        Fix::Checkpointing => "checkpointing",
        Fix::Momentum => "SGD with momentum",
        Fix::AccumulationCheckpointing => "accumulation + checkpointing",
        Fix::AccumulationCheckpointingMixed => "accumulation + checkpointing + mixed bf16",
        Fix::EfficientAttention => "memory-efficient attention",
        Fix::EfficientAttentionLoss => "memory-efficient attention + chunked loss",
        Fix::InferAutodiff => "autodiff backend",
        Fix::InferValid => "model.valid()",
        Fix::InferInt8 => "valid(), 8-bit weights",
        Fix::InferInt4 => "valid(), 4-bit weights",
        Fix::PresetBlock => "TinyLlama-width block (estimator check)",
    }
}

/// The name of the fix whose id is the argument `name`.
/// Whether the workload said is GPT-2 small's shape (12 blocks of d_model 768, 12 heads).
fn gpt2_shape(s: &Said<'_>) -> bool {
    (s.count("layers"), s.count("d_model"), s.count("heads")) == (12, 768, 12)
}

fn fix(s: &Said<'_>, name: &str) -> &'static str {
    Fix::from_id(&s.name(name)).map_or("an unknown fix", fix_name)
}

pub(super) fn word(key: Key, s: &Said<'_>) -> String {
    match key {
        Key::PresetBlock => format!(
            "step peak, one block of the TinyLlama-like preset (d_model {}, {} heads), sequence \
             {}, batch {}, vocabulary {}",
            s.count("d_model"),
            s.count("heads"),
            s.count("seq"),
            s.count("batch"),
            format::thousands(s.count("vocab")),
        ),
        Key::PresetBlockNote => {
            let mut note = "the estimator's rule for GPT-2's block at another preset's width and \
                            head count (every preset is given GPT-2's block); a small vocabulary \
                            keeps the block most of the step, a plain Adam step in f32"
                .to_string();
            if s.has("above") {
                note.push_str(&format!(
                    ". Measured, backward's peak sat {} above the weights and Adam state: the \
                     forward pass's {} of activations and the {} of gradients alive together, \
                     and {} more. The rule takes the larger of the two: backward, moving down the \
                     blocks, frees each block's activations once its gradients are made, so \
                     over GPT-2's 12 blocks gradients replace activations; in one block both are \
                     alive at once (an explanation written after the measurement, not a prediction)",
                    s.bytes("above"),
                    s.bytes("activations"),
                    s.bytes("grads"),
                    s.bytes("rest"),
                ));
            }
            note
        }
        // One model, one name: "GPT-2 small" only for its shape (12 blocks of d_model 768);
        // the quick profile's decoder is named for what it is.
        Key::Workload => format!(
            "{}: {} blocks, d_model {}, {} heads, vocabulary {}, sequence {}, batch {}, an \
             untied head: {} parameters{}.",
            if gpt2_shape(s) {
                "GPT-2 small's shape"
            } else {
                "A small decoder in GPT-2 small's layout (the quick profile, not GPT-2 small)"
            },
            s.count("layers"),
            s.count("d_model"),
            s.count("heads"),
            format::thousands(s.count("vocab")),
            s.count("seq"),
            s.count("batch"),
            format::thousands(s.count("params")),
            if gpt2_shape(s) {
                " (GPT-2 ties it: 124,439,808)"
            } else {
                ""
            },
        ),
        Key::RegimeWorkload => format!(
            "The order's regime: {} ({} blocks, d_model {}, {} heads) at sequence \
             {}, batch {}, with a vocabulary of {} so that the blocks, not the embedding and \
             head, make the step: {} parameters.",
            if s.count("d_model") == 768 {
                "GPT-2 small's block"
            } else {
                "a small decoder's block (the quick profile)"
            },
            s.count("layers"),
            s.count("d_model"),
            s.count("heads"),
            s.count("seq"),
            s.count("batch"),
            format::thousands(s.count("vocab")),
            format::thousands(s.count("params")),
        ),
        Key::FixedShare => format!(
            "The plain step peaks at {}: weights and Adam's two moments are {} ({}), the \
             gradients {} and what the forward pass keeps for backward {}. An activation fix can \
             only save from what is not weights and optimizer state.",
            s.bytes("peak"),
            s.bytes("fixed"),
            super::share(s.num("fixed"), s.num("peak")),
            s.bytes("gradients"),
            s.bytes("activations"),
        ),
        Key::RegimeShare => format!(
            "In the order's regime the plain step's activations are {} of its {} peak ({}; the \
             regime asks for at least {:.0}%), as at a card's out-of-memory point.",
            s.bytes("activations"),
            s.bytes("peak"),
            super::share(s.num("activations"), s.num("peak")),
            s.num("required"),
        ),
        Key::AccumulationCosts => format!(
            "Accumulation raised the peak from {} to {}: it holds an accumulated copy of the \
             gradients ({} in f32) across micro-batches, more than the activations it spares \
             ({}). It pays once activations are larger than the gradients: at a bigger batch, a \
             longer sequence, or on a card's out-of-memory point.",
            s.bytes("plain"),
            s.bytes("accumulated"),
            s.bytes("gradients"),
            s.bytes("spared"),
        ),
        Key::MixedActivations => format!(
            "At sequence {}, mixed bf16 kept {} for backward against f32's {}; the estimator's \
             rule halves them (2 bytes a value).{}",
            s.count("seq"),
            s.bytes("mixed"),
            s.bytes("f32"),
            if s.num("matmul_via_f32") > 0.0 {
                " This backend (Flex) multiplies bf16 through f32 copies of both operands and of \
                 the result, which the forward pass keeps: on it, at this sequence, the rule's \
                 saving is not seen (outside the order's regime: said beside the order's row, \
                 which only a measurement in the regime labels)."
            } else {
                ""
            },
        ),
        Key::NotTimed => format!(
            "Not timed in pairs on this device: a plain step takes {}, and a paired comparison \
             runs at least four builds of three arms each, minutes per fix; steps are timed in \
             pairs where one takes at most {}. Each fix's cost is timed in pairs on its own page.",
            s.seconds("step"),
            s.seconds("limit"),
        ),
        Key::Headline => format!(
            "{} against plain, GPT-2 small, batch {} (step peak)",
            fix(s, "fix"),
            s.count("batch")
        ),
        Key::Secondary => format!("{} against plain", fix(s, "fix")),
        Key::LabelPeakByFix => "The same step under each fix".into(),
        Key::LabelFix => "fix".into(),
        Key::LabelStepPeak => "step peak".into(),
        Key::LabelMeasuredPeak => "measured peak".into(),
        Key::LabelFixedPart => "weights + optimizer state".into(),
        Key::LabelActivationsKept => "activations kept for backward".into(),
        Key::LabelEstimatedPeak => "estimated peak".into(),
    }
}
