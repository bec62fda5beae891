//! The words of cache release: what the pool keeps after a drop, what `memory_cleanup()`
//! returns, and what the next allocation pays for it.

use super::Said;

pub(super) fn word(key: &str, s: &Said<'_>) -> Option<String> {
    Some(match key {
        "in-use-alive" => format!("in use with the {} tensor alive", s.bytes("tensor")),
        "in-use-dropped" => format!("in use after the {} tensor is dropped", s.bytes("tensor")),
        "reserved-released" => format!(
            "reserved after memory_cleanup(), {} tensor",
            s.bytes("tensor")
        ),
        "reserved-released-note" => "every page the tensor took returned, above the start".into(),
        "allocation-peak" => format!("peak while allocating {} (empty)", s.bytes("tensor")),
        "allocation-peak-note.host" => "twice the tensor: Flex's empty() zero-fills a Vec<u8>, \
                                        and Bytes::from_bytes_vec copies it to 16-byte alignment \
                                        (it checks the Vec's declared alignment, 1, not its \
                                        address), then frees the first"
            .into(),
        "allocation-peak-note.pool" => {
            "the tensor's bytes: the pool hands out a slice of a page".into()
        }
        "counters" => format!(
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
        "no-cache" => format!(
            "No allocator cache on this device: after the {} tensor was dropped, {} above the \
             start was in use, and there is nothing to release.",
            s.bytes("size"),
            s.bytes("in_use_dropped"),
        ),
        "allocation-time" => format!(
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
        "headline" => format!(
            "a dropped {} tensor: reserved before and after memory_cleanup(); time of an \
             allocation from the cache and after a cleanup",
            s.bytes("size")
        ),
        "nothing-to-check" => "nothing to compare: releasing the cache changes no value".into(),
        // Chart titles, axes and legends.
        "label.elements-x-4-bytes-above-the" => "elements x 4 bytes, above the start".into(),
        "label.nothing-live-above-the-start" => "nothing live above the start".into(),
        "label.in-use-and-reserved-around-one" => {
            "In use and reserved around one tensor's life".into()
        }
        "label.time-of-one-allocation-median-bars" => {
            "Time of one allocation: median, bars from fastest to slowest".into()
        }
        "label.bytes-reserved-after-the-drop" => "bytes reserved after the drop".into(),
        _ => return None,
    })
}
