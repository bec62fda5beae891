//! The word keys of the gpt2 small analysis.

crate::word_keys! {
    /// What the gpt2 small analysis says.
    pub enum Key {
        AccumulationCosts = "accumulation-costs",
        CheckCompare = "check-compare",
        CheckLossFalls = "check-loss-falls",
        CheckNone = "check-none",
        CheckShort = "check-short",
        Fix = "fix",
        FixedShare = "fixed-share",
        Headline = "headline",
        LabelActivationsKept = "label.activations-kept",
        LabelEstimatedPeak = "label.estimated-peak",
        LabelFix = "label.fix",
        LabelFixedPart = "label.fixed-part",
        LabelMeasuredPeak = "label.measured-peak",
        LabelPeakByFix = "label.peak-by-fix",
        LabelStepPeak = "label.step-peak",
        MixedActivations = "mixed-activations",
        NotTimed = "not-timed",
        PresetBlock = "preset-block",
        PresetBlockNote = "preset-block-note",
        Secondary = "secondary",
        Workload = "workload",
    }
}
