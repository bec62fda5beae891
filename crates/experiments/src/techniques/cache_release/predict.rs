//! The byte model of a tensor's life under a caching allocator: its bytes in use while alive,
//! nothing in use after the drop, nothing reserved after `memory_cleanup()`, and the peak of
//! allocating it.

/// Bytes in use above the start while an f32 tensor of `tensor_bytes` is alive: its elements.
pub fn in_use_alive_bytes(tensor_bytes: f64) -> f64 {
    tensor_bytes
}

/// The peak of allocating a tensor of `tensor_bytes` with `Tensor::empty`. On the host, twice
/// the tensor: Flex's `empty()` zero-fills a `Vec<u8>`, and cubecl-common's
/// `Bytes::from_bytes_vec` copies it to 16-byte alignment (it checks the Vec's declared
/// alignment, 1, not its address), then frees the first. On a device, the tensor.
pub fn allocation_peak_bytes(tensor_bytes: f64, on_host: bool) -> f64 {
    if on_host {
        2.0 * tensor_bytes
    } else {
        tensor_bytes
    }
}
