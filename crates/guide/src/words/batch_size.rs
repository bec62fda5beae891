//! The words of the batch-size sweep: what the forward pass keeps per sample, where
//! activations outgrow the gradients, the fixed time of a step, and the published
//! per-parameter rule beside ours.

use results::format;
use results::keys::batch_size::Key;

use super::Said;

/// What the byte rule of the forward pass's activations counts.
const ACTIVATIONS_RULE: &str = "forward peak: each hidden layer's Linear and ReLU outputs, the \
                                last Linear output and the loss's difference (x 4 bytes)";

pub(super) fn word(key: Key, s: &Said<'_>) -> String {
    match key {
        Key::LabelBatchSizeSequences => "batch size (sequences)".into(),
        Key::LabelInputsAndTargets => "inputs and targets".into(),
        Key::LabelAdamState => "Adam state".into(),
        Key::LabelActivationsPerSample => "activations per sample".into(),
        Key::LabelThroughputSamplesS => "throughput (samples/s)".into(),
        Key::LabelBatchSizeSamples => "batch size (samples)".into(),
        Key::LabelActivationsFittedLine => "activations, fitted line".into(),
        Key::LabelParameterGradientsMeasured => "parameter gradients (measured)".into(),
        Key::LabelBytes => "bytes".into(),
        Key::LabelStepPeakPredicted => "step peak (predicted)".into(),
        Key::LabelBackwardPeakMeasured => "backward peak (measured)".into(),
        Key::LabelForwardPeakMeasured => "forward peak (measured)".into(),
        Key::LabelStepPeakMeasured => "step peak (measured)".into(),
        Key::LabelBytesInUse => "bytes in use".into(),
        Key::LabelParameterGradients => "parameter gradients".into(),
        Key::LabelAdamStateTwoMoments => "Adam state (two moments)".into(),
        Key::LabelParameters => "parameters".into(),
        Key::ActivationsFit => activations_fit(s),
        Key::FitActivations => "bytes kept by the forward pass against batch size".into(),
        Key::Crossover => crossover(s),
        Key::LazyInit => lazy_init(s),
        Key::FixedCost => fixed_cost(s),
        Key::PhaseShare => phase_share(s),
        Key::PeaksRange => peaks_range(s),
        Key::ParamsNote => format!("{} parameters x 4 bytes (f32)", s.count("params")),
        Key::AdamNote => {
            "8 bytes per parameter; measured as what stays live after the first step".into()
        }
        Key::GradsNote => "4 bytes per parameter; measured as what backward leaves live".into(),
        Key::StepQuantity => format!("step peak at batch {}", s.num("batch")),
        Key::StepNote => step_note(s),
        Key::ActivationsNoteBracket => activations_note_bracket(s),
        Key::ActivationsNoteFit => format!("{ACTIVATIONS_RULE}; measured as the slope of the fit"),
        Key::BracketPoint => format!("MLP at batch {}", s.count("batch")),
        Key::BracketRuleForward => "model + Adam state + inputs + the forward pass's activations \
                                    at its peak, the CPU's rule: what it keeps and the loss's \
                                    square for a moment"
            .into(),
        Key::BracketRuleBackward => "model + Adam state + inputs + max(what the forward pass \
                                     kept, the parameter gradients): the step-peak rule, which \
                                     leaves out what backward holds for a moment beside them"
            .into(),
        Key::PublishedSource => {
            "accelerate `estimate-memory`; ZeRO (Rajbhandari et al. 2020)".into()
        }
        Key::PublishedClaim => "Adam in f32 needs 16 bytes per parameter for weights, gradients \
                                and optimizer state (before activations)."
            .into(),
        Key::PublishedOurs => published_ours(s),
        Key::Headline => headline(s),
        Key::SweepDetail => {
            "a sweep, not a substitute: each batch size computes a different step, \
             so there is nothing to compare"
                .into()
        }
        Key::TransformerNote => transformer_note(),
        Key::TransformerKept => transformer_kept(s),
        Key::TransformerKeptQuantity => "transformer: kept for backward per sequence".into(),
        Key::TransformerKeptNote => transformer_kept_note(s),
        // Chart titles, axes and legends.
        Key::LabelSamplesSMedianBarsFastestAnd => {
            "samples/s (median; bars: fastest and slowest repeat)".into()
        }
        Key::LabelPeakMemoryOfATrainingStep => {
            "Peak memory of a training step against batch size".into()
        }
        Key::LabelLiveBeforeTheStepModelAdam => {
            "live before the step: model, Adam state, inputs".into()
        }
        Key::LabelWhereTheBytesOfAStep => {
            "Where the bytes of a step go, component by component".into()
        }
        Key::LabelProcessBeforeTheModelThreadPool => {
            "process before the model (thread pool, matmul slabs)".into()
        }
        Key::LabelBackendBuffersAllocatedByTheFirst => {
            "backend buffers allocated by the first pass".into()
        }
        Key::LabelActivationsForwardPeakAboveLive => "activations (forward peak above live)".into(),
        Key::LabelWhatSetsThePeakActivationsAgainst => {
            "What sets the peak: activations against parameter gradients".into()
        }
        Key::LabelActivationsKeptByForwardMeasured => {
            "activations kept by forward (measured)".into()
        }
        Key::LabelTrainingThroughputAgainstBatchSize => {
            "Training throughput against batch size".into()
        }
        Key::LabelMemoryThroughOneTrainingStepThe => {
            "Memory through one training step: the smallest and the largest batch".into()
        }
    }
}

