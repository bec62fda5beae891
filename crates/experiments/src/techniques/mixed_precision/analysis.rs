//! Mixed precision's conclusions: loss curves and their drift from f32's, zero gradients with
//! and without the loss scale, memory by component predicted beside measured, throughput,
//! charts, published figures, the index rows and the checks that judge mixed bf16 and bf16
//! storage wherever the guide ranks them.

use results::keys::mixed_precision::Key;
use results::keys::CommonKey;
use results::{
    Analysis, AxisUnit, Chart, Check, Comparison, ComparisonSpec, Correctness, Fix, FixCheck,
    FloatStorage, Headline, MeasuredPoint, Metric, PairedComparison, Phase, PublishedFigure,
    Series, Side, TechniqueId, Text, Trace,
};

use super::MixedMetric;
use super::{predict, MixedConfig, MixedPrecision, Precision, INIT_SEED, PRECISIONS};
use crate::bracket;
use crate::harness::models::{MarkovChain, TransformerShape, SUCCESSORS};
use crate::technique::{Analyse, Row};
use crate::workloads::{self, HasModel};

/// A measured mixed-precision point.
type R<'a> = Row<'a, MixedConfig>;

/// The loss after each training step.
fn losses<'a>(r: &R<'a>) -> &'a [f64] {
    r.result.trace(Trace::LossByStep)
}

/// A run's loss against the step, named by its precision.
fn loss_curve(r: &R<'_>) -> Series<Text> {
    Series::line(
        Text::named(r.config.precision.name()),
        false,
        losses(r)
            .iter()
            .enumerate()
            .map(|(i, &l)| ((i + 1) as f64, l))
            .collect(),
    )
}

/// The largest difference between two loss curves over the run, relative to the reference's
/// largest loss (its initial one, for a run that learns).
pub fn drift(reference: &[f64], candidate: &[f64]) -> f64 {
    drift_check(reference, candidate, f64::INFINITY).max_rel_diff
}

/// A precision's loss curve against f32's, as a check: its [`drift`] held to `tolerance` (the
/// drift between two f32 runs from different initial weights).
pub fn drift_check(reference: &[f64], candidate: &[f64], tolerance: f64) -> Check {
    let as_f32 = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<_>>();
    Check::compare(
        "loss-drift",
        &as_f32(reference),
        &as_f32(candidate),
        tolerance,
    )
}

/// How far f32's loss curve drifts from itself when only the initial weights change: the drift
/// a precision is held to. None without that second f32 run (a set interrupted before it):
/// there is then nothing to judge a drift by, so no drift check is made and the verdict says
/// "unknown" rather than "failed".
fn yardstick_tolerance(reference: &[f64], yardstick: Option<&R<'_>>) -> Option<f64> {
    yardstick.map(|y| drift(reference, losses(y)))
}

/// The id of the index row's comparison: f32 against mixed precision.
const MIXED: &str = "mixed";
/// The id of the second row's: f32 against 16-bit storage.
const STORAGE: &str = "16-bit-storage";

/// The ranked fix a precision is, where it is one.
fn ranked(p: Precision) -> Option<Fix> {
    match p {
        Precision::MixedBf16 => Some(Fix::MixedBf16),
        Precision::Bf16 => Some(Fix::Bf16Storage),
        _ => None,
    }
}

/// The precisions of the two index rows: mixed bf16 (mixed f16 on a device without bf16) and
/// bf16 storage (f16 storage without bf16), where measured.
fn row_precisions(rows: &[R<'_>]) -> (Option<Precision>, Option<Precision>) {
    let has = |p: Precision| {
        rows.iter()
            .any(|r| r.config.precision == p && r.config.seeds == 0)
    };
    let first = |ps: [Precision; 2]| ps.into_iter().find(|&p| has(p));
    (
        first([Precision::MixedBf16, Precision::MixedF16]),
        first([Precision::Bf16, Precision::F16]),
    )
}

/// The main run of precision `p` (initial weights [`INIT_SEED`]).
fn main_row<'r, 'a>(rows: &'r [R<'a>], p: Precision) -> Option<&'r R<'a>> {
    rows.iter()
        .find(|r| r.config.precision == p && r.config.init_seed == INIT_SEED && r.config.seeds == 0)
}

