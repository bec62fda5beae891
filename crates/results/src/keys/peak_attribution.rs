//! The word keys of the peak-attribution analysis.

crate::word_keys! {
    /// What the peak-attribution analysis says.
    pub enum Key {
        Headline = "headline",
        Correctness = "correctness",
        PeakFinding = "peak-finding",
        PhaseFinding = "phase-finding",
        CostFinding = "cost-finding",
        BreakdownTitle = "breakdown-title",
        BreakdownNote = "breakdown-note",
        TimelineTitle = "timeline-title",
        CpuNote = "cpu-note",
        LargestBlocks = "largest-blocks",
        LargestBlock = "largest-block",
    }
}
