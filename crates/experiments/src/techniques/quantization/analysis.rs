//! Quantized weights' conclusions: the weights' bytes per parameter against the byte model of
//! each backend, the inference pass's peak and its dequantized copy, the output's error against
//! f32, charts, published figures and the index rows.

use results::keys::quantization::Key;
use results::keys::CommonKey;
use results::{
    Analysis, AxisUnit, Chart, Comparison, ComparisonSpec, Correctness, Headline, MeasuredPoint,
    Metric, PairedComparison, Phase, PublishedFigure, Scale, Series, Side, Text,
};

use super::QuantMetric;
use super::{predict, Bits, QuantConfig, Quantization, WeightFormat, TOLERANCE};
use crate::bracket;
use crate::technique::{Analyse, Row};

type R<'a> = Row<'a, QuantConfig>;

/// The id of the headline's paired comparison.
const HEADLINE: &str = "headline";
/// The id of the supporting comparison: f32 against 8-bit values with one scale per tensor.
const PER_TENSOR: &str = "per-tensor";

/// What the headline's and the index rows' peak is.
const PEAK: Key = Key::LabelInferencePeakAboveTheProcessS;

/// The row measured in `format`.
fn of<'r, 'a>(rows: &'r [R<'a>], format: WeightFormat) -> Option<&'r R<'a>> {
    rows.iter().find(|r| r.config.format == format)
}

