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

/// The sweep, read once: the cached and fresh allocations by size, the largest of each.
struct Sweep<'r, 'a> {
    cached: Vec<&'r R<'a>>,
    fresh: Vec<&'r R<'a>>,
    largest: &'r R<'a>,
    largest_fresh: Option<&'r R<'a>>,
    has_cache: bool,
}

impl Sweep<'_, '_> {
    fn size(&self) -> f64 {
        self.largest.config.tensor_bytes as f64
    }

    fn at(&self, moment: Moment, counter: Counter) -> f64 {
        above_start(self.largest, moment, counter)
    }
}

/// Each size's counters beside the rules: in use with the tensor alive and dropped, reserved
/// after the release, and the allocation's own peak.
fn predictions(sw: &Sweep<'_, '_>) -> Vec<Comparison<Text>> {
    let counters = sw.cached.iter().flat_map(|r| {
        let n = r.config.tensor_bytes as f64;
        let mut rows = vec![
            Comparison::new(
                Text::said(Key::InUseAlive).bytes("tensor", n),
                predict::in_use_alive_bytes(n),
                above_start(r, Moment::Alive, Counter::InUse),
                Key::LabelElementsX4BytesAboveThe,
            ),
            Comparison::new(
                Text::said(Key::InUseDropped).bytes("tensor", n),
                0.0,
                above_start(r, Moment::Dropped, Counter::InUse),
                Key::LabelNothingLiveAboveTheStart,
            ),
        ];
        if sw.has_cache {
            rows.push(Comparison::new(
                Text::said(Key::ReservedReleased).bytes("tensor", n),
                0.0,
                above_start(r, Moment::Released, Counter::Reserved),
                Key::ReservedReleasedNote,
            ));
        }
        rows
    });
    // The allocation's own peak: on the CPU, Flex's empty() zero-fills a Vec<u8> that
    // cubecl-common's Bytes::from_bytes_vec then copies into a 16-byte-aligned buffer.
    let on_host = sw.largest.allocator().counts_host_copies();
    let allocations = sw.cached.iter().map(|r| {
        let n = r.config.tensor_bytes as f64;
        let phase = r.result.phase(CachePhase::Allocate);
        Comparison::new(
            Text::said(Key::AllocationPeak).bytes("tensor", n),
            predict::allocation_peak_bytes(n, on_host),
            phase.map_or(f64::NAN, |p| p.delta_bytes() as f64),
            if on_host {
                Key::AllocationPeakNoteHost
            } else {
                Key::AllocationPeakNotePool
            },
        )
    });
    counters.chain(allocations).collect()
}

/// The counters around the largest tensor's life, and what an allocation costs in time.
fn findings(sw: &Sweep<'_, '_>, paired: &[PairedComparison]) -> Vec<Text> {
    let in_use_dropped = sw.at(Moment::Dropped, Counter::InUse);
    let counters = if sw.has_cache {
        Text::said(Key::Counters)
            .bytes("size", sw.size())
            .bytes("reserved_alive", sw.at(Moment::Alive, Counter::Reserved))
            .bytes("in_use_dropped", in_use_dropped)
            .bytes(
                "reserved_dropped",
                sw.at(Moment::Dropped, Counter::Reserved),
            )
            .seconds("cleanup", sw.largest.result.metric(Metric::CleanupS))
            .bytes(
                "reserved_released",
                sw.at(Moment::Released, Counter::Reserved),
            )
    } else {
        Text::said(Key::NoCache)
            .bytes("size", sw.size())
            .bytes("in_use_dropped", in_use_dropped)
    };
    let time = sw.largest_fresh.map(|f| {
        let t = Text::said(Key::AllocationTime)
            .bytes("size", sw.size())
            .number("has_cache", u8::from(sw.has_cache));
        match find(paired, HEADLINE).filter(|c| c.spec.technique == f.id) {
            Some(c) => t.paired("timing", &c.spec.id),
            None => t,
        }
    });
    let paired = paired
        .iter()
        .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id));
    std::iter::once(counters)
        .chain(time)
        .chain(paired)
        .collect()
}

