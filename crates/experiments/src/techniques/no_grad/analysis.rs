//! No-grad evaluation's conclusions: evaluation peaks fitted against the batch, the retained
//! graphs, predictions beside measurements, charts and the index row.

use results::keys::no_grad::Key;
use results::keys::CommonKey;
use results::{
    Analysis, AxisUnit, Chart, Comparison, ComparisonSpec, Correctness, Fix, Headline, LinearFit,
    MeasuredPoint, Metric, PairedComparison, Phase, ReportedFit, Scale, Series, Side, TechniqueId,
    Text, Trace,
};

use super::NoGradMetric;
use super::{predict, EvalConfig, EvalMode, NoGrad};
use crate::bracket;
use crate::harness::models::MlpShape;
use crate::technique::{checks_of_fix, Analyse, Row};
use crate::workloads::{self, HasModel};

/// A measured no-grad point.
type R<'a> = Row<'a, EvalConfig>;

/// The id of the headline's paired comparison.
const HEADLINE: &str = "headline";

/// The (autodiff, valid) pair at the largest batch measured both ways.
fn largest_pair<'r, 'a>(rows: &'r [R<'a>]) -> Option<(&'r R<'a>, &'r R<'a>)> {
    rows.iter()
        .filter(|r| r.config.mode == EvalMode::Autodiff)
        .filter_map(|a| {
            rows.iter()
                .find(|v| v.config.mode == EvalMode::Valid && v.config.batch == a.config.batch)
                .map(|v| (a, v))
        })
        .max_by_key(|(a, _)| a.config.batch)
}

/// The headline's comparison: the autodiff backend (the baseline) against valid().
pub(super) fn comparisons(rows: &[R<'_>]) -> Vec<ComparisonSpec> {
    let mlp = workloads::mlp_rows(rows);
    largest_pair(&mlp)
        .map(|(a, v)| ComparisonSpec::new(HEADLINE, a.id, v.id))
        .into_iter()
        .collect()
}

/// The MLP's evaluations, read once: both ways by batch, the largest pair and the fits.
struct Sweep<'r, 'a> {
    autodiff: Vec<&'r R<'a>>,
    valid: Vec<&'r R<'a>>,
    ad: &'r R<'a>,
    shape: MlpShape,
    ad_fit: Option<LinearFit>,
    va_fit: Option<LinearFit>,
}

impl<'r, 'a> Sweep<'r, 'a> {
    fn new(rows: &'r [R<'a>]) -> Option<Self> {
        let of = |mode: EvalMode| -> Vec<&'r R<'a>> {
            rows.iter().filter(|r| r.config.mode == mode).collect()
        };
        let (autodiff, valid) = (of(EvalMode::Autodiff), of(EvalMode::Valid));
        let (ad, _) = largest_pair(rows)?;
        let fit = |rows: &[&R<'_>]| LinearFit::fit(&by_batch(rows, Metric::EvalBytes));
        Some(Self {
            shape: ad.config.shape.mlp()?,
            ad_fit: fit(&autodiff),
            va_fit: fit(&valid),
            autodiff,
            valid,
            ad,
        })
    }
}

/// A metric of each row against its batch.
fn by_batch(rows: &[&R<'_>], metric: Metric) -> Vec<(f64, f64)> {
    rows.iter()
        .map(|r| (r.config.batch as f64, r.result.metric(metric)))
        .collect()
}

/// The trap of evaluating on the autodiff backend: what each pass leaves held, and when it
/// is freed.
fn trap(ad: &R<'_>, va: &R<'_>) -> Text {
    let retained = |r: &R<'_>| r.result.trace(Trace::RetainedBytesByPass).to_vec();
    let va_retained = retained(va);
    let m = |k: NoGradMetric| ad.result.metric(k);
    Text::said(Key::Trap)
        .count("batch", ad.config.batch)
        .bytes("per_pass", m(NoGradMetric::RetainedPerPassBytes))
        .count("passes", retained(ad).len())
        .bytes("held_before", m(NoGradMetric::HeldBeforeBackwardBytes))
        .bytes("held_after", m(NoGradMetric::HeldAfterBackwardBytes))
        .count("valid_passes", va_retained.len())
        .bytes(
            "valid_held",
            va_retained.last().copied().unwrap_or(f64::NAN),
        )
}

/// On a device backend: valid()'s pass at the largest batch, bracketed, beside its rule.
fn brackets(sw: &Sweep<'_, '_>) -> (Vec<Text>, Vec<Comparison<Text>>) {
    let largest_valid: Vec<&R<'_>> = sw.valid.last().copied().into_iter().collect();
    let shape = sw.shape;
    bracket::phase_brackets(
        &largest_valid,
        Phase::Evaluation,
        Text::said(Key::BracketRule),
        |r| Text::said(Key::BracketPoint).count("batch", r.config.batch),
        |r| {
            r.result.metric(Metric::LiveBeforeBytes)
                + predict::inference_bytes_per_sample(shape) * r.config.batch as f64
        },
    )
}

/// Per-sample bytes both ways, the trap, the time, and the device's brackets.
fn findings(sw: &Sweep<'_, '_>, va: &R<'_>, paired: &[PairedComparison]) -> Vec<Text> {
    let per_sample = sw.ad_fit.as_ref().zip(sw.va_fit.as_ref()).map(|(a, v)| {
        Text::said(Key::PerSample)
            .bytes("autodiff", a.slope)
            .bytes("valid", v.slope)
            .count("sizes", a.n)
    });
    let time = Text::said(Key::Time)
        .count("batch", sw.ad.config.batch)
        .paired("timing", HEADLINE);
    let paired = paired
        .iter()
        .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id));
    per_sample
        .into_iter()
        .chain([trap(sw.ad, va), time])
        .chain(paired)
        .chain(brackets(sw).0)
        .collect()
}

