//! No-grad evaluation's conclusions: evaluation peaks fitted against the batch, the retained
//! graphs, predictions beside measurements, charts and the index row.

use results::keys::no_grad::Key;
use results::keys::CommonKey;
use results::{
    Analysis, AxisUnit, Chart, Comparison, ComparisonSpec, Correctness, Headline, LinearFit,
    MeasuredPoint, Metric, PairedComparison, Phase, ReportedFit, Scale, Series, Side, Text, Trace,
};

use super::NoGradMetric;
use super::{predict, EvalConfig, EvalMode, NoGrad};
use crate::bracket;
use crate::harness::models::MlpShape;
use crate::technique::{Analyse, Row};
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

impl Analyse for NoGrad {
    /// The analysis of the no-grad experiment.
    fn analyse(
        &self,
        rows: Vec<Row<'_, EvalConfig>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis<Text> {
        let (mut rows, mut transformer) = workloads::split(rows);
        rows.sort_by_key(|r| r.config.batch);
        transformer.sort_by_key(|r| r.config.batch);
        let correctness = Correctness::of(points);
        let of = |mode: EvalMode| -> Vec<&R<'_>> {
            rows.iter().filter(|r| r.config.mode == mode).collect()
        };
        let (autodiff, valid) = (of(EvalMode::Autodiff), of(EvalMode::Valid));
        let Some((ad, va)) = largest_pair(&rows) else {
            return Analysis::unmeasured(correctness);
        };
        let Some(shape) = ad.config.shape.mlp() else {
            return Analysis::unmeasured(correctness);
        };
        let batch = ad.config.batch as f64;

