//! What a memory measurement recorded: per-phase bytes and what the probe counts.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// What a probe counts, stated in every record and on every page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeInfo {
    /// Short identifier, e.g. `host-counting-allocator`.
    pub kind: String,
    /// One or two sentences: what is counted and how the peak is obtained.
    pub counts: String,
}

/// Memory of one phase of a measured step (forward, backward, optimizer step, evaluation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseMemory {
    /// Phase name: `forward`, `backward`, `optimizer`, `evaluation`, or an experiment's own.
    /// Borrowed while measuring, so that naming a phase allocates nothing between readings.
    pub phase: Cow<'static, str>,
    /// Bytes in use when the phase began (model, optimizer state, inputs, whatever was live).
    pub live_before_bytes: u64,
    /// Highest bytes in use during the phase.
    pub peak_bytes: u64,
    /// Bytes in use when the phase ended.
    pub live_after_bytes: u64,
    /// Bytes the backend's allocator held when the phase ended, where it has one (CubeCL):
    /// pools do not return pages mid-phase, so this bounds the phase's peak from above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserved_after_bytes: Option<u64>,
    /// Time the phase took, the device synchronised before the clock was read at either end
    /// (the probe's readings outside the clock).
    #[serde(default)]
    pub elapsed_s: f64,
}

impl PhaseMemory {
    /// Peak above what was live before the phase: what the phase itself added at its high point.
    pub fn delta_bytes(&self) -> u64 {
        self.peak_bytes.saturating_sub(self.live_before_bytes)
    }
}
