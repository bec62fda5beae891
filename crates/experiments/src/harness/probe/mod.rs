//! Memory probes: what a measurement of "peak memory" reads, behind one trait.
//!
//! A probe reports the bytes held right now, the high-water mark since the last reset (the
//! equivalent of PyTorch's `max_memory_allocated` after `reset_peak_memory_stats`), and, where the
//! backend has a caching allocator, the bytes it has reserved. Every result carries a
//! [`ProbeInfo`] so that a reader knows which of these was measured.

#[cfg(any(feature = "wgpu", feature = "cuda"))]
pub mod cube;
pub mod host;

/// How a CubeCL device's memory manager pools device memory: cubecl 0.11's
/// `MemoryConfiguration`, set before the device's first use (Burn's
/// `Device::wgpu_options().memory_config` on wgpu; CUDA keeps its default in Burn 0.22). The
/// CPU backend has no pool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pool {
    /// CubeCL 0.11's default (`Adaptive`): small allocations in a sliced pool of their own,
    /// everything else carved from pages sized to the largest allocation served so far. Burn
    /// 0.21's default was `SubSlices` (pages in a few fixed sizes), whose records read as this.
    #[default]
    #[serde(alias = "sub-slices")]
    Adaptive,
    /// The `ExclusivePages` preset: every allocation a page of its own, rounded up to one of
    /// 24 bucket sizes; an unused page is freed after a period that grows with its size.
    ExclusivePages,
}

impl Pool {
    /// Every setting, CubeCL's default first.
    pub const ALL: [Pool; 2] = [Pool::Adaptive, Pool::ExclusivePages];

    /// Kebab-case name, as in records and ids.
    pub fn name(self) -> &'static str {
        match self {
            Pool::Adaptive => "adaptive",
            Pool::ExclusivePages => "exclusive-pages",
        }
    }
}

use std::borrow::Cow;
use std::time::Instant;

use results::PhaseKey;
pub use results::{PeakBracket, PhaseMemory, ProbeInfo};
use serde::{Deserialize, Serialize};

/// One reading of a probe, and one step's allocation timeline on the CPU: the monitor crate's.
pub use burn_step_monitor::{host::Timeline, MemoryReading};

/// A reading of every pool of the device at once, where a backend keeps one per stream: what
/// the training thread's reading does not see (a pool left by a finished loader thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceWide {
    /// Bytes held by live allocations, over every pool.
    pub in_use_bytes: u64,
    /// Bytes the pools hold, used or not (none on the CPU).
    pub reserved_bytes: Option<u64>,
    /// Pools read.
    pub pools: u64,
    /// Bytes the driver says are taken on the whole device (CUDA: total less free), where it
    /// can say.
    pub driver_used_bytes: Option<u64>,
}

/// A source of memory readings for one device.
pub trait MemoryProbe {
    /// What this probe counts.
    fn info(&self) -> ProbeInfo;
    /// Reads the counters (after the caller has synchronised the device).
    fn read(&self) -> MemoryReading;
    /// Sets the high-water mark to the bytes in use now, so that the next reading's peak is the
    /// peak of the work done in between.
    fn reset_peak(&self);

    /// Every counter the backend keeps, for `workbench memory-summary` (the caller syncs first).
    fn summary(&self) -> MemorySummary {
        let r = self.read();
        MemorySummary {
            in_use_bytes: r.in_use_bytes,
            padding_bytes: None,
            reserved_bytes: r.reserved_bytes,
            live_allocations: None,
        }
    }

    /// Returns cached, unused memory to the system where the backend caches (CubeCL's
    /// `memory_cleanup`, PyTorch's `empty_cache`). Says whether there is such a cache.
    fn release_cache(&self) -> bool {
        false
    }

    /// Whether the peak this probe reports is exact (every allocation counted, as the CPU's
    /// counting allocator does). A probe that is not brackets the peak when asked
    /// ([`MemoryProbe::set_bracketing`]).
    fn exact_peak(&self) -> bool {
        true
    }

    /// Turns the bracketing of the following phases on or off (see [`PeakBracket`]); it
    /// changes what the phases cost, so it is for a step measured for its memory only.
    fn set_bracketing(&self, _on: bool) {}

