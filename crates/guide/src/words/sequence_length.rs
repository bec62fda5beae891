//! The words of the sequence-length sweep: what one block keeps per token, its fit against the
//! length, Burn's rule and Korthikanti's formula beside it, and the step's components.

use results::format;
use results::keys::sequence_length::Key;

use super::{change, Said};

pub(super) fn word(key: Key, s: &Said<'_>) -> String {
    match key {
        Key::LabelBalancedCheckpointing => "balanced checkpointing".into(),
        Key::LabelNoCheckpointing => "no checkpointing".into(),
        Key::LabelGradients => "gradients".into(),
        Key::LabelAdamState => "Adam state".into(),
        Key::LabelWeights => "weights".into(),
        Key::LabelN8BytesPerParameter => "8 bytes per parameter".into(),
        Key::LabelThroughputTokensS => "throughput (tokens/s)".into(),
        Key::LabelSequenceLengthTokens => "sequence length (tokens)".into(),
        Key::LabelBytes => "bytes".into(),
        Key::LabelBalancedCheckpointingMeasured => "balanced checkpointing (measured)".into(),
        Key::LabelMeasuredDifferenceBetweenDepths => "measured (difference between depths)".into(),
        Key::CheckpointingHeadline => checkpointing_headline(s),
        Key::CheckpointingDetail => "the gradients of one step from the initial weights, with and \
                                     without checkpointing"
            .into(),
        Key::PerToken => per_token(s),
        Key::PerTokenQuantity => format!("bytes per token per block, sequence {}", s.num("seq")),
        Key::PerTokenNote => "18 d + 3 h s + h + 2 f32 values (module docs of predict.rs), the 3 \
                              h s corrected after the first measurement (first written 2 h s); \
                              measured as the difference between the two depths"
            .into(),
        Key::Fit => fit(s),
        Key::InterceptQuantity => "fixed bytes per token per block (fit's intercept)".into(),
        Key::SlopeQuantity => {
            "bytes per token per block per token of sequence (fit's slope)".into()
        }
        Key::SlopeNote => "3 h f32 values: softmax's shifted scores, exponentials and output \
                           (corrected after the first measurement, which showed 3, not the 2 \
                           first written)"
            .into(),
        Key::FitWhat => "bytes one block keeps per token against sequence length".into(),
        Key::Balanced => balanced(s),
        Key::BalancedQuantity => balanced_quantity(s),
        Key::BalancedNote => {
            "10 d + 2 h s + h + 4 f32 values (module docs of predict.rs), written \
             before the first checkpointed measurement"
                .into()
        }
        Key::BalancedPeak => balanced_peak(s),
        Key::ParamsQuantity => format!("parameters ({} blocks)", s.count("blocks")),
        Key::ParamsNote => params_note(s),
        Key::Components => components(s),
        Key::Throughput => throughput(s),
        Key::ComponentsChart => components_chart(s),
        Key::CheckpointingChart => checkpointing_chart(s),
        Key::ThroughputChart => format!("Training throughput of {} blocks", s.count("blocks")),
        Key::PublishedSource => "Korthikanti et al. 2022, Reducing Activation Recomputation in \
                                 Large Transformer Models"
            .into(),
        Key::PublishedClaim => {
            "Activations per layer: sbh(34 + 5as/h) bytes with 16-bit values and dropout.".into()
        }
        Key::PublishedOurs => published_ours(s),
        Key::Headline => headline(s),
        Key::SweepDetail => {
            "a sweep, not a substitute: each length computes a different step".into()
        }
        // Chart titles, axes and legends.
        Key::LabelMemoryThroughOneTrainingStepWithout => {
            "Memory through one training step: without and with balanced checkpointing".into()
        }
        Key::Label18DH2F32Values => "18 d + h + 2 f32 values".into(),
        Key::LabelBytesOneBlockKeepsPerToken => {
            "Bytes one block keeps per token, against sequence length".into()
        }
        Key::LabelBytesPerTokenPerBlock => "bytes per token per block".into(),
        Key::LabelBurnSRule418D => "Burn's rule: 4 (18 d + 3 h s + h + 2)".into(),
        Key::LabelBalancedCheckpointingRule410D => {
            "balanced checkpointing, rule: 4 (10 d + 2 h s + h + 4)".into()
        }
        Key::LabelKorthikantiF32WithoutDropout416 => {
            "Korthikanti, f32 without dropout: 4 (16 d + h s)".into()
        }
        Key::LabelKorthikantiAsPublished34D5 => {
            "Korthikanti as published: 34 d + 5 h s (16-bit, dropout)".into()
        }
        Key::LabelKeptByForwardForBackward => "kept by forward for backward".into(),
        Key::LabelTokensSMedianBarsFastestAnd => {
            "tokens/s (median; bars: fastest and slowest repeat)".into()
        }
    }
}

