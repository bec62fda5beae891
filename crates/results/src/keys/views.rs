//! The word keys of the views analysis.

crate::word_keys! {
    /// What the views analysis says.
    pub enum Key {
        CopiedQuantity = "copied-quantity",
        CopyNote = "copy-note",
        Headline = "headline",
        HeldNote = "held-note",
        HeldQuantity = "held-quantity",
        LabelBytesAnOperationAddsAboveIts = "label.bytes-an-operation-adds-above-its",
        LabelLargestOfTheSixViewsMeasured = "label.largest-of-the-six-views-measured",
        LabelMemoryStillHeldAfterDroppingThe = "label.memory-still-held-after-dropping-the",
        LabelOneParentSSizePredictedFor = "label.one-parent-s-size-predicted-for",
        OpCopies = "op-copies",
        SeriesMeasured = "series-measured",
        SeriesPredicted = "series-predicted",
        Trap = "trap",
        ViewsAreFree = "views-are-free",
        LabelBytesHeldAfterTheParentIs = "label.bytes-held-after-the-parent-is-dropped",
        LabelBytesHeld = "label.bytes-held",
        LabelParentTensor = "label.parent-tensor",
        LabelPeakAboveTheParent = "label.peak-above-the-parent",
    }
}