/// The two index rows' comparisons: f32 against mixed precision (one process: both store
/// f32) and f32 against 16-bit storage (alternating processes).
pub(super) fn comparisons(rows: &[R<'_>]) -> Vec<ComparisonSpec> {
    let rows = workloads::mlp_rows(rows);
    let rows = &rows;
    let Some(f32_row) = main_row(rows, Precision::F32) else {
        return Vec::new();
    };
    let (mixed, storage) = row_precisions(rows);
    [(MIXED, mixed), (STORAGE, storage)]
        .into_iter()
        .filter_map(|(id, p)| {
            let r = main_row(rows, p?)?;
            Some(ComparisonSpec::new(id, f32_row.id, r.id))
        })
        .collect()
}

/// The MLP's runs, read once: the main run per precision, f32's curve, the yardstick's drift,
/// each precision's drift check and the seed study's check.
struct Runs<'r, 'a> {
    rows: &'r [R<'a>],
    f32_row: &'r R<'a>,
    reference: &'a [f64],
    yardstick: Option<&'r R<'a>>,
    tolerance: Option<f64>,
    drifts: Vec<(Precision, Check)>,
    seed: Option<(&'r R<'a>, &'a Check)>,
}

impl<'r, 'a> Runs<'r, 'a> {
    fn new(rows: &'r [R<'a>], yardstick: &'r [R<'a>], seed_study: &'r [R<'a>]) -> Option<Self> {
        let f32_row = rows.iter().find(|r| r.config.precision == Precision::F32)?;
        let reference = losses(f32_row);
        let yardstick = yardstick.first();
        let tolerance = yardstick_tolerance(reference, yardstick);
        let drifts = rows
            .iter()
            .filter(|r| r.config.precision != Precision::F32)
            .filter_map(|r| {
                let check = drift_check(reference, losses(r), tolerance?);
                Some((r.config.precision, check))
            })
            .collect();
        let seed = seed_study
            .first()
            .and_then(|r| r.result.checks.first().map(|c| (r, c)));
        Some(Self {
            rows,
            f32_row,
            reference,
            yardstick,
            tolerance,
            drifts,
            seed,
        })
    }

    fn find(&self, p: Precision) -> Option<&'r R<'a>> {
        self.rows.iter().find(|r| r.config.precision == p)
    }

    fn drift(&self, p: Precision) -> Option<&Check> {
        self.drifts.iter().find(|(q, _)| *q == p).map(|(_, c)| c)
    }
}

/// f32's own curve, and the yardstick it sets.
fn learned(runs: &Runs<'_, '_>) -> Option<Text> {
    let (first, last) = (runs.reference.first()?, runs.reference.last()?);
    let mut t = Text::said(Key::Learned)
        .number("first", *first)
        .number("last", *last)
        .count("steps", runs.reference.len());
    if let Some(tolerance) = runs.tolerance {
        t = t.number("tolerance", tolerance);
    }
    if let Some(l) = runs.yardstick.and_then(|y| losses(y).last()) {
        t = t.number("yardstick_last", *l);
    }
    Some(t)
}

/// One precision's run: its peak, final loss, drift and zero gradients.
fn precision_finding(runs: &Runs<'_, '_>, r: &R<'_>) -> Text {
    let p = r.config.precision;
    let m = |metric: MixedMetric| r.result.metric(metric);
    let mut t = Text::said(Key::Precision)
        .name("precision", p.name())
        .bytes("peak", r.peak())
        .number("final", losses(r).last().copied().unwrap_or(f64::NAN))
        .number("elements", m(MixedMetric::GradElements))
        .number(
            "zero_initial",
            m(MixedMetric::ZeroGradElementsUnscaledInitial),
        )
        .number("zero_final", m(MixedMetric::ZeroGradElementsUnscaledFinal));
    if let Some(c) = runs.drift(p) {
        t = t
            .number("drift_abs", c.max_abs_diff)
            .number("drift_rel", c.max_rel_diff)
            .number("drift_passed", u8::from(c.passed));
    }
    if p.loss_scaled() {
        t = t
            .number(
                "scaled_zero_initial",
                m(MixedMetric::ZeroGradElementsScaledInitial),
            )
            .number("scale_initial", m(MixedMetric::FiniteLossScaleInitial))
            .number(
                "scaled_zero_final",
                m(MixedMetric::ZeroGradElementsScaledFinal),
            )
            .number("scale_final", m(MixedMetric::FiniteLossScaleFinal))
            .number("skipped", m(MixedMetric::SkippedSteps))
            .count("steps", losses(r).len());
    }
    t
}

