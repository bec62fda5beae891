//! The words of mixed precision: loss curves and their drift from f32's, zero gradients with
//! and without the loss scale, memory by component, time, and the published figures beside
//! ours.

use results::format;
use results::keys::mixed_precision::Key;

use super::Said;

/// `after` against `before` as a signed percentage of `before`.
fn ratio_change(before: f64, after: f64) -> String {
    format::pct((after / before - 1.0) * 100.0)
}

pub(super) fn word(key: Key, s: &Said<'_>) -> String {
    match key {
        Key::LabelForwardActivations => "forward activations".into(),
        Key::LabelGradients => "gradients".into(),
        Key::LabelAdamState => "Adam state".into(),
        Key::LabelWeights => "weights".into(),
        Key::LabelNotMeasured => "not measured".into(),
        Key::LabelCrossEntropyNats => "cross-entropy (nats)".into(),
        Key::LabelStep => "step".into(),
        Key::LabelDynamicLossScale => "Dynamic loss scale".into(),
        Key::LabelMSELoss => "MSE loss".into(),
        Key::LabelThroughputSamplesS => "throughput (samples/s)".into(),
        Key::LabelPrecision => "precision".into(),
        Key::LabelBytes => "bytes".into(),
        Key::Learned => learned(s),
        Key::Precision => precision(s),
        Key::LossScale => loss_scale(s),
        Key::Mixed => mixed(s),
        Key::Time => time(s),
        Key::SeedStudy => seed_study(s),
        Key::Loss => format!("{:.4}", s.num("value")),
        Key::Name => s.name("name"),
        Key::ComponentQuantity => format!("{}: {}", s.name("precision"), s.text("component")),
        Key::ForwardNoteBf16 => forward_note_bf16(),
        Key::ForwardNoteF16 => "each hidden layer's Linear and ReLU outputs, the last output and \
                                the loss's difference in f16. Not predicted: the CPU's f16 matmul \
                                (gemm-f16 0.19) packs blocks of both operands into f32 buffers it \
                                allocates on every call"
            .into(),
        Key::ForwardNote16BitKernel => "each hidden layer's Linear and ReLU outputs, the last \
                                        output and the loss's difference, 16-bit like the \
                                        weights (the device's matmul kernel works in the \
                                        stored type: no f32 copies)"
            .into(),
        Key::ForwardNoteMixedKernel => "16-bit Linear and ReLU outputs and input copy, f32 \
                                        output and loss difference, and the 16-bit weight copies \
                                        Linear keeps for backward (all layers but the first)"
            .into(),
        Key::ForwardNoteF32 => "each hidden layer's Linear and ReLU outputs, the last output and \
                                the loss's difference"
            .into(),
        Key::ForwardNoteMixedBf16 => "bf16 Linear and ReLU outputs and input copy, f32 output and \
                                      loss difference, the bf16 weight copies Linear keeps for \
                                      backward (all layers but the first), and during the last \
                                      Linear the f32 working copies of the CPU backend's bf16 \
                                      matmul"
            .into(),
        Key::ForwardNoteMixedF16 => "f16 Linear and ReLU outputs and input copy, f32 output and \
                                     loss difference, the f16 weight copies Linear keeps for \
                                     backward (all layers but the first). Not predicted: the f32 \
                                     packing buffers the CPU's f16 matmul allocates on every call"
            .into(),
        Key::HfSource => "Hugging Face Transformers, \"efficient training on a single GPU\" \
                          (bert-large, V100 16 GB, batch 4)"
            .into(),
        Key::HfClaim => "fp16 mixed precision: 8.86 -> 18.64 samples/s (+110%), 14949 -> 13939 MB \
                         (-6.8%); mixed precision keeps an fp32 and a half copy of the weights"
            .into(),
        Key::HfOurs => hf_ours(s),
        Key::MicikeviciusSource => "Micikevicius et al. 2018, \"Mixed Precision Training\"".into(),
        Key::MicikeviciusClaim => "half precision nearly halves activation memory; f32 master \
                                   weights, loss scaling and f32 accumulation keep accuracy; bf16 \
                                   needs no loss scaling"
            .into(),
        Key::MicikeviciusOurs => micikevicius_ours(s),
        Key::DriftDetail => s.list("checks").join("; "),
        Key::DriftCheck => drift_check(s),
        Key::Headline => headline(s),
        Key::SeedDetail => seed_detail(s),
        Key::PointCheckWhat => s
            .point_check()
            .map_or_else(|| "no check ran".to_string(), super::describe_check),
        Key::NoSeedStudy => "neither its drift nor the seed study was measured".into(),
        Key::Transformer => transformer(s),
        Key::TransformerPrecision => transformer_precision(s),
        Key::TransformerLearn => transformer_learn(s),
        Key::TransformerMemory => transformer_memory(s),
        Key::TransformerQuantity => transformer_quantity(s),
        Key::TransformerNoteWeights => "parameters x bytes per stored value; host bookkeeping per \
                                        parameter tensor not in the rule"
            .into(),
        Key::TransformerNoteAdam => "two moments per parameter, stored like the parameters; \
                                     bookkeeping not in the rule"
            .into(),
        Key::TransformerNoteGradients => "one gradient per parameter, in the parameters' type; \
                                          measured as what backward leaves live above what was \
                                          live before the forward pass, less the graph's \
                                          bookkeeping that backward frees"
            .into(),
        // Chart titles, axes and legends.
        Key::LabelParametersXBytesPerStoredValue => "parameters x bytes per stored value".into(),
        Key::LabelTwoMomentsPerParameterStoredLike => {
            "two moments per parameter, stored like the parameters".into()
        }
        Key::LabelOneGradientPerParameterInThe => {
            "one gradient per parameter, in the parameters' type".into()
        }
        Key::LabelMemoryByComponentAndPrecision => "Memory by component and precision".into(),
        Key::LabelTrainingThroughputByPrecision => "Training throughput by precision".into(),
        Key::LabelMedianBarsFastestAndSlowestStep => {
            "median; bars: fastest and slowest step".into()
        }
        Key::LabelLossOverTheTrainingRun => "Loss over the training run".into(),
        Key::LabelLog2OfTheLossScale => "log2 of the loss scale".into(),
        Key::LabelMemoryThroughOneTrainingStepIn => {
            "Memory through one training step in f32, mixed and 16-bit precision".into()
        }
        Key::LabelTheChainSEntropyRateThe => "the chain's entropy rate (the floor)".into(),
        Key::LabelTransformerLossOverTheTrainingRun => {
            "Transformer: loss over the training run, by precision".into()
        }
    }
}