/// The words of [`Key::ActivationsFit`].
fn activations_fit(s: &Said<'_>) -> String {
    format!(
        "The forward pass keeps {} per sample for backward (least-squares fit over {} batch \
         sizes, R\u{b2} = {:.6}), on top of a fixed {}.",
        s.bytes("slope"),
        s.count("sizes"),
        s.num("r_squared"),
        s.bytes("intercept")
    )
}

/// The words of [`Key::LazyInit`].
fn lazy_init(s: &Said<'_>) -> String {
    format!(
        "Burn initialises parameters lazily: right after `init()` {} were live; the {} \
         parameters ({}) are allocated when first read.",
        s.bytes("after_init"),
        s.count("params"),
        s.bytes("params_bytes"),
    )
}

/// The words of [`Key::PhaseShare`].
fn phase_share(s: &Said<'_>) -> String {
    format!(
        "{} {} ({:.0}%)",
        s.name("phase"),
        s.seconds("time"),
        s.num("share")
    )
}

/// The words of [`Key::PeaksRange`].
fn peaks_range(s: &Said<'_>) -> String {
    format!(
        "From batch {} to batch {} ({}x the samples) the step peak goes from {} to {} \
         ({:.2}x).",
        s.num("small"),
        s.num("large"),
        s.num("large") / s.num("small"),
        s.bytes("peak_small"),
        s.bytes("peak_large"),
        s.num("peak_large") / s.num("peak_small"),
    )
}

/// The words of [`Key::StepNote`].
fn step_note(s: &Said<'_>) -> String {
    format!(
        "model + Adam state + inputs + max(activations, gradients). Not predicted: {} live in \
         the process before the model was built (thread pool, matmul slabs), {} of backend \
         buffers allocated by the first pass, and temporaries inside backward",
        s.bytes("process"),
        s.bytes("runtime")
    )
}

/// The words of [`Key::ActivationsNoteBracket`].
fn activations_note_bracket(s: &Said<'_>) -> String {
    format!(
        "{ACTIVATIONS_RULE}; measured at batch {}: the forward phase's bracket above what was \
         live when it began, per sample (the lower bound's readings can miss the loss's \
         square, alive only inside the pass)",
        s.num("batch")
    )
}