/// What the loss scale keeps from flushing to zero, with f32 master weights and without.
fn loss_scale_finding(runs: &Runs<'_, '_>) -> Option<Text> {
    let (mixed, pure) = (runs.find(Precision::MixedF16)?, runs.find(Precision::F16)?);
    let zeros = |r: &R<'_>, metric: MixedMetric| r.result.metric(metric);
    Some(
        Text::said(Key::LossScale)
            .number(
                "without",
                zeros(mixed, MixedMetric::ZeroGradElementsUnscaledInitial),
            )
            .number(
                "with",
                zeros(mixed, MixedMetric::ZeroGradElementsScaledInitial),
            )
            .number(
                "pure_without",
                zeros(pure, MixedMetric::ZeroGradElementsUnscaledFinal),
            )
            .number(
                "pure_with",
                zeros(pure, MixedMetric::ZeroGradElementsScaledFinal),
            )
            .number(
                "f32",
                zeros(runs.f32_row, MixedMetric::ZeroGradElementsUnscaledInitial),
            ),
    )
}

/// Mixed bf16's activations and peak against f32's, with the weight copies it adds.
fn mixed_finding(runs: &Runs<'_, '_>) -> Option<Text> {
    let mixed = runs.find(Precision::MixedBf16)?;
    let act = |r: &R<'_>| r.result.metric(Metric::ActivationBytes);
    let copies = mixed
        .config
        .shape
        .mlp()
        .map_or(f64::NAN, |s| ((s.depth - 1) * s.width.pow(2)) as f64 * 2.0);
    Some(
        Text::said(Key::Mixed)
            .count("batch", mixed.config.batch)
            .bytes("f32_act", act(runs.f32_row))
            .bytes("mixed_act", act(mixed))
            .bytes("f32_peak", runs.f32_row.peak())
            .bytes("mixed_peak", mixed.peak())
            .bytes("copies", copies),
    )
}

/// What 16 bits cost in time here, timed in pairs.
fn time_finding(runs: &Runs<'_, '_>) -> Option<Text> {
    let b = runs
        .find(Precision::Bf16)
        .or_else(|| runs.find(Precision::F16))?;
    let mixed = row_precisions(runs.rows)
        .0
        .map_or("mixed precision", Precision::name);
    Some(
        Text::said(Key::Time)
            .name("storage", b.config.precision.name())
            .paired("storage_timing", STORAGE)
            .name("mixed", mixed)
            .paired("mixed_timing", MIXED),
    )
}

/// The seed study's final losses, paired by seed.
fn seed_finding(runs: &Runs<'_, '_>) -> Option<Text> {
    let (r, c) = runs.seed?;
    let losses = |values: &[f64]| {
        values
            .iter()
            .map(|&v| Text::said(Key::Loss).number("value", v))
            .collect()
    };
    Some(
        Text::said(Key::SeedStudy)
            .count("runs", r.result.trace(Trace::SeedReferenceFinalLoss).len())
            .count("last", super::SEED_STUDY_LAST_LOSSES)
            .list("f32", losses(r.result.trace(Trace::SeedReferenceFinalLoss)))
            .name("precision", r.config.precision.name())
            .list(
                "candidate",
                losses(r.result.trace(Trace::SeedCandidateFinalLoss)),
            )
            .number("difference", c.max_abs_diff)
            .number("spread", c.max_abs_diff / c.max_rel_diff)
            .number("passed", u8::from(c.passed)),
    )
}

/// The findings of the MLP's runs, in the page's order.
fn findings(runs: &Runs<'_, '_>, paired: &[PairedComparison]) -> Vec<Text> {
    let mut findings: Vec<Text> = learned(runs).into_iter().collect();
    findings.extend(runs.rows.iter().map(|r| precision_finding(runs, r)));
    findings.extend(loss_scale_finding(runs));
    findings.extend(mixed_finding(runs));
    findings.extend(time_finding(runs));
    findings.extend(
        paired
            .iter()
            .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id)),
    );
    findings.extend(seed_finding(runs));
    findings
}

