//! The device backends' probe: CubeCL's memory manager (wgpu and CUDA share it).
//!
//! Question: how many bytes do live tensors hold at the high point of a phase on a CubeCL
//! backend, which keeps no high-water mark?
//! Method: CubeCL counts, per stream, the bytes of live tensor slices (`bytes_in_use`), their
//! alignment padding and the pages its pools hold (`bytes_reserved`); a stream belongs to a
//! thread, so the measured work runs on the thread that reads the probe. In the timed steps a
//! phase's peak is the highest reading at its boundaries, after a device sync. In one step
//! measured for its memory ([`MemoryProbe::set_bracketing`]) each phase is bracketed: from
//! below by a thread that samples the phase's stream while it runs (through the main thread's
//! `StreamId`: a plain call from another thread reads that thread's own, empty stream), from
//! above by the pool's reserved bytes right after the phase, the pool emptied of unused pages
//! right before it. With `ExclusivePages` (one page per allocation, set for training points on
//! wgpu) every slice live at the peak still holds its page at the end; on CUDA cubecl 0.10
//! cannot select the pool, and the default's shared pages make the bound looser.
//! Answer: a [`PeakBracket`] per phase, recorded with the method and its resolution.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cubecl::client::ComputeClient;
use cubecl::stream_id::StreamId;
use cubecl::Runtime;

pub use super::Pool;
use super::{DeviceWide, MemoryProbe, MemoryReading, MemorySummary, PeakBracket, ProbeInfo};

/// Pause between two of the sampling thread's readings (each also runs the stream's queued
/// work, so a shorter pause slows the phase more than it sharpens the bound).
const SAMPLE_PAUSE: Duration = Duration::from_micros(200);

/// The sampling thread of one bracketed phase.
struct Sampler {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<(u64, u64, f64)>,
}

impl Sampler {
    /// Starts reading `stream`'s usage through `client` until stopped.
    fn start<R: Runtime>(client: ComputeClient<R>, stream: StreamId) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let clock = Instant::now();
            let (mut peak, mut samples) = (0u64, 0u64);
            while !flag.load(Ordering::Acquire) {
                if let Ok(u) = stream.executes(|| client.memory_usage()) {
                    peak = peak.max(u.bytes_in_use);
                    samples += 1;
                }
                std::thread::sleep(SAMPLE_PAUSE);
            }
            (peak, samples, clock.elapsed().as_secs_f64())
        });
        Self { stop, handle }
    }

    /// Stops the thread: the highest reading, the number of readings, and their mean spacing.
    fn finish(self) -> (u64, u64, f64) {
        self.stop.store(true, Ordering::Release);
        let (peak, samples, elapsed_s) = self.handle.join().unwrap_or((0, 0, 0.0));
        (peak, samples, elapsed_s / samples.max(1) as f64)
    }
}

/// Kind recorded for this probe.
pub const KIND: &str = ProbeInfo::CUBE;

/// One reading of CubeCL's memory manager, all four counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CubeUsage {
    /// Live slices.
    pub allocations: u64,
    /// Bytes of live slices, padding excluded.
    pub in_use_bytes: u64,
    /// Padding of live slices.
    pub padding_bytes: u64,
    /// Pool pages held.
    pub reserved_bytes: u64,
}

/// Reads CubeCL's memory manager through a runtime client.
pub struct CubeProbe<R: Runtime> {
    client: ComputeClient<R>,
    pool: Pool,
    peak_in_use_bytes: Cell<u64>,
    bracketing: Cell<bool>,
    sampler: RefCell<Option<Sampler>>,
    reserved_before_bytes: Cell<u64>,
}

impl<R: Runtime> CubeProbe<R> {
    /// A probe of `device`'s client on the calling thread's stream, whose pool is `pool`.
    pub fn new(device: &R::Device, pool: Pool) -> Self {
        Self {
            client: R::client(device),
            pool,
            peak_in_use_bytes: Cell::new(0),
            bracketing: Cell::new(false),
            sampler: RefCell::new(None),
            reserved_before_bytes: Cell::new(0),
        }
    }

    /// All four counters, without touching the peak (the caller syncs first).
    pub fn usage(&self) -> CubeUsage {
        match self.client.memory_usage() {
            Ok(u) => CubeUsage {
                allocations: u.number_allocs,
                in_use_bytes: u.bytes_in_use,
                padding_bytes: u.bytes_padding,
                reserved_bytes: u.bytes_reserved,
            },
            // A failed server surfaces again at the next tensor read; report nothing held.
            Err(_) => CubeUsage {
                allocations: 0,
                in_use_bytes: 0,
                padding_bytes: 0,
                reserved_bytes: 0,
            },
        }
    }

