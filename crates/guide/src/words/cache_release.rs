//! The words of cache release: what the pool keeps after a drop, what `memory_cleanup()`
//! returns, and what the next allocation pays for it.

use super::Said;
use results::keys::cache_release::Key;

pub(super) fn word(key: Key, s: &Said<'_>) -> String {
    match key {
        Key::LabelAfterMemoryCleanupMedian => "after memory_cleanup() (median)".into(),
        Key::LabelFromTheCacheMedian => "from the cache (median)".into(),
        Key::LabelReservedAfterMemoryCleanup => "reserved, after memory_cleanup()".into(),
        Key::LabelReservedTensorDropped => "reserved, tensor dropped".into(),
        Key::LabelInUseTensorDropped => "in use, tensor dropped".into(),
        Key::LabelInUseTensorAlive => "in use, tensor alive".into(),
        Key::LabelBytesReservedAfterTheDrop => "bytes reserved after the drop".into(),
        Key::LabelAllocationTime => "allocation time".into(),
        Key::LabelTensorSize => "tensor size".into(),
        Key::LabelBytes => "bytes".into(),
        Key::InUseAlive => format!("in use with the {} tensor alive", s.bytes("tensor")),
        Key::InUseDropped => format!("in use after the {} tensor is dropped", s.bytes("tensor")),
        Key::ReservedReleased => format!(
            "reserved after memory_cleanup(), {} tensor",
            s.bytes("tensor")
        ),
        Key::ReservedReleasedNote => "every page the tensor took returned, above the start".into(),
        Key::AllocationPeak => format!("peak while allocating {} (empty)", s.bytes("tensor")),
        Key::AllocationPeakNoteHost => "twice the tensor: Flex's empty() zero-fills a Vec<u8>, \
                                        and Bytes::from_bytes_vec copies it to 16-byte alignment \
                                        (it checks the Vec's declared alignment, 1, not its \
                                        address), then frees the first"
            .into(),
        Key::AllocationPeakNotePool => {
            "the tensor's bytes: the pool hands out a slice of a page".into()
        }
        Key::Counters => format!(
            "With a {} tensor alive the pools reserved {} above the start; after the drop {} was \
             in use and {} still reserved (what nvidia-smi counts); memory_cleanup() took {} and \
             left {} reserved above the start.",
            s.bytes("size"),
            s.bytes("reserved_alive"),
            s.bytes("in_use_dropped"),
            s.bytes("reserved_dropped"),
            s.seconds("cleanup"),
            s.bytes("reserved_released"),
        ),
        Key::NoCache => format!(
            "No allocator cache on this device: after the {} tensor was dropped, {} above the \
             start was in use, and there is nothing to release.",
            s.bytes("size"),
            s.bytes("in_use_dropped"),
        ),
        Key::AllocationTime => format!(
            "Allocating {} (and freeing it) after memory_cleanup(), against from the cache, timed \
             in pairs (the cleanup itself and the refill of the cache are outside the clock): \
             {}.{}",
            s.bytes("size"),
            s.cost("timing"),
            if s.num("has_cache") > 0.0 {
                ""
            } else {
                " Without a cache both are the same allocation, so no difference is expected; a \
                 resolved one would be a finding about the system allocator."
            }
        ),
        Key::Headline => format!(
            "a dropped {} tensor: reserved before and after memory_cleanup(); time of an \
             allocation from the cache and after a cleanup",
            s.bytes("size")
        ),
        Key::NothingToCheck => "nothing to compare: releasing the cache changes no value".into(),
        // Chart titles, axes and legends.
        Key::LabelElementsX4BytesAboveThe => "elements x 4 bytes, above the start".into(),
        Key::LabelNothingLiveAboveTheStart => "nothing live above the start".into(),
        Key::LabelInUseAndReservedAroundOne => {
            "In use and reserved around one tensor's life".into()
        }
        Key::LabelTimeOfOneAllocationMedianBars => {
            "Time of one allocation: median, bars from fastest to slowest".into()
        }
    }
}
