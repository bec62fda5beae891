//! The in-place experiment's conclusions: the bytes each way adds, predicted beside measured,
//! charts and the index row.

use results::keys::in_place::Key;
use results::keys::CommonKey;
use results::{
    paired::find, Analysis, AxisUnit, Chart, Comparison, ComparisonSpec, Correctness, Headline,
    MeasuredPoint, PairedComparison, PairedTiming, Scale, Series, Side, Text,
};

use super::InPlaceMetric;
use super::{predict, Case, InPlace, InPlaceConfig, Style, CASES, PHASE};
use crate::bracket;
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
    ) -> Analysis<Text> {
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

        let mut findings: Vec<Text> = Vec::new();
        let mut comparisons = Vec::new();
        for case in CASES {
            if let Some((kept, consumed)) = pair(&rows, case) {
                let saved = added(kept) - added(consumed);
                findings.push(
                    Text::said(Key::CaseSaving)
                        .name("case", case.name())
                        .count("rows", kept.config.rows)
                        .count("cols", kept.config.cols)
                        .bytes("tensor", kept.config.tensor_bytes() as f64)
                        .bytes("kept", added(kept))
                        .bytes("consumed", added(consumed))
                        .bytes("saved", saved)
                        .paired("timing", case.id()),
                );
                // Where the peaks are bracketed, the saving lies between the least the kept
                // way can have added minus the most the consuming way can have, and the reverse.
                let upper = |r: &R<'_>| bracket::added_upper(r, PHASE, 1.0);
                let saved_bracket = upper(kept)
                    .zip(upper(consumed))
                    .map(|(uk, uc)| ((added(kept) - uc).max(0.0), uk - added(consumed)));
                let allocator = kept.allocator();
                comparisons.push(
                    Comparison::new(
                        Text::said(Key::SavingQuantity)
                            .name("case", case.name())
                            .count("rows", kept.config.rows),
                        predict::added_peak_bytes(&kept.config, allocator)
                            - predict::added_peak_bytes(&consumed.config, allocator),
                        saved_bracket.map_or(saved, |(lo, _)| lo),
                        Text::said(Key::SavingNote).variant("allocator", allocator),
                    )
                    .bracketed(saved_bracket.map(|(_, hi)| hi)),
                );
            }
        }
        // What the time difference is: a fresh buffer's first touch, or arithmetic.
        let saved_s = |case: Case| find(paired, case.id())?.timing().map(seconds_saved);
        if let (Some(touch), Some(norm)) = (saved_s(Case::Touch), saved_s(Case::LayerNorm)) {
            findings.push(
                Text::said(Key::WhereTimeGoes)
                    .seconds("touch", touch)
                    .bytes("buffer", norm_kept.config.tensor_bytes() as f64)
                    .seconds("norm", norm),
            );
        }
        findings.extend(
            paired
                .iter()
                .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id)),
        );
        for r in &rows {
            if r.config.rows == norm_kept.config.rows {
                comparisons.push(
                    Comparison::new(
                        Text::said(Key::PeakQuantity)
                            .name("case", r.config.case.name())
                            .name("style", r.config.style.name())
                            .count("rows", r.config.rows),
                        predict::added_peak_bytes(&r.config, r.allocator()),
                        added(r),
                        Text::said(Key::PeakNote)
                            .name("case", r.config.case.id())
                            .name("style", r.config.style.id())
                            .variant("allocator", r.allocator()),
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
                let line = |key: Key| {
                    Text::said(key)
                        .name("case", case.name())
                        .name("style", style.name())
                };
                let x = |r: &R<'_>| r.config.tensor_bytes() as f64;
                memory_series.push(Series::line(
                    line(Key::SeriesMeasured),
                    false,
                    rs.iter().map(|r| (x(r), added(r))).collect(),
                ));
                memory_series.push(Series::line(
                    line(Key::SeriesPredicted),
                    true,
                    rs.iter()
                        .map(|r| (x(r), predict::added_peak_bytes(&r.config, r.allocator())))
                        .collect(),
                ));
                time_series.push(Series::throughput(
                    line(Key::SeriesThroughput),
                    rs.iter().map(|r| (x(r), r.result)),
                ));
            }
        }
        let charts = vec![
            Chart {
                id: "added-peak-vs-size".into(),
                title: Text::said(Key::LabelPeakMemoryTheComputationAddsAbove),
                x_label: Key::LabelInputTensor.into(),
                y_label: Key::LabelPeakAboveTheInput.into(),
                x_unit: AxisUnit::Bytes,
                y_unit: AxisUnit::Bytes,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: memory_series,
            },
            Chart {
                id: "throughput-vs-size".into(),
                title: Key::LabelRowsProcessedPerSecond.into(),
                x_label: Key::LabelInputTensor.into(),
                y_label: Key::LabelThroughputRowsS.into(),
                x_unit: AxisUnit::Bytes,
                y_unit: AxisUnit::Given,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: time_series,
            },
        ];

        let (k, c) = (norm_kept, norm_consumed);
        Analysis {
            fix_table: None,
            fix_checks: Vec::new(),
            headline: Headline::versus(
                Text::said(Key::Headline)
                    .name("case", k.config.case.name())
                    .count("rows", k.config.rows)
                    .count("cols", k.config.cols),
                Side::with_peak(Key::LabelPeakAboveTheInput, added(k)),
                Side::with_peak(Key::LabelPeakAboveTheInput, added(c)),
                correctness,
                Text::said(CommonKey::WorstCheck),
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
