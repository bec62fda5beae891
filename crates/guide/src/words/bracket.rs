//! The words of a phase's bracketed peak on a device backend, beside its byte rule.

use results::format;
use results::keys::BracketKey;

use super::Said;

pub(super) fn word(key: BracketKey, s: &Said<'_>) -> String {
    match key {
        BracketKey::AtBound => format!(
            "at the {} bound (within {})",
            s.name("bound"),
            s.bytes("within")
        ),
        BracketKey::Below => format!(
            "below the lower bound by {} ({}): the phase holds more than the rule counts",
            s.bytes("by"),
            format::pct(s.num("by_pct"))
        ),
        BracketKey::Above => format!(
            "above the upper bound by {} ({}): the rule counts bytes this backend never holds at \
             once",
            s.bytes("by"),
            format::pct(s.num("by_pct"))
        ),
        BracketKey::Inside => "inside the bracket".into(),
        BracketKey::Finding => format!(
            "{}, {} phase: read at its boundaries the peak is {}; a thread sampling the stream \
             read up to {} ({} readings about {} apart); the pool reserved {} right after the \
             phase ({} pool, emptied of unused pages right before it). The in-use peak lies \
             between {} and {} (a bracket {} wide). The rule ({}) predicts {}: {}.",
            s.text("point"),
            s.name("phase"),
            s.bytes("boundary_peak"),
            s.bytes("sampled_peak"),
            s.count("samples"),
            s.seconds("interval"),
            s.bytes("upper"),
            s.name("pool"),
            s.bytes("lower"),
            s.bytes("upper"),
            s.bytes("width"),
            s.text("rule"),
            s.bytes("predicted"),
            s.text("verdict"),
        ),
        BracketKey::Quantity => format!("{} peak, {}", s.name("phase"), s.text("point")),
        BracketKey::Note => format!(
            "{}; measured as a bracket: the highest of the boundary readings and of the sampling \
             thread's ({} readings about {} apart), to the {} pool's reserved bytes right after \
             the phase, emptied right before it",
            s.text("rule"),
            s.count("samples"),
            s.seconds("interval"),
            s.name("pool")
        ),
    }
}
