//! The CPU's probe: a counting global allocator.
//!
//! Burn's CPU backend keeps tensor buffers on the process heap, so counting every heap byte with
//! process-wide atomics gives the bytes held by live tensors (plus the few bytes of bookkeeping
//! Burn keeps beside them). The binary installs the allocator:
//!
//! ```no_run
//! #[global_allocator]
//! static ALLOCATOR: burn_step_monitor::host::CountingAllocator =
//!     burn_step_monitor::host::CountingAllocator;
//! ```
//!
//! Reading it is two atomic loads, and needs no device sync: the CPU's work is done when the
//! step returns.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use crate::probe::{MemoryReading, ReadMemory};
use crate::trace;

static IN_USE_BYTES: AtomicU64 = AtomicU64::new(0);
static PEAK_BYTES: AtomicU64 = AtomicU64::new(0);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
/// The most bytes the process may hold (`u64::MAX`: no budget): see [`arm_budget`].
static BUDGET_BYTES: AtomicU64 = AtomicU64::new(u64::MAX);

/// Allocation events a timeline holds; later events of the same step are not recorded (the
/// timeline says it was cut). 2^18 (2 MiB, off the heap): a GPT-2-small step on the CPU makes
/// about 71,000.
pub const TIMELINE_CAPACITY: usize = 1 << 18;
/// While on, every allocation and free writes the bytes in use after it to [`TIMELINE`]: a
/// buffer allocated once, statically, so that recording allocates nothing.
static TIMELINE_ON: AtomicBool = AtomicBool::new(false);
/// The event at which the timeline started: event `e` is the timeline's entry `e - base`.
static TIMELINE_BASE: AtomicU64 = AtomicU64::new(0);
static TIMELINE: [AtomicU64; TIMELINE_CAPACITY] = [const { AtomicU64::new(0) }; TIMELINE_CAPACITY];
/// Allocation events (allocations and frees) counted while a timeline or an
/// attribution recording is on: one numbering for both.
static EVENTS: AtomicU64 = AtomicU64::new(0);

/// Phase starts a timeline holds.
const MARK_CAPACITY: usize = 4096;
static MARKS_LEN: AtomicUsize = AtomicUsize::new(0);
static MARKS: [AtomicUsize; MARK_CAPACITY] = [const { AtomicUsize::new(0) }; MARK_CAPACITY];

/// Numbers an allocation event and records the bytes in use after it, while a timeline or a
/// recording is on (`None` otherwise: the event is not counted).
fn record(in_use: u64) -> Option<u64> {
    let timeline = TIMELINE_ON.load(Ordering::Relaxed);
    if !timeline && !trace::on() {
        return None;
    }
    let event = EVENTS.fetch_add(1, Ordering::Relaxed);
    if timeline {
        let i = event.wrapping_sub(TIMELINE_BASE.load(Ordering::Relaxed)) as usize;
        if i < TIMELINE_CAPACITY {
            TIMELINE[i].store(in_use, Ordering::Relaxed);
        }
    }
    Some(event)
}

/// Allocation events counted so far (the number the next one gets).
pub fn events() -> u64 {
    EVENTS.load(Ordering::Relaxed)
}

/// [`ReadMemory::kind`] of this probe.
pub const KIND: &str = "host-counting-allocator";

/// A global allocator that forwards to [`System`] and counts the bytes it hands out.
pub struct CountingAllocator;

/// Counts `bytes` about to be allocated, unless they would take the process past its budget:
/// then counts nothing, writes CUDA's kind of message to stderr and says no.
/// Returns the bytes in use with them.
fn admit(bytes: u64) -> Option<u64> {
    let budget = BUDGET_BYTES.load(Ordering::Relaxed);
    let now = IN_USE_BYTES.fetch_add(bytes, Ordering::Relaxed) + bytes;
    if now > budget {
        IN_USE_BYTES.fetch_sub(bytes, Ordering::Relaxed);
        out_of_memory(bytes, now - bytes, budget);
        return None;
    }
    PEAK_BYTES.fetch_max(now, Ordering::Relaxed);
    Some(now)
}

/// An allocation of `bytes` at `ptr` was made, taking the bytes in use to `in_use`.
fn made(ptr: *mut u8, bytes: u64, in_use: u64) {
    ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    if let Some(event) = record(in_use) {
        trace::allocated(event, ptr as usize, bytes);
    }
}

/// The first words of the message an allocation past the budget writes to stderr; the parent
/// of a `fit` child recognises it.
pub const OUT_OF_MEMORY: &str = "out of memory: tried to allocate ";

/// Arms a budget: from now on an allocation that would take the bytes in use past `bytes`
/// fails (the allocator returns null, so the process aborts) after writing
/// `out of memory: tried to allocate X bytes; Y bytes in use; budget Z bytes` to stderr. For
/// a child process that measures nothing else; there is no disarming.
pub fn arm_budget(bytes: u64) {
    BUDGET_BYTES.store(bytes, Ordering::Relaxed);
}

