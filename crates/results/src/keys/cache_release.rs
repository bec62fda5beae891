//! The word keys of the cache release analysis.

crate::word_keys! {
    /// What the cache release analysis says.
    pub enum Key {
        AllocationPeak = "allocation-peak",
        AllocationPeakNoteHost = "allocation-peak-note.host",
        AllocationPeakNotePool = "allocation-peak-note.pool",
        AllocationTime = "allocation-time",
        Counters = "counters",
        Headline = "headline",
        InUseAlive = "in-use-alive",
        InUseDropped = "in-use-dropped",
        LabelElementsX4BytesAboveThe = "label.elements-x-4-bytes-above-the",
        LabelInUseAndReservedAroundOne = "label.in-use-and-reserved-around-one",
        LabelNothingLiveAboveTheStart = "label.nothing-live-above-the-start",
        LabelTimeOfOneAllocationMedianBars = "label.time-of-one-allocation-median-bars",
        NoCache = "no-cache",
        NothingToCheck = "nothing-to-check",
        ReservedReleased = "reserved-released",
        ReservedReleasedNote = "reserved-released-note",
        LabelBytesReservedAfterTheDrop = "label.bytes-reserved-after-the-drop",
        LabelAllocationTime = "label.allocation-time",
        LabelTensorSize = "label.tensor-size",
        LabelBytes = "label.bytes",
        LabelAfterMemoryCleanupMedian = "label.after-memory-cleanup-median",
        LabelFromTheCacheMedian = "label.from-the-cache-median",
        LabelReservedAfterMemoryCleanup = "label.reserved-after-memory-cleanup",
        LabelReservedTensorDropped = "label.reserved-tensor-dropped",
        LabelInUseTensorDropped = "label.in-use-tensor-dropped",
        LabelInUseTensorAlive = "label.in-use-tensor-alive",
    }
}