/// One run's weights, Adam state, gradients and forward activations, predicted beside
/// measured.
fn component_comparisons(r: &R<'_>) -> Vec<Comparison<Text>> {
    let p = r.config.precision;
    let Some(shape) = r.config.shape.mlp() else {
        return Vec::new();
    };
    let e = p.storage().bytes() as f64;
    let params = shape.num_params() as f64;
    let via_f32 = r.allocator().bf16_matmul_via_f32();
    let forward = predict::forward_bytes(p, shape, r.config.batch, via_f32) as f64;
    [
        (
            Key::LabelWeights,
            predict::weight_bytes(params, p.storage()),
            Metric::ParamBytes,
            Key::LabelParametersXBytesPerStoredValue,
        ),
        (
            Key::LabelAdamState,
            2.0 * params * e,
            Metric::OptimizerStateBytes,
            Key::LabelTwoMomentsPerParameterStoredLike,
        ),
        (
            Key::LabelGradients,
            params * e,
            Metric::GradBytes,
            Key::LabelOneGradientPerParameterInThe,
        ),
        (
            Key::LabelForwardActivations,
            forward,
            Metric::ActivationBytes,
            forward_note(p, via_f32),
        ),
    ]
    .into_iter()
    .map(|(quantity, predicted, metric, note)| {
        // The forward activations are the forward phase's peak above its start: bracketed
        // on a device.
        let upper = (metric == Metric::ActivationBytes)
            .then(|| bracket::added_upper(r, Phase::Forward, 1.0))
            .flatten();
        Comparison::new(
            Text::said(Key::ComponentQuantity)
                .name("precision", p.name())
                .text("component", quantity),
            predicted,
            r.result.metric(metric),
            note,
        )
        .bracketed(upper)
    })
    .collect()
}

