//! What the monitor reads: a probe of one device's memory.

/// One reading of a probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryReading {
    /// Bytes held by live allocations at the time of the reading.
    pub in_use_bytes: u64,
    /// Highest `in_use_bytes` since the last [`ReadMemory::reset_peak`].
    pub peak_in_use_bytes: u64,
    /// Bytes reserved by the backend's allocator, where it has one (CubeCL pools); `None` on the
    /// CPU backend, whose buffers come straight from the process heap.
    pub reserved_bytes: Option<u64>,
}

/// A source of memory readings for one device.
pub trait ReadMemory {
    /// What the probe counts, in a few words (`host-counting-allocator`).
    fn kind(&self) -> String;
    /// Reads the counters (after the caller has synchronised the device).
    fn read(&self) -> MemoryReading;
    /// Sets the high-water mark to the bytes in use now, so that the next reading's peak is the
    /// peak of the work done in between.
    fn reset_peak(&self);
    /// Whether the peak is exact (every allocation counted, as the CPU's counting allocator
    /// does), rather than the highest reading seen.
    fn exact_peak(&self) -> bool {
        true
    }
}
