//! The words of the Llama-family page: the block, LoRA against full training, the key/value
//! cache per token, fused attention.

use results::keys::llama_family::Key;

use results::format::{self, thousands};

use super::{signed_bytes, Said};

pub(super) fn word(key: Key, s: &Said<'_>) -> String {
    match key {
        Key::Headline => format!(
            "LoRA rank {} on a frozen base against full training of the same block",
            s.count("rank")
        ),
        Key::HeadlineQlora => format!(
            "QLoRA: Burn's apply_qlora, rank {} on a {}-bit base, {} block(s), vocabulary {}, {} \
             tokens, against {}",
            s.count("rank"),
            s.count("bits"),
            s.count("blocks"),
            thousands(s.count("vocab")),
            thousands(s.count("tokens")),
            match s.name("against").as_str() {
                "full-training" => "full training of the same model",
                _ => "the workbench's adapters on the f32 base",
            }
        ),
        Key::QloraChoice => qlora_choice(s),
        Key::Workload => format!(
            "{} Llama-family block(s) of TinyLlama's width (d_model {}, {} heads, {} key/value \
             heads, SwiGLU of {}), vocabulary {}, sequence {}, batch {}: {} parameters",
            s.count("layers"),
            s.count("d_model"),
            s.count("heads"),
            s.count("kv_heads"),
            s.count("mlp"),
            s.count("vocab"),
            s.count("seq"),
            s.count("batch"),
            s.count("params"),
        ),
        Key::LoraFinding => format!(
            "LoRA, {}, rank {}{}, {} tokens: {} of the {} parameters train; the step peaks at \
             {}{}. Its parts as measured: weights {} (the frozen base {}, the adapters {}), \
             the adapters' gradients {}, Adam's state {} (the base has none of either), what \
             the forward pass kept for backward {}; {}.",
            s.name("form"),
            s.count("rank"),
            base_bits(s.count("bits")),
            thousands(s.count("tokens")),
            thousands(s.count("trainable")),
            thousands(s.count("params")),
            s.bytes("peak"),
            if s.has("plain") {
                format!(" against full training's {}", s.bytes("plain"))
            } else {
                String::new()
            },
            s.bytes("weights"),
            s.bytes("base"),
            s.bytes("adapters"),
            s.bytes("grads"),
            s.bytes("optimizer"),
            s.bytes("activations"),
            rest_of_peak(s),
        ),
        Key::ReaderFinding => format!(
            "Full training with Adam where readers stand: {} blocks of TinyLlama's width at a \
             vocabulary of {} ({} parameters, the embedding and the head {} of them), {} \
             tokens: the step peaks at {} in its {} phase. Its parts as measured: weights {}, \
             gradients {}, Adam's state {}, what the forward pass kept for backward {}; {}.",
            s.count("blocks"),
            thousands(s.count("vocab")),
            thousands(s.count("params")),
            super::share(s.num("vocab_params"), s.num("params")),
            thousands(s.count("tokens")),
            s.bytes("peak"),
            s.name("phase"),
            s.bytes("weights"),
            s.bytes("grads"),
            s.bytes("optimizer"),
            s.bytes("activations"),
            rest_of_peak(s),
        ),
        Key::LoraComposedCost => format!(
            "{} against the workbench's adapters, rank {}{}, {} tokens, {} \
             block(s): Burn's form kept {} beside the workbench's ({}); the rule gives {}: \
             Burn's form keeps each composed weight where the layer's input needs a gradient \
             ({} of the {} adapted weights, every block's but the first: {}), the workbench's \
             keeps x·A ({}). The backward peak differs by {}; the steps peak at {} and {}.",
            burn_call(s.count("bits")),
            s.count("rank"),
            base_bits(s.count("bits")),
            s.count("tokens"),
            s.count("blocks"),
            signed_bytes(s.num("kept")),
            match s.num("direction") {
                d if d > 0.0 => "more".to_string(),
                d if d < 0.0 => "less".to_string(),
                _ => format!("the same within the run-to-run {}", s.bytes("tolerance")),
            },
            signed_bytes(s.num("predicted")),
            s.count("tracked"),
            s.count("adapted"),
            s.bytes("composed"),
            s.bytes("x_a"),
            signed_bytes(s.num("backward")),
            s.bytes("burn_peak"),
            s.bytes("path_peak"),
        ),
        Key::LoraFormChoice => format!(
            "Which form: for each adapted weight whose input needs a gradient (every block's \
             but the first), Burn's apply_lora keeps the weight composed dense in f32 (at d_model \
             {}: the query's {}, the value's {}); the workbench's adapters keep x·A instead, {} a \
             token at rank {}. The adapters on the activation path are the lighter form below \
             {} tokens a step; apply_lora is one call on any module and freezes \
             every other parameter, norms included.",
            s.count("d_model"),
            s.bytes("query"),
            s.bytes("value"),
            s.bytes("per_token"),
            s.count("rank"),
            s.count("crossover"),
        ),
        Key::KvQuantity => format!(
            "key/value cache per generated token, {} key/value heads",
            s.count("kv_heads")
        ),
        Key::KvNote => format!(
            "the rule: {} block(s) x 2 (keys and values) x {} key/value heads x {} values per \
             head x 4 bytes; measured: the slope of the bytes in use over the generated tokens",
            s.count("layers"),
            s.count("kv_heads"),
            s.count("head_dim"),
        ),
        Key::AttentionFinding => format!(
            "Inference at sequence {}: the written-out attention held {} above the weights, \
             Burn's fused attention {}: the fused kernel never holds the scores, which grow \
             with the square of the sequence.",
            s.count("seq"),
            s.bytes("written"),
            s.bytes("fused"),
        ),
        Key::AttentionFusedHeldMore => format!(
            "Inference at sequence {}: the written-out attention held {} above the weights and \
             Burn's fused attention {}, more, not less: on this backend the fused kernel's own \
             buffers outweighed the scores it does not hold, at this sequence.",
            s.count("seq"),
            s.bytes("written"),
            s.bytes("fused"),
        ),
        Key::AttentionStepSame => format!(
            "Training at sequence {}: the step peaked at {} written out and {} fused, the \
             same: Burn 0.22's autodiff computes the fused call as the written-out scores and \
             keeps them for backward, so fusing saves nothing in training.",
            s.count("seq"),
            s.bytes("written"),
            s.bytes("fused"),
        ),
        Key::AttentionStepDiffers => format!(
            "Training at sequence {}: the step peaked at {} written out and {} fused.",
            s.count("seq"),
            s.bytes("written"),
            s.bytes("fused"),
        ),
        Key::PrefillQuantity => format!(
            "the prompt's pass above the weights, {} tokens, {} key/value heads",
            s.count("prompt"),
            s.count("kv_heads")
        ),
        Key::PrefillNote => "the rule: the prompt's cache, plus one block's largest moment \
             per token (attention: 2 x heads x prompt for the scores and their softmax, 2 x \
             d_model, and 2 x d_model more where grouped-query attention repeats the keys \
             and values; or the MLP: 3 x its width + 2 x d_model), at 4 bytes; measured: the \
             prefill phase's peak above the bytes before it"
            .into(),
        Key::ChartAttention => "Attention's bytes by sequence: inference and training, \
             written out and fused"
            .into(),
        Key::LabelSequence => "sequence (tokens)".into(),
        Key::LabelBytes => "bytes".into(),
        Key::SeriesPassWritten => "inference pass, written-out scores".into(),
        Key::SeriesPassFused => "inference pass, fused attention".into(),
        Key::SeriesStepWritten => "training step peak, written-out scores".into(),
        Key::SeriesStepFused => "training step peak, fused attention".into(),
    }
}