/// The words of [`Key::Mixed`].
fn mixed(s: &Said<'_>) -> String {
    format!(
        "Mixed precision against f32 at batch {}: forward activations {} -> {}, step peak {} \
         -> {} ({}). Weights, gradients and Adam state stay f32; the 16-bit weight copies \
         kept for backward ({} predicted) eat into the activations saved, so mixed precision \
         lowers the peak only where activations dominate it.",
        s.count("batch"),
        s.bytes("f32_act"),
        s.bytes("mixed_act"),
        s.bytes("f32_peak"),
        s.bytes("mixed_peak"),
        ratio_change(s.num("f32_peak"), s.num("mixed_peak")),
        s.bytes("copies"),
    )
}

/// The words of [`Key::Time`].
fn time(s: &Said<'_>) -> String {
    format!(
        "Time per sample on this machine, timed in pairs against f32: {} {}; {} {}. Where 16 \
         bits cost time on the CPU, it is because Flex converts them to f32 for the matmul \
         and back (gemm's f16 matmul converts blocks as it packs them). A GPU with bf16/f16 \
         tensor cores (an H100 or H200) is expected to run 16-bit matmuls faster than f32 \
         ones: the published figure below, and a GPU's result set where there is one.",
        s.name("storage"),
        s.cost("storage_timing"),
        s.name("mixed"),
        s.cost("mixed_timing"),
    )
}

/// The words of [`Key::ForwardNoteBf16`].
fn forward_note_bf16() -> String {
    "each hidden layer's Linear and ReLU outputs in bf16, plus, during \
     the last Linear, the f32 copies of its input, weight and output \
     that the CPU backend's bf16 matmul works in"
        .into()
}

/// The words of [`Key::HfOurs`].
fn hf_ours(s: &Said<'_>) -> String {
    format!(
        "on this CPU: time per sample of mixed bf16 against f32 {} (mixed f16's is not timed \
         in pairs); mixed f16's step peak {} -> {} ({}); a GPU result set is needed for the \
         speed comparison",
        s.cost("timing"),
        s.bytes("f32_peak"),
        s.bytes("mixed_peak"),
        ratio_change(s.num("f32_peak"), s.num("mixed_peak"))
    )
}

/// The words of [`Key::MicikeviciusOurs`].
fn micikevicius_ours(s: &Said<'_>) -> String {
    format!(
        "forward activations {} (f32) -> {} (mixed bf16, {})",
        s.bytes("f32"),
        s.bytes("mixed"),
        ratio_change(s.num("f32"), s.num("mixed"))
    )
}

