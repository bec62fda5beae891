//! The word keys of the memory over steps analysis.

crate::word_keys! {
    /// What the memory over steps analysis says.
    pub enum Key {
        ControlCheck = "control-check",
        Growth = "growth",
        GrowthNoteControl = "growth-note.control",
        GrowthNoteKeptOutput = "growth-note.kept-output",
        Headline = "headline",
        LabelAboveWarmUp = "label.above-warm-up",
        LabelInUseByStep = "label.in-use-by-step",
        LabelPattern = "label.pattern",
        LabelStep = "label.step",
        Pattern = "pattern",
        LoaderFinding = "loader-finding",
        LoaderOneStreamRead = "loader-one-stream-read",
        LabelBytesInUseAfterTheLast = "label.bytes-in-use-after-the-last-step",
    }
}
