//! The device backends' probe: CubeCL's memory manager (wgpu and CUDA share it), read through
//! Burn where Burn's API gives the reading and through CubeCL's client where it does not.
//!
//! Question: how many bytes do live tensors hold at the high point of a phase on a CubeCL
//! backend, which keeps no high-water mark of bytes?
//! Method: CubeCL counts, per stream, the bytes of live tensor slices (`bytes_in_use`), their
//! alignment padding and the pages its pools hold (`bytes_reserved`); a stream belongs to a
//! thread, so the measured work runs on the thread that reads the probe. Burn 0.22's
//! `Device::memory_pool_usage()` sums every stream of the device (its auxiliary staging and
//! uniform memories included): the device-wide reading and the pool count
//! (`memory_pool_report()`) come from it. The reading of the working thread's own stream, and
//! a sampling thread's reading of that stream while a phase runs, are not in Burn's API: those
//! come from CubeCL's client (`memory_report(CurrentStream)`, the main thread's `StreamId`). In
//! the timed steps a phase's peak is the highest reading at its boundaries, after a device
//! sync. In one step measured for its memory ([`MemoryProbe::set_bracketing`]) each phase is
//! bracketed: from below by the sampling thread, from above by the pool's reserved bytes right
//! after the phase, the pool emptied of unused pages right before it. With `ExclusivePages`
//! (one page per allocation, set for training points on wgpu) every slice live at the peak
//! still holds its page at the end; CUDA keeps its default pool in Burn 0.22, whose shared
//! pages make the bound looser.
//! Answer: a [`PeakBracket`] per phase, recorded with the method and its resolution.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use burn::tensor::Device;
use cubecl::{MemoryScope, MemoryUsage};
use cubecl_environment::stream::StreamId;

pub use super::Pool;
use super::{DeviceWide, MemoryProbe, MemoryReading, MemorySummary, PeakBracket, ProbeInfo};

/// CubeCL's device behind a Burn device (its autodiff wrapping removed): `None` for a device
/// that is not a CubeCL one.
fn cube_device(device: &Device) -> Option<cubecl::Device> {
    use burn::backend::DispatchDevice;
    match device.clone().without_autodiff().as_dispatch() {
        DispatchDevice::Cube(cube) => Some(cube.clone()),
        _ => None,
    }
}

/// The usage of the pools `client`'s current stream allocates tensors from: the runtime's
/// auxiliary memories (uniform and staging buffers, a few bytes of kernel arguments that
/// outlive a fill) are left out, as CubeCL 0.10's `memory_usage()` left them out.
fn stream_usage(client: &cubecl::client::Client) -> MemoryUsage {
    client
        .memory_report(MemoryScope::CurrentStream)
        .streams
        .iter()
        .fold(MemoryUsage::default(), |usage, stream| {
            usage.combine(stream.pools.usage())
        })
}

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
    fn start(client: cubecl::client::Client, stream: StreamId) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let clock = Instant::now();
            let (mut peak, mut samples) = (0u64, 0u64);
            while !flag.load(Ordering::Acquire) {
                let usage = stream.executes(|| stream_usage(&client));
                peak = peak.max(usage.bytes_in_use);
                samples += 1;
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

/// Reads CubeCL's memory manager of a Burn device.
pub struct CubeProbe {
    device: Device,
    client: cubecl::client::Client,
    /// Whether the driver can say what the whole device holds (CUDA).
    #[cfg(feature = "cuda")]
    on_cuda: bool,
    pool: Pool,
    peak_in_use_bytes: Cell<u64>,
    bracketing: Cell<bool>,
    sampler: RefCell<Option<Sampler>>,
    reserved_before_bytes: Cell<u64>,
}

impl CubeProbe {
    /// A probe of `device` (a CubeCL device) on the calling thread's stream, whose pool is
    /// `pool`.
    ///
    /// # Panics
    ///
    /// If `device` is not a CubeCL device.
    pub fn new(device: &Device, pool: Pool) -> Self {
        let cube = cube_device(device).expect("a CubeCL device");
        Self {
            device: device.clone(),
            client: cube.client(),
            #[cfg(feature = "cuda")]
            on_cuda: cube.runtime() == cubecl::RuntimeId::Cuda,
            pool,
            peak_in_use_bytes: Cell::new(0),
            bracketing: Cell::new(false),
            sampler: RefCell::new(None),
            reserved_before_bytes: Cell::new(0),
        }
    }

    /// All four counters of the calling thread's stream, without touching the peak (the caller
    /// syncs first).
    pub fn usage(&self) -> CubeUsage {
        let u = stream_usage(&self.client);
        CubeUsage {
            allocations: u.number_allocs,
            in_use_bytes: u.bytes_in_use,
            padding_bytes: u.bytes_padding,
            reserved_bytes: u.bytes_reserved,
        }
    }

    /// Every stream's pools of the device, read through Burn (`Device::memory_pool_usage`,
    /// `memory_pool_report`): the usage summed, and the number of dynamic pools.
    pub fn pools(&self) -> (CubeUsage, u64) {
        let usage = self.device.memory_pool_usage().unwrap_or_default();
        let pools = self
            .device
            .memory_pool_report()
            .map_or(0, |r| r.len() as u64);
        let total = CubeUsage {
            allocations: usage.number_allocs,
            in_use_bytes: usage.bytes_in_use,
            padding_bytes: usage.bytes_padding,
            reserved_bytes: usage.bytes_reserved,
        };
        (total, pools)
    }

    /// Bytes taken on the whole device, as its driver says (CUDA: total less free).
    fn driver_used_bytes(&self) -> Option<u64> {
        #[cfg(feature = "cuda")]
        if self.on_cuda {
            return crate::harness::driver::cuda_used_bytes();
        }
        None
    }

    /// Asks the memory manager to return the pages it can (the `empty_cache` of CubeCL).
    pub fn cleanup(&self) {
        self.device.memory_cleanup();
    }
}

impl MemoryProbe for CubeProbe {
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

    fn device_wide(&self) -> Option<DeviceWide> {
        let (usage, pools) = self.pools();
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