/// A metric of every precision measured, as a line over the precisions' categories.
fn by_precision(runs: &Runs<'_, '_>, name: Text, f: &dyn Fn(&R<'_>) -> f64) -> Series<Text> {
    Series::line(
        name,
        false,
        PRECISIONS
            .iter()
            .enumerate()
            .filter_map(|(i, &p)| runs.find(p).map(|r| ((i + 1) as f64, f(r))))
            .collect(),
    )
}

fn categories() -> Vec<String> {
    PRECISIONS.iter().map(|p| p.id().to_string()).collect()
}

/// The step's peak and its components, per precision.
fn memory_chart(runs: &Runs<'_, '_>) -> Chart<Text> {
    let metric = |m: Metric| move |r: &R<'_>| r.result.metric(m);
    Chart::new(
        "memory-by-component",
        Key::LabelMemoryByComponentAndPrecision,
        Key::LabelPrecision,
        Key::LabelBytes,
    )
    .y(AxisUnit::Bytes)
    .categories(categories())
    .series([
        by_precision(runs, CommonKey::StepPeak.into(), &|r| r.peak()),
        by_precision(runs, Key::LabelWeights.into(), &metric(Metric::ParamBytes)),
        by_precision(
            runs,
            Key::LabelAdamState.into(),
            &metric(Metric::OptimizerStateBytes),
        ),
        by_precision(runs, Key::LabelGradients.into(), &metric(Metric::GradBytes)),
        by_precision(
            runs,
            Key::LabelForwardActivations.into(),
            &metric(Metric::ActivationBytes),
        ),
    ])
}

/// Throughput per precision, with the fastest and slowest steps as bars.
fn throughput_chart(runs: &Runs<'_, '_>) -> Chart<Text> {
    Chart::new(
        "throughput-by-precision",
        Key::LabelTrainingThroughputByPrecision,
        Key::LabelPrecision,
        Key::LabelThroughputSamplesS,
    )
    .categories(categories())
    .series([Series::throughput(
        Text::said(Key::LabelMedianBarsFastestAndSlowestStep),
        PRECISIONS
            .iter()
            .enumerate()
            .filter_map(|(i, &p)| runs.find(p).map(|r| ((i + 1) as f64, r.result))),
    )])
}

/// The loss curves, and the dynamic loss scale where one ran.
fn loss_charts(runs: &Runs<'_, '_>) -> [Chart<Text>; 2] {
    let scales = runs.rows.iter().filter_map(|r| {
        let trace = r.result.traces.get(&Trace::LossScaleByStep)?;
        Some(Series::line(
            Text::named(r.config.precision.name()),
            false,
            trace
                .iter()
                .enumerate()
                .map(|(i, &s)| ((i + 1) as f64, s.log2()))
                .collect(),
        ))
    });
    [
        Chart::new(
            "loss-by-step",
            Key::LabelLossOverTheTrainingRun,
            Key::LabelStep,
            Key::LabelMSELoss,
        )
        .series(runs.rows.iter().map(loss_curve)),
        Chart::new(
            "loss-scale-by-step",
            Key::LabelDynamicLossScale,
            Key::LabelStep,
            Key::LabelLog2OfTheLossScale,
        )
        .series(scales),
    ]
}

/// The charts of the MLP's runs, and the memory timeline's findings.
fn charts(runs: &Runs<'_, '_>) -> (Vec<Chart<Text>>, Vec<Text>) {
    let mut charts = vec![memory_chart(runs), throughput_chart(runs)];
    charts.extend(loss_charts(runs));
    let (mixed, storage) = row_precisions(runs.rows);
    let timeline_rows: Vec<&R<'_>> = std::iter::once(runs.f32_row)
        .chain(
            [mixed, storage]
                .into_iter()
                .flatten()
                .filter_map(|p| runs.find(p)),
        )
        .collect();
    match workloads::timeline_chart(
        "memory-timeline",
        Text::said(Key::LabelMemoryThroughOneTrainingStepIn),
        &timeline_rows,
    ) {
        Some((chart, lines)) => {
            charts.insert(1, chart);
            (charts, lines)
        }
        None => (charts, Vec::new()),
    }
}

/// The published figures beside ours.
fn published(runs: &Runs<'_, '_>) -> Vec<PublishedFigure<Text>> {
    let act = |r: &R<'_>| r.result.metric(Metric::ActivationBytes);
    let hf = match runs.find(Precision::MixedF16) {
        Some(m) => Text::said(Key::HfOurs)
            .paired("timing", MIXED)
            .bytes("f32_peak", runs.f32_row.peak())
            .bytes("mixed_peak", m.peak()),
        None => Text::from(Key::LabelNotMeasured),
    };
    let micikevicius = match runs.find(Precision::MixedBf16) {
        Some(m) => Text::said(Key::MicikeviciusOurs)
            .bytes("f32", act(runs.f32_row))
            .bytes("mixed", act(m)),
        None => Text::from(Key::LabelNotMeasured),
    };
    vec![
        PublishedFigure {
            source: Text::said(Key::HfSource),
            claim: Text::said(Key::HfClaim),
            ours: hf,
        },
        PublishedFigure {
            source: Text::said(Key::MicikeviciusSource),
            claim: Text::said(Key::MicikeviciusClaim),
            ours: micikevicius,
        },
    ]
}

/// A precision's checks: its drift against f32's, and for the index row's precision the seed
/// study.
fn checks_of<'c>(runs: &'c Runs<'_, '_>, p: Precision) -> Vec<&'c Check> {
    let seed = runs
        .seed
        .filter(|(r, _)| r.config.precision == p)
        .map(|(_, c)| c);
    runs.drift(p).into_iter().chain(seed).collect()
}

/// The checks of a precision in words, each with what it compared.
fn checks_detail(runs: &Runs<'_, '_>, p: Precision) -> Text {
    let drift = runs.drift(p).map(|c| {
        Text::said(Key::DriftCheck)
            .name("precision", p.name())
            .count("steps", runs.reference.len())
            .number("drift", c.max_rel_diff)
            .number("tolerance", c.tolerance)
            .number("passed", u8::from(c.passed))
    });
    let seed = runs
        .seed
        .filter(|(r, _)| r.config.precision == p)
        .map(|(r, c)| {
            Text::said(Key::SeedDetail)
                .text("what", Text::said(Key::PointCheckWhat).name("point", r.id))
                .number("difference", c.max_abs_diff)
                .number("relative", c.max_rel_diff)
                .number("passed", u8::from(c.passed))
        });
    let checks: Vec<Text> = seed.into_iter().chain(drift).collect();
    if checks.is_empty() {
        Text::said(Key::NoSeedStudy)
    } else {
        Text::said(Key::DriftDetail).list("checks", checks)
    }
}

