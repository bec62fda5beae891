//! `workbench estimate --inference`: what generation holds on a card, at 16, 8 and 4 bits per
//! weight, and the longest context that fits.
//!
//! Question: does my model run for inference on my card, at which weight bits, and how long a
//! context does the key/value cache leave room for?
//! Method: [`capacity::InferencePlan`]: the weights packed at their bits, the key/value cache
//! (the rule the Llama-family page measures per token), an f32 working copy of the largest
//! layer for quantized weights, and the prompt's pass (one block's attention or MLP in 16
//! bits, or the logits in f32: measured on the CPU in f32 at short prompts, projected here);
//! the longest context by bisection.
//! Answer: printed, its first lines one per weight width.

use estimator::capacity::{self, InferencePlan, CARDS};
use results::format;
use serde::Serialize;

use guide::recommend::WayStatus;
use guide::what_fits::weights_fix;

use crate::args::{emit, positive};
use crate::checks::Checks;
use crate::error::BadInput;
use crate::estimate::EstimateArgs;

/// The weight widths answered.
const WEIGHT_BITS: [u32; 3] = [16, 8, 4];

/// One weight width on one card.
#[derive(Debug, Clone, Serialize)]
pub struct InferenceRow {
    /// Bits per weight.
    pub weight_bits: u32,
    /// The card's bytes.
    pub card_bytes: f64,
    /// What the run may use of it.
    pub usable_bytes: f64,
    /// The parts at the asked context.
    pub bytes: capacity::InferenceBytes,
    /// Their sum.
    pub peak_bytes: f64,
    /// Whether the asked context fits.
    pub fits: bool,
    /// The longest context that fits (none: not even one token).
    pub longest_context: Option<usize>,
    /// The checks of weights at these bits (none at 16: the weights as published).
    pub checks: WayStatus,
}

/// The answer for one model.
#[derive(Debug, Clone, Serialize)]
pub struct InferenceAnswer {
    /// The model's name.
    pub model: String,
    /// What it assumes.
    pub assumes: String,
    /// Parameters.
    pub params: u64,
    /// Sequences at once.
    pub batch: u64,
    /// Tokens per sequence asked.
    pub context: usize,
    /// Bits per cached value.
    pub kv_bits: u32,
    /// The bytes a CUDA context takes first.
    pub context_bytes: f64,
    /// One row per card and weight width.
    pub rows: Vec<InferenceRow>,
    /// Where the rows' checks were read.
    pub checks_source: String,
}

/// The answer `args` ask for, on `card` (or the common cards).
pub fn answer(
    args: &EstimateArgs,
    card: Option<u64>,
    checks: &Checks,
) -> Result<InferenceAnswer, BadInput> {
    let (model, assumes, shape) = args.model.resolve()?;
    let batch = positive("batch", args.batch.as_deref().unwrap_or("1"))? as u64;
    let context = match args.context.as_deref() {
        Some(c) => positive("context", c)?,
        None => shape.seq().ok_or_else(|| {
            BadInput::BadModel("--inference needs a decoder (a transformer or Llama model)".into())
        })?,
    };
    let kv_bits = match args.kv_bits.trim() {
        "16" => 16,
        "8" => 8,
        other => {
            return Err(BadInput::BadModel(format!(
                "--kv-bits must be 16 or 8, got '{other}'"
            )))
        }
    };
    let cards: Vec<f64> = match card {
        Some(b) => vec![b as f64],
        None => CARDS.iter().map(|c| c.bytes()).collect(),
    };
    let rows = cards
        .iter()
        .flat_map(|&card_bytes| {
            WEIGHT_BITS.iter().map(move |&weight_bits| {
                let plan = InferencePlan {
                    shape,
                    batch,
                    context,
                    weight_bits,
                    kv_bits,
                };
                let bytes = plan.bytes();
                let usable_bytes = capacity::inference_usable_bytes(card_bytes);
                InferenceRow {
                    weight_bits,
                    card_bytes,
                    usable_bytes,
                    bytes,
                    peak_bytes: bytes.peak(),
                    fits: bytes.peak() <= usable_bytes,
                    longest_context: plan.longest_context(usable_bytes, capacity::MAX_CONTEXT),
                    checks: checks.status(&Vec::from_iter(weights_fix(weight_bits))),
                }
            })
        })
        .collect();
    Ok(InferenceAnswer {
        model,
        assumes,
        params: shape.num_params(),
        batch,
        context,
        kv_bits,
        context_bytes: capacity::CUDA_CONTEXT_BYTES,
        rows,
        checks_source: checks.source.clone(),
    })
}

/// One row in words: whether it fits, and why not.
fn line(r: &InferenceRow, context: usize) -> String {
    let longest = r.longest_context.map_or_else(
        || "not even one token".into(),
        |n| format!("{} tokens", format::thousands(n as u64)),
    );
    if r.fits {
        format!(
            "fits: {} at {} tokens of context; the longest context that fits is {longest}",
            format::bytes(r.peak_bytes),
            format::thousands(context as u64)
        )
    } else if r.bytes.weights > r.usable_bytes {
        format!(
            "does not fit: the weights alone are {} of the {} it may use",
            format::bytes(r.bytes.weights),
            format::bytes(r.usable_bytes)
        )
    } else {
        format!(
            "does not fit at {} tokens ({}: the cache {}, the prompt's pass {}); the longest \
             context that fits is {longest}",
            format::thousands(context as u64),
            format::bytes(r.peak_bytes),
            format::bytes(r.bytes.kv_cache),
            format::bytes(r.bytes.prefill)
        )
    }
}

/// The answer as text.
pub fn text(a: &InferenceAnswer) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let mut card = f64::NAN;
    for r in &a.rows {
        if r.card_bytes != card {
            card = r.card_bytes;
            let _ = writeln!(
                out,
                "{} inference on a {} card ({} usable: less {} for the CUDA context and {:.0}% \
                 for the estimator's error), batch {}, key/value cache in {} bits:",
                a.model,
                format::bytes(r.card_bytes),
                format::bytes(r.usable_bytes),
                format::bytes(a.context_bytes),
                capacity::INFERENCE_MARGIN * 100.0,
                a.batch,
                a.kv_bits
            );
        }
        let _ = writeln!(
            out,
            "  {:>2}-bit weights: {}{}",
            r.weight_bits,
            line(r, a.context),
            r.checks.bracketed()
        );
    }
    let _ = writeln!(
        out,
        "\n{}: {} parameters ({})\nthe parts: weights packed at their bits (CubeCL's store); \
         the key/value cache, blocks x 2 x key/value heads x head width per token (measured \
         exactly on the Llama-family page); an f32 working copy of the largest layer for \
         quantized weights; the prompt's pass at the whole context (one block's attention or \
         MLP in 16 bits, or the logits in f32: the rule the Llama-family page measured on \
         the CPU in f32 at short prompts, projected here)\n{}",
        a.model,
        format::thousands(a.params),
        a.assumes,
        a.checks_source
    );
    out
}

/// Runs `workbench estimate --inference`.
pub fn run(args: &EstimateArgs) -> anyhow::Result<()> {
    let card = args.card()?;
    let checks = Checks::read(args.results.as_deref())?;
    let a = answer(args, card.as_ref().map(|c| c.bytes), &checks)?;
    let out = if args.json {
        serde_json::to_string_pretty(&a)? + "\n"
    } else {
        card.map(|c| c.how + "\n").unwrap_or_default() + &text(&a)
    };
    emit(&out)
}
