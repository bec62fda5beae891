//! Cache release's conclusions: the counters at each moment, predicted beside measured, the
//! allocation's time from the pool and after a cleanup, charts and the index row.

use results::keys::cache_release::Key;
use results::keys::CommonKey;
use results::{
    paired::find, Analysis, AxisUnit, Chart, ChartPoint, Comparison, ComparisonSpec, Correctness,
    Headline, MeasuredPoint, Metric, PairedComparison, Scale, Series, Side, Text,
};

use super::CachePhase;
use super::{predict, CacheConfig, CacheRelease, Counter, Moment, Source};
use crate::technique::{Analyse, Row};

/// A measured cache-release point.
type R<'a> = Row<'a, CacheConfig>;

/// A counter at `moment`, above its reading at the start.
fn above_start(r: &R<'_>, moment: Moment, counter: Counter) -> f64 {
    r.result.metric(counter.at(moment)) - r.result.metric(counter.at(Moment::Start))
}

/// The id of the headline's paired comparison.
const HEADLINE: &str = "headline";

/// The headline's comparison at the largest size: an allocation from the cache (the
/// baseline) against one after a cleanup.
pub(super) fn comparisons(rows: &[R<'_>]) -> Vec<ComparisonSpec> {
    rows.iter()
        .filter(|r| r.config.source == Source::Cached)
        .filter_map(|c| {
            rows.iter()
                .find(|f| {
                    f.config.source == Source::AfterCleanup
                        && f.config.tensor_bytes == c.config.tensor_bytes
                })
                .map(|f| (c, f))
        })
        .max_by_key(|(c, _)| c.config.tensor_bytes)
        .map(|(c, f)| ComparisonSpec::new(HEADLINE, c.id, f.id))
        .into_iter()
        .collect()
}

impl Analyse for CacheRelease {
    /// The analysis of the cache-release experiment.
    fn analyse(
        &self,
        mut rows: Vec<Row<'_, CacheConfig>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis<Text> {
        rows.sort_by_key(|r| r.config.tensor_bytes);
        let of = |source: Source| -> Vec<&R<'_>> {
            rows.iter().filter(|r| r.config.source == source).collect()
        };
        let (cached, fresh) = (of(Source::Cached), of(Source::AfterCleanup));
        let Some(largest) = cached.last().copied() else {
            return Analysis::unmeasured(Correctness::of(points));
        };
        let largest_fresh = fresh
            .iter()
            .find(|r| r.config.tensor_bytes == largest.config.tensor_bytes)
            .copied();
        let has_cache = largest.result.metric(Metric::HasCache) > 0.0;
        let size = largest.config.tensor_bytes as f64;

        let mut findings = Vec::new();
        let mut comparisons = Vec::new();
        for r in &cached {
            let n = r.config.tensor_bytes as f64;
            comparisons.push(Comparison {
                quantity: Text::said(Key::InUseAlive).bytes("tensor", n),
                predicted_bytes: predict::in_use_alive_bytes(n),
                measured_bytes: above_start(r, Moment::Alive, Counter::InUse),
                measured_upper_bytes: None,
                note: Text::said(Key::LabelElementsX4BytesAboveThe),
            });
            comparisons.push(Comparison {
                quantity: Text::said(Key::InUseDropped).bytes("tensor", n),
                predicted_bytes: 0.0,
                measured_bytes: above_start(r, Moment::Dropped, Counter::InUse),
                measured_upper_bytes: None,
                note: Text::said(Key::LabelNothingLiveAboveTheStart),
            });
            if has_cache {
                comparisons.push(Comparison {
                    quantity: Text::said(Key::ReservedReleased).bytes("tensor", n),
                    predicted_bytes: 0.0,
                    measured_bytes: above_start(r, Moment::Released, Counter::Reserved),
                    measured_upper_bytes: None,
                    note: Text::said(Key::ReservedReleasedNote),
                });
            }
        }
        // The allocation's own peak: on the CPU, Flex's empty() zero-fills a Vec<u8> that
        // cubecl-common's Bytes::from_bytes_vec then copies into a 16-byte-aligned buffer.
        let on_host = largest.allocator().counts_host_copies();
        for r in &cached {
            let n = r.config.tensor_bytes as f64;
            let phase = r.result.phase(CachePhase::Allocate);
            comparisons.push(Comparison {
                quantity: Text::said(Key::AllocationPeak).bytes("tensor", n),
                predicted_bytes: predict::allocation_peak_bytes(n, on_host),
                measured_bytes: phase.map_or(f64::NAN, |p| p.delta_bytes() as f64),
                measured_upper_bytes: None,
                note: if on_host {
                    Text::said(Key::AllocationPeakNoteHost)
                } else {
                    Text::said(Key::AllocationPeakNotePool)
                },
            });
        }
        let reserved_dropped = above_start(largest, Moment::Dropped, Counter::Reserved);
        let reserved_released = above_start(largest, Moment::Released, Counter::Reserved);
        if has_cache {
            findings.push(
                Text::said(Key::Counters)
                    .bytes("size", size)
                    .bytes(
                        "reserved_alive",
                        above_start(largest, Moment::Alive, Counter::Reserved),
                    )
                    .bytes(
                        "in_use_dropped",
                        above_start(largest, Moment::Dropped, Counter::InUse),
                    )
                    .bytes("reserved_dropped", reserved_dropped)
                    .seconds("cleanup", largest.result.metric(Metric::CleanupS))
                    .bytes("reserved_released", reserved_released),
            );
        } else {
            findings.push(Text::said(Key::NoCache).bytes("size", size).bytes(
                "in_use_dropped",
                above_start(largest, Moment::Dropped, Counter::InUse),
            ));
        }
        if let Some(f) = largest_fresh {
            let timed = find(paired, HEADLINE).filter(|c| c.spec.technique == f.id);
            let mut t = Text::said(Key::AllocationTime)
                .bytes("size", size)
                .number("has_cache", u8::from(has_cache));
            if let Some(c) = timed {
                t = t.paired("timing", &c.spec.id);
            }
            findings.push(t);
        }
        findings.extend(
            paired
                .iter()
                .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id)),
        );

        let time_series = |rows: &[&R<'_>], name: Key| Series {
            name: name.into(),
            predicted: false,
            points: rows
                .iter()
                .map(|r| ChartPoint {
                    x: r.config.tensor_bytes as f64,
                    y: r.result.step.median_s,
                    y_low: Some(r.result.step.min_s),
                    y_high: Some(r.result.step.max_s),
                })
                .collect(),
            marked: Vec::new(),
            band: false,
        };
        let counter_series = |moment: Moment, counter: Counter, name: Key| {
            Series::line(
                name,
                false,
                cached
                    .iter()
                    .map(|r| {
                        (
                            r.config.tensor_bytes as f64,
                            r.result.metric(counter.at(moment)),
                        )
                    })
                    .collect(),
            )
        };
        let mut memory_series = vec![
            counter_series(Moment::Alive, Counter::InUse, Key::LabelInUseTensorAlive),
            counter_series(
                Moment::Dropped,
                Counter::InUse,
                Key::LabelInUseTensorDropped,
            ),
        ];
        if has_cache {
            memory_series.push(counter_series(
                Moment::Dropped,
                Counter::Reserved,
                Key::LabelReservedTensorDropped,
            ));
            memory_series.push(counter_series(
                Moment::Released,
                Counter::Reserved,
                Key::LabelReservedAfterMemoryCleanup,
            ));
        }
        let charts = vec![
            Chart {
                id: "counters-vs-size".into(),
                title: Text::said(Key::LabelInUseAndReservedAroundOne),
                x_label: Key::LabelTensorSize.into(),
                y_label: Key::LabelBytes.into(),
                x_unit: AxisUnit::Bytes,
                y_unit: AxisUnit::Bytes,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: memory_series,
            },
            Chart {
                id: "allocation-time".into(),
                title: Text::said(Key::LabelTimeOfOneAllocationMedianBars),
                x_label: Key::LabelTensorSize.into(),
                y_label: Key::LabelAllocationTime.into(),
                x_unit: AxisUnit::Bytes,
                y_unit: AxisUnit::Seconds,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: vec![
                    time_series(&cached, Key::LabelFromTheCacheMedian),
                    time_series(&fresh, Key::LabelAfterMemoryCleanupMedian),
                ],
            },
        ];

        let compared = Text::said(Key::Headline).bytes("size", size);
        let detail = Text::said(Key::NothingToCheck);
        let headline = match largest_fresh.filter(|_| has_cache) {
            Some(_) if reserved_dropped > 0.0 => Headline::versus(
                compared,
                Side::with_peak(Key::LabelBytesReservedAfterTheDrop, reserved_dropped),
                Side::with_peak(Key::LabelBytesReservedAfterTheDrop, reserved_released),
                Correctness::of(points),
                detail,
            )
            .timed_by(HEADLINE),
            // Without a cache there is nothing to release and nothing to pay for.
            _ => Headline {
                compared,
                memory_saved_bytes: has_cache.then_some(reserved_dropped - reserved_released),
                memory_saved_pct: None,
                timed_by: Some(HEADLINE.into()),
                correctness: Correctness::of(points),
                correctness_detail: detail,
                peak: Some(Key::LabelBytesReservedAfterTheDrop.into()),
                variant: None,
                fix: None,
            },
        };
        Analysis {
            fix_table: None,
            fix_checks: Vec::new(),
            headline,
            secondary_headlines: vec![],
            findings,
            comparisons,
            fits: vec![],
            charts,
            published: vec![],
        }
    }
}
