//! Allocator settings' conclusions: reserved against in-use bytes under each pool setting, for
//! the growing sequence and the training step, the in-use bytes against their rule, the losses
//! compared across settings, charts and the index row.

use results::keys::allocator_settings::Key;
use results::{
    Analysis, AxisUnit, Chart, Check, Comparison, Correctness, Headline, MeasuredPoint, Metric,
    PairedComparison, PublishedFigure, Series, Side, Text, Trace,
};

use super::AllocatorMetric;
use super::{predict, AllocConfig, AllocatorSettings, Workload, KEEP};
use crate::technique::{Analyse, Row};

type R<'a> = Row<'a, AllocConfig>;

/// What the index row's peak is.
const PEAK: Key = Key::LabelBytesReservedAtTheSequenceS;

/// Relative tolerance of the losses' comparison across settings: the same kernels on the same
/// data, so identical is expected; autotune may pick another kernel in another process.
pub const TOLERANCE: f64 = 1e-5;

/// The most the pools held during a training point's phases (reserved after each).
fn step_reserved(r: &R<'_>) -> Option<f64> {
    r.result
        .phases
        .iter()
        .filter_map(|p| p.reserved_after_bytes)
        .max()
        .map(|b| b as f64)
}

/// The proof across settings: each training point's losses from the point's seed against the
/// first setting's (the device's default). `None` where fewer than two settings ran.
pub fn losses_agree(steps: &[&R<'_>]) -> Option<Check> {
    let (first, rest) = steps.split_first()?;
    if rest.is_empty() {
        return None;
    }
    // The losses as recorded (f64 in the trace), back in the f32 the steps computed them in.
    let losses = |r: &R<'_>| -> Vec<f32> {
        r.result
            .trace(Trace::LossByStep)
            .iter()
            .map(|&l| l as f32)
            .collect()
    };
    let reference = losses(first);
    rest.iter()
        .map(|r| {
            let candidate = losses(r);
            Check::compare("losses-across-pools", &reference, &candidate, TOLERANCE)
        })
        .max_by(|a, b| a.max_rel_diff.total_cmp(&b.max_rel_diff))
}

/// The set, read once: the growing sequence under each setting, the training steps, and the
/// sequence's shape.
struct Set<'r, 'a> {
    growing: Vec<&'r R<'a>>,
    steps: Vec<&'r R<'a>>,
    first: &'r R<'a>,
    base_bytes: u64,
    count: usize,
    has_pool: bool,
}

impl<'r, 'a> Set<'r, 'a> {
    fn new(rows: &'r [R<'a>]) -> Option<Self> {
        let of = |f: fn(&Workload) -> bool| -> Vec<&'r R<'a>> {
            rows.iter().filter(|r| f(&r.config.workload)).collect()
        };
        let growing = of(|w| matches!(w, Workload::GrowingTensors { .. }));
        let first = *growing.first()?;
        let Workload::GrowingTensors { base_bytes, count } = first.config.workload else {
            return None;
        };
        Some(Self {
            steps: of(|w| matches!(w, Workload::TrainingStep { .. })),
            has_pool: first.result.metric(Metric::HasCache) > 0.0,
            growing,
            first,
            base_bytes,
            count,
        })
    }

    fn n(&self) -> u64 {
        self.count as u64
    }

    fn reserved_peaks(&self) -> impl Iterator<Item = f64> + '_ {
        self.growing
            .iter()
            .map(|r| r.result.metric(AllocatorMetric::ReservedPeakBytes))
    }
}

/// One setting's sequence: what it held and what its pool reserved.
fn sequence_finding(set: &Set<'_, '_>, r: &R<'_>) -> Text {
    let held = r.result.metric(Metric::HeldBytes);
    if !set.has_pool {
        return Text::said(Key::NoPool)
            .bytes("held", held)
            .bytes("predicted", predict::in_use_after(set.n(), set.base_bytes));
    }
    let m = |k: AllocatorMetric| r.result.metric(k);
    Text::said(Key::Pooled)
        .name("setting", r.config.setting())
        .bytes("held", held)
        .bytes("peak", m(AllocatorMetric::ReservedPeakBytes))
        .bytes("dropped", m(AllocatorMetric::ReservedDroppedBytes))
        .seconds("cleanup", r.result.metric(Metric::CleanupS))
        .bytes("released", m(AllocatorMetric::ReservedReleasedBytes))
}

