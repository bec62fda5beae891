//! Quantized weights' conclusions: the weights' bytes per parameter against the byte model of
//! each backend, the inference pass's peak and its dequantized copy, the output's error against
//! f32, charts, published figures and the index rows.

use results::{Analysis, Chart, Check, Comparison, ComparisonSpec, Correctness, Headline, MeasuredPoint, Metric, PairedComparison, Phase, PublishedFigure, Scale, Series, Side, format::{self, mib}, paired::find};

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
const PEAK: &str = "inference peak above the process's own bytes";

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
fn check_detail(r: &R<'_>) -> String {
    r.result
        .checks
        .first()
        .map_or_else(|| "no check ran".to_string(), Check::sentence)
}

impl Analyse for Quantization {
    fn analyse(
        &self,
        rows: Vec<R<'_>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis {
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

        let mut findings = vec![format!(
            "The MLP ({} parameters, {} layers of width {}) at batch {}: its weights take {} in \
             f32 and {} as 8-bit values with a scale per block of 32 ({:.3} bytes per parameter); \
             an inference pass peaks {} above the process's own bytes with f32 weights and {} \
             with 8-bit ones.",
            params,
            shape.depth,
            shape.width,
            base.config.batch,
            format::bytes(base.result.metric(QuantMetric::WeightBytes)),
            format::bytes(q8.result.metric(QuantMetric::WeightBytes)),
            bytes_per_param(q8),
            format::bytes(base.peak_above_process()),
            format::bytes(q8.peak_above_process()),
        )];
        for r in &rows {
            findings.push(format!(
                "{}: weights {} ({:.3} B per parameter, {} predicted); the pass adds {} at its \
                 peak above what was live ({} predicted, of which {} is a layer's weight \
                 dequantized or widened to f32); output against f32: RMS error {:.2e} of the \
                 output's RMS, largest difference {:.2e} of the largest output ({}).",
                r.label,
                format::bytes(r.result.metric(QuantMetric::WeightBytes)),
                bytes_per_param(r),
                format::bytes(predict::weight_bytes(shape, r.config.format, allocator)),
                format::bytes(r.result.metric(Metric::EvalBytes)),
                format::bytes(predict::eval_bytes(
                    shape,
                    r.config.format,
                    r.config.batch,
                    allocator
                )),
                format::bytes(predict::weight_copy_bytes(
                    shape,
                    r.config.format,
                    allocator
                )),
                r.result.metric(QuantMetric::OutputRmsRelativeError),
                max_relative_error(r),
                match verdict(r) {
                    Correctness::Passed => "within the check's tolerance",
                    _ => "the check FAILED: the output changed",
                },
            ));
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
            findings.push(format!(
                "Every format's pass measured {} to {} above its rule at batch {} ({} to {} per \
                 sample): a buffer of about a layer's width per sample in f32 that the rule does \
                 not count. valid()'s pass on the no-grad page shows the same excess; its source is \
                 not separated here.",
                format::bytes(least),
                format::bytes(most),
                base.config.batch,
                format::bytes(least / base.config.batch as f64),
                format::bytes(most / base.config.batch as f64),
            ));
        }
        let block_bytes = |bits: Bits| {
            rows.iter()
                .filter(|r| matches!(r.config.format, WeightFormat::Quantized { bits: b, block: Some(_) } if b == bits))
                .map(|r| r.result.metric(QuantMetric::WeightBytes))
                .next()
        };
        if let (Some(q8_bytes), Some(q4_bytes)) = (block_bytes(Bits::Q8), block_bytes(Bits::Q4)) {
            findings.push(format!(
                "4-bit against 8-bit values (a scale per block of 32 each): {} against {} ({:+.1}%). \
                 {}",
                format::bytes(q4_bytes),
                format::bytes(q8_bytes),
                (q4_bytes / q8_bytes - 1.0) * 100.0,
                if allocator.counts_host_copies() {
                    "Flex stores every quantized value in one byte (`i8`), so fewer bits save no \
                     memory on the CPU backend; they only lose precision."
                } else {
                    "CubeCL packs the values into u32 words: eight 4-bit values where four 8-bit \
                     ones go."
                }
            ));
        }
        findings.push(format!(
            "The price of storing weights in fewer bytes is paid at run time: Burn 0.21's \
             `Linear` hands its weight to `linear` as a float tensor, which dequantizes the whole \
             weight (and bias) to f32 on every forward. The pass through 8-bit weights adds {} \
             at its peak against {} through f32 weights: the f32 copy of one layer's weight \
             ({}) sits on top of the activations. At a small batch it is the largest buffer \
             of the pass; it is one layer's, not the model's, so the saving grows with depth.",
            format::bytes(q8.result.metric(Metric::EvalBytes)),
            format::bytes(base.result.metric(Metric::EvalBytes)),
            format::bytes(predict::weight_copy_bytes(
                shape,
                q8.config.format,
                allocator
            )),
        ));
        let cost = |id: &str| {
            find(paired, id).map_or_else(
                || "not timed in pairs".to_string(),
                PairedComparison::cost_phrase,
            )
        };
        findings.push(format!(
            "Time per sample against f32 weights, each pass dequantizing every layer's weight: \
             8-bit with a scale per block of 32 {}; 8-bit with one scale per tensor {}.",
            cost(HEADLINE),
            cost(PER_TENSOR)
        ));
        findings.extend(paired.iter().map(PairedComparison::finding));
        findings.push(format!(
            "The check holds every format's output to {TOLERANCE} of the largest f32 output, \
             chosen before measuring. A format that misses it changed this model's result: a \
             finding of round-to-nearest quantization with min-max scales on this model, not a \
             bug. Methods that fit the quantization to the data (GPTQ, AWQ) or train with it are \
             not in Burn 0.21 and were not measured. The weights here are Burn's uniform \
             initialisation, without the outliers of trained weights, so per-tensor and per-block \
             scales err alike here; on trained weights the block scales are the ones to trust."
        ));

        let mut comparisons: Vec<Comparison> = rows
            .iter()
            .map(|r| {
                Comparison::new(
                    format!("weights, {}", r.label),
                    predict::weight_bytes(shape, r.config.format, allocator),
                    r.result.metric(QuantMetric::WeightBytes),
                    "values at their stored bytes (quantized: one byte each on Flex, packed in \
                     u32 words on CubeCL) plus one f32 scale per tensor or per block; measured: \
                     the change in live bytes across the conversion, added to the f32 model's",
                )
            })
            .collect();
        comparisons.extend(rows.iter().map(|r| {
            let predicted = predict::eval_bytes(shape, r.config.format, r.config.batch, allocator);
            let note = "the layer where the pass peaks: its input and output, plus the f32 copy \
                        of its weight and bias a quantized weight is dequantized into (and, for \
                        bf16 on Flex, the f32 copies matmul_bf16 multiplies)";
            match bracket::added(r, Phase::Evaluation, 1.0) {
                Some((lower, upper)) => Comparison::new(
                    format!("pass above live bytes, {}", r.label),
                    predicted,
                    lower,
                    format!("{note}; measured: the pass's bracket"),
                )
                .bracketed(Some(upper)),
                None => Comparison::new(
                    format!("pass above live bytes, {}", r.label),
                    predicted,
                    r.result.metric(Metric::EvalBytes),
                    note,
                ),
            }
        }));

        let categories: Vec<String> = WeightFormat::ALL.iter().map(|f| f.short()).collect();
        let by_format = |name: &str, predicted: bool, f: &dyn Fn(&R<'_>) -> f64| {
            Series::line(
                name,
                predicted,
                rows.iter().map(|r| (x_of(r.config.format), f(r))).collect(),
            )
        };
        let chart = |id: &str, title: &str, y_label: &str, series: Vec<Series>| Chart {
            id: id.into(),
            title: title.into(),
            x_label: "weight format (q8 /32: 8-bit values, a scale per block of 32)".into(),
            y_label: y_label.into(),
            x_scale: Scale::Linear,
            categories: categories.clone(),
            series,
        };
        let charts = vec![
            chart(
                "weight-bytes",
                "The weights' bytes per parameter",
                "bytes per parameter",
                vec![
                    by_format("measured", false, &bytes_per_param),
                    by_format("predicted (this backend's storage)", true, &|r| {
                        predict::weight_bytes(shape, r.config.format, allocator) / params as f64
                    }),
                ],
            ),
            chart(
                "inference-peak",
                &format!("One inference pass, batch {}", base.config.batch),
                "bytes (MiB)",
                vec![
                    by_format(PEAK, false, &|r| mib(r.peak_above_process())),
                    by_format("weights", false, &|r| {
                        mib(r.result.metric(QuantMetric::WeightBytes))
                    }),
                    by_format("the pass's peak above live bytes", false, &|r| {
                        mib(r.result.metric(Metric::EvalBytes))
                    }),
                ],
            ),
            chart(
                "output-error",
                "How far the output moves from f32's",
                "error relative to the f32 output",
                vec![
                    by_format("RMS difference / RMS output", false, &|r| {
                        r.result.metric(QuantMetric::OutputRmsRelativeError)
                    }),
                    by_format(
                        "largest difference / largest output (the check)",
                        false,
                        &max_relative_error,
                    ),
                    by_format("the check's tolerance", true, &|_| TOLERANCE),
                ],
            ),
            chart(
                "throughput",
                "Inference throughput",
                "throughput (samples/s)",
                vec![Series::throughput(
                    "median; bars: fastest and slowest",
                    rows.iter().map(|r| (x_of(r.config.format), r.result)),
                )],
            ),
        ];

        let per_param = |format: WeightFormat| {
            of(&rows, format).map_or("not measured".to_string(), |r| {
                format!("{:.2}", bytes_per_param(r))
            })
        };
        let published = vec![PublishedFigure {
            source: "the articles' rule for weights alone".into(),
            claim: "7B parameters take 14 GB in 16 bits, 7 GB in 8 bits, 3.5 GB in 4 bits: 2, 1 \
                    and 0.5 bytes per parameter"
                .into(),
            ours: format!(
                "{} (f16), {} (8-bit, block of 32) and {} (4-bit, block of 32) bytes per \
                 parameter measured on this backend, scales included{}",
                per_param(WeightFormat::Float {
                    float: results::FloatStorage::F16
                }),
                per_param(WeightFormat::Q8_BLOCK),
                per_param(WeightFormat::Q4_BLOCK),
                if allocator.counts_host_copies() {
                    ": Flex keeps 4-bit values in a byte each, so the rule's 4-bit figure holds \
                     only on CubeCL backends"
                } else {
                    ""
                }
            ),
        }];

        let side = |r: &R<'_>| Side::with_peak(PEAK, r.peak_above_process());
        let mut secondary_headlines = Vec::new();
        if let Some(q4) = of(&rows, WeightFormat::Q4_BLOCK) {
            secondary_headlines.push(
                Headline::versus(
                    format!(
                        "inference at batch {}: f32 weights against 4-bit weights, a scale per \
                         block of 32 ({PEAK})",
                        base.config.batch
                    ),
                    side(base),
                    side(q4),
                    verdict(q4),
                    check_detail(q4),
                )
                .variant(&q4.config.format.label()),
            );
        }
        Analysis {
            headline: Headline::versus(
                format!(
                    "inference at batch {}: f32 weights against 8-bit weights, a scale per block \
                     of 32 ({PEAK}; time per sample)",
                    base.config.batch
                ),
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