/// Writes the out-of-memory message from a buffer on the stack, straight to file descriptor 2:
/// it runs inside the allocator, so it must not allocate.
fn out_of_memory(tried: u64, in_use: u64, budget: u64) {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    let mut buf = [0u8; 192];
    let mut at = 0;
    let mut put = |bytes: &[u8]| {
        let n = bytes.len().min(buf.len() - at);
        buf[at..at + n].copy_from_slice(&bytes[..n]);
        at += n;
    };
    let digits = |mut v: u64| {
        let mut d = [0u8; 20];
        let mut i = d.len();
        loop {
            i -= 1;
            d[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        (d, i)
    };
    put(OUT_OF_MEMORY.as_bytes());
    let (d, i) = digits(tried);
    put(&d[i..]);
    put(b" bytes; ");
    let (d, i) = digits(in_use);
    put(&d[i..]);
    put(b" bytes in use; budget ");
    let (d, i) = digits(budget);
    put(&d[i..]);
    put(b" bytes\n");
    // SAFETY: file descriptor 2 is the process's stderr, open for its whole life; the File is
    // never dropped (ManuallyDrop), so it is not closed here. Writing to a File allocates
    // nothing.
    let mut stderr = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(2) });
    let _ = stderr.write_all(&buf[..at]);
}

/// Uncounts `bytes`; returns the bytes in use without them.
fn sub(bytes: u64) -> u64 {
    IN_USE_BYTES.fetch_sub(bytes, Ordering::Relaxed) - bytes
}

/// The block of `bytes` at `ptr` was freed, leaving `in_use` bytes in use.
fn unmade(ptr: *mut u8, bytes: u64, in_use: u64) {
    if let Some(event) = record(in_use) {
        trace::freed(event, ptr as usize, bytes);
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the counters
// are plain atomics and never affect what is returned.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let bytes = layout.size() as u64;
        let Some(in_use) = admit(bytes) else {
            return std::ptr::null_mut();
        };
        // SAFETY: forwarded from our caller, who upholds `GlobalAlloc::alloc`'s contract.
        let ptr = unsafe { System.alloc(layout) };
        if ptr.is_null() {
            sub(bytes);
        } else {
            made(ptr, bytes, in_use);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let bytes = layout.size() as u64;
        let Some(in_use) = admit(bytes) else {
            return std::ptr::null_mut();
        };
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if ptr.is_null() {
            sub(bytes);
        } else {
            made(ptr, bytes, in_use);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as for `alloc`.
        unsafe { System.dealloc(ptr, layout) };
        let bytes = layout.size() as u64;
        unmade(ptr, bytes, sub(bytes));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let (old, new) = (layout.size() as u64, new_size as u64);
        let grown = if new > old {
            match admit(new - old) {
                Some(in_use) => Some(in_use),
                None => return std::ptr::null_mut(),
            }
        } else {
            None
        };
        // SAFETY: as for `alloc`.
        let new_ptr = unsafe { System.realloc(ptr, layout, new_size) };
        if new_ptr.is_null() {
            if new > old {
                sub(new - old);
            }
            return new_ptr;
        }
        // A reallocation is the old block freed and a new one made, in one event each.
        let in_use = grown.unwrap_or_else(|| sub(old - new));
        unmade(ptr, old, in_use.saturating_sub(new));
        made(new_ptr, new, in_use);
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

impl ReadMemory for HostProbe {
    fn kind(&self) -> String {
        KIND.into()
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

/// One step's bytes in use after every allocation event, and the event at which each of its
/// phases began, in the order the step ran them.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// Bytes in use after each event.
    pub bytes: Vec<u64>,
    /// The number of events before each phase began.
    pub phase_starts: Vec<usize>,
    /// Whether the step made more events than the buffer holds (the later ones are missing).
    pub cut: bool,
}

/// Starts recording the bytes in use after every allocation event into a buffer made
/// beforehand (statically: recording allocates nothing).
pub fn start_timeline() {
    TIMELINE_BASE.store(EVENTS.load(Ordering::Relaxed), Ordering::Relaxed);
    MARKS_LEN.store(0, Ordering::Relaxed);
    TIMELINE_ON.store(true, Ordering::SeqCst);
}

/// Events of the timeline so far.
fn timeline_len() -> usize {
    EVENTS
        .load(Ordering::Relaxed)
        .saturating_sub(TIMELINE_BASE.load(Ordering::Relaxed)) as usize
}

/// Marks a phase's start in the timeline, if one is recording.
pub fn mark_phase() {
    if TIMELINE_ON.load(Ordering::Relaxed) {
        let i = MARKS_LEN.fetch_add(1, Ordering::Relaxed);
        if i < MARK_CAPACITY {
            MARKS[i].store(timeline_len(), Ordering::Relaxed);
        }
    }
}

/// Stops the timeline and returns what it recorded.
pub fn stop_timeline() -> Timeline {
    TIMELINE_ON.store(false, Ordering::SeqCst);
    let events = timeline_len();
    let len = events.min(TIMELINE_CAPACITY);
    let marks = MARKS_LEN.load(Ordering::Relaxed).min(MARK_CAPACITY);
    Timeline {
        bytes: TIMELINE[..len]
            .iter()
            .map(|v| v.load(Ordering::Relaxed))
            .collect(),
        phase_starts: MARKS[..marks]
            .iter()
            .map(|v| v.load(Ordering::Relaxed).min(len))
            .collect(),
        cut: events > TIMELINE_CAPACITY,
    }
}