/// The words of [`Key::CheckpointingHeadline`].
fn checkpointing_headline(s: &Said<'_>) -> String {
    format!(
        "sequence {}, {} blocks: no checkpointing against balanced checkpointing (step peak; \
         time per token)",
        s.count("seq"),
        s.count("blocks")
    )
}

/// The words of [`Key::Fit`].
fn fit(s: &Said<'_>) -> String {
    format!(
        "Fitted over {} lengths (R\u{b2} = {:.6}): a block keeps {} per token plus {} per \
         token for every token of the sequence; Burn's rule says {} plus {} (3 x {} heads x \
         4 bytes: inside softmax, the shifted scores, which `exp` keeps as its input, and \
         the exponentials, which the division keeps; and softmax's output, which the \
         product with v keeps). That 3 is an explanation after the measurement, not a \
         prediction: the rule was first written with 2 (`exp` keeping its output), {} per \
         token of sequence, and the measurement sent us back to burn-autodiff's \
         `float_exp`. The length-dependent term overtakes the fixed one at a sequence of \
         {:.0} tokens (rule: {:.0}).",
        s.count("lengths"),
        s.num("r_squared"),
        s.bytes("intercept"),
        s.bytes("slope"),
        s.bytes("predicted_intercept"),
        s.bytes("predicted_slope"),
        s.count("heads"),
        s.bytes("first_slope"),
        s.num("intercept") / s.num("slope"),
        s.num("crossover_rule"),
    )
}

/// The words of [`Key::BalancedQuantity`].
fn balanced_quantity(s: &Said<'_>) -> String {
    format!(
        "bytes per token per block, balanced checkpointing, sequence {}",
        s.num("seq")
    )
}

/// The words of [`Key::ParamsNote`].
fn params_note(s: &Said<'_>) -> String {
    format!(
        "{} parameters x 4 bytes (the count is checked against Burn's own `num_params` in a \
         test); what is measured beyond it ({}, about {} per block, {} per parameter tensor \
         of its 16, from the shallow point's {}) is host bookkeeping, live after every \
         parameter was first read: each parameter's `Param`, its autodiff node and Flex's \
         tensor header, the same in every precision (the mixed-precision page); not in the \
         rule",
        s.count("params"),
        s.bytes("extra"),
        s.bytes("per_block"),
        format::bytes(s.num("per_block") / 16.0),
        s.bytes("shallow_extra"),
    )
}

/// The words of [`Key::Components`].
fn components(s: &Said<'_>) -> String {
    format!(
        "At sequence {} ({} sequences, {} blocks) the step peak is {}: weights {}, Adam state \
         {}, gradients {}, and {} left by the forward pass for backward (its peak {} above \
         what was live).",
        s.count("seq"),
        s.count("batch"),
        s.count("blocks"),
        s.bytes("peak"),
        s.bytes("weights"),
        s.bytes("adam"),
        s.bytes("gradients"),
        s.bytes("kept"),
        s.bytes("activations"),
    )
}