    /// Every pool of `streams`' (each read on its own stream: a stream's pool outlives its
    /// thread), counted once: streams share a pool where their ids meet modulo CubeCL's
    /// `max_streams`.
    pub fn pools(&self, streams: &[u64]) -> (CubeUsage, u64) {
        use cubecl::config::{CubeClRuntimeConfig, RuntimeConfig};
        let max = u64::from(CubeClRuntimeConfig::get().streaming.max_streams.max(1));
        let mut seen: Vec<u64> = Vec::with_capacity(streams.len());
        let mut total = CubeUsage {
            allocations: 0,
            in_use_bytes: 0,
            padding_bytes: 0,
            reserved_bytes: 0,
        };
        for &id in streams {
            if seen.contains(&(id % max)) {
                continue;
            }
            seen.push(id % max);
            let stream = StreamId { value: id };
            if let Ok(u) = stream.executes(|| self.client.memory_usage()) {
                total.allocations += u.number_allocs;
                total.in_use_bytes += u.bytes_in_use;
                total.padding_bytes += u.bytes_padding;
                total.reserved_bytes += u.bytes_reserved;
            }
        }
        (total, seen.len() as u64)
    }

    /// Bytes taken on the whole device, as its driver says (CUDA: total less free).
    fn driver_used_bytes(&self) -> Option<u64> {
        #[cfg(feature = "cuda")]
        if R::name(&self.client) == "cuda" {
            return crate::harness::driver::cuda_used_bytes();
        }
        None
    }

    /// Asks the memory manager to return the pages it can (the `empty_cache` of CubeCL).
    pub fn cleanup(&self) {
        self.client.memory_cleanup();
    }
}

impl<R: Runtime> MemoryProbe for CubeProbe<R> {
    fn info(&self) -> ProbeInfo {
        ProbeInfo {
            kind: KIND.into(),
            pool: Some(self.pool.name().into()),
        }
    }

    fn read(&self) -> MemoryReading {
        let usage = self.usage();
        let peak = self.peak_in_use_bytes.get().max(usage.in_use_bytes);
        self.peak_in_use_bytes.set(peak);
        MemoryReading {
            in_use_bytes: usage.in_use_bytes,
            peak_in_use_bytes: peak,
            reserved_bytes: Some(usage.reserved_bytes),
        }
    }

    fn reset_peak(&self) {
        self.peak_in_use_bytes.set(self.usage().in_use_bytes);
    }

    fn summary(&self) -> MemorySummary {
        let u = self.usage();
        MemorySummary {
            in_use_bytes: u.in_use_bytes,
            padding_bytes: Some(u.padding_bytes),
            reserved_bytes: Some(u.reserved_bytes),
            live_allocations: Some(u.allocations),
        }
    }

    fn release_cache(&self) -> bool {
        self.cleanup();
        true
    }

    fn device_wide(&self, streams: &[u64]) -> Option<DeviceWide> {
        let (usage, pools) = self.pools(streams);
        Some(DeviceWide {
            in_use_bytes: usage.in_use_bytes,
            reserved_bytes: Some(usage.reserved_bytes),
            pools,
            driver_used_bytes: self.driver_used_bytes(),
        })
    }

    fn exact_peak(&self) -> bool {
        false
    }

    fn set_bracketing(&self, on: bool) {
        self.bracketing.set(on);
    }

    fn open_phase(&self) {
        if !self.bracketing.get() {
            return;
        }
        self.cleanup();
        // A blocking read: the cleanup has run when it returns.
        self.reserved_before_bytes.set(self.usage().reserved_bytes);
        let sampler = Sampler::start(self.client.clone(), StreamId::current());
        *self.sampler.borrow_mut() = Some(sampler);
    }

    fn close_phase(&self, boundary_peak_bytes: u64) -> Option<PeakBracket> {
        let sampler = self.sampler.borrow_mut().take()?;
        let (sampled_peak_bytes, samples, sample_interval_s) = sampler.finish();
        Some(PeakBracket {
            boundary_peak_bytes,
            sampled_peak_bytes,
            samples,
            sample_interval_s,
            upper_bytes: self.usage().reserved_bytes,
            reserved_before_bytes: self.reserved_before_bytes.get(),
            pool: self.pool.name().into(),
        })
    }
}
