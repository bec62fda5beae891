//! The byte model of views and copies, per backend. Flex's rules: views share the buffer; an op
//! writes in place only into a uniquely owned contiguous buffer; `into_data` hands over a
//! uniquely owned exact-size buffer and copies otherwise. burn-cubecl's differ where
//! [`Allocator`] says: a tensor's bytes
//! read back to the host are not device memory. Written after the wgpu measurements (the rule
//! for `to_data` had predicted Flex's two host copies there): an explanation, not a
//! prediction.

use super::Op;
use estimator::estimate::{Allocator, F32_BYTES};

/// Predicted bytes the operation adds at its peak above the live parent, from Flex's rules:
/// views share the buffer; an op writes in place only into a uniquely owned contiguous
/// buffer; `into_data` hands over a uniquely owned exact-size buffer and copies otherwise.
/// Its copy is made twice at the peak: Flex copies the elements into a `Vec<u8>`, and
/// cubecl's `Bytes::from_bytes_vec` copies that again to 16-byte alignment (a `Vec<u8>` is
/// only 1-byte aligned), freeing the first copy after.
///
/// On burn-cubecl (`Allocator::CubeCl`): `to_data`'s bytes are on the host, so the round trip
/// adds only the device buffer `from_data` fills; the row's
/// `into_data` reads it to the host, the parent's buffer is freed when the narrowed view
/// drops, and only then does `from_data` allocate the row: nothing above the parent.
pub fn copied_bytes(op: Op, rows: usize, cols: usize, allocator: Allocator) -> u64 {
    let tensor = (rows * cols) as u64 * F32_BYTES;
    let host_copies = if allocator.counts_host_copies() { 2 } else { 0 };
    match op {
        Op::ReshapeTransposed | Op::ExpTransposed => tensor,
        // The host's copies, plus on a device the buffer from_data makes (on the CPU that
        // buffer is the second copy itself).
        Op::ToDataRoundTrip => tensor * host_copies.max(1),
        Op::RowCopy => host_copies * cols as u64 * F32_BYTES,
        _ => 0,
    }
}

/// Predicted bytes still held once the operation returned, the parent's own reference
/// dropped where the operation consumes it.
pub fn held_bytes(op: Op, rows: usize, cols: usize) -> u64 {
    let tensor = (rows * cols) as u64 * F32_BYTES;
    match op {
        // The output is (or shares) a buffer of the parent's size.
        Op::ExpOwned | Op::ExpTransposed | Op::IntoDataRoundTrip | Op::RowView => tensor,
        Op::RowCopy => cols as u64 * F32_BYTES,
        // The parent is kept: its buffer, plus the copy if there is one.
        Op::ToDataRoundTrip => 2 * tensor,
        op => tensor + copied_bytes(op, rows, cols, Allocator::Flex),
    }
}
