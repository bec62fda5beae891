//! The device backends' probe: CubeCL's memory manager (wgpu and CUDA share it).
//!
//! CubeCL counts, per stream, the bytes of live tensor slices (`bytes_in_use`), the padding
//! added to them for alignment, and the pages its pools hold (`bytes_reserved`). It keeps no
//! high-water mark, and a stream belongs to a thread, so the measured work runs on the thread
//! that reads the probe. The peak reported here is the highest `bytes_in_use` read after a
//! device sync at the phase boundaries (a lower bound of the true peak); the bytes reserved
//! at the phase's end bound it from above, because pools do not return pages in the middle of
//! a phase. Pages are returned only by `memory_cleanup()` or a pool's periodic deallocation.

use std::cell::Cell;

use cubecl::client::ComputeClient;
use cubecl::Runtime;

use super::{MemoryProbe, MemoryReading, MemorySummary, ProbeInfo};

/// Kind recorded for this probe.
pub const KIND: &str = "cubecl-memory-manager";

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
    peak_in_use_bytes: Cell<u64>,
}

impl<R: Runtime> CubeProbe<R> {
    /// A probe of `device`'s client on the calling thread's stream.
    pub fn new(device: &R::Device) -> Self {
        Self {
            client: R::client(device),
            peak_in_use_bytes: Cell::new(0),
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

    /// Asks the memory manager to return the pages it can (the `empty_cache` of CubeCL).
    pub fn cleanup(&self) {
        self.client.memory_cleanup();
    }
}

impl<R: Runtime> MemoryProbe for CubeProbe<R> {
    fn info(&self) -> ProbeInfo {
        ProbeInfo {
            kind: KIND.into(),
            counts: "bytes of live tensor slices in CubeCL's memory manager (bytes_in_use, \
                     padding excluded), read after a device sync; CubeCL keeps no peak, so a \
                     phase's peak is the highest reading at its boundaries (a lower bound), and \
                     the pool pages reserved at its end (bytes_reserved) bound it from above"
                .into(),
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
}