    /// Starts recording the bytes in use after every allocation event (an allocation or a
    /// free) into a buffer made beforehand, where the probe sees every event (the CPU's
    /// counting allocator). Says whether it does; a device probe, which sees no events, does
    /// not.
    fn start_timeline(&self) -> bool {
        false
    }

    /// Marks a phase's start in the timeline, if one is recording (called by [`PhaseMeter`]).
    fn mark_phase(&self) {}

    /// Stops the timeline and returns what it recorded.
    fn stop_timeline(&self) -> Option<Timeline> {
        None
    }

    /// Every pool of the device, read together (Burn's `Device::memory_pool_usage`, which
    /// sums every stream's). `None` where the probe cannot read them.
    fn device_wide(&self) -> Option<DeviceWide> {
        None
    }

    /// Called by [`PhaseMeter`] right before a phase's work, after its starting reading.
    fn open_phase(&self) {}

    /// Called by [`PhaseMeter`] right after a phase's work and the device sync, with the peak
    /// read at the phase's boundaries: the phase's bracket, where bracketing is on.
    fn close_phase(&self, _boundary_peak_bytes: u64) -> Option<PeakBracket> {
        None
    }
}

/// A workbench probe read by the monitor crate's [`burn_step_monitor::StepMonitor`], as a
/// reader's own loop reads it.
pub struct Monitored<'a>(pub &'a dyn MemoryProbe);

impl burn_step_monitor::ReadMemory for Monitored<'_> {
    fn kind(&self) -> String {
        self.0.info().kind
    }

    fn read(&self) -> MemoryReading {
        self.0.read()
    }

    fn reset_peak(&self) {
        self.0.reset_peak()
    }

    fn exact_peak(&self) -> bool {
        self.0.exact_peak()
    }
}

/// All counters of a probe at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemorySummary {
    /// Bytes held by live tensors.
    pub in_use_bytes: u64,
    /// Bytes of alignment padding in live allocations, where the backend reports it.
    pub padding_bytes: Option<u64>,
    /// Bytes the backend's allocator holds, used or not, where it has one.
    pub reserved_bytes: Option<u64>,
    /// Live allocations, where the backend counts them.
    pub live_allocations: Option<u64>,
}

/// Records per-phase memory and time around closures: synchronise, read, reset the peak, start
/// the clock, run, synchronise, stop the clock, read.
pub struct PhaseMeter<'a> {
    probe: &'a dyn MemoryProbe,
    sync: &'a dyn Fn(),
    phases: Vec<PhaseMemory>,
}

impl<'a> PhaseMeter<'a> {
    /// A meter over `probe`; `sync` waits for the device to finish queued work.
    pub fn new(probe: &'a dyn MemoryProbe, sync: &'a dyn Fn()) -> Self {
        Self::with_capacity(probe, sync, 0)
    }

    /// A meter that holds `phases` phases without allocating again: made before a reading that
    /// must not count the meter's own bookkeeping.
    pub fn with_capacity(probe: &'a dyn MemoryProbe, sync: &'a dyn Fn(), phases: usize) -> Self {
        Self {
            probe,
            sync,
            phases: Vec::with_capacity(phases),
        }
    }

    /// Runs `work` as the phase `phase` and records its memory.
    pub fn phase<T>(&mut self, phase: impl PhaseKey, work: impl FnOnce() -> T) -> T {
        // The meter's own allocation happens before the first reading, never inside a phase.
        self.phases.reserve(1);
        (self.sync)();
        let live_before_bytes = self.probe.read().in_use_bytes;
        self.probe.reset_peak();
        self.probe.open_phase();
        self.probe.mark_phase();
        let clock = Instant::now();
        let out = work();
        (self.sync)();
        let elapsed_s = clock.elapsed().as_secs_f64();
        let reading = self.probe.read();
        let bracket = self.probe.close_phase(reading.peak_in_use_bytes);
        self.phases.push(PhaseMemory {
            phase: Cow::Borrowed(phase.name()),
            live_before_bytes,
            // Where the peak is bracketed, the highest reading seen, sampled ones included.
            peak_bytes: bracket
                .as_ref()
                .map_or(reading.peak_in_use_bytes, PeakBracket::lower_bytes),
            live_after_bytes: reading.in_use_bytes,
            reserved_after_bytes: reading.reserved_bytes,
            elapsed_s,
            bracket,
        });
        out
    }

