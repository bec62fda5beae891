//! The byte model of views and copies, from Flex's rules: views share the buffer; an op writes in
//! place only into a uniquely owned contiguous buffer; `into_data` hands over a uniquely owned
//! exact-size buffer and copies otherwise.

use super::Op;
use crate::estimate::F32_BYTES;

/// Predicted bytes the operation adds at its peak above the live parent, from Flex's rules:
/// views share the buffer; an op writes in place only into a uniquely owned contiguous
/// buffer; `into_data` hands over a uniquely owned exact-size buffer and copies otherwise.
/// Its copy is made twice at the peak: Flex copies the elements into a `Vec<u8>`, and
/// cubecl's `Bytes::from_bytes_vec` copies that again to 16-byte alignment (a `Vec<u8>` is
/// only 1-byte aligned), freeing the first copy after.
pub fn copied_bytes(op: Op, rows: usize, cols: usize) -> u64 {
    let tensor = (rows * cols) as u64 * F32_BYTES;
    match op {
        Op::ReshapeTransposed | Op::ExpTransposed => tensor,
        Op::ToDataRoundTrip => 2 * tensor,
        Op::RowCopy => 2 * cols as u64 * F32_BYTES,
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
        op => tensor + copied_bytes(op, rows, cols),
    }
}
