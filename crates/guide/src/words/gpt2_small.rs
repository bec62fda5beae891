//! The words of the GPT-2-small table: each fix's name, the workload, what each cell's check
//! compared, and why the cells were not timed in pairs where they were not.

use results::format;
use results::keys::gpt2_small::Key;

use super::Said;

/// A fix's name in the table.
fn fix(id: &str) -> &'static str {
    match id {
        "plain" => "plain step (Adam, f32)",
        "half-batch" => "half the batch",
        "accumulation" => "accumulation (2 micro-batches)",
        "mixed-bf16" => "mixed bf16",
        "bf16-storage" => "bf16 storage",
        "checkpointing" => "checkpointing",
        "momentum" => "SGD with momentum",
        "accumulation-checkpointing" => "accumulation + checkpointing",
        "accumulation-checkpointing-mixed-bf16" => "accumulation + checkpointing + mixed bf16",
        "inference-autodiff" => "autodiff backend",
        "inference-valid" => "model.valid()",
        "inference-int8" => "valid(), 8-bit weights",
        "inference-int4" => "valid(), 4-bit weights",
        "tinyllama-block" => "TinyLlama-width block (estimator check)",
        _ => "an unknown fix",
    }
}

pub(super) fn word(key: Key, s: &Said<'_>) -> String {
    match key {
        Key::Fix => fix(&s.name("fix")).to_string(),
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
        Key::Workload => format!(
            "A GPT-2-small-shaped decoder: {} blocks, d_model {}, {} heads, vocabulary {}, \
             sequence {}, batch {}; learned positions and an untied head with a bias: {} \
             parameters (GPT-2 small ties its head to the token embedding: 124,439,808 at \
             sequence 1024).",
            s.count("layers"),
            s.count("d_model"),
            s.count("heads"),
            format::thousands(s.count("vocab")),
            s.count("seq"),
            s.count("batch"),
            format::thousands(s.count("params")),
        ),
        Key::FixedShare => format!(
            "The plain step peaks at {}: its fixed part (weights, gradients and Adam's two \
             moments) is {} ({:.0}% of the peak) and what the forward pass keeps for backward is \
             {}. An activation fix can only save from the rest.",
            s.bytes("peak"),
            s.bytes("fixed"),
            s.num("fixed") / s.num("peak") * 100.0,
            s.bytes("activations"),
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
            "Mixed bf16 kept {} for backward against f32's {}; the estimator's rule halves them \
             (2 bytes a value). Its error on this row says how far that rule is from this device.",
            s.bytes("mixed"),
            s.bytes("f32"),
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
            fix(&s.name("fix")),
            s.count("batch")
        ),
        Key::Secondary => format!("{} against plain", fix(&s.name("fix"))),
        Key::CheckNone => "no check".into(),
        Key::CheckShort => check_name(&s.name("what")).into(),
        Key::CheckLossFalls => format!(
            "trains: loss {:.3} to {:.3} in {} steps",
            s.num("first"),
            s.num("last"),
            s.count("steps")
        ),
        Key::CheckCompare => format!(
            "{}: {} of the largest (allowed {})",
            check_name(&s.name("what")),
            sci(s.num("rel")),
            sci(s.num("tolerance")),
        ),
        Key::LabelPeakByFix => "The same step under each fix".into(),
        Key::LabelFix => "fix".into(),
        Key::LabelStepPeak => "step peak".into(),
        Key::LabelMeasuredPeak => "measured peak".into(),
        Key::LabelFixedPart => "weights + optimizer state".into(),
        Key::LabelActivationsKept => "activations kept for backward".into(),
        Key::LabelEstimatedPeak => "estimated peak".into(),
    }
}

/// What a check compared, in words.
fn check_name(what: &str) -> &'static str {
    match what {
        "gradients-as-one-plain-step" => "gradients as plain's",
        "gradients-bf16-against-f32" => "gradients as f32's",
        "gradients-as-one-mixed-step" => "gradients as mixed bf16's",
        "valid-against-autodiff" => "logits as autodiff's",
        "quantized-outputs" => "logits as f32's",
        "loss-falls" => "the loss falls",
        _ => "compared",
    }
}

/// A small fraction in scientific notation (`3.3e-3`), zero as `0`.
fn sci(value: f64) -> String {
    if value == 0.0 {
        "0".into()
    } else {
        format!("{value:.1e}")
    }
}
