//! The CPU backend's probe: the counting global allocator of `burn-step-monitor` (the crate a
//! reader adds to their own project), read as the workbench reads every probe.
//!
//! Flex keeps tensor buffers on the process heap, so counting every heap byte with process-wide
//! atomics gives the bytes held by live tensors (plus the few bytes of bookkeeping Burn keeps
//! beside them). The binary that measures installs the allocator:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: burn_step_monitor::host::CountingAllocator = burn_step_monitor::host::CountingAllocator;
//! ```

pub use burn_step_monitor::host::{
    arm_budget, CountingAllocator, HostProbe, OUT_OF_MEMORY, TIMELINE_CAPACITY,
};
use burn_step_monitor::{host, ReadMemory};

use super::{DeviceWide, MemoryProbe, MemoryReading, ProbeInfo, Timeline};

/// [`ProbeInfo::kind`] of this probe.
pub const KIND: &str = ProbeInfo::HOST;

impl MemoryProbe for HostProbe {
    fn info(&self) -> ProbeInfo {
        ProbeInfo::of(KIND)
    }

    /// The heap is the process's, every thread's: the reading is already device-wide.
    fn device_wide(&self) -> Option<DeviceWide> {
        Some(DeviceWide {
            in_use_bytes: ReadMemory::read(self).in_use_bytes,
            reserved_bytes: None,
            pools: 1,
            driver_used_bytes: None,
        })
    }

    fn read(&self) -> MemoryReading {
        ReadMemory::read(self)
    }

    fn reset_peak(&self) {
        ReadMemory::reset_peak(self)
    }

    fn start_timeline(&self) -> bool {
        host::start_timeline();
        true
    }

    fn mark_phase(&self) {
        host::mark_phase();
    }

    fn stop_timeline(&self) -> Option<Timeline> {
        Some(host::stop_timeline())
    }
}
