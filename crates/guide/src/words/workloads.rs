//! The words every training technique shares: the transformer's section of a page and the
//! memory timeline of one step.

use results::format;
use results::keys::{TimelineKey, TransformerKey};

use super::Said;

/// A line's name, followed by the line it belongs to where a chart has several.
fn named(what: &str, s: &Said<'_>) -> String {
    if s.has("line") {
        format!("{what}, {}", s.text("line"))
    } else {
        what.to_string()
    }
}

/// The words of the transformer's section of a page.
pub(super) fn transformer(key: TransformerKey, s: &Said<'_>) -> String {
    match key {
        TransformerKey::ForwardQuantity => format!(
            "{}: forward peak above the process's own bytes",
            s.name("point")
        ),
        TransformerKey::StepQuantity => {
            format!(
                "{}: step peak above the process's own bytes",
                s.name("point")
            )
        }
        TransformerKey::StepNote => format!(
            "model + Adam state + token ids + what the forward pass keeps + the larger of the \
             loss's transient and backward's (2 x max(4 d^2, d v) f32 values per sequence: the \
             largest Linear's weight gradient computed per sequence before the sum, the factor 2 \
             fitted); backward added {} per token above what the forward pass left",
            s.bytes("excess"),
        ),
        TransformerKey::StepMeasured => named("step peak (measured)", s),
        TransformerKey::ForwardMeasured => named("forward peak (measured)", s),
        TransformerKey::ForwardPredicted => named("forward peak (predicted)", s),
        TransformerKey::TokensPerS => {
            named("tokens/s (median; bars: fastest and slowest repeat)", s)
        }
        TransformerKey::Summary => format!(
            "Transformer ({}, {} parameters), {} points: step peak from {} to {}; throughput from \
             {} to {} tokens/s.",
            s.name("model"),
            s.count("params"),
            s.count("points"),
            s.bytes("lowest_peak"),
            s.bytes("highest_peak"),
            format::rate(s.num("lowest_rate")),
            format::rate(s.num("highest_rate")),
        ),
        TransformerKey::AgainstRules => format!(
            "Transformer, against the shared byte rules (above the process's own bytes): the \
             forward pass's peak within {:.1}% at every point (worst {:+.1}%), the step's within \
             {:.1}% (worst {:+.1}%). The step's peak is in backward, which adds {} to {} per \
             token above what the forward pass left, while every activation is still alive: \
             burn-backend's `linear_weight_backward` computes a Linear's weight gradient per \
             sequence, [batch, d_in, d_out], before summing it over the batch, and at the \
             largest Linear (the MLP block's 4 d^2, or the head's d v) the peak holds about two \
             such copies ({} per token here; the factor 2 was fitted after measuring: an \
             explanation, not a prediction). The MLP's Linear layers take 2-D inputs and have \
             no such transient.",
            s.num("worst_forward").abs() * 100.0,
            s.num("worst_forward") * 100.0,
            s.num("worst_step").abs() * 100.0,
            s.num("worst_step") * 100.0,
            s.bytes("excess_low"),
            s.bytes("excess_high"),
            s.bytes("predicted_excess"),
        ),
        // Chart titles, axes and legends.
        TransformerKey::PeaksTitle => {
            "Transformer: peaks of a training step above the process's own bytes".into()
        }
        TransformerKey::TimelineXLabel => {
            "allocation events in one step (each allocation or free)".into()
        }
        TransformerKey::PhasesXLabel => "phases of one step (boundary, peak, boundary)".into(),
        TransformerKey::BytesInUse => "bytes in use".into(),
        TransformerKey::ThroughputTitle => "Transformer: training throughput".into(),
        TransformerKey::ThroughputYLabel => "throughput (tokens/s)".into(),
    }
}

/// The words of one step's memory timeline.
pub(super) fn timeline(key: TimelineKey, s: &Said<'_>) -> String {
    match key {
        TimelineKey::AtEvent => {
            let phases = s.list("phases");
            format!(
                "at allocation event {:.0} of {:.0}, in a {} phase ({} phases: {})",
                s.num("event"),
                s.num("events"),
                s.name("phase"),
                phases.len(),
                phases.join(", ")
            )
        }
        TimelineKey::PhaseStart => {
            format!("{} from event {:.0}", s.name("phase"), s.num("event"))
        }
        TimelineKey::InPhase => format!(
            "in its {} phase (read at the phase boundaries and the phase's peak)",
            s.name("phase")
        ),
        TimelineKey::Peak => format!(
            "Memory timeline, {}: the step's peak is {} {}.",
            s.name("point"),
            s.bytes("peak"),
            s.text("where")
        ),
        TimelineKey::Series => format!("{} (peak {}, marked)", s.name("point"), s.bytes("peak")),
    }
}
