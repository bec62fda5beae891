//! The word keys of the GPT-2-small table's analysis.

crate::word_keys! {
    /// What the GPT-2-small table's analysis says.
    pub enum Key {
        AccumulationCosts = "accumulation-costs",
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
        RegimeShare = "regime-share",
        RegimeWorkload = "regime-workload",
        Secondary = "secondary",
        Workload = "workload",
    }
}