/// valid()'s bytes per sample and the autodiff graph's per pass beside the rules.
fn predictions(sw: &Sweep<'_, '_>) -> Vec<Comparison<Text>> {
    let batch = sw.ad.config.batch;
    let graph = Comparison::new(
        Text::said(Key::GraphQuantity).count("batch", batch),
        predict::graph_bytes_per_sample(sw.shape) * batch as f64,
        sw.ad.result.metric(NoGradMetric::RetainedPerPassBytes),
        Key::GraphNote,
    );
    [
        valid_per_sample(sw.valid.last().copied(), sw.va_fit.as_ref(), sw.shape),
        graph,
    ]
    .into_iter()
    .chain(brackets(sw).1)
    .collect()
}

/// What an evaluation pass adds, both ways and by the rule, against the batch.
fn peak_chart(sw: &Sweep<'_, '_>) -> Chart<Text> {
    let rule = sw
        .valid
        .iter()
        .map(|r| {
            let b = r.config.batch as f64;
            (b, b * predict::inference_bytes_per_sample(sw.shape))
        })
        .collect();
    Chart::new(
        "eval-peak-vs-batch",
        Key::LabelMemoryAnEvaluationPassAddsAbove,
        Key::LabelBatchSizeSamples,
        Key::LabelPeakAboveLiveBytes,
    )
    .x(AxisUnit::Given, Scale::Log2)
    .y(AxisUnit::Bytes)
    .series([
        Series::line(
            Key::LabelAutodiffBackendMeasured,
            false,
            by_batch(&sw.autodiff, Metric::EvalBytes),
        ),
        Series::line(
            Key::LabelValidMeasured,
            false,
            by_batch(&sw.valid, Metric::EvalBytes),
        ),
        Series::line(Key::LabelValidPredicted, true, rule),
    ])
}