/// The words of [`Key::PublishedOurs`].
fn published_ours(s: &Said<'_>) -> String {
    format!(
        "{:.2} bytes per parameter measured (weights + gradients + Adam state = {} for {} \
         parameters)",
        s.num("per_param"),
        s.bytes("state"),
        s.count("params")
    )
}

/// The words of [`Key::Headline`].
fn headline(s: &Said<'_>) -> String {
    format!(
        "batch {} against batch {} (step peak; time per sample)",
        s.num("large"),
        s.num("small")
    )
}

/// The words of [`Key::TransformerNote`].
fn transformer_note() -> String {
    "model + Adam state + token ids + what the forward pass keeps (per \
     token, 18 d + 3 h s + h + 2 f32 values per block and v + 3 d + 5 \
     outside the blocks) + log-softmax's output (v per token) while \
     the loss reads it; the last two written after measuring \
     (explanations, not predictions)"
        .into()
}

/// The words of [`Key::TransformerKeptNote`].
fn transformer_kept_note(s: &Said<'_>) -> String {
    format!(
        "{} blocks x {} tokens x (18 d + 3 h s + h + 2) x 4 bytes, plus v + 3 d + 5 values \
         per token outside the blocks (an explanation written after measuring, see the \
         sequence-length page); measured as the slope of what the forward pass leaves live \
         against the batch",
        s.count("layers"),
        s.count("seq")
    )
}

/// The words of [`Key::Crossover`].
fn crossover(s: &Said<'_>) -> String {
    let above = s.list("above");
    format!(
        "Parameter gradients take {}; activations outgrow them at batch {:.0}. Below that \
         the step peak is set by the gradients and a smaller batch saves little; above \
         it (measured here: {}) the peak grows with the batch.",
        s.bytes("gradients"),
        s.num("batch"),
        if above.is_empty() {
            "none".to_string()
        } else {
            above.join(", ")
        }
    )
}

/// The words of [`Key::FixedCost`].
fn fixed_cost(s: &Said<'_>) -> String {
    let (intercept, step) = (s.num("intercept"), s.num("step"));
    let share = if intercept < step {
        format!(
            "is {:.0}% of the {} step",
            intercept / step * 100.0,
            s.seconds("step")
        )
    } else {
        // A fit over noisy steps can put the intercept above the smallest step.
        format!(
            "is all of the {} step (the fitted intercept is larger)",
            s.seconds("step")
        )
    };
    let phases = s.list("phases").join(", ");
    format!(
        "Step time grows by {} per sample on top of a fixed {} per step (least-squares \
         fit of the median step time over {} batch sizes, R\u{b2} = {:.3}): at batch {} \
         the fixed part {share}{}. Part of that fixed cost is the optimizer's update of \
         every parameter, which does not depend on the batch: a smaller batch pays it \
         over fewer samples.",
        s.seconds("slope"),
        s.seconds("intercept"),
        s.count("sizes"),
        s.num("r_squared"),
        s.count("batch"),
        if phases.is_empty() {
            String::new()
        } else {
            format!("; its phases: {phases}")
        }
    )
}

/// The words of [`Key::TransformerKept`].
fn transformer_kept(s: &Said<'_>) -> String {
    let (slope, predicted) = (s.num("slope"), s.num("predicted"));
    format!(
        "Transformer: the forward pass leaves {} per sequence of {} tokens for backward \
         ({} per token; least-squares fit over {} batch sizes, R\u{b2} = {:.6}); the rule \
         ({} blocks x (18 d + 3 h s + h + 2) f32 values per token, plus v + 3 d + 5 \
         outside the blocks, the latter written after the sequence-length sweep measured \
         it) gives {} ({:+.1}%).",
        s.bytes("slope"),
        s.count("seq"),
        format::bytes(slope / s.num("seq")),
        s.count("sizes"),
        s.num("r_squared"),
        s.count("layers"),
        s.bytes("predicted"),
        format::diff_pct(predicted, slope),
    )
}