        let eval_points = |rows: &[&R<'_>]| -> Vec<(f64, f64)> {
            rows.iter()
                .map(|r| (r.config.batch as f64, r.result.metric(Metric::EvalBytes)))
                .collect()
        };
        let ad_fit = LinearFit::fit(&eval_points(&autodiff));
        let va_fit = LinearFit::fit(&eval_points(&valid));
        let mut fits = Vec::new();
        let mut findings = Vec::new();
        if let (Some(a), Some(v)) = (&ad_fit, &va_fit) {
            findings.push(
                Text::said(Key::PerSample)
                    .bytes("autodiff", a.slope)
                    .bytes("valid", v.slope)
                    .count("sizes", a.n),
            );
            fits.push(ReportedFit {
                what: Text::said(Key::FitAutodiff),
                fit: a.clone(),
            });
            fits.push(ReportedFit {
                what: Text::said(Key::FitValid),
                fit: v.clone(),
            });
        }
        let ad_eval = ad.result.metric(Metric::EvalBytes);
        let va_eval = va.result.metric(Metric::EvalBytes);
        let retained_by_pass =
            |r: &R<'_>| -> Vec<f64> { r.result.trace(Trace::RetainedBytesByPass).to_vec() };
        let (retained, va_retained) = (retained_by_pass(ad), retained_by_pass(va));
        findings.push(
            Text::said(Key::Trap)
                .count("batch", ad.config.batch)
                .bytes(
                    "per_pass",
                    ad.result.metric(NoGradMetric::RetainedPerPassBytes),
                )
                .count("passes", retained.len())
                .bytes(
                    "held_before",
                    ad.result.metric(NoGradMetric::HeldBeforeBackwardBytes),
                )
                .bytes(
                    "held_after",
                    ad.result.metric(NoGradMetric::HeldAfterBackwardBytes),
                )
                .count("valid_passes", va_retained.len())
                .bytes(
                    "valid_held",
                    va_retained.last().copied().unwrap_or(f64::NAN),
                ),
        );
        findings.push(
            Text::said(Key::Time)
                .count("batch", ad.config.batch)
                .paired("timing", HEADLINE),
        );
        findings.extend(
            paired
                .iter()
                .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id)),
        );
        // On a device backend: valid()'s pass at the largest batch, bracketed, beside its rule.
        let largest_valid: Vec<&R<'_>> = valid.last().copied().into_iter().collect();
        let (bracket_findings, bracket_comparisons) = bracket::phase_brackets(
            &largest_valid,
            Phase::Evaluation,
            Text::said(Key::BracketRule),
            |r| Text::said(Key::BracketPoint).count("batch", r.config.batch),
            |r| {
                r.result.metric(Metric::LiveBeforeBytes)
                    + predict::inference_bytes_per_sample(shape) * r.config.batch as f64
            },
        );
        findings.extend(bracket_findings);

        let mut comparisons = vec![
            valid_per_sample(valid.last().copied(), va_fit.as_ref(), shape),
            Comparison {
                quantity: Text::said(Key::GraphQuantity).count("batch", ad.config.batch),
                predicted_bytes: predict::graph_bytes_per_sample(shape) * batch,
                measured_bytes: ad.result.metric(NoGradMetric::RetainedPerPassBytes),
                measured_upper_bytes: None,
                note: Text::said(Key::GraphNote),
            },
        ];
        comparisons.extend(bracket_comparisons);

        let by_batch = |rows: &[&R<'_>], metric: Metric| -> Vec<(f64, f64)> {
            rows.iter()
                .map(|r| (r.config.batch as f64, r.result.metric(metric)))
                .collect()
        };
        let mut retained_series = Vec::new();
        for r in autodiff.iter().chain(valid.iter()) {
            if let Some(trace) = r.result.traces.get(&Trace::RetainedBytesByPass) {
                retained_series.push(Series::line(
                    Text::said(Key::RetainedSeries)
                        .name("mode", r.config.mode.name())
                        .count("batch", r.config.batch),
                    false,
                    trace
                        .iter()
                        .enumerate()
                        .map(|(i, &b)| ((i + 1) as f64, b))
                        .collect(),
                ));
            }
        }
        let charts = vec![
            Chart {
                id: "eval-peak-vs-batch".into(),
                title: Text::said(Key::LabelMemoryAnEvaluationPassAddsAbove),
                x_label: Key::LabelBatchSizeSamples.into(),
                y_label: Key::LabelPeakAboveLiveBytes.into(),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Bytes,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: vec![
                    Series::line(
                        Key::LabelAutodiffBackendMeasured,
                        false,
                        by_batch(&autodiff, Metric::EvalBytes),
                    ),
                    Series::line(
                        Key::LabelValidMeasured,
                        false,
                        by_batch(&valid, Metric::EvalBytes),
                    ),
                    Series::line(
                        Key::LabelValidPredicted,
                        true,
                        valid
                            .iter()
                            .map(|r| {
                                let b = r.config.batch as f64;
                                (b, b * predict::inference_bytes_per_sample(shape))
                            })
                            .collect(),
                    ),
                ],
            },
            Chart {
                id: "eval-throughput".into(),
                title: Key::LabelEvaluationThroughput.into(),
                x_label: Key::LabelBatchSizeSamples.into(),
                y_label: Key::LabelThroughputSamplesS.into(),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Given,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: throughput_both_ways(&autodiff, &valid),
            },
            Chart {
                id: "retained-by-pass".into(),
                title: Text::said(Key::LabelMemoryHeldAfterEachPassWhose),
                x_label: Key::LabelPassWarmUpIncluded.into(),
                y_label: Key::LabelBytesStillHeld.into(),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Bytes,
                x_scale: Scale::Linear,
                categories: Vec::new(),
                series: retained_series,
            },
        ];

        let mut charts = charts;
        transformer_section(&transformer).append_to(&mut findings, &mut comparisons, &mut charts);
        let detail = Text::said(CommonKey::WorstCheck);
        Analysis {
            fix_table: None,
            fix_checks: Vec::new(),
            headline: Headline::versus(
                Text::said(Key::Headline).count("batch", ad.config.batch),
                Side::with_peak(Key::LabelEvaluationPeakAboveTheModelAnd, ad_eval),
                Side::with_peak(Key::LabelEvaluationPeakAboveTheModelAnd, va_eval),
                correctness,
                detail,
            )
            .timed_by(HEADLINE),
            secondary_headlines: vec![],
            findings,
            comparisons,
            fits,
            charts,
            published: vec![],
        }
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
