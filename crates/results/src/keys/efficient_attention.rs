//! The word keys of the memory-efficient attention analysis.

crate::word_keys! {
    /// What the memory-efficient attention analysis says.
    pub enum Key {
        Headline = "headline",
        HeadlineAttention = "headline-attention",
        Answer = "answer",
        BySequence = "by-sequence",
        FormPeak = "form-peak",
        Forms = "forms",
        Full = "full",
        Gpt2 = "gpt2",
        Proof = "proof",
        PublishedSource = "published-source",
        PublishedClaim = "published-claim",
        PublishedOurs = "published-ours",
        LabelPeakBySequence = "label.peak-by-sequence",
        LabelSequence = "label.sequence",
        LabelAboveFixed = "label.above-fixed",
        LabelWrittenOut = "label.written-out",
        LabelBoth = "label.both",
        LabelPeakByForm = "label.peak-by-form",
        LabelForm = "label.form",
        LabelStepPeak = "label.step-peak",
        LabelKept = "label.kept",
        LabelFixed = "label.fixed",
    }
}
