//! The word keys of the in place analysis.

crate::word_keys! {
    /// What the in place analysis says.
    pub enum Key {
        CaseSaving = "case-saving",
        Headline = "headline",
        LabelPeakMemoryTheComputationAddsAbove = "label.peak-memory-the-computation-adds-above",
        PeakNote = "peak-note",
        PeakQuantity = "peak-quantity",
        SavingNote = "saving-note",
        SavingQuantity = "saving-quantity",
        WhereTimeGoes = "where-time-goes",
        LabelPeakAboveTheInput = "label.peak-above-the-input",
        LabelThroughputRowsS = "label.throughput-rows-s",
        LabelInputTensor = "label.input-tensor",
        LabelRowsProcessedPerSecond = "label.rows-processed-per-second",
        SeriesMeasured = "series-measured",
        SeriesPredicted = "series-predicted",
        SeriesThroughput = "series-throughput",
    }
}