/// In use and reserved around one tensor's life, against its size.
fn counters_chart(sw: &Sweep<'_, '_>) -> Chart<Text> {
    let line = |moment: Moment, counter: Counter, name: Key| {
        Series::line(
            name,
            false,
            sw.cached
                .iter()
                .map(|r| {
                    let x = r.config.tensor_bytes as f64;
                    (x, r.result.metric(counter.at(moment)))
                })
                .collect(),
        )
    };
    let reserved = sw.has_cache.then(|| {
        [
            line(
                Moment::Dropped,
                Counter::Reserved,
                Key::LabelReservedTensorDropped,
            ),
            line(
                Moment::Released,
                Counter::Reserved,
                Key::LabelReservedAfterMemoryCleanup,
            ),
        ]
    });
    Chart::new(
        "counters-vs-size",
        Key::LabelInUseAndReservedAroundOne,
        Key::LabelTensorSize,
        Key::LabelBytes,
    )
    .x(AxisUnit::Bytes, Scale::Log2)
    .y(AxisUnit::Bytes)
    .series([
        line(Moment::Alive, Counter::InUse, Key::LabelInUseTensorAlive),
        line(
            Moment::Dropped,
            Counter::InUse,
            Key::LabelInUseTensorDropped,
        ),
    ])
    .series(reserved.into_iter().flatten())
}

/// An allocation's time from the cache and after a release, against the size.
fn time_chart(sw: &Sweep<'_, '_>) -> Chart<Text> {
    let line = |rows: &[&R<'_>], name: Key| Series {
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
    Chart::new(
        "allocation-time",
        Key::LabelTimeOfOneAllocationMedianBars,
        Key::LabelTensorSize,
        Key::LabelAllocationTime,
    )
    .x(AxisUnit::Bytes, Scale::Log2)
    .y(AxisUnit::Seconds)
    .series([
        line(&sw.cached, Key::LabelFromTheCacheMedian),
        line(&sw.fresh, Key::LabelAfterMemoryCleanupMedian),
    ])
}

/// The index row: bytes reserved after the drop, without and with the release.
fn headline(sw: &Sweep<'_, '_>, correctness: Correctness) -> Headline<Text> {
    let compared = Text::said(Key::Headline).bytes("size", sw.size());
    let (dropped, released) = (
        sw.at(Moment::Dropped, Counter::Reserved),
        sw.at(Moment::Released, Counter::Reserved),
    );
    match sw.largest_fresh.filter(|_| sw.has_cache) {
        Some(_) if dropped > 0.0 => Headline::versus(
            compared,
            Side::with_peak(Key::LabelBytesReservedAfterTheDrop, dropped),
            Side::with_peak(Key::LabelBytesReservedAfterTheDrop, released),
            correctness,
            Key::NothingToCheck,
        )
        .timed_by(HEADLINE),
        // Without a cache there is nothing to release and nothing to pay for.
        _ => Headline {
            compared,
            memory_saved_bytes: sw.has_cache.then_some(dropped - released),
            memory_saved_pct: None,
            timed_by: Some(HEADLINE.into()),
            correctness,
            correctness_detail: Key::NothingToCheck.into(),
            peak: Some(Key::LabelBytesReservedAfterTheDrop.into()),
            variant: None,
            fix: None,
        },
    }
}

impl Analyse for CacheRelease {
    /// The analysis of the cache-release experiment.
    fn analyse(
        &self,
        mut rows: Vec<R<'_>>,
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
        let sw = Sweep {
            largest_fresh: fresh
                .iter()
                .find(|r| r.config.tensor_bytes == largest.config.tensor_bytes)
                .copied(),
            has_cache: largest.result.metric(Metric::HasCache) > 0.0,
            cached,
            fresh,
            largest,
        };
        Analysis::new(headline(&sw, Correctness::of(points)))
            .findings(findings(&sw, paired))
            .comparisons(predictions(&sw))
            .charts([counters_chart(&sw), time_chart(&sw)])
    }
}