/// The headline's comparison: f32 weights (the baseline) against 8-bit weights with a scale
/// per block; and, supporting it, against 8-bit weights with one scale per tensor, whose
/// dequantization is a single multiply per value.
pub(super) fn comparisons(rows: &[R<'_>]) -> Vec<ComparisonSpec> {
    let Some(f32) = of(rows, WeightFormat::F32) else {
        return Vec::new();
    };
    let mut specs = Vec::new();
    if let Some(q8) = of(rows, WeightFormat::Q8_BLOCK) {
        specs.push(ComparisonSpec::new(HEADLINE, f32.id, q8.id));
    }
    if let Some(q8) = of(rows, WeightFormat::Q8_TENSOR) {
        specs.push(ComparisonSpec::new(PER_TENSOR, f32.id, q8.id).supporting());
    }
    specs
}

/// The categorical x of `format` (1 is the first of [`WeightFormat::ALL`]).
fn x_of(format: WeightFormat) -> f64 {
    WeightFormat::ALL
        .iter()
        .position(|&f| f == format)
        .map_or(f64::NAN, |i| (i + 1) as f64)
}

/// Measured weight bytes per parameter.
fn bytes_per_param(r: &R<'_>) -> f64 {
    r.result.metric(QuantMetric::WeightBytes) / r.config.shape.num_params() as f64
}

/// The row's largest output difference relative to the largest f32 output (its check).
fn max_relative_error(r: &R<'_>) -> f64 {
    r.result.checks.first().map_or(f64::NAN, |c| c.max_rel_diff)
}

/// Whether every check of the row passed (`None`: it has none).
fn verdict(r: &R<'_>) -> Correctness {
    Correctness::of_checks(&r.result.checks).unwrap_or(Correctness::Unknown)
}

/// The row's check, in one sentence.
fn check_detail(r: &R<'_>) -> Text {
    Text::said(CommonKey::PointCheck).name("point", r.id)
}

impl Analyse for Quantization {
    fn analyse(
        &self,
        rows: Vec<R<'_>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis<Text> {
        let correctness = Correctness::of(points);
        let (Some(base), Some(q8)) = (
            of(&rows, WeightFormat::F32),
            of(&rows, WeightFormat::Q8_BLOCK),
        ) else {
            return Analysis::unmeasured(correctness);
        };
        let shape = base.config.shape;
        let allocator = base.allocator();
        let params = shape.num_params();

        let mut findings = vec![Text::said(Key::Summary)
            .count("params", params)
            .count("depth", shape.depth)
            .count("width", shape.width)
            .count("batch", base.config.batch)
            .bytes("f32", base.result.metric(QuantMetric::WeightBytes))
            .bytes("q8", q8.result.metric(QuantMetric::WeightBytes))
            .number("q8_per_param", bytes_per_param(q8))
            .bytes("f32_peak", base.peak_above_process())
            .bytes("q8_peak", q8.peak_above_process())];
        for r in &rows {
            findings.push(
                Text::said(Key::Row)
                    .name("point", r.label)
                    .bytes("weights", r.result.metric(QuantMetric::WeightBytes))
                    .number("per_param", bytes_per_param(r))
                    .bytes(
                        "predicted_weights",
                        predict::weight_bytes(shape, r.config.format, allocator),
                    )
                    .bytes("pass", r.result.metric(Metric::EvalBytes))
                    .bytes(
                        "predicted_pass",
                        predict::eval_bytes(shape, r.config.format, r.config.batch, allocator),
                    )
                    .bytes(
                        "copy",
                        predict::weight_copy_bytes(shape, r.config.format, allocator),
                    )
                    .number(
                        "rms_error",
                        r.result.metric(QuantMetric::OutputRmsRelativeError),
                    )
                    .number("max_error", max_relative_error(r))
                    .number("passed", u8::from(verdict(r) == Correctness::Passed)),
            );
        }
        // Where the probe is exact (no bracket): how far each pass measured above its rule.
        let excess: Vec<f64> = rows
            .iter()
            .filter(|r| bracket::of(r, Phase::Evaluation).is_none())
            .map(|r| {
                r.result.metric(Metric::EvalBytes)
                    - predict::eval_bytes(shape, r.config.format, r.config.batch, allocator)
            })
            .collect();
        let (least, most) = excess
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &e| {
                (lo.min(e), hi.max(e))
            });
        if least.is_finite() {
            findings.push(
                Text::said(Key::Excess)
                    .bytes("least", least)
                    .bytes("most", most)
                    .count("batch", base.config.batch),
            );
        }
        let block_bytes = |bits: Bits| {
            rows.iter()
                .filter(|r| matches!(r.config.format, WeightFormat::Quantized { bits: b, block: Some(_) } if b == bits))
                .map(|r| r.result.metric(QuantMetric::WeightBytes))
                .next()
        };
        if let (Some(q8_bytes), Some(q4_bytes)) = (block_bytes(Bits::Q8), block_bytes(Bits::Q4)) {
            findings.push(
                Text::said(Key::FourBits)
                    .bytes("q4", q4_bytes)
                    .bytes("q8", q8_bytes)
                    .number("host", u8::from(allocator.counts_host_copies())),
            );
        }
        findings.push(
            Text::said(Key::Dequantized)
                .bytes("q8_pass", q8.result.metric(Metric::EvalBytes))
                .bytes("f32_pass", base.result.metric(Metric::EvalBytes))
                .bytes(
                    "copy",
                    predict::weight_copy_bytes(shape, q8.config.format, allocator),
                ),
        );
        findings.push(
            Text::said(Key::Time)
                .paired("block", HEADLINE)
                .paired("tensor", PER_TENSOR),
        );
        findings.extend(
            paired
                .iter()
                .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id)),
        );
        findings.push(Text::said(Key::Tolerance).number("tolerance", TOLERANCE));

        let mut comparisons: Vec<Comparison<Text>> = rows
            .iter()
            .map(|r| {
                Comparison::new(
                    Text::said(Key::WeightsQuantity).name("point", r.label),
                    predict::weight_bytes(shape, r.config.format, allocator),
                    r.result.metric(QuantMetric::WeightBytes),
                    Text::said(Key::WeightsNote),
                )
            })
            .collect();
        comparisons.extend(rows.iter().map(|r| {
            let predicted = predict::eval_bytes(shape, r.config.format, r.config.batch, allocator);
            match bracket::added(r, Phase::Evaluation, 1.0) {
                Some((lower, upper)) => Comparison::new(
                    Text::said(Key::PassQuantity).name("point", r.label),
                    predicted,
                    lower,
                    Text::said(Key::PassNoteBracket),
                )
                .bracketed(Some(upper)),
                None => Comparison::new(
                    Text::said(Key::PassQuantity).name("point", r.label),
                    predicted,
                    r.result.metric(Metric::EvalBytes),
                    Text::said(Key::PassNote),
                ),
            }
        }));

        let categories: Vec<String> = WeightFormat::ALL.iter().map(|f| f.short()).collect();
        let by_format = |name: Text, predicted: bool, f: &dyn Fn(&R<'_>) -> f64| {
            Series::line(
                name,
                predicted,
                rows.iter().map(|r| (x_of(r.config.format), f(r))).collect(),
            )
        };
        let chart = |id: &str,
                     title: Text,
                     (y_label, y_unit): (Text, AxisUnit),
                     series: Vec<Series<Text>>| Chart {
            id: id.into(),
            title,
            x_label: Text::said(Key::LabelWeightFormatQ8328Bit),
            y_label,
            x_unit: AxisUnit::Given,
            y_unit,
            x_scale: Scale::Linear,
            categories: categories.clone(),
            series,
        };
        let charts = vec![
            chart(
                "weight-bytes",
                Text::said(Key::LabelTheWeightsBytesPerParameter),
                (Text::from(Key::LabelBytesPerParameter), AxisUnit::Given),
                vec![
                    by_format(Text::from(Key::LabelMeasured), false, &bytes_per_param),
                    by_format(
                        Text::from(Key::LabelPredictedThisBackendSStorage),
                        true,
                        &|r| {
                            predict::weight_bytes(shape, r.config.format, allocator) / params as f64
                        },
                    ),
                ],
            ),
            chart(
                "inference-peak",
                Text::said(Key::PassChart).count("batch", base.config.batch),
                (Text::from(Key::LabelBytes), AxisUnit::Bytes),
                vec![
                    by_format(Text::from(PEAK), false, &|r| r.peak_above_process()),
                    by_format(Text::from(Key::LabelWeights), false, &|r| {
                        r.result.metric(QuantMetric::WeightBytes)
                    }),
                    by_format(Text::said(Key::LabelThePassSPeakAboveLive), false, &|r| {
                        r.result.metric(Metric::EvalBytes)
                    }),
                ],
            ),
            chart(
                "output-error",
                Text::said(Key::LabelHowFarTheOutputMovesFrom),
                (
                    Text::said(Key::LabelErrorRelativeToTheF32Output),
                    AxisUnit::Given,
                ),
                vec![
                    by_format(Text::said(Key::LabelRmsDifferenceRmsOutput), false, &|r| {
                        r.result.metric(QuantMetric::OutputRmsRelativeError)
                    }),
                    by_format(
                        Text::said(Key::LabelLargestDifferenceLargestOutputTheCheck),
                        false,
                        &max_relative_error,
                    ),
                    by_format(Text::from(Key::LabelTheCheckSTolerance), true, &|_| {
                        TOLERANCE
                    }),
                ],
            ),
            chart(
                "throughput",
                Text::from(Key::LabelInferenceThroughput),
                (Text::from(Key::LabelThroughputSamplesS), AxisUnit::Given),
                vec![Series::throughput(
                    Text::said(Key::LabelMedianBarsFastestAndSlowest),
                    rows.iter().map(|r| (x_of(r.config.format), r.result)),
                )],
            ),
        ];

        let per_param = |t: Text, name: &'static str, format: WeightFormat| match of(&rows, format)
        {
            Some(r) => t.number(name, bytes_per_param(r)),
            None => t,
        };
        let ours =
            Text::said(Key::PublishedOurs).number("host", u8::from(allocator.counts_host_copies()));
        let ours = per_param(
            ours,
            "f16",
            WeightFormat::Float {
                float: results::FloatStorage::F16,
            },
        );
        let ours = per_param(ours, "q8", WeightFormat::Q8_BLOCK);
        let ours = per_param(ours, "q4", WeightFormat::Q4_BLOCK);
        let published = vec![PublishedFigure {
            source: Text::said(Key::PublishedSource),
            claim: Text::said(Key::PublishedClaim),
            ours,
        }];

        let side = |r: &R<'_>| Side::with_peak(PEAK, r.peak_above_process());
        let mut secondary_headlines = Vec::new();
        if let Some(q4) = of(&rows, WeightFormat::Q4_BLOCK) {
            secondary_headlines.push(
                Headline::versus(
                    Text::said(Key::Q4Headline).count("batch", base.config.batch),
                    side(base),
                    side(q4),
                    verdict(q4),
                    check_detail(q4),
                )
                .variant(&q4.config.format.label()),
            );
        }
        Analysis {
            fix_table: None,
            fix_checks: Vec::new(),
            headline: Headline::versus(
                Text::said(Key::Headline).count("batch", base.config.batch),
                side(base),
                side(q8),
                Correctness::of_checks(base.result.checks.iter().chain(&q8.result.checks))
                    .unwrap_or(Correctness::Unknown),
                check_detail(q8),
            )
            .variant(&q8.config.format.label())
            .timed_by(HEADLINE),
            secondary_headlines,
            findings,
            comparisons,
            fits: vec![],
            charts,
            published,
        }
    }
}