/// The index row of precision `p` against f32, judged by all its checks.
fn precision_headline(runs: &Runs<'_, '_>, p: Precision, timed_by: &str) -> Option<Headline<Text>> {
    let r = runs.find(p)?;
    let verdict = Correctness::of_checks(checks_of(runs, p)).unwrap_or(Correctness::Unknown);
    let h = Headline::versus(
        Text::said(Key::Headline)
            .name("precision", p.name())
            .count("steps", runs.reference.len()),
        Side::step(runs.f32_row.result),
        Side::step(r.result),
        verdict,
        checks_detail(runs, p),
    )
    .timed_by(timed_by)
    .variant(p.name());
    Some(match ranked(p) {
        Some(fix) => h.of_fix(fix),
        None => h,
    })
}

/// Every check of the ranked precisions (mixed bf16, bf16 storage), MLP and transformer, as
/// checks of their fix.
fn fix_checks(runs: &Runs<'_, '_>, transformer: &[(Precision, String, Check)]) -> Vec<FixCheck> {
    let mlp = PRECISIONS.into_iter().flat_map(|p| {
        let point = runs.find(p).map_or("", |r| r.id).to_string();
        let drift = runs.drift(p).map(|c| (p, point, c.clone()));
        let seed = runs
            .seed
            .filter(|(r, _)| r.config.precision == p)
            .map(|(r, c)| (p, r.id.to_string(), c.clone()));
        drift.into_iter().chain(seed).collect::<Vec<_>>()
    });
    mlp.chain(transformer.iter().cloned())
        .filter_map(|(p, point, check)| {
            Some(FixCheck::new(
                ranked(p)?,
                TechniqueId::MixedPrecision,
                point,
                check,
            ))
        })
        .collect()
}

