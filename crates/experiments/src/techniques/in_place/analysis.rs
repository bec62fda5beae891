//! The in-place experiment's conclusions: the bytes each way adds, predicted beside measured,
//! charts and the index row.

use results::{Analysis, Chart, Comparison, ComparisonSpec, Correctness, Headline, MeasuredPoint, PairedComparison, PairedTiming, Scale, Series, Side, analysis::worst_check, format::{self, mib}, paired::find};

use super::InPlaceMetric;
use super::{predict, Case, InPlace, InPlaceConfig, Style, CASES, PHASE};
use crate::bracket;
use crate::estimate::Allocator;
use crate::technique::{Analyse, Row};

/// A measured in-place point.
type R<'a> = Row<'a, InPlaceConfig>;

/// Bytes the computation added at its peak above its input.
fn added(r: &R<'_>) -> f64 {
    r.result.metric(InPlaceMetric::AddedPeakBytes)
}

/// The (keep a clone, consume) pair of `case` at the largest size measured both ways.
fn pair<'r, 'a>(rows: &'r [R<'a>], case: Case) -> Option<(&'r R<'a>, &'r R<'a>)> {
    let of = |style: Style| {
        rows.iter()
            .filter(move |r| r.config.case == case && r.config.style == style)
    };
    of(Style::KeepClone)
        .filter_map(|k| {
            of(Style::Consume)
                .find(|c| c.config.rows == k.config.rows)
                .map(|c| (k, c))
        })
        .max_by_key(|(k, _)| k.config.rows)
}

/// Each case's pair at the largest size is timed in pairs (keeping a clone is the baseline);
/// the layer norm's is the headline.
pub(super) fn comparisons(rows: &[R<'_>]) -> Vec<ComparisonSpec> {
    CASES
        .into_iter()
        .filter_map(|case| {
            let (k, c) = pair(rows, case)?;
            let spec = ComparisonSpec::new(case.id(), k.id, c.id);
            Some(if case == Case::LayerNorm {
                spec
            } else {
                spec.supporting()
            })
        })
        .collect()
}

/// The mean time per step the technique saves against the baseline over the rounds, in
/// seconds (positive: consuming is faster).
fn seconds_saved(t: &PairedTiming) -> f64 {
    t.rounds
        .iter()
        .map(|r| r.baseline_s - r.technique_s)
        .sum::<f64>()
        / t.rounds.len().max(1) as f64
}

impl Analyse for InPlace {
    /// The analysis of the in-place experiment.
    fn analyse(
        &self,
        mut rows: Vec<Row<'_, InPlaceConfig>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis {
        rows.sort_by_key(|r| r.config.rows);
        let correctness = Correctness::of(points);
        let of = |case: Case, style: Style| -> Vec<&R<'_>> {
            rows.iter()
                .filter(|r| r.config.case == case && r.config.style == style)
                .collect()
        };
        let Some((norm_kept, norm_consumed)) =
            pair(&rows, Case::LayerNorm).or_else(|| pair(&rows, Case::Chain))
        else {
            return Analysis::unmeasured(correctness);
        };

        let mut findings = Vec::new();
        let mut comparisons = Vec::new();
        for case in CASES {
            if let Some((kept, consumed)) = pair(&rows, case) {
                let saved = added(kept) - added(consumed);
                findings.push(format!(
                    "{} on {} x {} f32 ({}): keeping a clone adds {} at the peak, consuming the \
                 input adds {}; the saving, {}, is {:.4} tensors' worth. Time per row, consuming \
                 against keeping a clone: {}.",
                    format::capitalise(case.name()),
                    kept.config.rows,
                    kept.config.cols,
                    format::bytes(kept.config.tensor_bytes() as f64),
                    format::bytes(added(kept)),
                    format::bytes(added(consumed)),
                    format::bytes(saved),
                    saved / kept.config.tensor_bytes() as f64,
                    find(paired, case.id())
                        .map_or_else(|| "not timed in pairs".into(), |c| c.cost_phrase()),
                ));
                // Where the peaks are bracketed, the saving lies between the least the kept
                // way can have added minus the most the consuming way can have, and the reverse.
                let upper = |r: &R<'_>| bracket::added_upper(r, PHASE, 1.0);
                let saved_bracket = upper(kept)
                    .zip(upper(consumed))
                    .map(|(uk, uc)| ((added(kept) - uc).max(0.0), uk - added(consumed)));
                let allocator = kept.allocator();
                comparisons.push(
                    Comparison::new(
                        format!(
                            "{}, {} rows: bytes saved by consuming",
                            case.name(),
                            kept.config.rows
                        ),
                        predict::added_peak_bytes(&kept.config, allocator)
                            - predict::added_peak_bytes(&consumed.config, allocator),
                        saved_bracket.map_or(saved, |(lo, _)| lo),
                        match allocator {
                            Allocator::Flex => {
                                "one tensor's elements: the buffer the first write into a shared \
                                 tensor allocates"
                            }
                            Allocator::CubeCl => {
                                "burn-cubecl: a lone op saves one tensor as on the CPU; a fused \
                                 chain or layer norm writes a new output either way, so \
                                 consuming saves nothing (see the module's rules)"
                            }
                        },
                    )
                    .bracketed(saved_bracket.map(|(_, hi)| hi)),
                );
            }
        }
        // What the time difference is: a fresh buffer's first touch, or arithmetic.
        let saved_s = |case: Case| find(paired, case.id())?.timing().map(seconds_saved);
        if let (Some(touch), Some(norm)) = (saved_s(Case::Touch), saved_s(Case::LayerNorm)) {
            findings.push(format!(
                "Where the time goes: written both ways, a single add (x + 1) differs by {} per \
                 call, which is the cost of a fresh {} buffer (allocated, and its pages touched \
                 for the first time: the system allocator maps and faults in a buffer this \
                 large on every allocation), not arithmetic, since both ways add the same \
                 values. Consuming the input saves the layer norm {} per call, {:.0}% of which \
                 that one fresh buffer accounts for; what the rest is, this measurement does not \
                 say.",
                format::seconds(touch),
                format::bytes(norm_kept.config.tensor_bytes() as f64),
                format::seconds(norm),
                touch / norm * 100.0,
            ));
        }
        findings.extend(paired.iter().map(PairedComparison::finding));
        for r in &rows {
            if r.config.rows == norm_kept.config.rows {
                comparisons.push(
                    Comparison::new(
                        format!(
                            "{}, {}, {} rows: peak above the input",
                            r.config.case.name(),
                            r.config.style.name(),
                            r.config.rows
                        ),
                        predict::added_peak_bytes(&r.config, r.allocator()),
                        added(r),
                        prediction_note(r.config.case, r.config.style, r.allocator()),
                    )
                    .bracketed(bracket::added_upper(r, PHASE, 1.0)),
                );
            }
        }

        let mut memory_series = Vec::new();
        let mut time_series = Vec::new();
        for case in CASES {
            for style in [Style::KeepClone, Style::Consume] {
                let rs = of(case, style);
                if rs.is_empty() {
                    continue;
                }
                let name = format!("{}, {}", case.name(), style.name());
                let x = |r: &R<'_>| mib(r.config.tensor_bytes() as f64);
                memory_series.push(Series::line(
                    &format!("{name} (measured)"),
                    false,
                    rs.iter().map(|r| (x(r), mib(added(r)))).collect(),
                ));
                memory_series.push(Series::line(
                    &format!("{name} (predicted)"),
                    true,
                    rs.iter()
                        .map(|r| {
                            (
                                x(r),
                                mib(predict::added_peak_bytes(&r.config, r.allocator())),
                            )
                        })
                        .collect(),
                ));
                time_series.push(Series::throughput(
                    &format!("{name} (median; bars: fastest and slowest)"),
                    rs.iter().map(|r| (x(r), r.result)),
                ));
            }
        }
        let charts = vec![
            Chart {
                id: "added-peak-vs-size".into(),
                title: "Peak memory the computation adds above its input".into(),
                x_label: "input tensor (MiB)".into(),
                y_label: "peak above the input (MiB)".into(),
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: memory_series,
            },
            Chart {
                id: "throughput-vs-size".into(),
                title: "Rows processed per second".into(),
                x_label: "input tensor (MiB)".into(),
                y_label: "throughput (rows/s)".into(),
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: time_series,
            },
        ];

        let (k, c) = (norm_kept, norm_consumed);
        Analysis {
            headline: Headline::versus(
                format!(
                    "{} of {} x {} f32: keeping a clone of the input against consuming it (peak \
                 above the input; time per row)",
                    k.config.case.name(),
                    k.config.rows,
                    k.config.cols
                ),
                Side::with_peak("peak above the input", added(k)),
                Side::with_peak("peak above the input", added(c)),
                correctness,
                worst_check(points),
            )
            .timed_by(k.config.case.id()),
            secondary_headlines: vec![],
            findings,
            comparisons,
            fits: vec![],
            charts,
            published: vec![],
        }
    }
}

