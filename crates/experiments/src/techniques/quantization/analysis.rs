//! Quantized weights' conclusions: the weights' bytes per parameter against the byte model of
//! each backend, the inference pass's peak and its dequantized copy, the output's error against
//! f32, charts, published figures and the index rows.

use results::keys::quantization::Key;
use results::keys::CommonKey;
use results::{
    Analysis, AxisUnit, Chart, Comparison, ComparisonSpec, Correctness, Fix, FixCheck, Headline,
    MeasuredPoint, Metric, PairedComparison, Phase, PublishedFigure, Series, Side, TechniqueId,
    Text,
};

use super::QuantMetric;
use super::{predict, Bits, QuantConfig, Quantization, WeightFormat, TOLERANCE};
use crate::bracket;
use crate::harness::models::MlpShape;
use crate::technique::{Analyse, Row};
use estimator::estimate::Allocator;

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

/// The sweep of formats, read once: the f32 baseline and 8 bits with a scale per block.
struct Set<'r, 'a> {
    rows: &'r [R<'a>],
    base: &'r R<'a>,
    q8: &'r R<'a>,
}

impl Set<'_, '_> {
    fn shape(&self) -> MlpShape {
        self.base.config.shape
    }

    fn allocator(&self) -> Allocator {
        self.base.allocator()
    }

    fn pass_predicted(&self, r: &R<'_>) -> f64 {
        predict::eval_bytes(
            self.shape(),
            r.config.format,
            r.config.batch,
            self.allocator(),
        )
    }
}

/// One format's row: its weights and pass beside the rules, and its output's error.
fn row_finding(set: &Set<'_, '_>, r: &R<'_>) -> Text {
    let (shape, allocator) = (set.shape(), set.allocator());
    Text::said(Key::Row)
        .name("point", r.label)
        .bytes("weights", r.result.metric(QuantMetric::WeightBytes))
        .number("per_param", bytes_per_param(r))
        .bytes(
            "predicted_weights",
            predict::weight_bytes(shape, r.config.format, allocator),
        )
        .bytes("pass", r.result.metric(Metric::EvalBytes))
        .bytes("predicted_pass", set.pass_predicted(r))
        .bytes(
            "copy",
            predict::weight_copy_bytes(shape, r.config.format, allocator),
        )
        .number(
            "rms_error",
            r.result.metric(QuantMetric::OutputRmsRelativeError),
        )
        .number("max_error", max_relative_error(r))
        .number("passed", u8::from(verdict(r) == Correctness::Passed))
}

/// Where the probe is exact (no bracket): how far each pass measured above its rule.
fn excess(set: &Set<'_, '_>) -> Option<Text> {
    let excess = set
        .rows
        .iter()
        .filter(|r| bracket::of(r, Phase::Evaluation).is_none())
        .map(|r| r.result.metric(Metric::EvalBytes) - set.pass_predicted(r));
    let (least, most) = excess.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), e| {
        (lo.min(e), hi.max(e))
    });
    least.is_finite().then(|| {
        Text::said(Key::Excess)
            .bytes("least", least)
            .bytes("most", most)
            .count("batch", set.base.config.batch)
    })
}

/// 4 bits against 8 with a scale per block: packed on CubeCL, a byte a value on the host.
fn four_bits(set: &Set<'_, '_>) -> Option<Text> {
    let block_bytes = |bits: Bits| {
        set.rows
            .iter()
            .find(|r| {
                matches!(r.config.format,
                    WeightFormat::Quantized { bits: b, block: Some(_) } if b == bits)
            })
            .map(|r| r.result.metric(QuantMetric::WeightBytes))
    };
    Some(
        Text::said(Key::FourBits)
            .bytes("q4", block_bytes(Bits::Q4)?)
            .bytes("q8", block_bytes(Bits::Q8)?)
            .number("host", u8::from(set.allocator().counts_host_copies())),
    )
}

