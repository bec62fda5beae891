//! The word keys of the offload analysis.

crate::word_keys! {
    /// What the offload analysis says.
    pub enum Key {
        CopiedNote = "copied-note",
        Copies = "copies",
        Headline = "headline",
        HeldAndPeak = "held-and-peak",
        HostKept = "host-kept",
        HostKeptNote = "host-kept-note",
        LabelBytesAboveTheProcessSOwn = "label.bytes-above-the-process-s-own",
        LabelDeviceBytesWithTheOptimizerOn = "label.device-bytes-with-the-optimizer-on",
        LabelHostBytesKeptBetweenSteps = "label.host-bytes-kept-between-steps",
        LabelProcessBytesTheCpuHostAnd = "label.process-bytes-the-cpu-host-and",
        LabelTimeOfEachPhaseOfA = "label.time-of-each-phase-of-a",
        NothingToMove = "nothing-to-move",
        Proof = "proof",
        PublishedClaim = "published-claim",
        PublishedOurs = "published-ours",
        PublishedSource = "published-source",
        SavedBetween = "saved-between",
        SavedBetweenNote = "saved-between-note",
        SecondCopy = "second-copy",
        SecondCopyNote = "second-copy-note",
        LabelTime = "label.time",
        LabelWhereTheOptimizerSteps = "label.where-the-optimizer-steps",
        LabelBytesCopiedPerStep = "label.bytes-copied-per-step",
        LabelStepPeak = "label.step-peak",
        LabelHeldBetweenSteps = "label.held-between-steps",
    }
}