/// One setting's training step: its peak in use and what its pool reserved.
fn step_finding(r: &R<'_>) -> Text {
    let peak = r.peak_above_process();
    match step_reserved(r) {
        Some(reserved) => {
            let t = Text::said(Key::StepPooled)
                .name("setting", r.config.setting())
                .bytes("peak", peak)
                .bytes("reserved", reserved);
            match r.peak_upper() {
                Some(u) => t.bytes("upper", u - r.result.metric(Metric::ProcessBaselineBytes)),
                None => t,
            }
        }
        None => Text::said(Key::StepNoPool).bytes("peak", peak),
    }
}

/// The sequence, each setting's readings, the steps and the losses' proof.
fn findings(set: &Set<'_, '_>, proof: Option<&Check>) -> Vec<Text> {
    let sequence = Text::said(Key::Sequence)
        .count("count", set.count)
        .bytes("first", set.base_bytes as f64)
        .bytes("last", (set.n() * set.base_bytes) as f64)
        .count("keep", KEEP)
        .bytes("in_use", predict::in_use_after(set.n(), set.base_bytes))
        .bytes(
            "allocated",
            predict::never_reused_after(set.n(), set.base_bytes),
        );
    let proof = proof.map(|check| {
        Text::said(Key::Proof)
            .count("steps", super::PROOF_STEPS)
            .number("max_rel_diff", check.max_rel_diff)
            .number("tolerance", TOLERANCE)
            .number("passed", u8::from(check.passed))
    });
    std::iter::once(sequence)
        .chain(set.growing.iter().map(|r| sequence_finding(set, r)))
        .chain(set.steps.iter().map(|r| step_finding(r)))
        .chain(proof)
        .chain([Text::said(Key::CustomPools), Text::said(Key::NotTimed)])
        .collect()
}

/// Each setting's bytes in use at the sequence's end beside the rule.
fn predictions(set: &Set<'_, '_>) -> Vec<Comparison<Text>> {
    set.growing
        .iter()
        .map(|r| {
            Comparison::new(
                Text::said(Key::InUseQuantity).name("setting", r.config.setting()),
                predict::in_use_after(set.n(), set.base_bytes),
                r.result.metric(Metric::HeldBytes),
                Text::said(Key::InUseNote)
                    .count("keep", KEEP)
                    .bytes("step", set.base_bytes as f64),
            )
        })
        .collect()
}

/// In use and reserved after each allocation of the sequence.
fn sequence_chart(set: &Set<'_, '_>) -> Chart<Text> {
    let by_allocation = |values: &[f64]| -> Vec<(f64, f64)> {
        values
            .iter()
            .enumerate()
            .map(|(i, &b)| ((i + 1) as f64, b))
            .collect()
    };
    let rule = |f: fn(u64, u64) -> f64| -> Vec<(f64, f64)> {
        (1..=set.n())
            .map(|i| (i as f64, f(i, set.base_bytes)))
            .collect()
    };
    let pools = set.has_pool.then(|| {
        let reserved = set.growing.iter().map(|r| {
            Series::line(
                Text::said(Key::ReservedSeries).name("setting", r.config.setting()),
                false,
                by_allocation(r.result.trace(Trace::ReservedBytesByAllocation)),
            )
        });
        reserved.chain([Series::line(
            Key::LabelEveryTensorSoFarNoPage,
            true,
            rule(predict::never_reused_after),
        )])
    });
    Chart::new(
        "growing-tensors",
        Key::LabelTensorsOfGrowingSizeInUse,
        Key::LabelAllocation,
        Key::LabelBytes,
    )
    .y(AxisUnit::Bytes)
    .series([
        Series::line(
            Key::LabelInUseMeasured,
            false,
            by_allocation(set.first.result.trace(Trace::InUseBytesByAllocation)),
        ),
        Series::line(Key::LabelInUsePredicted, true, rule(predict::in_use_after)),
    ])
    .series(pools.into_iter().flatten())
}