/// The sweep's summary, each row, the pass's excess, 4 bits, the dequantized copy and time.
fn findings(set: &Set<'_, '_>, paired: &[PairedComparison]) -> Vec<Text> {
    let (base, q8, shape) = (set.base, set.q8, set.shape());
    let summary = Text::said(Key::Summary)
        .count("params", shape.num_params())
        .count("depth", shape.depth)
        .count("width", shape.width)
        .count("batch", base.config.batch)
        .bytes("f32", base.result.metric(QuantMetric::WeightBytes))
        .bytes("q8", q8.result.metric(QuantMetric::WeightBytes))
        .number("q8_per_param", bytes_per_param(q8))
        .bytes("f32_peak", base.peak_above_process())
        .bytes("q8_peak", q8.peak_above_process());
    let dequantized = Text::said(Key::Dequantized)
        .bytes("q8_pass", q8.result.metric(Metric::EvalBytes))
        .bytes("f32_pass", base.result.metric(Metric::EvalBytes))
        .bytes(
            "copy",
            predict::weight_copy_bytes(shape, q8.config.format, set.allocator()),
        );
    let time = Text::said(Key::Time)
        .paired("block", HEADLINE)
        .paired("tensor", PER_TENSOR);
    let paired = paired
        .iter()
        .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id));
    std::iter::once(summary)
        .chain(set.rows.iter().map(|r| row_finding(set, r)))
        .chain(excess(set))
        .chain(four_bits(set))
        .chain([dequantized, time])
        .chain(paired)
        .chain([Text::said(Key::Tolerance).number("tolerance", TOLERANCE)])
        .collect()
}

/// Each format's weights and pass beside the rules (a bracket on a device).
fn predictions(set: &Set<'_, '_>) -> Vec<Comparison<Text>> {
    let weights = set.rows.iter().map(|r| {
        Comparison::new(
            Text::said(Key::WeightsQuantity).name("point", r.label),
            predict::weight_bytes(set.shape(), r.config.format, set.allocator()),
            r.result.metric(QuantMetric::WeightBytes),
            Key::WeightsNote,
        )
    });
    let passes = set.rows.iter().map(|r| {
        let quantity = Text::said(Key::PassQuantity).name("point", r.label);
        let predicted = set.pass_predicted(r);
        match bracket::added(r, Phase::Evaluation, 1.0) {
            Some((lower, upper)) => {
                Comparison::new(quantity, predicted, lower, Key::PassNoteBracket)
                    .bracketed(Some(upper))
            }
            None => Comparison::new(
                quantity,
                predicted,
                r.result.metric(Metric::EvalBytes),
                Key::PassNote,
            ),
        }
    });
    weights.chain(passes).collect()
}

