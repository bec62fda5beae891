//! The words of the correctness checks: each check in one sentence, and the worst of each kind
//! for an index row.

use results::{Check, MeasuredPoint};

/// The check in one sentence, as the index and the pages state it: what was compared, the
/// largest difference, relative and absolute, against the tolerance, and `FAILED` where it
/// failed.
pub fn check_sentence(c: &Check) -> String {
    format!(
        "{}: largest difference {:.3e} (relative {:.3e}, tolerance {:.0e}){}",
        describe(c),
        c.max_abs_diff,
        c.max_rel_diff,
        c.tolerance,
        if c.passed { "" } else { ", FAILED" }
    )
}

/// The check with the largest relative difference over all measured points, for each kind of
/// check, in one sentence each.
pub fn worst_check(points: &[MeasuredPoint]) -> String {
    let mut by_what: Vec<&Check> = Vec::new();
    for check in points
        .iter()
        .filter_map(|p| p.result())
        .flat_map(|r| r.checks.iter())
    {
        match by_what
            .iter_mut()
            .find(|c| c.what == check.what && c.params == check.params)
        {
            Some(worst) if check.max_rel_diff > worst.max_rel_diff => *worst = check,
            Some(_) => {}
            None => by_what.push(check),
        }
    }
    if by_what.is_empty() {
        return "no check ran".into();
    }
    by_what
        .iter()
        .map(|c| check_sentence(c))
        .collect::<Vec<_>>()
        .join("; ")
}

/// What a check compared, in a few words (a table's cell).
pub fn check_short(c: &Check) -> &'static str {
    match c.what.as_str() {
        "gradients-as-one-plain-step" => "gradients as plain's",
        "gradients-bf16-against-f32" => "gradients as f32's",
        "gradients-as-one-mixed-step" => "gradients as mixed bf16's",
        "valid-against-autodiff" => "logits as autodiff's",
        "quantized-outputs" => "outputs as f32 weights'",
        "loss-falls" => "the loss falls",
        "loss-drift" => "loss curve within f32's drift",
        "seed-study" => "final loss within f32's seed spread",
        "gradients-checkpointed" => "gradients as without",
        "sgd-update-micro-batches" | "adam-params-micro-batches" => "update as one batch's",
        "frozen-base-unchanged" => "frozen base unchanged",
        "cached-logits-as-whole-sequence" => "logits as without a cache",
        "logits-as-written-out-attention" => "logits as written-out attention's",
        "gradients-fused-as-written-out-attention" => "gradients as written-out attention's",
        "gradients-as-written-out" => "gradients as the written-out step's",
        "losses-as-written-out" => "losses as the written-out step's",
        "attribution-adds-up" => "bytes add up to the peak",
        "attribution-covers-peak" => "traced blocks hold the peak",
        "recording-leaves-peak" => "peak as unrecorded",
        _ => "compared",
    }
}

/// What a check compared, in words: the sentence of its key, with its figures. A key this guide
/// does not know (a record from another workbench) reads as it was stored.
pub fn describe(c: &Check) -> String {
    let param = |name: &str| c.params.get(name).map_or("?", String::as_str);
    match c.what.as_str() {
        "host-f64-output" => "output against the same computation on the host (f64)".into(),
        "host-op-values" => "values against the same operation on the host".into(),
        "valid-against-autodiff" => "outputs of valid() against the autodiff backend".into(),
        "gradients-checkpointed" => "parameter gradients with checkpointing against without".into(),
        "sgd-update-micro-batches" => "update of one SGD training step (the gradient), k \
                                       micro-batches against one batch"
            .into(),
        "adam-params-micro-batches" => "parameters after one Adam training step, k \
                                        micro-batches against one batch"
            .into(),
        "quantized-outputs" => format!(
            "outputs against f32 weights' on the same input (largest difference over the \
             largest output, held to {})",
            c.tolerance
        ),
        "offloaded-params" => format!(
            "parameters after {} steps, the optimizer on the host against on the device",
            param("steps")
        ),
        "finite-losses" => format!(
            "the {} losses of a run from the point's seed are finite",
            param("steps")
        ),
        "loss-falls" => format!(
            "loss after {} steps below the first step's (last / first, held below 1)",
            param("steps")
        ),
        "seed-study" => format!(
            "{} against f32, mean of the last {} losses paired by seed over {} seeds \
             (tolerance: f32's spread across the seeds)",
            param("precision"),
            param("last"),
            param("seeds")
        ),
        "losses-across-pools" => "losses across pool settings".into(),
        "attribution-adds-up" => "the bytes live at the recorded step's highest event (traced \
             blocks plus the rest) against the probe's peak, in bytes: the timeline caught the \
             peak the probe read"
            .into(),
        "attribution-covers-peak" => "the bytes at the peak not in a traced block (under the \
             threshold, or the process's own) as a share of the peak"
            .into(),
        "recording-leaves-peak" => "the recorded step's peak against the same step's unrecorded, \
             each in its own process (the recorder's buffers are static, off the heap); the \
             tolerance is the autodiff graph's bookkeeping"
            .into(),
        "in-use-flat" => format!(
            "bytes in use over {} steps after the warm-up: slope (the difference, bytes a step) \
             and the lower end of its 95% interval (the relative column); flat unless the \
             interval is above zero and the slope above the tolerance",
            param("steps")
        ),
        "gradients-as-one-plain-step" => format!(
            "{} values of the first step's gradients, spread over every parameter, against the \
             plain step's",
            param("values")
        ),
        "gradients-bf16-against-f32" => format!(
            "{} values of the first step's gradients, the forward pass in bf16, against f32's",
            param("values")
        ),
        "gradients-as-one-mixed-step" => format!(
            "{} values of the first step's gradients against mixed bf16's on the whole batch",
            param("values")
        ),
        "loss-drift" => "loss curve against f32's".into(),
        "frozen-base-unchanged" => format!(
            "the {} values of the frozen base after the steps against a fresh draw of the same \
             seed (exactly equal)",
            param("values")
        ),
        "cached-logits-as-whole-sequence" => format!(
            "the last generated token's {} logits, with the key/value cache, against one \
             forward pass over the whole sequence",
            param("values")
        ),
        "logits-as-written-out-attention" => format!(
            "{} logits of the pass against the written-out attention's on the same weights",
            param("values")
        ),
        "gradients-as-written-out" => format!(
            "{} values of the first step's gradients, spread over every trained parameter, \
             against the written-out step's at {} tokens",
            param("values"),
            param("seq")
        ),
        "losses-as-written-out" => format!(
            "the loss at each of {} steps against the written-out step's at {} tokens",
            param("values"),
            param("seq")
        ),
        "gradients-fused-as-written-out-attention" => format!(
            "{} values of the first step's gradients with fused attention against the \
             written-out step's at sequence {}",
            param("values"),
            param("seq")
        ),
        other => other.to_string(),
    }
}