impl Analyse for MixedPrecision {
    /// The analysis of the mixed-precision experiment: its index rows judged by every check of
    /// their precision (the seed study and the drift against the yardstick).
    fn analyse(
        &self,
        rows: Vec<Row<'_, MixedConfig>>,
        _points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis<Text> {
        let (transformer, rows): (Vec<R<'_>>, Vec<R<'_>>) = rows
            .into_iter()
            .partition(|r| r.config.shape.is_transformer());
        let section = transformer_section(&transformer);
        let (seed_study, rows): (Vec<R<'_>>, Vec<R<'_>>) =
            rows.into_iter().partition(|r| r.config.seeds > 0);
        let (yardstick, rows): (Vec<R<'_>>, Vec<R<'_>>) = rows
            .into_iter()
            .partition(|r| r.config.init_seed != INIT_SEED);
        let Some(runs) = Runs::new(&rows, &yardstick, &seed_study) else {
            return Analysis::unmeasured(Correctness::Unknown);
        };
        let (mixed, storage) = row_precisions(&rows);
        let Some(headline) = mixed.and_then(|p| precision_headline(&runs, p, MIXED)) else {
            return Analysis::unmeasured(Correctness::Unknown);
        };
        let (charts, timeline) = charts(&runs);
        let mut findings = findings(&runs, paired);
        findings.extend(timeline);
        let mut comparisons: Vec<_> = runs.rows.iter().flat_map(component_comparisons).collect();
        let mut charts = charts;
        let checks = fix_checks(&runs, &section.checks);
        section
            .section
            .append_to(&mut findings, &mut comparisons, &mut charts);
        Analysis::new(headline)
            .secondary(storage.and_then(|p| precision_headline(&runs, p, STORAGE)))
            .findings(findings)
            .comparisons(comparisons)
            .charts(charts)
            .published(published(&runs))
            .fix_checks(checks)
    }
}

/// How the forward activations of `p` are predicted, and what is not: the CPU backend's
/// 16-bit matmuls (`flex_matmul`) work in f32 buffers of their own, a device's kernels do not.
fn forward_note(p: Precision, flex_matmul: bool) -> Key {
    match (p.compute(), p.storage(), flex_matmul) {
        (None, FloatStorage::Bf16, true) => Key::ForwardNoteBf16,
        (None, FloatStorage::F16, true) => Key::ForwardNoteF16,
        (None, FloatStorage::Bf16 | FloatStorage::F16, false) => Key::ForwardNote16BitKernel,
        (None, _, _) => Key::ForwardNoteF32,
        (Some(FloatStorage::Bf16), _, true) => Key::ForwardNoteMixedBf16,
        (Some(_), _, true) => Key::ForwardNoteMixedF16,
        (Some(_), _, false) => Key::ForwardNoteMixedKernel,
    }
}

impl HasModel for MixedConfig {
    fn model(&self) -> crate::harness::models::ModelShape {
        self.shape
    }
}

/// Whether a loss curve learned the task: finite, and fallen by at least half as much as f32's
/// over the same steps.
fn learned_task(reference: &[f64], candidate: &[f64]) -> bool {
    match (
        reference.first(),
        reference.last(),
        candidate.first(),
        candidate.last(),
    ) {
        (Some(r0), Some(r1), Some(c0), Some(c1)) => {
            candidate.iter().all(|l| l.is_finite()) && c0 - c1 >= 0.5 * (r0 - r1)
        }
        _ => false,
    }
}

/// The transformer's section, with the drift checks it made (each precision's, the point it
/// is of), which judge the ranked fixes too.
struct TransformerSection {
    section: workloads::Section,
    checks: Vec<(Precision, String, Check)>,
}

/// The transformer's runs, read once.
struct TransformerRuns<'r, 'a> {
    rows: Vec<&'r R<'a>>,
    f32_row: &'r R<'a>,
    shape: TransformerShape,
    reference: &'a [f64],
    tolerance: Option<f64>,
    floor: f64,
}

impl<'r, 'a> TransformerRuns<'r, 'a> {
    fn new(rows: &'r [R<'a>]) -> Option<Self> {
        let (yardstick, rows): (Vec<&R<'_>>, Vec<&R<'_>>) =
            rows.iter().partition(|r| r.config.init_seed != INIT_SEED);
        let f32_row = rows
            .iter()
            .copied()
            .find(|r| r.config.precision == Precision::F32)?;
        let shape = rows.first()?.config.shape.transformer()?;
        let reference = losses(f32_row);
        Some(Self {
            tolerance: yardstick_tolerance(reference, yardstick.first().copied()),
            floor: MarkovChain::new(shape.vocab, SUCCESSORS, f32_row.config.seed)
                .entropy_rate_nats(),
            rows,
            f32_row,
            shape,
            reference,
        })
    }

    /// The drift check of each precision but f32's, where there is a yardstick.
    fn checks(&self) -> Vec<(&'r R<'a>, Check)> {
        let Some(tolerance) = self.tolerance else {
            return Vec::new();
        };
        self.rows
            .iter()
            .filter(|r| r.config.precision != Precision::F32)
            .map(|r| (*r, drift_check(self.reference, losses(r), tolerance)))
            .collect()
    }
}

/// The transformer's overview: its task, f32's curve, the floor and the yardstick.
fn transformer_overview(t: &TransformerRuns<'_, '_>) -> Text {
    let f = t.f32_row;
    let mut overview = Text::said(Key::Transformer)
        .name("model", f.config.shape.describe())
        .count("batch", f.config.batch)
        .number("lr", f.config.lr)
        .number("first", t.reference.first().copied().unwrap_or(f64::NAN))
        .number("last", t.reference.last().copied().unwrap_or(f64::NAN))
        .count("steps", t.reference.len())
        .number("floor", t.floor)
        .number("uniform", (t.shape.vocab as f64).ln());
    if let Some(tolerance) = t.tolerance {
        overview = overview.number("tolerance", tolerance);
    }
    overview
}

