//! Mixed precision's conclusions: loss curves and their drift from f32's, zero gradients with
//! and without the loss scale, memory by component predicted beside measured, throughput,
//! charts, published figures and the index row.

use results::keys::mixed_precision::Key;
use results::keys::CommonKey;
use results::{
    Analysis, AxisUnit, Chart, Check, Comparison, ComparisonSpec, Correctness, FloatStorage,
    Headline, MeasuredPoint, Metric, PairedComparison, Phase, PublishedFigure, Scale, Series, Side,
    Text, Trace,
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

impl Analyse for MixedPrecision {
    /// The analysis of the mixed-precision experiment.
    /// (Its verdicts come from its own checks: the seed study for mixed precision, the drift
    /// against the yardstick for 16-bit storage.)
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
        let find = |p: Precision| rows.iter().find(|r| r.config.precision == p);
        let Some(f32_row) = find(Precision::F32) else {
            return Analysis::unmeasured(Correctness::Unknown);
        };
        let reference = losses(f32_row);
        let tolerance = yardstick_tolerance(reference, yardstick.first());
        let checks: Vec<(Precision, Check)> = rows
            .iter()
            .filter(|r| r.config.precision != Precision::F32)
            .filter_map(|r| {
                let p = r.config.precision;
                Some((p, drift_check(reference, losses(r), tolerance?)))
            })
            .collect();

        let mut findings = Vec::new();
        if let (Some(first), Some(last)) = (reference.first(), reference.last()) {
            let mut t = Text::said(Key::Learned)
                .number("first", *first)
                .number("last", *last)
                .count("steps", reference.len());
            if let Some(tolerance) = tolerance {
                t = t.number("tolerance", tolerance);
            }
            if let Some(l) = yardstick.first().and_then(|y| losses(y).last()) {
                t = t.number("yardstick_last", *l);
            }
            findings.push(t);
        }
        for r in &rows {
            let p = r.config.precision;
            let losses = losses(r);
            let drift = checks.iter().find(|(q, _)| *q == p).map(|(_, c)| c);
            let m = |metric: MixedMetric| r.result.metric(metric);
            let mut t = Text::said(Key::Precision)
                .name("precision", p.name())
                .bytes("peak", r.peak())
                .number("final", losses.last().copied().unwrap_or(f64::NAN))
                .number("elements", m(MixedMetric::GradElements))
                .number(
                    "zero_initial",
                    m(MixedMetric::ZeroGradElementsUnscaledInitial),
                )
                .number("zero_final", m(MixedMetric::ZeroGradElementsUnscaledFinal));
            if let Some(c) = drift {
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
                    .count("steps", losses.len());
            }
            findings.push(t);
        }
        let zeros = |r: &R<'_>, metric: MixedMetric| r.result.metric(metric);
        if let (Some(mixed), Some(pure)) = (find(Precision::MixedF16), find(Precision::F16)) {
            let (without, with) = (
                zeros(mixed, MixedMetric::ZeroGradElementsUnscaledInitial),
                zeros(mixed, MixedMetric::ZeroGradElementsScaledInitial),
            );
            let (pure_without, pure_with) = (
                zeros(pure, MixedMetric::ZeroGradElementsUnscaledFinal),
                zeros(pure, MixedMetric::ZeroGradElementsScaledFinal),
            );
            findings.push(
                Text::said(Key::LossScale)
                    .number("without", without)
                    .number("with", with)
                    .number("pure_without", pure_without)
                    .number("pure_with", pure_with)
                    .number(
                        "f32",
                        zeros(f32_row, MixedMetric::ZeroGradElementsUnscaledInitial),
                    ),
            );
        }
        if let Some(mixed) = find(Precision::MixedBf16) {
            let act = |r: &R<'_>| r.result.metric(Metric::ActivationBytes);
            findings.push(
                Text::said(Key::Mixed)
                    .count("batch", mixed.config.batch)
                    .bytes("f32_act", act(f32_row))
                    .bytes("mixed_act", act(mixed))
                    .bytes("f32_peak", f32_row.peak())
                    .bytes("mixed_peak", mixed.peak())
                    .bytes(
                        "copies",
                        mixed
                            .config
                            .shape
                            .mlp()
                            .map_or(f64::NAN, |s| ((s.depth - 1) * s.width.pow(2)) as f64 * 2.0),
                    ),
            );
        }
        let bf16 = find(Precision::Bf16);
        if let Some(b) = bf16.or_else(|| find(Precision::F16)) {
            findings.push(
                Text::said(Key::Time)
                    .name("storage", b.config.precision.name())
                    .paired("storage_timing", STORAGE)
                    .name(
                        "mixed",
                        row_precisions(&rows)
                            .0
                            .map_or("mixed precision", Precision::name),
                    )
                    .paired("mixed_timing", MIXED),
            );
        }
        findings.extend(
            paired
                .iter()
                .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id)),
        );
        let seed_check = seed_study
            .first()
            .and_then(|r| r.result.checks.first().map(|c| (r, c)));
        if let Some((r, c)) = seed_check {
            let reference = r.result.trace(Trace::SeedReferenceFinalLoss);
            let candidate = r.result.trace(Trace::SeedCandidateFinalLoss);
            let losses = |values: &[f64]| {
                values
                    .iter()
                    .map(|&v| Text::said(Key::Loss).number("value", v))
                    .collect()
            };
            findings.push(
                Text::said(Key::SeedStudy)
                    .count("runs", reference.len())
                    .count("last", super::SEED_STUDY_LAST_LOSSES)
                    .list("f32", losses(reference))
                    .name("precision", r.config.precision.name())
                    .list("candidate", losses(candidate))
                    .number("difference", c.max_abs_diff)
                    .number("spread", c.max_abs_diff / c.max_rel_diff)
                    .number("passed", u8::from(c.passed)),
            );
        }

        let mut comparisons = Vec::new();
        for r in &rows {
            let p = r.config.precision;
            let Some(shape) = r.config.shape.mlp() else {
                continue;
            };
            let e = p.storage().bytes() as f64;
            let params = shape.num_params() as f64;
            for (quantity, predicted, metric, note) in [
                (
                    "weights",
                    predict::weight_bytes(params, p.storage()),
                    Metric::ParamBytes,
                    Text::said(Key::LabelParametersXBytesPerStoredValue),
                ),
                (
                    "Adam state",
                    2.0 * params * e,
                    Metric::OptimizerStateBytes,
                    Text::said(Key::LabelTwoMomentsPerParameterStoredLike),
                ),
                (
                    "gradients",
                    params * e,
                    Metric::GradBytes,
                    Text::said(Key::LabelOneGradientPerParameterInThe),
                ),
                (
                    "forward activations",
                    predict::forward_bytes(
                        p,
                        shape,
                        r.config.batch,
                        r.allocator().bf16_matmul_via_f32(),
                    ) as f64,
                    Metric::ActivationBytes,
                    Text::said(forward_note(p, r.allocator().bf16_matmul_via_f32())),
                ),
            ] {
                // The forward activations are the forward phase's peak above its start:
                // bracketed on a device.
                let upper = (metric == Metric::ActivationBytes)
                    .then(|| bracket::added_upper(r, Phase::Forward, 1.0))
                    .flatten();
                comparisons.push(
                    Comparison::new(
                        Text::said(Key::ComponentQuantity)
                            .name("precision", p.name())
                            .name("component", quantity),
                        predicted,
                        r.result.metric(metric),
                        note,
                    )
                    .bracketed(upper),
                );
            }
        }

        let component_series = |metric: Metric, label: Key| -> Series<Text> {
            Series::line(
                label,
                false,
                PRECISIONS
                    .iter()
                    .enumerate()
                    .filter_map(|(i, &p)| {
                        find(p).map(|r| ((i + 1) as f64, r.result.metric(metric)))
                    })
                    .collect(),
            )
        };
        let loss_series: Vec<Series<Text>> = rows.iter().map(loss_curve).collect();
        let mut scale_series = Vec::new();
        for r in &rows {
            if let Some(trace) = r.result.traces.get(&Trace::LossScaleByStep) {
                scale_series.push(Series::line(
                    Text::named(r.config.precision.name()),
                    false,
                    trace
                        .iter()
                        .enumerate()
                        .map(|(i, &s)| ((i + 1) as f64, s.log2()))
                        .collect(),
                ));
            }
        }
        let categories: Vec<String> = PRECISIONS.iter().map(|p| p.id().to_string()).collect();
        let mut charts = vec![
            Chart {
                id: "memory-by-component".into(),
                title: Text::said(Key::LabelMemoryByComponentAndPrecision),
                x_label: Key::LabelPrecision.into(),
                y_label: Key::LabelBytes.into(),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Bytes,
                x_scale: Scale::Linear,
                categories: categories.clone(),
                series: vec![
                    Series {
                        name: CommonKey::StepPeak.into(),
                        predicted: false,
                        points: Series::<Text>::line(
                            Key::Label,
                            false,
                            PRECISIONS
                                .iter()
                                .enumerate()
                                .filter_map(|(i, &p)| find(p).map(|r| ((i + 1) as f64, r.peak())))
                                .collect(),
                        )
                        .points,
                        marked: Vec::new(),
                        band: false,
                    },
                    component_series(Metric::ParamBytes, Key::LabelWeights),
                    component_series(Metric::OptimizerStateBytes, Key::LabelAdamState),
                    component_series(Metric::GradBytes, Key::LabelGradients),
                    component_series(Metric::ActivationBytes, Key::LabelForwardActivations),
                ],
            },
            Chart {
                id: "throughput-by-precision".into(),
                title: Text::said(Key::LabelTrainingThroughputByPrecision),
                x_label: Key::LabelPrecision.into(),
                y_label: Key::LabelThroughputSamplesS.into(),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Given,
                x_scale: Scale::Linear,
                categories: categories.clone(),
                series: vec![Series::throughput(
                    Text::said(Key::LabelMedianBarsFastestAndSlowestStep),
                    PRECISIONS
                        .iter()
                        .enumerate()
                        .filter_map(|(i, &p)| find(p).map(|r| ((i + 1) as f64, r.result))),
                )],
            },
            Chart {
                id: "loss-by-step".into(),
                title: Text::said(Key::LabelLossOverTheTrainingRun),
                x_label: Key::LabelStep.into(),
                y_label: Key::LabelMSELoss.into(),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Given,
                x_scale: Scale::Linear,
                categories: Vec::new(),
                series: loss_series,
            },
            Chart {
                id: "loss-scale-by-step".into(),
                title: Key::LabelDynamicLossScale.into(),
                x_label: Key::LabelStep.into(),
                y_label: Text::said(Key::LabelLog2OfTheLossScale),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Given,
                x_scale: Scale::Linear,
                categories: Vec::new(),
                series: scale_series,
            },
        ];
        let (mixed_p, storage_p) = row_precisions(&rows);
        let timeline_rows: Vec<&R<'_>> = std::iter::once(f32_row)
            .chain([mixed_p, storage_p].into_iter().flatten().filter_map(find))
            .collect();
        if let Some((chart, lines)) = workloads::timeline_chart(
            "memory-timeline",
            Text::said(Key::LabelMemoryThroughOneTrainingStepIn),
            &timeline_rows,
        ) {
            charts.insert(1, chart);
            findings.extend(lines);
        }

        let published = vec![
            PublishedFigure {
                source: Text::said(Key::HfSource),
                claim: Text::said(Key::HfClaim),
                ours: match find(Precision::MixedF16) {
                    Some(m) => Text::said(Key::HfOurs)
                        .paired("timing", MIXED)
                        .bytes("f32_peak", f32_row.peak())
                        .bytes("mixed_peak", m.peak()),
                    None => Text::from(Key::LabelNotMeasured),
                },
            },
            PublishedFigure {
                source: Text::said(Key::MicikeviciusSource),
                claim: Text::said(Key::MicikeviciusClaim),
                ours: match (find(Precision::MixedBf16), bf16) {
                    (Some(m), _) => Text::said(Key::MicikeviciusOurs)
                        .bytes("f32", f32_row.result.metric(Metric::ActivationBytes))
                        .bytes("mixed", m.result.metric(Metric::ActivationBytes)),
                    (None, _) => Text::from(Key::LabelNotMeasured),
                },
            },
        ];

        // The index row: f32 against mixed precision (f32 master weights), the technique people
        // use, proved by the seed study; the second row: 16-bit storage, proved by its drift.
        let drift_detail = |p: Precision| {
            Text::said(Key::DriftDetail).list(
                "checks",
                checks
                    .iter()
                    .filter(|(q, _)| *q == p)
                    .map(|(_, c)| {
                        Text::said(Key::DriftCheck)
                            .name("precision", p.name())
                            .count("steps", reference.len())
                            .number("drift", c.max_rel_diff)
                            .number("tolerance", c.tolerance)
                            .number("passed", u8::from(c.passed))
                    })
                    .collect(),
            )
        };
        let verdict = |c: Option<&Check>| Correctness::of_checks(c).unwrap_or(Correctness::Unknown);
        let (mixed, storage) = row_precisions(&rows);
        let row = |p: Option<Precision>| p.and_then(find);
        let headline = match row(mixed) {
            Some(m) => Headline::versus(
                Text::said(Key::Headline)
                    .name("precision", m.config.precision.name())
                    .count("steps", reference.len()),
                Side::step(f32_row.result),
                Side::step(m.result),
                verdict(seed_check.map(|(_, c)| c)),
                match seed_check {
                    Some((r, c)) => Text::said(Key::SeedDetail)
                        .text("what", Text::said(Key::PointCheckWhat).name("point", r.id))
                        .number("difference", c.max_abs_diff)
                        .number("relative", c.max_rel_diff)
                        .number("passed", u8::from(c.passed)),
                    None => Text::said(Key::NoSeedStudy),
                },
            )
            .timed_by(MIXED)
            .variant(m.config.precision.name()),
            None => Analysis::unmeasured(Correctness::Unknown).headline,
        };
        let secondary_headlines = row(storage)
            .map(|b| {
                let p = b.config.precision;
                Headline::versus(
                    Text::said(Key::Headline)
                        .name("precision", p.name())
                        .count("steps", reference.len()),
                    Side::step(f32_row.result),
                    Side::step(b.result),
                    verdict(checks.iter().find(|(q, _)| *q == p).map(|(_, c)| c)),
                    drift_detail(p),
                )
                .timed_by(STORAGE)
                .variant(p.name())
            })
            .into_iter()
            .collect();
        section.append_to(&mut findings, &mut comparisons, &mut charts);
        Analysis {
            fix_table: None,
            headline,
            secondary_headlines,
            findings,
            comparisons,
            fits: vec![],
            charts,
            published,
        }
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
fn learned(reference: &[f64], candidate: &[f64]) -> bool {
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

/// The transformer's rows: its loss curve in every precision beside the chain's entropy rate
/// (the loss's floor), which precisions learn the task and which cannot, each curve's drift
/// from f32's against the transformer's own yardstick, and the step peaks.
fn transformer_section(rows: &[R<'_>]) -> workloads::Section {
    let (yardstick, rows): (Vec<&R<'_>>, Vec<&R<'_>>) =
        rows.iter().partition(|r| r.config.init_seed != INIT_SEED);
    let find = |p: Precision| rows.iter().copied().find(|r| r.config.precision == p);
    let (Some(f32_row), Some(shape)) = (
        find(Precision::F32),
        rows.first().and_then(|r| r.config.shape.transformer()),
    ) else {
        return workloads::Section::default();
    };
    let reference = losses(f32_row);
    let tolerance = yardstick_tolerance(reference, yardstick.first().copied());
    let floor = MarkovChain::new(shape.vocab, SUCCESSORS, f32_row.config.seed).entropy_rate_nats();
    let mut overview = Text::said(Key::Transformer)
        .name("model", f32_row.config.shape.describe())
        .count("batch", f32_row.config.batch)
        .number("lr", f32_row.config.lr)
        .number("first", reference.first().copied().unwrap_or(f64::NAN))
        .number("last", reference.last().copied().unwrap_or(f64::NAN))
        .count("steps", reference.len())
        .number("floor", floor)
        .number("uniform", (shape.vocab as f64).ln());
    if let Some(tolerance) = tolerance {
        overview = overview.number("tolerance", tolerance);
    }
    let mut findings = vec![overview];
    let mut can = Vec::new();
    let mut cannot = Vec::new();
    for r in &rows {
        let p = r.config.precision;
        let curve = losses(r);
        if learned(reference, curve) {
            can.push(Text::said(Key::Name).name("name", p.name()));
        } else {
            cannot.push(Text::said(Key::Name).name("name", p.name()));
        }
        if p == Precision::F32 {
            continue;
        }
        let mut t = Text::said(Key::TransformerPrecision)
            .name("precision", p.name())
            .bytes("peak", r.peak())
            .bytes("f32_peak", f32_row.peak())
            .number("final", curve.last().copied().unwrap_or(f64::NAN))
            .number("drift", drift(reference, curve));
        if let Some(tolerance) = tolerance {
            let passed = drift_check(reference, curve, tolerance).passed;
            t = t.number("passed", u8::from(passed));
        }
        findings.push(t);
    }
    findings.push(
        Text::said(Key::TransformerLearn)
            .list("can", can)
            .list("cannot", cannot),
    );
    let mut series: Vec<Series<Text>> = rows.iter().map(|r| loss_curve(r)).collect();
    series.push(Series::line(
        Text::said(Key::LabelTheChainSEntropyRateThe),
        true,
        vec![(1.0, floor), (reference.len() as f64, floor)],
    ));
    let comparisons = transformer_comparisons(&rows, shape);
    if let Some(f32_weights) = comparisons.first() {
        let tensors = parameter_tensors(shape);
        let extra = f32_weights.measured_bytes - f32_weights.predicted_bytes;
        findings.push(
            Text::said(Key::TransformerMemory)
                .bytes("extra", extra)
                .count("params", shape.num_params())
                .count("tensors", tensors)
                .bytes("f32_weights", f32_weights.predicted_bytes),
        );
    }
    workloads::Section {
        findings,
        comparisons,
        charts: vec![Chart {
            id: "transformer-loss-by-step".into(),
            title: Text::said(Key::LabelTransformerLossOverTheTrainingRun),
            x_label: Key::LabelStep.into(),
            y_label: Key::LabelCrossEntropyNats.into(),
            x_unit: AxisUnit::Given,
            y_unit: AxisUnit::Given,
            x_scale: Scale::Linear,
            categories: Vec::new(),
            series,
        }],
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
    let mut comparisons = Vec::new();
    for r in rows {
        let p = r.config.precision;
        let e = p.storage().bytes() as f64;
        for (quantity, predicted, metric, note) in [
            (
                "weights",
                predict::weight_bytes(params, p.storage()),
                Metric::ParamBytes,
                Key::TransformerNoteWeights,
            ),
            (
                "Adam state",
                2.0 * params * e,
                Metric::OptimizerStateBytes,
                Key::TransformerNoteAdam,
            ),
            (
                "gradients",
                params * e,
                Metric::GradBytes,
                Key::TransformerNoteGradients,
            ),
        ] {
            comparisons.push(Comparison {
                quantity: Text::said(Key::TransformerQuantity)
                    .name("precision", p.name())
                    .name("component", quantity),
                predicted_bytes: predicted,
                measured_bytes: r.result.metric(metric),
                measured_upper_bytes: None,
                note: Text::said(note),
            });
        }
    }
    comparisons
}