/// The words of [`Key::DriftCheck`].
fn drift_check(s: &Said<'_>) -> String {
    format!(
        "{}: loss over {} steps against f32: largest drift {:.2}% of the initial loss \
         (tolerance {:.2}%, the drift between two f32 runs){}",
        s.name("precision"),
        s.count("steps"),
        s.num("drift") * 100.0,
        s.num("tolerance") * 100.0,
        if s.yes("passed") { "" } else { ", FAILED" }
    )
}

/// The words of [`Key::Headline`].
fn headline(s: &Said<'_>) -> String {
    format!(
        "f32 against {}, {} training steps (step peak; time per sample)",
        s.name("precision"),
        s.count("steps")
    )
}

/// The words of [`Key::SeedDetail`].
fn seed_detail(s: &Said<'_>) -> String {
    let difference = s.num("difference");
    format!(
        "{}: {} on average {:.2e} ({:.2} of f32's spread){}",
        s.text("what"),
        if difference > 0.0 { "worse" } else { "better" },
        difference.abs(),
        s.num("relative"),
        if s.yes("passed") { "" } else { ", FAILED" }
    )
}

/// The words of [`Key::TransformerPrecision`].
fn transformer_precision(s: &Said<'_>) -> String {
    format!(
        "Transformer, {}: step peak {} (f32: {}), final loss {:.3}, largest drift from f32 \
         {:.2}% of the initial loss ({}).",
        s.name("precision"),
        s.bytes("peak"),
        s.bytes("f32_peak"),
        s.num("final"),
        s.num("drift") * 100.0,
        if !s.has("passed") {
            "no yardstick measured to judge it by"
        } else if s.yes("passed") {
            "within the yardstick"
        } else {
            "beyond the yardstick: the result changed"
        }
    )
}

/// The words of [`Key::TransformerQuantity`].
fn transformer_quantity(s: &Said<'_>) -> String {
    format!(
        "transformer, {}: {}",
        s.name("precision"),
        s.text("component")
    )
}

/// The words of [`Key::Learned`].
fn learned(s: &Said<'_>) -> String {
    let (first, last) = (s.num("first"), s.num("last"));
    let learned = format!(
        "In f32 the loss falls from {first:.4} to {last:.4} over {} steps ({}).",
        s.count("steps"),
        ratio_change(first, last),
    );
    if !s.has("tolerance") {
        format!(
            "{learned} The yardstick, f32 from other initial weights, was not measured \
             in this set: no precision's drift from f32 is judged here."
        )
    } else {
        format!(
            "{learned} The yardstick: f32 from other initial weights ends at {} and \
             drifts from it by up to {:.2}% of the initial loss; a precision whose curve \
             stays within that drift has not changed the result beyond what the choice \
             of initial weights does.",
            if s.has("yardstick_last") {
                format!("{:.4}", s.num("yardstick_last"))
            } else {
                "n/a".into()
            },
            s.num("tolerance") * 100.0
        )
    }
}

/// The words of [`Key::Precision`].
fn precision(s: &Said<'_>) -> String {
    let mut sentence = format!(
        "{}: step peak {}, final loss {:.4}",
        format::capitalise(&s.name("precision")),
        s.bytes("peak"),
        s.num("final"),
    );
    if s.has("drift_passed") {
        sentence.push_str(&format!(
            ", largest drift from f32 {:.3e} ({:.2}% of the initial loss){}",
            s.num("drift_abs"),
            s.num("drift_rel") * 100.0,
            if s.yes("drift_passed") {
                ": within the yardstick"
            } else {
                ": beyond the yardstick, the result changed"
            }
        ));
    }
    sentence.push_str(&format!(
        "; gradient elements exactly zero (of {}), without a loss scale: {} at the \
         initial weights, {} at the trained ones",
        s.num("elements"),
        s.num("zero_initial"),
        s.num("zero_final"),
    ));
    if s.has("skipped") {
        sentence.push_str(&format!(
            "; with the loss scale: {} (scale {}) and {} (scale {}); {} of {} steps were \
             skipped on overflow",
            s.num("scaled_zero_initial"),
            s.num("scale_initial"),
            s.num("scaled_zero_final"),
            s.num("scale_final"),
            s.num("skipped"),
            s.count("steps")
        ));
    }
    sentence.push('.');
    sentence
}

