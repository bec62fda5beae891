//! A probe of a CubeCL device (wgpu, CUDA): its memory manager's counters on the calling
//! thread's stream (CubeCL gives each thread its own stream and pool, so read it on the thread
//! that trains).

use std::cell::Cell;

use cubecl::client::ComputeClient;
use cubecl::Runtime;

use crate::probe::{MemoryReading, ReadMemory};

/// [`ReadMemory::kind`] of this probe.
pub const KIND: &str = "cubecl-memory-manager";

/// Reads CubeCL's memory manager: bytes of live tensor slices, and the pool's reserved pages.
/// CubeCL keeps no high-water mark, so the peak is the highest reading seen (at the step's
/// boundaries, where the monitor reads).
pub struct CubeProbe<R: Runtime> {
    client: ComputeClient<R>,
    peak_in_use_bytes: Cell<u64>,
}

impl<R: Runtime> CubeProbe<R> {
    /// A probe of `device`'s client.
    pub fn new(device: &R::Device) -> Self {
        Self {
            client: R::client(device),
            peak_in_use_bytes: Cell::new(0),
        }
    }

    /// Bytes in use and reserved; zeros where the server has failed (the failure surfaces
    /// again at the next tensor read).
    fn usage(&self) -> (u64, u64) {
        self.client
            .memory_usage()
            .map_or((0, 0), |u| (u.bytes_in_use, u.bytes_reserved))
    }
}

impl<R: Runtime> ReadMemory for CubeProbe<R> {
    fn kind(&self) -> String {
        KIND.into()
    }

    fn read(&self) -> MemoryReading {
        let (in_use, reserved) = self.usage();
        let peak = self.peak_in_use_bytes.get().max(in_use);
        self.peak_in_use_bytes.set(peak);
        MemoryReading {
            in_use_bytes: in_use,
            peak_in_use_bytes: peak,
            reserved_bytes: Some(reserved),
        }
    }

    fn reset_peak(&self) {
        self.peak_in_use_bytes.set(self.usage().0);
    }

    fn exact_peak(&self) -> bool {
        false
    }
}
