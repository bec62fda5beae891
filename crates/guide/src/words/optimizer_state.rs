//! The words of optimizer state: the bytes each optimizer keeps per parameter, the proof that
//! each trains, and the published per-parameter rules beside ours.

use super::values_per_param;
use super::Said;
use results::keys::optimizer_state::Key;

pub(super) fn word(key: Key, s: &Said<'_>) -> String {
    match key {
        Key::LabelTransformerMeasured => "transformer (measured)".into(),
        Key::LabelMLPMeasured => "MLP (measured)".into(),
        Key::LabelCrossEntropyNatsPerToken => "cross-entropy (nats per token)".into(),
        Key::LabelMSELoss => "MSE loss".into(),
        Key::LabelOptimizerState => "optimizer state".into(),
        Key::LabelBytes => "bytes".into(),
        Key::LabelOptimizerBurnSDefaults => "optimizer (Burn's defaults)".into(),
        Key::LabelStatePerParameterBytes => "state per parameter (bytes)".into(),
        Key::LabelOptimizerStatePerParameter => "Optimizer state per parameter".into(),
        Key::State => format!(
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
        Key::Row => format!(
            "{}: {:.2} B of state per parameter measured, {} predicted ({} value(s) of state \
             per parameter in burn-optim's state); weights, gradients and state {:.2} B per \
             parameter; loss {:.4} -> {:.4} over the proof's {} steps at lr {}.",
            s.name("point"),
            s.num("per_param"),
            values_per_param(s.num("values") * 4.0),
            values_per_param(s.num("values")),
            s.num("fixed_per_param"),
            s.num("first"),
            s.num("last"),
            s.count("steps"),
            s.num("lr"),
        ),
        Key::AdafactorProjected => format!(
            "Adafactor at {} ({} parameters), projected, not measured: burn-optim's factored \
             rule gives {} of state against Adam's {} ({:.2}% of it). The rule counts values \
             only: on this page's measured Adafactor step the state was {} off it ({} over {} \
             state tensors, the backend's bookkeeping per tensor).",
            s.name("model"),
            s.count("params"),
            s.bytes("adafactor"),
            s.bytes("adam"),
            s.num("adafactor") / s.num("adam") * 100.0,
            results::format::pct(s.num("error_pct")),
            super::signed_bytes(s.num("gap")),
            s.count("tensors"),
        ),
        Key::Price => format!(
            "The price is training progress, not bytes: over the proof's {} steps from the same \
             weights the MLP's loss fell by {:.1}% under SGD with momentum against {:.1}% under \
             Adam (each at its own learning rate). Whether a lighter optimizer still trains your \
             model is for your model to show.",
            s.count("steps"),
            s.num("momentum_fall"),
            s.num("adam_fall")
        ),
        Key::Dampening => {
            "Burn's SGD momentum has a dampening of 0.1 by default (PyTorch's is 0): \
                        the same velocity tensor, a different update. Set \
                        `with_dampening(0.0)` to match PyTorch's runs; the bytes do not change."
                .into()
        }
        Key::StateNote => format!(
            "{} f32 value(s) of state per parameter (burn-optim 0.22's state record for {}: \
             parameter-sized tensors, or Adafactor's factored rows and columns), times the \
             parameters; measured: what stays live after the first step above what was live \
             before it (the records' own bookkeeping included, which the rule leaves out)",
            values_per_param(s.num("values")),
            s.name("optimizer")
        ),
        Key::StateQuantity => format!("optimizer state, {}", s.name("point")),
        Key::StepChart => format!("The MLP's step (batch {})", s.count("batch")),
        Key::LossSeries => format!("{} (lr {})", s.name("optimizer"), s.num("lr")),
        Key::AccelerateSource => "accelerate `estimate-memory`".into(),
        Key::AccelerateClaim => "fp32 Adam: 16 bytes per parameter (weights, gradients, optimizer \
                               state; no activations)"
            .into(),
        Key::AccelerateOurs => format!(
            "{:.2} B per parameter measured for weights + gradients + Adam state on the MLP ({} \
             predicted from burn-optim's tensors): Burn's f32 Adam matches the rule, with its \
             few bytes of per-tensor bookkeeping on top",
            s.num("adam_fixed"),
            s.num("predicted")
        ),
        Key::HfSource => "Hugging Face Transformers, \"efficient training on a single GPU\"".into(),
        Key::HfClaim => "plain AdamW keeps 8 bytes of optimizer state per parameter, SGD with \
                       momentum 4"
            .into(),
        Key::HfOurs => format!(
            "AdamW {} B, momentum {:.2} B per parameter measured",
            if s.has("adamw") {
                format!("{:.2}", s.num("adamw"))
            } else {
                "not measured".to_string()
            },
            s.num("momentum")
        ),
        Key::ZeroSource => "ZeRO (Rajbhandari et al. 2020)".into(),
        Key::ZeroClaim => {
            "mixed-precision Adam: 2 + 2 + 12 = 16 bytes per parameter (fp16 weights \
                         and gradients, fp32 master weights and two moments)"
                .into()
        }
        Key::ZeroOurs => format!(
            "Burn 0.22 has no mixed-precision optimizer; f32 Adam reaches about the same total by \
             another split (4 + 4 + 8): {:.2} B measured",
            s.num("adam_fixed")
        ),
        Key::Headline => format!(
            "Adam against SGD with momentum (Burn's defaults), MLP, batch {} (step peak; time per \
             sample)",
            s.count("batch")
        ),
        // Chart titles, axes and legends.
        Key::LabelStepOfTheProofSRun => "step of the proof's run".into(),
        Key::LabelBurnOptimSStateTensorsX => "burn-optim's state tensors x 4 B (predicted)".into(),
        Key::LabelWeightsGradientsOptimizerState => "weights + gradients + optimizer state".into(),
        Key::LabelTheProofTheMlpSLoss => {
            "The proof: the MLP's loss under each optimizer, from the same weights".into()
        }
        Key::LabelTheProofTheTransformerSLoss => {
            "The proof: the transformer's loss under each optimizer, from the same weights".into()
        }
        Key::LabelMemoryThroughOneTrainingStepPlain => {
            "Memory through one training step: plain SGD against Adam".into()
        }
    }
}
