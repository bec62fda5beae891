//! The word keys of the checkpointing analysis.

crate::word_keys! {
    /// What the checkpointing analysis says.
    pub enum Key {
        ActivationsNoteBalanced = "activations-note.balanced",
        ActivationsNotePlain = "activations-note.plain",
        ActivationsQuantity = "activations-quantity",
        BatchChart = "batch-chart",
        BatchOverheadChart = "batch-overhead-chart",
        ChenClaim = "chen-claim",
        ChenOurs = "chen-ours",
        ChenSource = "chen-source",
        Deepest = "deepest",
        DepthChart = "depth-chart",
        DepthOverheadSeries = "depth-overhead-series",
        Headline = "headline",
        HfClaim = "hf-claim",
        HfOurs = "hf-ours",
        HfSource = "hf-source",
        LabelBalancedAgainstPlainPairedBars95 = "label.balanced-against-plain-paired-bars-95",
        LabelExtraTimePerStep = "label.extra-time-per-step",
        LabelMemoryThroughOneTrainingStepWithout = "label.memory-through-one-training-step-without",
        LabelTimeCostOfCheckpointingPairedBalanced = "label.time-cost-of-checkpointing-paired-balanced",
        Resolved = "resolved",
        StepNote = "step-note",
        StepQuantity = "step-quantity",
        Transformer = "transformer",
        TransformerNote = "transformer-note",
        TransformerSaving = "transformer-saving",
        WhereItPays = "where-it-pays",
        LabelBatchSizeSamples = "label.batch-size-samples",
        LabelDepthLinearLayers = "label.depth-linear-layers",
        LabelBlocks = "label.blocks",
        SeriesMeasured = "series-measured",
        SeriesPredicted = "series-predicted",
    }
}
