//! What each memory probe counts, in words: records name the probe (and CubeCL's pool), the
//! guide and `memory-summary` say what that means.

use results::ProbeInfo;

/// What the probe `info` counts and how its peak is obtained, in a sentence.
pub fn counts(info: &ProbeInfo) -> String {
    match info.kind.as_str() {
        ProbeInfo::HOST => "every heap byte of the process, counted by a global allocator with \
                            process-wide atomics; the peak is exact (updated on every allocation)"
            .into(),
        ProbeInfo::CUBE => format!(
            "bytes of live tensor slices in CubeCL's memory manager (bytes_in_use, padding \
             excluded) on the working thread's stream (CubeCL's memory_report of the current \
             stream: not in Burn's API, whose Device::memory_pool_usage() sums every stream \
             and gives the device-wide readings), read after a device sync; CubeCL keeps no \
             peak of bytes, so in a step measured \
             for its memory each phase's peak is bracketed: from below by the highest of its \
             boundary readings and of a thread sampling its stream while it runs, from above \
             by the pool pages reserved right after it, the pool emptied right before it \
             ({} pool)",
            info.pool.as_deref().unwrap_or("default")
        ),
        _ => "nothing".into(),
    }
}
