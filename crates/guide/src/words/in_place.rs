//! The words of the in-place experiment: what consuming a tensor instead of keeping a clone
//! saves at the peak, and where its time goes.

use results::format;
use results::keys::in_place::Key;

use super::Said;

pub(super) fn word(key: Key, s: &Said<'_>) -> String {
    match key {
        Key::LabelPeakAboveTheInput => "peak above the input".into(),
        Key::LabelThroughputRowsS => "throughput (rows/s)".into(),
        Key::LabelInputTensor => "input tensor".into(),
        Key::LabelRowsProcessedPerSecond => "Rows processed per second".into(),
        Key::CaseSaving => {
            let saved = s.num("saved");
            format!(
                "{} on {} x {} f32 ({}): keeping a clone adds {} at the peak, consuming the input \
                 adds {}; the saving, {}, is {:.4} tensors' worth. Time per row, consuming \
                 against keeping a clone: {}.",
                format::capitalise(&s.name("case")),
                s.count("rows"),
                s.count("cols"),
                s.bytes("tensor"),
                s.bytes("kept"),
                s.bytes("consumed"),
                s.bytes("saved"),
                saved / s.num("tensor"),
                s.cost("timing"),
            )
        }
        Key::WhereTimeGoes => format!(
            "Where the time goes: written both ways, a single add (x + 1) differs by {} per call, \
             which is the cost of a fresh {} buffer (allocated, and its pages touched for the \
             first time: the system allocator maps and faults in a buffer this large on every \
             allocation), not arithmetic, since both ways add the same values. Consuming the \
             input saves the layer norm {} per call, {:.0}% of which that one fresh buffer \
             accounts for; what the rest is, this measurement does not say.",
            s.seconds("touch"),
            s.bytes("buffer"),
            s.seconds("norm"),
            s.num("touch") / s.num("norm") * 100.0,
        ),
        Key::SavingQuantity => format!(
            "{}, {} rows: bytes saved by consuming",
            s.name("case"),
            s.count("rows")
        ),
        Key::SavingNote => match s.name("allocator").as_str() {
            "cube-cl" => "burn-cubecl: a lone op saves one tensor as on the CPU; a fused chain or \
                         layer norm writes a new output either way, so consuming saves nothing \
                         (see the module's rules)"
                .into(),
            _ => "one tensor's elements: the buffer the first write into a shared tensor \
                  allocates"
                .into(),
        },
        Key::PeakQuantity => format!(
            "{}, {}, {} rows: peak above the input",
            s.name("case"),
            s.name("style"),
            s.count("rows")
        ),
        Key::PeakNote => prediction_note(
            &s.name("case"),
            &s.name("style"),
            s.name("allocator") == "cube-cl",
        )
        .into(),
        Key::SeriesMeasured => format!("{}, {} (measured)", s.name("case"), s.name("style")),
        Key::SeriesPredicted => format!("{}, {} (predicted)", s.name("case"), s.name("style")),
        Key::SeriesThroughput => format!(
            "{}, {} (median; bars: fastest and slowest)",
            s.name("case"),
            s.name("style")
        ),
        Key::Headline => format!(
            "{} of {} x {} f32: keeping a clone of the input against consuming it (peak above \
             the input; time per row)",
            s.name("case"),
            s.count("rows"),
            s.count("cols")
        ),
        // Chart titles, axes and legends.
        Key::LabelPeakMemoryTheComputationAddsAbove => {
            "Peak memory the computation adds above its input".into()
        }
    }
}

/// How the byte model predicts a case written one way, and why it may differ.
fn prediction_note(case: &str, style: &str, cubecl: bool) -> &'static str {
    if cubecl {
        return match (case, style) {
            ("chain", _) => {
                "burn-cubecl: fusion writes the four ops in one kernel into a new buffer, beside \
                 x until it returns (written after measuring)"
            }
            ("layer-norm", _) => {
                "burn-cubecl: the centring and squaring are read inside the two row reductions \
                 (one f32 per row each, mean and variance); the output is a new tensor, kept or \
                 consumed (written after measuring)"
            }
            (_, "keep-clone") => "x + 1 writes a new tensor, since x is shared",
            _ => "x + 1 writes into x's buffer (burn-cubecl's can_mut(), as on the CPU)",
        };
    }
    match (case, style) {
        ("chain", "keep-clone") => {
            "the first op (x / 2) writes a new tensor since x is shared; exp, + 1 and log run in \
             place on it. The few dozen bytes over are the new tensor's handle"
        }
        ("chain", _) => "all four ops write into x's buffer",
        ("layer-norm", "keep-clone") => {
            "x - mean needs a new buffer (x is shared), square() is x * x and always allocates, \
             plus one f32 per row for the variance while the square is alive"
        }
        ("layer-norm", _) => {
            "x - mean writes into x; square() allocates one tensor, plus one f32 per row for the \
             variance; the division runs in place"
        }
        (_, "keep-clone") => "x + 1 writes a new tensor, since x is shared",
        _ => "x + 1 writes into x's buffer",
    }
}
