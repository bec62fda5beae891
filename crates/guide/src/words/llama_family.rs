//! The words of the Llama-family page: the block, LoRA against full training, the key/value
//! cache per token, fused attention.

use results::keys::llama_family::Key;

use super::Said;

pub(super) fn word(key: Key, s: &Said<'_>) -> String {
    match key {
        Key::Headline => format!(
            "LoRA rank {} on a frozen base against full training of the same block",
            s.count("rank")
        ),
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
            "LoRA rank {}: {} of the {} parameters train, so Adam's state is {}; the step peaks \
             at {} against full training's {}.",
            s.count("rank"),
            s.count("trainable"),
            s.count("params"),
            s.bytes("optimizer"),
            s.bytes("peak"),
            s.bytes("plain"),
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
            "One inference pass at sequence {}: the written-out attention held {} above the \
             weights, Burn's fused attention {}.",
            s.count("seq"),
            s.bytes("written"),
            s.bytes("fused"),
        ),
    }
}