/// QLoRA in Burn 0.22.1 against full training and the two forms on the f32 base, and which to
/// use where.
fn qlora_choice(s: &Said<'_>) -> String {
    let (qlora, path) = (s.num("qlora"), s.num("path"));
    format!(
        "QLoRA in Burn 0.22.1 is one call, apply_qlora(QLora::new(lora, quantizer)), snippet \
         below. At rank {}, {} block(s), vocabulary {}, {} tokens, its step on a {}-bit base \
         peaked at {}: full training {}, the workbench's adapters on the f32 base {}, Burn's \
         apply_lora on it {}. The weights it held were {} against {} on the f32 base, yet the \
         step held {} {} than the adapters' ({}): on Flex (the CPU) a quantized value takes a \
         byte and each layer's forward works on an f32 copy of its weight, while on CubeCL \
         (wgpu, CUDA) the base packs at its bits (What fits' weights table). So: take QLoRA \
         where the frozen base's weights are most of what the card holds (a 7B model on a 24 GB \
         card); where the base fits unquantized, the adapters on the activation path hold the \
         least.",
        s.count("rank"),
        s.count("blocks"),
        thousands(s.count("vocab")),
        thousands(s.count("tokens")),
        s.count("bits"),
        s.bytes("qlora"),
        s.bytes("full"),
        s.bytes("path"),
        s.bytes("burn_lora"),
        s.bytes("qlora_weights"),
        s.bytes("path_weights"),
        format::bytes((qlora - path).abs()),
        if qlora > path { "more" } else { "less" },
        super::change(path, qlora),
    )
}

/// The Burn call that made the composed form: QLoRA on a quantized base is its own call.
fn burn_call(bits: u64) -> &'static str {
    if bits < 32 {
        "Burn's apply_qlora(QLora::new(..))"
    } else {
        "Burn's apply_lora"
    }
}

/// ", 4-bit base" for a quantized base; nothing for f32 (32 bits).
fn base_bits(bits: u64) -> String {
    if bits == 32 {
        String::new()
    } else {
        format!(", {bits}-bit base")
    }
}

/// The peak's part beyond the measured parts: the phase's transients, or, where the parts add
/// up to more than the peak, what backward had freed of the kept activations by its peak.
fn rest_of_peak(s: &Said<'_>) -> String {
    let rest = s.num("rest");
    match rest >= 0.0 {
        true => format!(
            "the other {} are the {} phase's transients at its peak",
            s.bytes("rest"),
            s.name("phase")
        ),
        false => format!(
            "the parts add up to {} more than the peak: backward had freed that much of what \
             was kept before it peaked",
            format::bytes(-rest)
        ),
    }
}