/// Each precision's run against f32's, and which learn the task.
fn transformer_findings(t: &TransformerRuns<'_, '_>) -> Vec<Text> {
    let name = |r: &&R<'_>| Text::said(Key::Name).name("name", r.config.precision.name());
    let (can, cannot): (Vec<&R<'_>>, Vec<&R<'_>>) = t
        .rows
        .iter()
        .copied()
        .partition(|r| learned_task(t.reference, losses(r)));
    let checks = t.checks();
    let precisions = t
        .rows
        .iter()
        .filter(|r| r.config.precision != Precision::F32)
        .map(|r| {
            let curve = losses(r);
            let mut text = Text::said(Key::TransformerPrecision)
                .name("precision", r.config.precision.name())
                .bytes("peak", r.peak())
                .bytes("f32_peak", t.f32_row.peak())
                .number("final", curve.last().copied().unwrap_or(f64::NAN))
                .number("drift", drift(t.reference, curve));
            if let Some((_, c)) = checks.iter().find(|(q, _)| q.id == r.id) {
                text = text.number("passed", u8::from(c.passed));
            }
            text
        });
    std::iter::once(transformer_overview(t))
        .chain(precisions)
        .chain([Text::said(Key::TransformerLearn)
            .list("can", can.iter().map(name).collect())
            .list("cannot", cannot.iter().map(name).collect())])
        .collect()
}

/// The transformer's rows: its loss curve in every precision beside the chain's entropy rate
/// (the loss's floor), which precisions learn the task and which cannot, each curve's drift
/// from f32's against the transformer's own yardstick, and the step peaks.
fn transformer_section(rows: &[R<'_>]) -> TransformerSection {
    let Some(t) = TransformerRuns::new(rows) else {
        return TransformerSection {
            section: workloads::Section::default(),
            checks: Vec::new(),
        };
    };
    let mut findings = transformer_findings(&t);
    let comparisons = transformer_comparisons(&t.rows, t.shape);
    if let Some(f32_weights) = comparisons.first() {
        findings.push(
            Text::said(Key::TransformerMemory)
                .bytes(
                    "extra",
                    f32_weights.measured_bytes - f32_weights.predicted_bytes,
                )
                .count("params", t.shape.num_params())
                .count("tensors", parameter_tensors(t.shape))
                .bytes("f32_weights", f32_weights.predicted_bytes),
        );
    }
    let floor = Series::line(
        Text::said(Key::LabelTheChainSEntropyRateThe),
        true,
        vec![(1.0, t.floor), (t.reference.len() as f64, t.floor)],
    );
    let chart = Chart::new(
        "transformer-loss-by-step",
        Key::LabelTransformerLossOverTheTrainingRun,
        Key::LabelStep,
        Key::LabelCrossEntropyNats,
    )
    .series(t.rows.iter().map(|r| loss_curve(r)))
    .series([floor]);
    TransformerSection {
        checks: t
            .checks()
            .into_iter()
            .map(|(r, c)| (r.config.precision, r.id.to_string(), c))
            .collect(),
        section: workloads::Section {
            findings,
            comparisons,
            charts: vec![chart],
        },
    }
}

/// Parameter tensors of the transformer: two embeddings, per block four attention projections
/// and two MLP projections (weight and bias each) and two layer norms (gamma and beta each),
/// the final norm's two and the head's two.
fn parameter_tensors(shape: TransformerShape) -> usize {
    2 + 16 * shape.layers + 2 + 2
}

/// The transformer's weights, Adam state and gradients in each precision beside the bytes per
/// stored value.
fn transformer_comparisons(rows: &[&R<'_>], shape: TransformerShape) -> Vec<Comparison<Text>> {
    let params = shape.num_params() as f64;
    rows.iter()
        .flat_map(|r| {
            let p = r.config.precision;
            let e = p.storage().bytes() as f64;
            [
                (
                    Key::LabelWeights,
                    predict::weight_bytes(params, p.storage()),
                    Metric::ParamBytes,
                    Key::TransformerNoteWeights,
                ),
                (
                    Key::LabelAdamState,
                    2.0 * params * e,
                    Metric::OptimizerStateBytes,
                    Key::TransformerNoteAdam,
                ),
                (
                    Key::LabelGradients,
                    params * e,
                    Metric::GradBytes,
                    Key::TransformerNoteGradients,
                ),
            ]
            .map(|(quantity, predicted, metric, note)| {
                Comparison::new(
                    Text::said(Key::TransformerQuantity)
                        .name("precision", p.name())
                        .text("component", quantity),
                    predicted,
                    r.result.metric(metric),
                    note,
                )
            })
        })
        .collect()
}
