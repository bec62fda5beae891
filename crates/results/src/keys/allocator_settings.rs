//! The word keys of the allocator settings analysis.

crate::word_keys! {
    /// What the allocator settings analysis says.
    pub enum Key {
        CustomPools = "custom-pools",
        Headline = "headline",
        HeadlineAlone = "headline-alone",
        InUseNote = "in-use-note",
        InUseQuantity = "in-use-quantity",
        LabelATrainingStepUnderEachSetting = "label.a-training-step-under-each-setting",
        LabelEveryTensorSoFarNoPage = "label.every-tensor-so-far-no-page",
        LabelMostReservedAfterAPhase = "label.most-reserved-after-a-phase",
        LabelTensorsOfGrowingSizeInUse = "label.tensors-of-growing-size-in-use",
        NoPool = "no-pool",
        NoProof = "no-proof",
        NotTimed = "not-timed",
        Pooled = "pooled",
        Proof = "proof",
        ProofCheck = "proof-check",
        PublishedClaim = "published-claim",
        PublishedOurs = "published-ours",
        PublishedOursNoPool = "published-ours-no-pool",
        PublishedSource = "published-source",
        ReservedSeries = "reserved-series",
        Sequence = "sequence",
        StepNoPool = "step-no-pool",
        StepPooled = "step-pooled",
        LabelBytes = "label.bytes",
        LabelPoolSetting = "label.pool-setting",
        LabelAllocation = "label.allocation",
        LabelInUsePredicted = "label.in-use-predicted",
        LabelInUseMeasured = "label.in-use-measured",
        LabelPeakInUse = "label.peak-in-use",
        LabelBytesReservedAtTheSequenceS = "label.bytes-reserved-at-the-sequence-s",
    }
}
