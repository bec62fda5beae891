//! A probe of a Burn device whose backend pools its memory (wgpu, CUDA and the other CubeCL
//! backends): Burn's own `Device::memory_pool_usage()`, which sums every stream of the device.

use std::cell::Cell;

use burn::tensor::Device;

use crate::probe::{MemoryReading, ReadMemory};

/// [`ReadMemory::kind`] of this probe.
pub const KIND: &str = "burn-memory-pool-usage";

/// Reads `Device::memory_pool_usage()`: bytes of live tensors (padding excluded) and the pool's
/// reserved pages, over every stream of the device. The pool keeps no high-water mark Burn
/// reports, so the peak is the highest reading seen (at the step's boundaries, where the
/// monitor reads).
pub struct DeviceProbe {
    device: Device,
    peak_in_use_bytes: Cell<u64>,
}

impl DeviceProbe {
    /// A probe of `device`'s pool; `None` where its backend reports none (Flex, whose tensors
    /// come straight from the heap: read it with [`crate::host::HostProbe`]).
    pub fn new(device: &Device) -> Option<Self> {
        device.memory_pool_usage()?;
        Some(Self {
            device: device.clone(),
            peak_in_use_bytes: Cell::new(0),
        })
    }

    /// Bytes in use and reserved.
    fn usage(&self) -> (u64, u64) {
        self.device
            .memory_pool_usage()
            .map_or((0, 0), |u| (u.bytes_in_use, u.bytes_reserved))
    }
}

impl ReadMemory for DeviceProbe {
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
