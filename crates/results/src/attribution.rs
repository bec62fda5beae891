//! What held the memory at one recorded step's peak, by the code that made it: the record of
//! a `peak-attribution` point (the CPU's counting allocator tracing every allocation of at
//! least a threshold to its call stack, symbolised after the step).

use serde::{Deserialize, Serialize};

/// The bytes the blocks made at one site held at one moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SiteBytes {
    /// The model's code that asked for them (`Block::forward › Linear::forward`), `backward`,
    /// or the optimizer (`Adam`).
    pub code: String,
    /// The tensor operation or backward node (`matmul`, `Matmul`); empty where none was seen.
    pub op: String,
    /// The step's phase that made them, or `before the step`.
    pub made_in: String,
    /// Bytes held.
    pub bytes: u64,
    /// Blocks held.
    pub blocks: u64,
}

/// What was live at one moment of the step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Moment {
    /// The allocation event, counted from the step's start.
    pub event: u64,
    /// Bytes in use then (the counting allocator's count).
    pub in_use_bytes: u64,
    /// The traced blocks live then, by site, largest first.
    pub sites: Vec<SiteBytes>,
    /// Bytes in use not in a traced block: blocks under the threshold, and what the process
    /// held before the recording started.
    pub untraced_bytes: u64,
}

impl Moment {
    /// The traced blocks' bytes.
    pub fn traced_bytes(&self) -> u64 {
        self.sites.iter().map(|s| s.bytes).sum()
    }

    /// The traced blocks' share of the bytes in use.
    pub fn traced_share(&self) -> f64 {
        self.traced_bytes() as f64 / self.in_use_bytes.max(1) as f64
    }
}

/// A large block live at the step's peak, with its life in the step's events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Span {
    /// Where it was made.
    pub site: SiteBytes,
    /// The event that made it, from the step's start (negative: before the step).
    pub made_event: i64,
    /// The event that freed it; `None` if it outlived the step.
    pub freed_event: Option<i64>,
}

/// One recorded step's peak by where its bytes were made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeakAttribution {
    /// Allocations of at least this many bytes were traced.
    pub threshold_bytes: u64,
    /// The step's peak as the probe read it (its high-water mark).
    pub probe_peak_bytes: u64,
    /// Allocation events in the step.
    pub events: u64,
    /// The step's peak, by site.
    pub peak: Moment,
    /// Each phase's peak, by site (`forward`, `backward`, `optimizer`).
    pub phases: Vec<(String, Moment)>,
    /// The largest blocks live at the peak, largest first.
    pub largest: Vec<Span>,
    /// Blocks made after the recorder's buffer was full (counted as untraced).
    pub untraced_blocks: u64,
    /// Seconds spent symbolising the traced stacks after the step (not in the step's time).
    pub symbolise_s: f64,
    /// Bytes in use when the recording started (the process's own), part of each moment's
    /// untraced bytes.
    pub before_recording_bytes: u64,
}

impl PeakAttribution {
    /// The step's peak above what the process held when the recording started: what the
    /// model, its inputs, its optimizer and its step hold.
    pub fn peak_above_recording_bytes(&self) -> u64 {
        self.peak
            .in_use_bytes
            .saturating_sub(self.before_recording_bytes)
    }

    /// The traced blocks' share of [`PeakAttribution::peak_above_recording_bytes`].
    pub fn traced_share_of_step(&self) -> f64 {
        self.peak.traced_bytes() as f64 / self.peak_above_recording_bytes().max(1) as f64
    }
}