/// Throughput both ways, and the bytes held after each pass.
fn other_charts(sw: &Sweep<'_, '_>) -> [Chart<Text>; 2] {
    let retained = sw.autodiff.iter().chain(&sw.valid).filter_map(|r| {
        let trace = r.result.traces.get(&Trace::RetainedBytesByPass)?;
        Some(Series::line(
            Text::said(Key::RetainedSeries)
                .name("mode", r.config.mode.name())
                .count("batch", r.config.batch),
            false,
            trace
                .iter()
                .enumerate()
                .map(|(i, &b)| ((i + 1) as f64, b))
                .collect(),
        ))
    });
    [
        Chart::new(
            "eval-throughput",
            Key::LabelEvaluationThroughput,
            Key::LabelBatchSizeSamples,
            Key::LabelThroughputSamplesS,
        )
        .x(AxisUnit::Given, Scale::Log2)
        .series(throughput_both_ways(&sw.autodiff, &sw.valid)),
        Chart::new(
            "retained-by-pass",
            Key::LabelMemoryHeldAfterEachPassWhose,
            Key::LabelPassWarmUpIncluded,
            Key::LabelBytesStillHeld,
        )
        .y(AxisUnit::Bytes)
        .series(retained),
    ]
}

impl Analyse for NoGrad {
    /// The analysis of the no-grad experiment.
    fn analyse(
        &self,
        rows: Vec<R<'_>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis<Text> {
        let checks = checks_of_fix(&rows, Fix::InferValid, TechniqueId::NoGrad);
        let (mut rows, mut transformer) = workloads::split(rows);
        rows.sort_by_key(|r| r.config.batch);
        transformer.sort_by_key(|r| r.config.batch);
        let correctness = Correctness::of(points);
        let (Some(sw), Some((ad, va))) = (Sweep::new(&rows), largest_pair(&rows)) else {
            return Analysis::unmeasured(correctness);
        };
        let mut findings = findings(&sw, va, paired);
        let mut comparisons = predictions(&sw);
        let mut charts = vec![peak_chart(&sw)];
        charts.extend(other_charts(&sw));
        transformer_section(&transformer).append_to(&mut findings, &mut comparisons, &mut charts);
        let eval = |r: &R<'_>| r.result.metric(Metric::EvalBytes);
        let headline = Headline::versus(
            Text::said(Key::Headline).count("batch", ad.config.batch),
            Side::with_peak(Key::LabelEvaluationPeakAboveTheModelAnd, eval(ad)),
            Side::with_peak(Key::LabelEvaluationPeakAboveTheModelAnd, eval(va)),
            correctness,
            CommonKey::WorstCheck,
        )
        .timed_by(HEADLINE)
        .of_fix(Fix::InferValid);
        let fits = [
            (Key::FitAutodiff, sw.ad_fit.clone()),
            (Key::FitValid, sw.va_fit.clone()),
        ];
        Analysis::new(headline)
            .findings(findings)
            .comparisons(comparisons)
            .fits(
                fits.into_iter()
                    .filter(|_| sw.ad_fit.is_some() && sw.va_fit.is_some())
                    .filter_map(|(what, fit)| {
                        Some(ReportedFit {
                            what: what.into(),
                            fit: fit?,
                        })
                    }),
            )
            .charts(charts)
            .fix_checks(checks)
    }
}

impl HasModel for EvalConfig {
    fn model(&self) -> crate::harness::models::ModelShape {
        self.shape
    }
}

