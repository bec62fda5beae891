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

/// One case's saving, kept against consumed: a finding and the prediction beside it.
fn case_saving(rows: &[R<'_>], case: Case) -> Option<(Text, Comparison<Text>)> {
    let (kept, consumed) = pair(rows, case)?;
    let saved = added(kept) - added(consumed);
    let finding = Text::said(Key::CaseSaving)
        .name("case", case.name())
        .count("rows", kept.config.rows)
        .count("cols", kept.config.cols)
        .bytes("tensor", kept.config.tensor_bytes() as f64)
        .bytes("kept", added(kept))
        .bytes("consumed", added(consumed))
        .bytes("saved", saved)
        .paired("timing", case.id());
    // Where the peaks are bracketed, the saving lies between the least the kept way can have
    // added minus the most the consuming way can have, and the reverse.
    let upper = |r: &R<'_>| bracket::added_upper(r, PHASE, 1.0);
    let saved_bracket = upper(kept)
        .zip(upper(consumed))
        .map(|(uk, uc)| ((added(kept) - uc).max(0.0), uk - added(consumed)));
    let allocator = kept.allocator();
    let comparison = Comparison::new(
        Text::said(Key::SavingQuantity)
            .name("case", case.name())
            .count("rows", kept.config.rows),
        predict::added_peak_bytes(&kept.config, allocator)
            - predict::added_peak_bytes(&consumed.config, allocator),
        saved_bracket.map_or(saved, |(lo, _)| lo),
        Text::said(Key::SavingNote).variant("allocator", allocator),
    )
    .bracketed(saved_bracket.map(|(_, hi)| hi));
    Some((finding, comparison))
}

/// What the time difference is: a fresh buffer's first touch, or arithmetic.
fn where_time_goes(paired: &[PairedComparison], norm_kept: &R<'_>) -> Option<Text> {
    let saved_s = |case: Case| find(paired, case.id())?.timing().map(seconds_saved);
    Some(
        Text::said(Key::WhereTimeGoes)
            .seconds("touch", saved_s(Case::Touch)?)
            .bytes("buffer", norm_kept.config.tensor_bytes() as f64)
            .seconds("norm", saved_s(Case::LayerNorm)?),
    )
}

/// Each point's added peak beside the rule's, at the headline's size.
fn peak_predictions(rows: &[R<'_>], size_rows: usize) -> Vec<Comparison<Text>> {
    rows.iter()
        .filter(|r| r.config.rows == size_rows)
        .map(|r| {
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
            .bracketed(bracket::added_upper(r, PHASE, 1.0))
        })
        .collect()
}

/// The added peak and the throughput against the tensor's size, one line per case and style.
fn charts(rows: &[R<'_>]) -> [Chart<Text>; 2] {
    let mut memory = Vec::new();
    let mut time = Vec::new();
    for case in CASES {
        for style in [Style::KeepClone, Style::Consume] {
            let rs: Vec<&R<'_>> = rows
                .iter()
                .filter(|r| r.config.case == case && r.config.style == style)
                .collect();
            if rs.is_empty() {
                continue;
            }
            let line = |key: Key| {
                Text::said(key)
                    .name("case", case.name())
                    .name("style", style.name())
            };
            let x = |r: &R<'_>| r.config.tensor_bytes() as f64;
            let predicted = |r: &R<'_>| predict::added_peak_bytes(&r.config, r.allocator());
            memory.push(Series::line(
                line(Key::SeriesMeasured),
                false,
                rs.iter().map(|r| (x(r), added(r))).collect(),
            ));
            memory.push(Series::line(
                line(Key::SeriesPredicted),
                true,
                rs.iter().map(|r| (x(r), predicted(r))).collect(),
            ));
            time.push(Series::throughput(
                line(Key::SeriesThroughput),
                rs.iter().map(|r| (x(r), r.result)),
            ));
        }
    }
    [
        Chart::new(
            "added-peak-vs-size",
            Key::LabelPeakMemoryTheComputationAddsAbove,
            Key::LabelInputTensor,
            Key::LabelPeakAboveTheInput,
        )
        .x(AxisUnit::Bytes, Scale::Log2)
        .y(AxisUnit::Bytes)
        .series(memory),
        Chart::new(
            "throughput-vs-size",
            Key::LabelRowsProcessedPerSecond,
            Key::LabelInputTensor,
            Key::LabelThroughputRowsS,
        )
        .x(AxisUnit::Bytes, Scale::Log2)
        .series(time),
    ]
}

impl Analyse for InPlace {
    /// The analysis of the in-place experiment.
    fn analyse(
        &self,
        mut rows: Vec<R<'_>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis<Text> {
        rows.sort_by_key(|r| r.config.rows);
        let correctness = Correctness::of(points);
        let Some((k, c)) = pair(&rows, Case::LayerNorm).or_else(|| pair(&rows, Case::Chain)) else {
            return Analysis::unmeasured(correctness);
        };
        let (mut findings, mut comparisons): (Vec<Text>, Vec<Comparison<Text>>) = CASES
            .into_iter()
            .filter_map(|case| case_saving(&rows, case))
            .unzip();
        findings.extend(where_time_goes(paired, k));
        findings.extend(
            paired
                .iter()
                .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id)),
        );
        comparisons.extend(peak_predictions(&rows, k.config.rows));
        let headline = Headline::versus(
            Text::said(Key::Headline)
                .name("case", k.config.case.name())
                .count("rows", k.config.rows)
                .count("cols", k.config.cols),
            Side::with_peak(Key::LabelPeakAboveTheInput, added(k)),
            Side::with_peak(Key::LabelPeakAboveTheInput, added(c)),
            correctness,
            CommonKey::WorstCheck,
        )
        .timed_by(k.config.case.id());
        Analysis::new(headline)
            .findings(findings)
            .comparisons(comparisons)
            .charts(charts(&rows))
    }
}