/// The words of [`Key::Throughput`].
fn throughput(s: &Said<'_>) -> String {
    format!(
        "Time per token across lengths is not compared in pairs (a sweep of sizes, not a \
         substitute; checkpointing's cost is): the throughput chart shows each point's \
         median step, measured minutes apart; from sequence {} to {} it went from {} to {} \
         tokens/s.",
        s.count("short"),
        s.count("long"),
        format::rate(s.num("short_rate")),
        format::rate(s.num("long_rate")),
    )
}

/// The words of [`Key::ComponentsChart`].
fn components_chart(s: &Said<'_>) -> String {
    format!(
        "A training step of {} blocks, component by component",
        s.count("blocks")
    )
}

/// The words of [`Key::CheckpointingChart`].
fn checkpointing_chart(s: &Said<'_>) -> String {
    format!(
        "Step peak of {} blocks with and without balanced checkpointing",
        s.count("blocks")
    )
}

/// The words of [`Key::PublishedOurs`].
fn published_ours(s: &Said<'_>) -> String {
    format!(
        "{} per token per block measured at sequence {} in f32 without dropout; the formula \
         gives {} as published and {} adapted to f32 without dropout",
        s.bytes("measured"),
        s.num("seq"),
        s.bytes("published"),
        s.bytes("adapted"),
    )
}

/// The words of [`Key::Headline`].
fn headline(s: &Said<'_>) -> String {
    format!(
        "sequence {} against sequence {} ({} blocks, step peak)",
        s.count("long"),
        s.count("short"),
        s.count("blocks")
    )
}

/// The words of [`Key::PerToken`].
fn per_token(s: &Said<'_>) -> String {
    let measured = s.num("measured");
    format!(
        "Sequence {}: one block keeps {} per token for backward (measured: {} blocks \
         against {}); Burn's op-by-op rule predicts {} ({:+.1}%); Korthikanti et al.'s \
         formula, adapted to f32 without dropout, {} ({:+.1}%); as published (16-bit, \
         dropout) {}.",
        s.num("seq"),
        s.bytes("measured"),
        s.count("deep"),
        s.count("shallow"),
        s.bytes("burn"),
        format::diff_pct(s.num("burn"), measured),
        s.bytes("adapted"),
        format::diff_pct(s.num("adapted"), measured),
        s.bytes("published"),
    )
}

/// The words of [`Key::Balanced`].
fn balanced(s: &Said<'_>) -> String {
    let (measured, predicted) = (s.num("measured"), s.num("predicted"));
    format!(
        "Sequence {}, balanced checkpointing: one block keeps {} per token (predicted \
         {}, {:+.1}%){}.",
        s.num("seq"),
        s.bytes("measured"),
        s.bytes("predicted"),
        format::diff_pct(predicted, measured),
        if s.has("without") {
            let w = s.num("without");
            format!(
                ", against {} without checkpointing ({} per token per block)",
                s.bytes("without"),
                change(w, measured)
            )
        } else {
            String::new()
        },
    )
}

/// The words of [`Key::BalancedPeak`].
fn balanced_peak(s: &Said<'_>) -> String {
    let (without, with) = (s.num("without"), s.num("with"));
    format!(
        "At sequence {} with {} blocks, balanced checkpointing takes the step peak from \
         {} to {} ({} of the step peak); the gradients of one step agree with and \
         without it ({}).",
        s.count("seq"),
        s.count("blocks"),
        s.bytes("without"),
        s.bytes("with"),
        change(without, with),
        if s.has("passed") {
            format!(
                "largest relative difference {:.1e}, tolerance {:.0e}: {}",
                s.num("max_rel_diff"),
                s.num("tolerance"),
                if s.num("passed") > 0.0 {
                    "passed"
                } else {
                    "FAILED"
                }
            )
        } else {
            "not checked".to_string()
        },
    )
}