/// A value of each row at its format's category.
fn by_format(
    set: &Set<'_, '_>,
    name: Key,
    predicted: bool,
    f: &dyn Fn(&R<'_>) -> f64,
) -> Series<Text> {
    Series::line(
        name,
        predicted,
        set.rows
            .iter()
            .map(|r| (x_of(r.config.format), f(r)))
            .collect(),
    )
}

/// A chart over the formats.
fn format_chart(id: &str, title: Text, y_label: Key, y_unit: AxisUnit) -> Chart<Text> {
    Chart::new(id, title, Key::LabelWeightFormatQ8328Bit, y_label)
        .y(y_unit)
        .categories(WeightFormat::ALL.iter().map(|f| f.short()).collect())
}

/// Bytes per parameter, the pass's peak, the output's error and the throughput, per format.
fn charts(set: &Set<'_, '_>) -> Vec<Chart<Text>> {
    let (shape, allocator) = (set.shape(), set.allocator());
    let params = shape.num_params() as f64;
    let line =
        |name: Key, predicted: bool, f: &dyn Fn(&R<'_>) -> f64| by_format(set, name, predicted, f);
    vec![
        format_chart(
            "weight-bytes",
            Key::LabelTheWeightsBytesPerParameter.into(),
            Key::LabelBytesPerParameter,
            AxisUnit::Given,
        )
        .series([
            line(Key::LabelMeasured, false, &bytes_per_param),
            line(Key::LabelPredictedThisBackendSStorage, true, &|r| {
                predict::weight_bytes(shape, r.config.format, allocator) / params
            }),
        ]),
        format_chart(
            "inference-peak",
            Text::said(Key::PassChart).count("batch", set.base.config.batch),
            Key::LabelBytes,
            AxisUnit::Bytes,
        )
        .series([
            line(PEAK, false, &|r| r.peak_above_process()),
            line(Key::LabelWeights, false, &|r| {
                r.result.metric(QuantMetric::WeightBytes)
            }),
            line(Key::LabelThePassSPeakAboveLive, false, &|r| {
                r.result.metric(Metric::EvalBytes)
            }),
        ]),
        format_chart(
            "output-error",
            Key::LabelHowFarTheOutputMovesFrom.into(),
            Key::LabelErrorRelativeToTheF32Output,
            AxisUnit::Given,
        )
        .series([
            line(Key::LabelRmsDifferenceRmsOutput, false, &|r| {
                r.result.metric(QuantMetric::OutputRmsRelativeError)
            }),
            line(
                Key::LabelLargestDifferenceLargestOutputTheCheck,
                false,
                &max_relative_error,
            ),
            line(Key::LabelTheCheckSTolerance, true, &|_| TOLERANCE),
        ]),
        format_chart(
            "throughput",
            Key::LabelInferenceThroughput.into(),
            Key::LabelThroughputSamplesS,
            AxisUnit::Given,
        )
        .series([Series::throughput(
            Key::LabelMedianBarsFastestAndSlowest,
            set.rows.iter().map(|r| (x_of(r.config.format), r.result)),
        )]),
    ]
}

/// The bitsandbytes figures beside ours, per parameter.
fn published(set: &Set<'_, '_>) -> PublishedFigure<Text> {
    let per_param = |t: Text, name: &'static str, format: WeightFormat| match of(set.rows, format) {
        Some(r) => t.number(name, bytes_per_param(r)),
        None => t,
    };
    let ours = Text::said(Key::PublishedOurs)
        .number("host", u8::from(set.allocator().counts_host_copies()));
    let f16 = WeightFormat::Float {
        float: results::FloatStorage::F16,
    };
    let ours = per_param(ours, "f16", f16);
    let ours = per_param(ours, "q8", WeightFormat::Q8_BLOCK);
    PublishedFigure {
        source: Text::said(Key::PublishedSource),
        claim: Text::said(Key::PublishedClaim),
        ours: per_param(ours, "q4", WeightFormat::Q4_BLOCK),
    }
}

/// The ranked fix a format is, where it is one.
fn ranked(format: WeightFormat) -> Option<Fix> {
    match format {
        WeightFormat::Quantized { bits: Bits::Q8, .. } => Some(Fix::InferInt8),
        WeightFormat::Quantized { bits: Bits::Q4, .. } => Some(Fix::InferInt4),
        _ => None,
    }
}

/// Every check of the 8- and 4-bit rows, as checks of their ranked fix.
fn fix_checks(rows: &[R<'_>]) -> Vec<FixCheck> {
    rows.iter()
        .filter_map(|r| Some((ranked(r.config.format)?, r)))
        .flat_map(|(fix, r)| {
            r.result
                .checks
                .iter()
                .map(move |c| FixCheck::new(fix, TechniqueId::Quantization, r.id, c.clone()))
        })
        .collect()
}

/// The index rows: 8 bits with a scale per block, then 4 bits.
fn headlines(set: &Set<'_, '_>) -> (Headline<Text>, Option<Headline<Text>>) {
    let (base, q8) = (set.base, set.q8);
    let side = |r: &R<'_>| Side::with_peak(PEAK, r.peak_above_process());
    let batch = base.config.batch;
    let headline = Headline::versus(
        Text::said(Key::Headline).count("batch", batch),
        side(base),
        side(q8),
        Correctness::of_checks(base.result.checks.iter().chain(&q8.result.checks))
            .unwrap_or(Correctness::Unknown),
        check_detail(q8),
    )
    .variant(&q8.config.format.label())
    .timed_by(HEADLINE)
    .of_fix(Fix::InferInt8);
    let q4 = of(set.rows, WeightFormat::Q4_BLOCK).map(|q4| {
        Headline::versus(
            Text::said(Key::Q4Headline).count("batch", batch),
            side(base),
            side(q4),
            verdict(q4),
            check_detail(q4),
        )
        .variant(&q4.config.format.label())
        .of_fix(Fix::InferInt4)
    });
    (headline, q4)
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
        let set = Set {
            rows: &rows,
            base,
            q8,
        };
        let (headline, q4) = headlines(&set);
        Analysis::new(headline)
            .secondary(q4)
            .findings(findings(&set, paired))
            .comparisons(predictions(&set))
            .charts(charts(&set))
            .published([published(&set)])
            .fix_checks(fix_checks(&rows))
    }
}
