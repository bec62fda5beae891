//! What a memory measurement recorded: per-phase bytes and what the probe counts.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// Which probe measured a point, stated in every record (the guide says what each kind counts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeInfo {
    /// The probe: [`ProbeInfo::HOST`] or [`ProbeInfo::CUBE`] (`none` where nothing is read).
    pub kind: String,
    /// The CubeCL pool configuration the point ran with (`exclusive-pages`, `sub-slices`): it
    /// decides how tight a bracket's upper bound is. `None` on the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<String>,
}

impl ProbeInfo {
    /// The counting global allocator of the `workbench` binary (the CPU).
    pub const HOST: &'static str = "host-counting-allocator";
    /// CubeCL's memory manager (wgpu, CUDA).
    pub const CUBE: &'static str = "cubecl-memory-manager";

    /// A probe of `kind` that reads no pool.
    pub fn of(kind: &str) -> Self {
        Self {
            kind: kind.into(),
            pool: None,
        }
    }
}

/// A phase's name as a record stores it (`forward`). [`Phase`] holds the training and
/// evaluation phases the harness measures; a technique declares its own with
/// [`phase_names!`](crate::phase_names) in its folder.
pub trait PhaseKey: Copy {
    /// The name, as stored in [`PhaseMemory::phase`].
    fn name(self) -> &'static str;
}

/// Declares an enum of phase names: each variant with its name (`ToHost = "to host"`).
#[macro_export]
macro_rules! phase_names {
    ($($declaration:tt)*) => {
        $crate::named_variants! { $crate::memory::PhaseKey, name; $($declaration)* }
    };
}

phase_names! {
    /// The phases of a training step and of an evaluation pass.
    pub enum Phase {
        /// The forward pass, with the loss.
        Forward = "forward",
        /// Back-propagation.
        Backward = "backward",
        /// The optimizer's step.
        Optimizer = "optimizer",
        /// An evaluation pass (no step).
        Evaluation = "evaluation",
    }
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
    /// Where the probe cannot see every allocation (CubeCL keeps no high-water mark): the
    /// phase's peak bracketed from below and above, measured in one step of its own. Absent
    /// where the peak is exact (the CPU's counting allocator) and in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bracket: Option<PeakBracket>,
}

/// The in-use peak inside one phase on a backend that keeps no high-water mark, bracketed.
///
/// Lower bound: the highest `bytes_in_use` read at the phase's two boundaries or by a thread
/// that samples the phase's stream while it runs (each sample also runs the stream's queued
/// work). Upper bound: the pool emptied of unused pages (`memory_cleanup`) right before the
/// phase and the bytes it reserves right after: with one page per allocation
/// (`ExclusivePages`), every slice live at the peak sits in a page of its own that is still
/// held at the end (CubeCL's analogue of PyTorch's `max_memory_reserved`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeakBracket {
    /// Highest `bytes_in_use` read at the phase's start and end.
    pub boundary_peak_bytes: u64,
    /// Highest `bytes_in_use` the sampling thread read during the phase.
    pub sampled_peak_bytes: u64,
    /// Readings the sampling thread took during the phase.
    pub samples: u64,
    /// Mean time between two of its readings: the lower bound's resolution.
    pub sample_interval_s: f64,
    /// The upper bound: pool pages reserved right after the phase, the pool emptied of unused
    /// pages right before it.
    pub upper_bytes: u64,
    /// Pages reserved right before the phase, after the cleanup (what the live tensors hold).
    pub reserved_before_bytes: u64,
    /// The pool the bound was read from (`exclusive-pages`, or `sub-slices` where the backend
    /// offers no other: looser).
    pub pool: String,
}

impl PeakBracket {
    /// The lower bound: the larger of the boundary and sampled peaks. (Records of 204619c
    /// also stored it as `lower_bytes`; it is read from the two it is made of.)
    pub fn lower_bytes(&self) -> u64 {
        self.boundary_peak_bytes.max(self.sampled_peak_bytes)
    }

    /// Upper bound minus lower bound: how far the true peak is from being known.
    pub fn width_bytes(&self) -> u64 {
        self.upper_bytes.saturating_sub(self.lower_bytes())
    }
}

impl PhaseMemory {
    /// Peak above what was live before the phase: what the phase itself added at its high point.
    pub fn delta_bytes(&self) -> u64 {
        self.peak_bytes.saturating_sub(self.live_before_bytes)
    }

    /// Where the peak is bracketed, the most the phase can have added at its high point: the
    /// bracket's upper bound above what was live before (every byte live before is among the
    /// reserved ones). `delta_bytes` is then the least.
    pub fn delta_upper_bytes(&self) -> Option<u64> {
        self.bracket
            .as_ref()
            .map(|b| b.upper_bytes.saturating_sub(self.live_before_bytes))
    }
}