/// The transformer's rows: evaluation bytes both ways against the batch, what an autodiff pass
/// leaves recorded beside the blocks' rule, and the throughput in tokens/s.
fn transformer_section(rows: &[R<'_>]) -> workloads::Section {
    let of =
        |mode: EvalMode| -> Vec<&R<'_>> { rows.iter().filter(|r| r.config.mode == mode).collect() };
    let (autodiff, valid) = (of(EvalMode::Autodiff), of(EvalMode::Valid));
    let Some(first) = rows.first() else {
        return workloads::Section::default();
    };
    let model = first.config.shape;
    let mut section = workloads::Section::default();
    for a in &autodiff {
        let Some(v) = valid.iter().find(|v| v.config.batch == a.config.batch) else {
            continue;
        };
        let predicted = predict::graph_bytes_per_sample(a.config.shape) * a.config.batch as f64;
        let retained = a.result.metric(NoGradMetric::RetainedPerPassBytes);
        section.findings.push(
            Text::said(Key::Transformer)
                .name("model", model.describe())
                .count("batch", a.config.batch)
                .bytes("autodiff", a.result.metric(Metric::EvalBytes))
                .bytes("valid", v.result.metric(Metric::EvalBytes))
                .bytes("retained", retained)
                .bytes("predicted", predicted)
                .number(
                    "passed",
                    u8::from(
                        v.result
                            .checks
                            .iter()
                            .chain(&a.result.checks)
                            .all(|c| c.passed),
                    ),
                ),
        );
        section.comparisons.push(Comparison {
            quantity: Text::said(Key::TransformerQuantity).count("batch", a.config.batch),
            predicted_bytes: predicted,
            measured_bytes: retained,
            measured_upper_bytes: None,
            note: Text::said(Key::TransformerNote),
            regime: None,
        });
    }
    let line = |name: Text, rows: &[&R<'_>]| {
        Series::line(
            name,
            false,
            rows.iter()
                .map(|r| (r.config.batch as f64, r.result.metric(Metric::EvalBytes)))
                .collect(),
        )
    };
    section.charts.push(Chart {
        id: "transformer-eval-vs-batch".into(),
        title: Text::said(Key::LabelTransformerEvaluationPeakAboveTheModel),
        x_label: Key::LabelBatchSizeSequences.into(),
        y_label: Key::LabelBytes.into(),
        x_unit: AxisUnit::Given,
        y_unit: AxisUnit::Bytes,
        x_scale: Scale::Log2,
        categories: Vec::new(),
        series: vec![
            line(Text::from(Key::LabelAutodiffBackend), &autodiff),
            line(Text::from(Key::LabelValid), &valid),
        ],
    });
    section.charts.push(Chart {
        id: "transformer-eval-throughput".into(),
        title: Key::LabelTransformerEvaluationThroughput.into(),
        x_label: Key::LabelBatchSizeSequences.into(),
        y_label: Key::LabelThroughputTokensS.into(),
        x_unit: AxisUnit::Given,
        y_unit: AxisUnit::Given,
        x_scale: Scale::Log2,
        categories: Vec::new(),
        series: throughput_both_ways(&autodiff, &valid),
    });
    section
}

/// Throughput against the batch, on the autodiff backend and with valid().
fn throughput_both_ways(autodiff: &[&R<'_>], valid: &[&R<'_>]) -> Vec<Series<Text>> {
    let line = |name: Text, rows: &[&R<'_>]| {
        Series::throughput(name, rows.iter().map(|r| (r.config.batch as f64, r.result)))
    };
    vec![
        line(
            Text::said(Key::LabelAutodiffBackendMedianBarsFastestAnd),
            autodiff,
        ),
        line(
            Text::said(Key::LabelValidMedianBarsFastestAndSlowest),
            valid,
        ),
    ]
}

/// valid()'s bytes per sample at the pass's peak against the rule: on the CPU the slope of the
/// exact peaks against the batch; on a device, whose peaks are brackets, the largest batch's
/// evaluation bracket above what was live before it, per sample.
fn valid_per_sample(
    largest: Option<&R<'_>>,
    fit: Option<&LinearFit>,
    shape: MlpShape,
) -> Comparison<Text> {
    let quantity = Text::said(Key::ValidQuantity);
    let predicted = predict::inference_bytes_per_sample(shape);
    let bracket = largest.and_then(|r| {
        let b = r.config.batch as f64;
        Some((b, bracket::added(r, Phase::Evaluation, b)?))
    });
    match bracket {
        Some((b, (lower, upper))) => Comparison::new(
            quantity,
            predicted,
            lower,
            Text::said(Key::ValidNoteBracket).number("batch", b),
        )
        .bracketed(Some(upper)),
        None => Comparison::new(
            quantity,
            predicted,
            fit.map_or(f64::NAN, |f| f.slope),
            Text::said(Key::ValidNoteFit),
        ),
    }
}