/// The words of [`Key::LossScale`].
fn loss_scale(s: &Said<'_>) -> String {
    let (without, with) = (s.num("without"), s.num("with"));
    let (pure_without, pure_with) = (s.num("pure_without"), s.num("pure_with"));
    format!(
        "What the loss scale does: with f32 master weights (mixed f16), {without} \
         gradient elements are exactly zero at the initial weights without a scale and \
         {with} with it (f32: {}){}. With f16 storage, at the trained weights: \
         {pure_without} without and {pure_with} with the scale{}.",
        s.num("f32"),
        if with < without {
            format!(
                ": the scale kept {} small gradients from flushing to zero in the f16 \
                 backward pass",
                without - with
            )
        } else {
            ": here the scale recovered none".into()
        },
        if pure_with >= 0.9 * pure_without {
            ": the scale cannot help much there, because the unscaled gradients go back \
             into f16 (and Adam's moments are f16 too)"
        } else {
            ""
        },
    )
}

/// The words of [`Key::SeedStudy`].
fn seed_study(s: &Said<'_>) -> String {
    let difference = s.num("difference");
    let precision = s.name("precision");
    format!(
        "The index row's proof, paired by seed at the quick size ({} runs each from {} \
         initial weights, mean of the last {} losses): f32 ends at {}, {} at {}. On \
         average {} ends {:.2e} {} than f32 from the same weights; f32's own spread \
         across the seeds is {:.2e}, so the check {}.",
        s.count("runs"),
        s.count("runs"),
        s.count("last"),
        s.list("f32").join(", "),
        precision,
        s.list("candidate").join(", "),
        precision,
        difference.abs(),
        if difference > 0.0 { "higher" } else { "lower" },
        s.num("spread"),
        if s.yes("passed") {
            "passes: mixed precision trains as well as f32 within the seed-to-seed spread"
        } else {
            "FAILS: mixed precision trains worse than the seed-to-seed spread allows"
        }
    )
}

/// The words of [`Key::Transformer`].
fn transformer(s: &Said<'_>) -> String {
    let last = s.num("last");
    format!(
        "Transformer ({}, batch {}, the same batch every step, Adam at {}): in f32 the \
         loss falls from {:.3} to {:.3} nats over {} steps; the chain's entropy rate, the \
         floor of the loss on fresh sequences, is {:.3} nats (uniform guessing: {:.3}). \
         {}{}",
        s.name("model"),
        s.count("batch"),
        s.num("lr"),
        s.num("first"),
        last,
        s.count("steps"),
        s.num("floor"),
        s.num("uniform"),
        if !s.has("tolerance") {
            "The yardstick, f32 from other initial weights, was not measured in this set."
                .to_string()
        } else {
            format!(
                "The yardstick, f32 from other initial weights, drifts from it by up to \
                 {:.2}% of the initial loss.",
                s.num("tolerance") * 100.0
            )
        },
        if last < s.num("floor") {
            " The loss ends below the floor because the batch is the same at every \
             step: the model learns the chain's transitions and then memorises the \
             batch, as the MLP memorises its teacher's batch; what is compared is the \
             same run in each precision."
        } else {
            ""
        }
    )
}

/// The words of [`Key::TransformerLearn`].
fn transformer_learn(s: &Said<'_>) -> String {
    let or_none = |names: Vec<String>| {
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    };
    format!(
        "Transformer: the precisions that learn the task (the loss falls by at least \
         half as much as in f32): {}; that cannot: {}.",
        or_none(s.list("can")),
        or_none(s.list("cannot"))
    )
}

/// The words of [`Key::TransformerMemory`].
fn transformer_memory(s: &Said<'_>) -> String {
    let extra = s.num("extra");
    format!(
        "Transformer, memory by precision: weights, Adam state and gradients follow the \
         bytes per stored value (the table below), except for a fixed part that no \
         precision changes: {} more in the weights than {} parameters x 4 bytes in f32, \
         about {} for each of its {} parameter tensors, is host bookkeeping (each \
         parameter's `Param`, its autodiff node and Flex's tensor header), the same in \
         bf16: at this small size {:.0}% of the f32 weights. The sequence-length page \
         measures the same per block at its sizes. The gradients measure less than their \
         rule: they are what backward leaves live above what was live before the forward \
         pass, and the graph's own bookkeeping, freed by backward, comes off them.",
        s.bytes("extra"),
        s.count("params"),
        format::bytes(extra / s.num("tensors")),
        s.count("tensors"),
        extra / s.num("f32_weights") * 100.0,
    )
}

/// What the estimator leaves out on this page's points: a clause of the estimator's note.
pub(super) fn estimator_leaves_out() -> &'static str {
    "; the estimator counts 16-bit matmuls as a GPU runs them, in the kernel: on the CPU Flex \
     multiplies bf16 through f32 copies of both operands and of the result (the forward \
     prediction above counts them), and the f16 points are estimated as bf16"
}
