//! The words of the views experiment: which operations are free views, which copy, and the
//! trap of a small view that keeps its parent's whole buffer.

use super::Said;
use results::keys::views::Key;

pub(super) fn word(key: Key, s: &Said<'_>) -> String {
    match key {
        Key::LabelBytesHeldAfterTheParentIs => "bytes held after the parent is dropped".into(),
        Key::LabelBytesHeld => "bytes held".into(),
        Key::LabelParentTensor => "parent tensor".into(),
        Key::LabelPeakAboveTheParent => "peak above the parent".into(),
        Key::CopiedQuantity => format!("{}: bytes copied", s.name("op")),
        Key::CopyNote => copy_note(&s.name("op"), s.name("allocator") == "cube-cl").into(),
        Key::HeldQuantity => format!("{}: bytes still held", s.name("op")),
        Key::HeldNote => match s.name("op").as_str() {
            "row-view" => "the view's Arc keeps the parent's whole buffer".into(),
            _ => "only the row: into_data of a narrowed view copies its own elements. Not \
                  predicted: the new tensor's bookkeeping, a large share of so small a tensor"
                .into(),
        },
        Key::ViewsAreFree => format!(
            "Slicing rows or columns, narrow, transpose, a contiguous reshape and expand added at \
             most {} at their peak over {} measurements on parents up to {}: they are views.",
            s.bytes("most"),
            s.count("measurements"),
            s.bytes("largest"),
        ),
        Key::OpCopies => format!(
            "{} on a {} parent added {} ({:.4} of the parent).",
            s.name("op"),
            s.bytes("parent"),
            s.bytes("copied"),
            s.num("copied") / s.num("parent")
        ),
        Key::Trap => format!(
            "The trap: a one-row view of a {} tensor still held {} after the tensor was dropped; \
             copying the row out held {}. Time, the copy against the view, each timed with \
             freeing the parent's buffer (the copy frees it inside the operation, the view when \
             it is dropped): {}.",
            s.bytes("parent"),
            s.bytes("view_held"),
            s.bytes("copy_held"),
            s.cost("timing"),
        ),
        Key::SeriesMeasured => format!("{} (measured)", s.name("op")),
        Key::SeriesPredicted => format!("{} (predicted)", s.name("op")),
        Key::Headline => format!(
            "the first row of a {} tensor kept as a view against copied out, after the tensor is \
             dropped (bytes held; time of the operation and of freeing the parent)",
            s.bytes("parent")
        ),
        // Chart titles, axes and legends.
        Key::LabelLargestOfTheSixViewsMeasured => "largest of the six views (measured)".into(),
        Key::LabelOneParentSSizePredictedFor => {
            "one parent's size (predicted for the reshape and the exp of a transpose)".into()
        }
        Key::LabelBytesAnOperationAddsAboveIts => "Bytes an operation adds above its parent".into(),
        Key::LabelMemoryStillHeldAfterDroppingThe => {
            "Memory still held after dropping the parent of a one-row view".into()
        }
    }
}

/// How the byte model predicts what an operation copies, and why.
fn copy_note(op: &str, cubecl: bool) -> &'static str {
    match (op, cubecl) {
        ("slice-rows" | "narrow", _) => "a view: same buffer, new offset and shape",
        ("slice-columns", _) => "a view: same buffer, the row stride unchanged",
        ("transpose", _) => "a view: strides swapped",
        ("reshape", _) => "a view: a contiguous tensor reshapes by recomputing strides",
        ("expand", _) => "a view: the broadcast dimension gets stride 0",
        ("reshape-transposed", _) => {
            "no strides express the transposed order in the new shape: one contiguous copy"
        }
        ("exp-owned", _) => "unique and contiguous: exp writes into x's buffer",
        ("exp-transposed", _) => {
            "unique but not contiguous: exp writes a new contiguous buffer, x is freed after"
        }
        ("to-data-round-trip", false) => {
            "x is shared, so to_data copies it into a Vec<u8>, which Bytes::from_bytes_vec \
             copies again to 16-byte alignment before the first copy is freed; from_data then \
             takes the aligned buffer as is. One copy stays"
        }
        ("to-data-round-trip", true) => {
            "to_data reads x back into host memory, which the device's memory manager does not \
             count; from_data uploads it into one new device buffer, which stays"
        }
        ("into-data-round-trip", _) => {
            "x is unique, contiguous and exactly sized: into_data hands its buffer over"
        }
        ("row-view", _) => "a view: nothing copied (and nothing freed, see below)",
        ("row-copy", false) => {
            "into_data copies the row's elements out of the larger buffer, twice at the peak \
             (the alignment copy, as for to_data)"
        }
        _ => {
            "into_data reads the row back to the host (not device memory); the parent's buffer \
             is freed with the narrowed view, before from_data allocates the row: nothing above \
             the parent"
        }
    }
}
