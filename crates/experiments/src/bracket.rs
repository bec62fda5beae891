//! A phase's peak on a device backend, bracketed, beside its byte rule.
//!
//! Question: on a backend that keeps no high-water mark (CubeCL: wgpu, CUDA), where does a
//! phase's in-use peak lie, and does the byte rule's prediction fall inside?
//! Method: each point's phases are bracketed in one step measured for its memory (see
//! `harness::probe::cube`): the lower bound is the highest of the phase's boundary readings
//! and of a thread sampling its stream, the upper bound the pool's reserved bytes right after
//! the phase, the pool emptied right before it. A page hands the rows it wants read and the
//! rule's prediction of the phase's peak for each; this module sets the prediction against both
//! bounds, and the guide words it.
//! Answer: the findings and the predicted-against-measured rows of each page, from its rows.

use results::keys::BracketKey;
use results::{Comparison, PeakBracket, PhaseKey, Text};

use crate::technique::Row;

/// A prediction this close to a bound is read as at the bound (the loss's scalar, the
/// autodiff graph's bookkeeping): 1 KiB or 0.1%, whichever is larger.
fn at_bound(predicted: f64, bound: f64) -> bool {
    (predicted - bound).abs() <= (1024.0f64).max(bound * 1e-3)
}

/// The bracket of `phase` in a row, where the row was bracketed.
pub fn of<'a, C>(row: &Row<'a, C>, phase: impl PhaseKey) -> Option<&'a PeakBracket> {
    row.result.phase(phase).and_then(|p| p.bracket.as_ref())
}

/// Where `phase` of a row was bracketed, the most it can have added above what was live when
/// it began, divided by `per` (1 for the whole phase; the batch for a figure per sample): the
/// upper end of a comparison whose measured figure is the phase's `delta_bytes` over `per`.
/// `None` on an exact probe.
pub fn added_upper<C>(row: &Row<'_, C>, phase: impl PhaseKey, per: f64) -> Option<f64> {
    row.result
        .phase(phase)
        .and_then(|p| p.delta_upper_bytes())
        .map(|b| b as f64 / per)
}

/// Where `phase` of a row was bracketed, what it added above what was live when it began,
/// divided by `per`, as a bracket: the least (`delta_bytes`) and the most ([`added_upper`]).
/// `None` on an exact probe.
pub fn added<C>(row: &Row<'_, C>, phase: impl PhaseKey, per: f64) -> Option<(f64, f64)> {
    let p = row.result.phase(phase)?;
    Some((
        p.delta_bytes() as f64 / per,
        p.delta_upper_bytes()? as f64 / per,
    ))
}

/// What a page says about the bracketed `phase` of each of `rows` (labelled by `label`), beside
/// `predicted`, the rule's prediction of the phase's peak (`rule` says what it counts): one
/// finding per row, and the prediction against each bound. Nothing where the rows carry no
/// bracket (an exact probe).
pub fn phase_brackets<C>(
    rows: &[&Row<'_, C>],
    phase: impl PhaseKey,
    rule: Text,
    label: impl Fn(&Row<'_, C>) -> Text,
    predicted: impl Fn(&Row<'_, C>) -> f64,
) -> (Vec<Text>, Vec<Comparison<Text>>) {
    let mut findings = Vec::new();
    let mut comparisons = Vec::new();
    for row in rows {
        let Some(b) = of(row, phase) else { continue };
        let p = predicted(row);
        let (lower, upper) = (b.lower_bytes() as f64, b.upper_bytes as f64);
        let near = [("lower", lower), ("upper", upper)]
            .into_iter()
            .find(|&(_, bound)| at_bound(p, bound));
        let verdict = if let Some((which, bound)) = near {
            Text::said(BracketKey::AtBound)
                .name("bound", which)
                .bytes("within", (p - bound).abs())
        } else if p < lower {
            Text::said(BracketKey::Below)
                .bytes("by", lower - p)
                .number("by_pct", (lower - p) / lower * 100.0)
        } else if p > upper {
            Text::said(BracketKey::Above)
                .bytes("by", p - upper)
                .number("by_pct", (p - upper) / upper * 100.0)
        } else {
            Text::said(BracketKey::Inside)
        };
        findings.push(
            Text::said(BracketKey::Finding)
                .text("point", label(row))
                .name("phase", phase.name())
                .bytes("boundary_peak", b.boundary_peak_bytes as f64)
                .bytes("sampled_peak", b.sampled_peak_bytes as f64)
                .count("samples", b.samples)
                .seconds("interval", b.sample_interval_s)
                .name("pool", b.pool.to_string())
                .bytes("lower", lower)
                .bytes("upper", upper)
                .bytes("width", b.width_bytes() as f64)
                .text("rule", rule.clone())
                .bytes("predicted", p)
                .text("verdict", verdict),
        );
        comparisons.push(
            Comparison::new(
                Text::said(BracketKey::Quantity)
                    .name("phase", phase.name())
                    .text("point", label(row)),
                p,
                lower,
                Text::said(BracketKey::Note)
                    .text("rule", rule.clone())
                    .count("samples", b.samples)
                    .seconds("interval", b.sample_interval_s)
                    .name("pool", b.pool.to_string()),
            )
            .bracketed(Some(upper)),
        );
    }
    (findings, comparisons)
}
