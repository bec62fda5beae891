//! The words of the sequence-length sweep: what one block keeps per token, its fit against the
//! length, Burn's rule and Korthikanti's formula beside it, and the step's components.

use results::format;

use super::{change, Said};

pub(super) fn word(key: &str, s: &Said<'_>) -> Option<String> {
    Some(match key {
        "checkpointing-headline" => format!(
            "sequence {}, {} blocks: no checkpointing against balanced checkpointing (step peak; \
             time per token)",
            s.count("seq"),
            s.count("blocks")
        ),
        "checkpointing-detail" => "the gradients of one step from the initial weights, with and \
                                   without checkpointing"
            .into(),
        "per-token" => {
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
        "per-token-quantity" => format!("bytes per token per block, sequence {}", s.num("seq")),
        "per-token-note" => "18 d + 3 h s + h + 2 f32 values (module docs of predict.rs), the 3 \
                             h s corrected after the first measurement (first written 2 h s); \
                             measured as the difference between the two depths"
            .into(),
        "fit" => format!(
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
        ),
        "intercept-quantity" => "fixed bytes per token per block (fit's intercept)".into(),
        "slope-quantity" => "bytes per token per block per token of sequence (fit's slope)".into(),
        "slope-note" => "3 h f32 values: softmax's shifted scores, exponentials and output \
                         (corrected after the first measurement, which showed 3, not the 2 \
                         first written)"
            .into(),
        "fit-what" => "bytes one block keeps per token against sequence length".into(),
        "balanced" => {
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
        "balanced-quantity" => format!(
            "bytes per token per block, balanced checkpointing, sequence {}",
            s.num("seq")
        ),
        "balanced-note" => "10 d + 2 h s + h + 4 f32 values (module docs of predict.rs), written \
                            before the first checkpointed measurement"
            .into(),
        "balanced-peak" => {
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
        "params-quantity" => format!("parameters ({} blocks)", s.count("blocks")),
        "params-note" => format!(
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
        ),
        "components" => format!(
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
        ),
        "throughput" => format!(
            "Time per token across lengths is not compared in pairs (a sweep of sizes, not a \
             substitute; checkpointing's cost is): the throughput chart shows each point's \
             median step, measured minutes apart; from sequence {} to {} it went from {} to {} \
             tokens/s.",
            s.count("short"),
            s.count("long"),
            format::rate(s.num("short_rate")),
            format::rate(s.num("long_rate")),
        ),
        "components-chart" => format!(
            "A training step of {} blocks, component by component",
            s.count("blocks")
        ),
        "checkpointing-chart" => format!(
            "Step peak of {} blocks with and without balanced checkpointing",
            s.count("blocks")
        ),
        "throughput-chart" => format!("Training throughput of {} blocks", s.count("blocks")),
        "published-source" => "Korthikanti et al. 2022, Reducing Activation Recomputation in \
                               Large Transformer Models"
            .into(),
        "published-claim" => {
            "Activations per layer: sbh(34 + 5as/h) bytes with 16-bit values and dropout.".into()
        }
        "published-ours" => format!(
            "{} per token per block measured at sequence {} in f32 without dropout; the formula \
             gives {} as published and {} adapted to f32 without dropout",
            s.bytes("measured"),
            s.num("seq"),
            s.bytes("published"),
            s.bytes("adapted"),
        ),
        "headline" => format!(
            "sequence {} against sequence {} ({} blocks, step peak)",
            s.count("long"),
            s.count("short"),
            s.count("blocks")
        ),
        "sweep-detail" => "a sweep, not a substitute: each length computes a different step".into(),
        // Chart titles, axes and legends.
        "label.memory-through-one-training-step-without" => {
            "Memory through one training step: without and with balanced checkpointing".into()
        }
        "label.18-d-h-2-f32-values" => "18 d + h + 2 f32 values".into(),
        "label.bytes-one-block-keeps-per-token" => {
            "Bytes one block keeps per token, against sequence length".into()
        }
        "label.bytes-per-token-per-block" => "bytes per token per block".into(),
        "label.burn-s-rule-4-18-d" => "Burn's rule: 4 (18 d + 3 h s + h + 2)".into(),
        "label.balanced-checkpointing-rule-4-10-d" => {
            "balanced checkpointing, rule: 4 (10 d + 2 h s + h + 4)".into()
        }
        "label.korthikanti-f32-without-dropout-4-16" => {
            "Korthikanti, f32 without dropout: 4 (16 d + h s)".into()
        }
        "label.korthikanti-as-published-34-d-5" => {
            "Korthikanti as published: 34 d + 5 h s (16-bit, dropout)".into()
        }
        "label.kept-by-forward-for-backward" => "kept by forward for backward".into(),
        "label.tokens-s-median-bars-fastest-and" => {
            "tokens/s (median; bars: fastest and slowest repeat)".into()
        }
        _ => return None,
    })
}
