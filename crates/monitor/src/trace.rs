//! The allocator's side of an attribution recording: while one is on, the counting allocator
//! writes each large block's size, the events that made and freed it and its call stack's
//! return addresses into buffers made statically, so that tracing allocates nothing. The
//! recorder reads them back when the step ends. A module of its own so that the allocator
//! (`host`) and the recorder (which reads the allocator's probe) each depend on it, not on one
//! another.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Allocations of at least this many bytes are traced to their call stack; smaller ones are
/// summed as one row. 64 KiB: below any tensor a model's peak is made of, above the graph's
/// bookkeeping.
pub const THRESHOLD_BYTES: u64 = 64 * 1024;
/// Blocks a recording holds; later ones are counted (the report's `untraced_blocks`) but not
/// traced.
pub const BLOCK_CAPACITY: usize = 1 << 15;
/// Return addresses kept per block, innermost first.
pub const FRAMES: usize = 48;

struct Slot {
    ptr: AtomicUsize,
    bytes: AtomicU64,
    made: AtomicU64,
    freed: AtomicU64,
    depth: AtomicUsize,
    frames: [AtomicUsize; FRAMES],
}

impl Slot {
    const fn new() -> Self {
        Self {
            ptr: AtomicUsize::new(0),
            bytes: AtomicU64::new(0),
            made: AtomicU64::new(0),
            freed: AtomicU64::new(0),
            depth: AtomicUsize::new(0),
            frames: [const { AtomicUsize::new(0) }; FRAMES],
        }
    }
}

const LIVE: u64 = u64::MAX;
static ON: AtomicBool = AtomicBool::new(false);
static THRESHOLD: AtomicU64 = AtomicU64::new(THRESHOLD_BYTES);
static SLOTS_LEN: AtomicUsize = AtomicUsize::new(0);
static SLOTS: [Slot; BLOCK_CAPACITY] = [const { Slot::new() }; BLOCK_CAPACITY];

thread_local! {
    /// Set while this thread traces a stack: an allocation made by the unwinder itself is not
    /// traced again.
    static TRACING: Cell<bool> = const { Cell::new(false) };
}

/// Whether a recording is on (read by the allocator on every event).
pub(crate) fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Empties the buffers and starts tracing every allocation of at least `threshold_bytes`.
pub(crate) fn start(threshold_bytes: u64) {
    THRESHOLD.store(threshold_bytes, Ordering::Relaxed);
    SLOTS_LEN.store(0, Ordering::Relaxed);
    ON.store(true, Ordering::SeqCst);
}

/// Stops tracing; the buffers keep what was traced until the next [`start`].
pub(crate) fn stop() {
    ON.store(false, Ordering::SeqCst);
}

/// The threshold the last [`start`] set.
pub(crate) fn threshold_bytes() -> u64 {
    THRESHOLD.load(Ordering::Relaxed)
}

/// Notes an allocation of `bytes` at `ptr`, made by event `event`, if it is large enough.
pub(crate) fn allocated(event: u64, ptr: usize, bytes: u64) {
    if !on() || bytes < THRESHOLD.load(Ordering::Relaxed) || TRACING.with(|t| t.replace(true)) {
        return;
    }
    let i = SLOTS_LEN.fetch_add(1, Ordering::Relaxed);
    if let Some(slot) = SLOTS.get(i) {
        slot.ptr.store(ptr, Ordering::Relaxed);
        slot.bytes.store(bytes, Ordering::Relaxed);
        slot.made.store(event, Ordering::Relaxed);
        slot.freed.store(LIVE, Ordering::Relaxed);
        let mut depth = 0;
        // SAFETY: the callback only writes addresses into atomics; it neither allocates nor
        // panics. Unsynchronised tracing is safe on every platform but Windows' dbghelp, which
        // this crate's CPU probe does not serve.
        unsafe {
            backtrace::trace_unsynchronized(|frame| {
                slot.frames[depth].store(frame.ip() as usize, Ordering::Relaxed);
                depth += 1;
                depth < FRAMES
            });
        }
        slot.depth.store(depth, Ordering::Relaxed);
    }
    TRACING.with(|t| t.set(false));
}

/// Notes the free of a block of `bytes` at `ptr` by event `event`, if it was traced.
pub(crate) fn freed(event: u64, ptr: usize, bytes: u64) {
    if !on() || bytes < THRESHOLD.load(Ordering::Relaxed) {
        return;
    }
    // The newest block at `ptr` still live: an address is reused once freed. Blocks are
    // freed mostly in the reverse order of their making, so the scan is short.
    let len = SLOTS_LEN.load(Ordering::Relaxed).min(BLOCK_CAPACITY);
    if let Some(slot) = SLOTS[..len]
        .iter()
        .rev()
        .find(|s| s.ptr.load(Ordering::Relaxed) == ptr && s.freed.load(Ordering::Relaxed) == LIVE)
    {
        slot.freed.store(event, Ordering::Relaxed);
    }
}

/// A block traced by a recording.
#[derive(Debug, Clone)]
pub(crate) struct Block {
    pub(crate) bytes: u64,
    /// The event that made it.
    pub(crate) made: u64,
    /// The event that freed it; `None`: live when the recording stopped.
    pub(crate) freed: Option<u64>,
    /// Return addresses, innermost first.
    pub(crate) frames: Vec<usize>,
}

impl Block {
    /// Whether the block was live just after event `event`.
    pub(crate) fn live_at(&self, event: u64) -> bool {
        self.made <= event && self.freed.is_none_or(|f| f > event)
    }
}

/// The blocks traced since the last [`start`], and how many more were made than the buffers
/// hold (counted, not traced).
pub(crate) fn take() -> (Vec<Block>, usize) {
    let made = SLOTS_LEN.load(Ordering::Relaxed);
    let len = made.min(BLOCK_CAPACITY);
    let blocks = SLOTS[..len]
        .iter()
        .map(|s| {
            let depth = s.depth.load(Ordering::Relaxed).min(FRAMES);
            let freed = s.freed.load(Ordering::Relaxed);
            Block {
                bytes: s.bytes.load(Ordering::Relaxed),
                made: s.made.load(Ordering::Relaxed),
                freed: (freed != LIVE).then_some(freed),
                frames: s.frames[..depth]
                    .iter()
                    .map(|f| f.load(Ordering::Relaxed))
                    .collect(),
            }
        })
        .collect();
    (blocks, made - len)
}
