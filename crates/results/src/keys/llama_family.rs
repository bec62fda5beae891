//! The word keys of the Llama-family analysis.

crate::word_keys! {
    /// What the Llama-family analysis says.
    pub enum Key {
        Headline = "headline",
        Workload = "workload",
        LoraFinding = "lora-finding",
        KvQuantity = "kv-quantity",
        KvNote = "kv-note",
        AttentionFinding = "attention-finding",
    }
}
