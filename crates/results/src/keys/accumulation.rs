//! The word keys of the accumulation analysis.

crate::word_keys! {
    /// What the accumulation analysis says.
    pub enum Key {
        ChosenK = "chosen-k",
        Floor = "floor",
        Headline = "headline",
        LabelMemoryThroughOneTrainingStepOne = "label.memory-through-one-training-step-one",
        LabelMicroBatchesKBatchBK = "label.micro-batches-k-batch-b-k",
        LabelSamplesSMedianBarsFastestAnd = "label.samples-s-median-bars-fastest-and",
        PeakChart = "peak-chart",
        Peaks = "peaks",
        PublishedClaim = "published-claim",
        PublishedOurs = "published-ours",
        PublishedOursUnmeasured = "published-ours-unmeasured",
        PublishedSource = "published-source",
        StepNote = "step-note",
        StepQuantity = "step-quantity",
        TransformerNote = "transformer-note",
        TransformerPeaks = "transformer-peaks",
        LabelThroughputSamplesS = "label.throughput-samples-s",
        LabelTrainingThroughputWithAccumulation = "label.training-throughput-with-accumulation",
        LabelStepPeakPredicted = "label.step-peak-predicted",
        LabelBytesInUse = "label.bytes-in-use",
        LabelMicroBatchesK = "label.micro-batches-k",
        LabelBackwardPeakMeasured = "label.backward-peak-measured",
        LabelForwardPeakMeasured = "label.forward-peak-measured",
        LabelStepPeakMeasured = "label.step-peak-measured",
    }
}