fn prediction_note(case: Case, style: Style, allocator: Allocator) -> &'static str {
    if allocator == Allocator::CubeCl {
        return match (case, style) {
            (Case::Chain, _) => {
                "burn-cubecl: fusion writes the four ops in one kernel into a new buffer, beside \
                 x until it returns (written after measuring)"
            }
            (Case::LayerNorm, _) => {
                "burn-cubecl: the centring and squaring are read inside the two row reductions \
                 (one f32 per row each, mean and variance); the output is a new tensor, kept or \
                 consumed (written after measuring)"
            }
            (Case::Touch, Style::KeepClone) => "x + 1 writes a new tensor, since x is shared",
            (Case::Touch, Style::Consume) => {
                "x + 1 writes into x's buffer (burn-cubecl's can_mut(), as on the CPU)"
            }
        };
    }
    match (case, style) {
        (Case::Chain, Style::KeepClone) => {
            "the first op (x / 2) writes a new tensor since x is shared; exp, + 1 and log run in \
             place on it. The few dozen bytes over are the new tensor's handle"
        }
        (Case::Chain, Style::Consume) => "all four ops write into x's buffer",
        (Case::LayerNorm, Style::KeepClone) => {
            "x - mean needs a new buffer (x is shared), square() is x * x and always allocates, \
             plus one f32 per row for the variance while the square is alive"
        }
        (Case::LayerNorm, Style::Consume) => {
            "x - mean writes into x; square() allocates one tensor, plus one f32 per row for the \
             variance; the division runs in place"
        }
        (Case::Touch, Style::KeepClone) => "x + 1 writes a new tensor, since x is shared",
        (Case::Touch, Style::Consume) => "x + 1 writes into x's buffer",
    }
}