/// A training step under each setting: its peak in use and the most reserved after a phase.
fn steps_chart(set: &Set<'_, '_>) -> Option<Chart<Text>> {
    if !set.has_pool || set.steps.is_empty() {
        return None;
    }
    let bar = |name: Key, f: &dyn Fn(&R<'_>) -> f64| {
        Series::line(
            name,
            false,
            set.steps
                .iter()
                .enumerate()
                .map(|(i, r)| ((i + 1) as f64, f(r)))
                .collect(),
        )
    };
    Some(
        Chart::new(
            "training-step",
            Key::LabelATrainingStepUnderEachSetting,
            Key::LabelPoolSetting,
            Key::LabelBytes,
        )
        .y(AxisUnit::Bytes)
        .categories(
            set.steps
                .iter()
                .map(|r| r.config.setting().to_string())
                .collect(),
        )
        .series([
            bar(Key::LabelPeakInUse, &|r| r.peak()),
            bar(Key::LabelMostReservedAfterAPhase, &|r| {
                step_reserved(r).unwrap_or(f64::NAN)
            }),
        ]),
    )
}

/// The index row: the default against the setting that reserved least at the sequence's
/// peak, where there is a pool and more than one setting.
fn headline(set: &Set<'_, '_>, correctness: Correctness, proof: Option<&Check>) -> Headline<Text> {
    let first = set.first;
    let detail = match proof {
        Some(c) => Text::said(Key::ProofCheck)
            .count("steps", super::PROOF_STEPS)
            .name("setting", first.config.setting())
            .number("max_abs_diff", c.max_abs_diff)
            .number("max_rel_diff", c.max_rel_diff)
            .number("tolerance", c.tolerance)
            .number("passed", u8::from(c.passed)),
        None => Text::said(Key::NoProof),
    };
    let reserved = |r: &R<'_>| r.result.metric(AllocatorMetric::ReservedPeakBytes);
    let least = set
        .growing
        .iter()
        .skip(1)
        .min_by(|a, b| reserved(a).total_cmp(&reserved(b)))
        .filter(|_| set.has_pool);
    match least {
        Some(best) => Headline::versus(
            Text::said(Key::Headline)
                .name("default", first.config.setting())
                .name("best", best.config.setting()),
            Side::with_peak(PEAK, reserved(first)),
            Side::with_peak(PEAK, reserved(best)),
            correctness,
            detail,
        )
        .variant(best.config.setting()),
        None => Headline {
            compared: Text::said(Key::HeadlineAlone)
                .name("default", first.config.setting())
                .number("has_pool", u8::from(set.has_pool)),
            memory_saved_bytes: None,
            memory_saved_pct: None,
            timed_by: None,
            correctness,
            correctness_detail: detail,
            peak: Some(PEAK.into()),
            variant: None,
            fix: None,
        },
    }
}

/// The expandable-segments figure beside ours.
fn published(set: &Set<'_, '_>) -> PublishedFigure<Text> {
    let ours = if set.has_pool {
        Text::said(Key::PublishedOurs)
            .bytes("least", set.reserved_peaks().fold(f64::INFINITY, f64::min))
            .bytes(
                "most",
                set.reserved_peaks().fold(f64::NEG_INFINITY, f64::max),
            )
            .bytes("in_use", set.first.result.metric(Metric::HeldBytes))
    } else {
        Text::said(Key::PublishedOursNoPool)
    };
    PublishedFigure {
        source: Text::said(Key::PublishedSource),
        claim: Text::said(Key::PublishedClaim),
        ours,
    }
}

impl Analyse for AllocatorSettings {
    fn analyse(
        &self,
        rows: Vec<R<'_>>,
        points: &[MeasuredPoint],
        _paired: &[PairedComparison],
    ) -> Analysis<Text> {
        let Some(set) = Set::new(&rows) else {
            return Analysis::unmeasured(Correctness::of(points));
        };
        let proof = losses_agree(&set.steps);
        let correctness = match (&proof, Correctness::of(points)) {
            (Some(check), Correctness::Passed) if !check.passed => Correctness::Failed,
            (_, c) => c,
        };
        Analysis::new(headline(&set, correctness, proof.as_ref()))
            .findings(findings(&set, proof.as_ref()))
            .comparisons(predictions(&set))
            .charts(std::iter::once(sequence_chart(&set)).chain(steps_chart(&set)))
            .published([published(&set)])
    }
}
