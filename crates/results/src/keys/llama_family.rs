//! The word keys of the Llama-family analysis.

crate::word_keys! {
    /// What the Llama-family analysis says.
    pub enum Key {
        Headline = "headline",
        HeadlineQlora = "headline-qlora",
        QloraChoice = "qlora-choice",
        Workload = "workload",
        LoraFinding = "lora-finding",
        ReaderFinding = "reader-finding",
        KvQuantity = "kv-quantity",
        KvNote = "kv-note",
        AttentionFinding = "attention-finding",
        AttentionFusedHeldMore = "attention-fused-held-more",
        AttentionStepSame = "attention-step-same",
        AttentionStepDiffers = "attention-step-differs",
        LoraComposedCost = "lora-composed-cost",
        LoraFormChoice = "lora-form-choice",
        PrefillQuantity = "prefill-quantity",
        PrefillNote = "prefill-note",
        ChartAttention = "chart-attention",
        LabelSequence = "label-sequence",
        LabelBytes = "label-bytes",
        SeriesPassWritten = "series-pass-written",
        SeriesPassFused = "series-pass-fused",
        SeriesStepWritten = "series-step-written",
        SeriesStepFused = "series-step-fused",
    }
}
