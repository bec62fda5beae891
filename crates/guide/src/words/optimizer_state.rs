//! The words of optimizer state: the bytes each optimizer keeps per parameter, the proof that
//! each trains, and the published per-parameter rules beside ours.

use super::Said;

pub(super) fn word(key: &str, s: &Said<'_>) -> Option<String> {
    Some(match key {
        "state" => format!(
            "The MLP ({} parameters, batch {}): Adam keeps {} of state ({:.2} B per parameter), \
             SGD with momentum {} ({:.2} B); the step's peak goes from {} to {}.",
            s.count("params"),
            s.count("batch"),
            s.bytes("adam"),
            s.num("adam_per_param"),
            s.bytes("momentum"),
            s.num("momentum_per_param"),
            s.bytes("adam_peak"),
            s.bytes("momentum_peak"),
        ),
        "row" => format!(
            "{}: {:.2} B of state per parameter measured, {} predicted ({} parameter-sized \
             tensor(s) in burn-optim's state); weights, gradients and state {:.2} B per \
             parameter; loss {:.4} -> {:.4} over the proof's {} steps at lr {}.",
            s.name("point"),
            s.num("per_param"),
            s.count("values") * 4,
            s.count("values"),
            s.num("fixed_per_param"),
            s.num("first"),
            s.num("last"),
            s.count("steps"),
            s.num("lr"),
        ),
        "price" => format!(
            "The price is training progress, not bytes: over the proof's {} steps from the same \
             weights the MLP's loss fell by {:.1}% under SGD with momentum against {:.1}% under \
             Adam (each at its own learning rate). Whether a lighter optimizer still trains your \
             model is for your model to show.",
            s.count("steps"),
            s.num("momentum_fall"),
            s.num("adam_fall")
        ),
        "dampening" => "Burn's SGD momentum has a dampening of 0.1 by default (PyTorch's is 0): \
                        the same velocity tensor, a different update. Set \
                        `with_dampening(0.0)` to match PyTorch's runs; the bytes do not change."
            .into(),
        "state-note" => format!(
            "{} parameter-sized f32 tensor(s) per parameter (burn-optim 0.21's state record for \
             {}), times the parameters; measured: what stays live after the first step above \
             what was live before it (the records' own bookkeeping included, which the rule \
             leaves out)",
            s.count("values"),
            s.name("optimizer")
        ),
        "state-quantity" => format!("optimizer state, {}", s.name("point")),
        "step-chart" => format!("The MLP's step (batch {})", s.count("batch")),
        "loss-series" => format!("{} (lr {})", s.name("optimizer"), s.num("lr")),
        "accelerate-source" => "accelerate `estimate-memory`".into(),
        "accelerate-claim" => "fp32 Adam: 16 bytes per parameter (weights, gradients, optimizer \
                               state; no activations)"
            .into(),
        "accelerate-ours" => format!(
            "{:.2} B per parameter measured for weights + gradients + Adam state on the MLP ({} \
             predicted from burn-optim's tensors): Burn's f32 Adam matches the rule, with its \
             few bytes of per-tensor bookkeeping on top",
            s.num("adam_fixed"),
            s.num("predicted")
        ),
        "hf-source" => "Hugging Face Transformers, \"efficient training on a single GPU\"".into(),
        "hf-claim" => "plain AdamW keeps 8 bytes of optimizer state per parameter, SGD with \
                       momentum 4"
            .into(),
        "hf-ours" => format!(
            "AdamW {} B, momentum {:.2} B per parameter measured",
            if s.has("adamw") {
                format!("{:.2}", s.num("adamw"))
            } else {
                "not measured".to_string()
            },
            s.num("momentum")
        ),
        "zero-source" => "ZeRO (Rajbhandari et al. 2020)".into(),
        "zero-claim" => "mixed-precision Adam: 2 + 2 + 12 = 16 bytes per parameter (fp16 weights \
                         and gradients, fp32 master weights and two moments)"
            .into(),
        "zero-ours" => format!(
            "Burn 0.21 has no mixed-precision optimizer; f32 Adam reaches about the same total by \
             another split (4 + 4 + 8): {:.2} B measured",
            s.num("adam_fixed")
        ),
        "headline" => format!(
            "Adam against SGD with momentum (Burn's defaults), MLP, batch {} (step peak; time per \
             sample)",
            s.count("batch")
        ),
        // Chart titles, axes and legends.
        "label.step-of-the-proof-s-run" => "step of the proof's run".into(),
        "label.burn-optim-s-state-tensors-x" => {
            "burn-optim's state tensors x 4 B (predicted)".into()
        }
        "label.weights-gradients-optimizer-state" => "weights + gradients + optimizer state".into(),
        "label.the-proof-the-mlp-s-loss" => {
            "The proof: the MLP's loss under each optimizer, from the same weights".into()
        }
        "label.the-proof-the-transformer-s-loss" => {
            "The proof: the transformer's loss under each optimizer, from the same weights".into()
        }
        "label.memory-through-one-training-step-plain" => {
            "Memory through one training step: plain SGD against Adam".into()
        }
        _ => return None,
    })
}
