//! The CPU backend's probe: a counting global allocator.
//!
//! Flex keeps tensor buffers on the process heap, so counting every heap byte with process-wide
//! atomics gives the bytes held by live tensors (plus the few bytes of bookkeeping Burn keeps
//! beside them). The binary that measures installs the allocator:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: experiments::probe::host::CountingAllocator = experiments::probe::host::CountingAllocator;
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{MemoryProbe, MemoryReading, ProbeInfo};

static IN_USE_BYTES: AtomicU64 = AtomicU64::new(0);
static PEAK_BYTES: AtomicU64 = AtomicU64::new(0);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

/// [`ProbeInfo::kind`] of this probe.
pub const KIND: &str = "host-counting-allocator";

/// A global allocator that forwards to [`System`] and counts the bytes it hands out.
pub struct CountingAllocator;

fn add(bytes: u64) {
    let now = IN_USE_BYTES.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK_BYTES.fetch_max(now, Ordering::Relaxed);
}

fn sub(bytes: u64) {
    IN_USE_BYTES.fetch_sub(bytes, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the counters
// are plain atomics and never affect what is returned.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded from our caller, who upholds `GlobalAlloc::alloc`'s contract.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
            add(layout.size() as u64);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
            add(layout.size() as u64);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as for `alloc`.
        unsafe { System.dealloc(ptr, layout) };
        sub(layout.size() as u64);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let new_ptr = unsafe { System.realloc(ptr, layout, new_size) };
        if !new_ptr.is_null() {
            let old_size = layout.size();
            if new_size > old_size {
                add((new_size - old_size) as u64);
            } else {
                sub((old_size - new_size) as u64);
            }
        }
        new_ptr
    }
}

/// Reads the counters of [`CountingAllocator`].
#[derive(Debug, Clone, Copy, Default)]
pub struct HostProbe;

impl HostProbe {
    /// Whether the counting allocator is this process's global allocator: a probe in a binary
    /// without it would read zeros and report them as measurements.
    pub fn is_installed() -> bool {
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        let boxed = std::hint::black_box(Box::new(0u64));
        drop(boxed);
        ALLOCATIONS.load(Ordering::Relaxed) != before
    }
}

impl MemoryProbe for HostProbe {
    fn info(&self) -> ProbeInfo {
        ProbeInfo {
            kind: KIND.into(),
            counts: "every heap byte of the process, counted by a global allocator with \
                     process-wide atomics; the peak is exact (updated on every allocation)"
                .into(),
        }
    }

    fn read(&self) -> MemoryReading {
        MemoryReading {
            in_use_bytes: IN_USE_BYTES.load(Ordering::Relaxed),
            peak_in_use_bytes: PEAK_BYTES.load(Ordering::Relaxed),
            reserved_bytes: None,
        }
    }

    fn reset_peak(&self) {
        PEAK_BYTES.store(IN_USE_BYTES.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}