    /// The phases recorded so far, in order.
    pub fn finish(self) -> Vec<PhaseMemory> {
        self.phases
    }
}

/// On a probe whose peak is not exact, runs `step` once more with its phases bracketed
/// ([`PeakBracket`]) and returns that step's phases, for the record's memory figures; `None`
/// on an exact probe. The bracketed step is run after the timed ones and never timed: its
/// cleanups and the sampling thread change what it costs.
pub fn bracketed_step(
    probe: &dyn MemoryProbe,
    step: impl FnOnce(&mut Vec<Vec<PhaseMemory>>),
) -> Option<Vec<PhaseMemory>> {
    if probe.exact_peak() {
        return None;
    }
    let mut runs = Vec::new();
    probe.set_bracketing(true);
    step(&mut runs);
    probe.set_bracketing(false);
    runs.pop()
}

/// Measures an evaluation pass (`forward`) as inference points do: `repeats`' warm-up, its
/// timed passes (each `units` samples or tokens, the clock read after the phase's own sync),
/// then the phases of one more pass bracketed on a probe without an exact peak, or of the last
/// timed pass on one with it. Returns the last pass's output too, for the point's check: a
/// pass fewer (at 4,096 tokens of written-out attention, 11 s on 2 cores). Each earlier output
/// is dropped before the next pass's first reading, so every pass starts as if it had been
/// dropped at once.
pub fn evaluation_passes<T>(
    probe: &dyn MemoryProbe,
    sync: &dyn Fn(),
    repeats: crate::harness::profile::Repeats,
    units: u64,
    forward: impl Fn() -> T,
) -> (results::Timing, Vec<PhaseMemory>, T) {
    let last = std::cell::RefCell::new(None);
    let pass = |runs: &mut Vec<Vec<PhaseMemory>>| {
        drop(last.take());
        let mut meter = PhaseMeter::with_capacity(probe, sync, 1);
        let clock = Instant::now();
        let output = meter.phase(results::Phase::Evaluation, &forward);
        let elapsed = clock.elapsed();
        runs.push(meter.finish());
        *last.borrow_mut() = Some(output);
        elapsed
    };
    let mut runs = Vec::new();
    repeats.warm_up(|| {
        pass(&mut runs);
    });
    runs.clear();
    let timing = crate::harness::timing::repeat_timed(repeats.repeats, units, || pass(&mut runs));
    let phases = bracketed_step(probe, |b| {
        pass(b);
    })
    .unwrap_or_else(|| last_repeat(&runs));
    let output = last
        .into_inner()
        .expect("repeat_timed runs at least one pass");
    (timing, phases, output)
}

/// The phases of the last of several repeated steps: the steady state, chosen by position so
/// that two runs report the same repeat. [`delta_spread_bytes`] says how much the repeats differed.
pub fn last_repeat(runs: &[Vec<PhaseMemory>]) -> Vec<PhaseMemory> {
    runs.last().cloned().unwrap_or_default()
}

/// Largest difference, over phases, between the highest and lowest `delta_bytes` of the repeats.
pub fn delta_spread_bytes(runs: &[Vec<PhaseMemory>]) -> u64 {
    let phases = runs.first().map_or(0, Vec::len);
    (0..phases)
        .map(|i| {
            let deltas = runs
                .iter()
                .filter_map(|r| r.get(i))
                .map(PhaseMemory::delta_bytes);
            let (lo, hi) = deltas.fold((u64::MAX, 0), |(lo, hi), d| (lo.min(d), hi.max(d)));
            hi.saturating_sub(lo)
        })
        .max()
        .unwrap_or(0)
}

/// Phases of the same name (a forward per micro-batch) folded into one: the highest peak, with
/// the bytes live before and after that occurrence. Order of first appearance is kept.
pub fn collapse_by_name(phases: Vec<PhaseMemory>) -> Vec<PhaseMemory> {
    let mut out: Vec<PhaseMemory> = Vec::new();
    for phase in phases {
        match out.iter_mut().find(|p| p.phase == phase.phase) {
            Some(kept) if phase.peak_bytes > kept.peak_bytes => *kept = phase,
            Some(_) => {}
            None => out.push(phase),
        }
    }
    out
}
