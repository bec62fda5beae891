//! The batch-size sweep's conclusions: the activation fit and the crossover, predictions beside
//! measurements, charts and the index row.

use results::keys::batch_size::Key;
use results::keys::CommonKey;
use results::{
    paired::find, Analysis, AxisUnit, Chart, Comparison, ComparisonSpec, Correctness, Headline,
    LinearFit, MeasuredPoint, Metric, PairedComparison, Phase, PublishedFigure, ReportedFit, Scale,
    Series, Side, Text,
};

use super::{predict, BatchSize};
use crate::bracket;
use crate::harness::models::ModelShape;
use crate::harness::train::TrainConfig;
use crate::technique::{Analyse, Row};
use crate::workloads::{self, Axis};

/// The id of the headline's paired comparison.
const HEADLINE: &str = "headline";

/// The headline's comparison: the largest batch (the baseline) against the smallest.
pub(super) fn comparisons(rows: &[Row<'_, TrainConfig>]) -> Vec<ComparisonSpec> {
    let mlp = workloads::mlp_rows(rows);
    let small = mlp.iter().min_by_key(|r| r.config.batch);
    let large = mlp.iter().max_by_key(|r| r.config.batch);
    match (small, large) {
        (Some(small), Some(large)) if small.id != large.id => {
            vec![ComparisonSpec::new(HEADLINE, large.id, small.id)]
        }
        _ => Vec::new(),
    }
}

impl Analyse for BatchSize {
    /// The analysis of a batch-size sweep.
    fn analyse(
        &self,
        rows: Vec<Row<'_, TrainConfig>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis<Text> {
        let (mut rows, mut transformer) = workloads::split(rows);
        rows.sort_by_key(|r| r.config.batch);
        transformer.sort_by_key(|r| r.config.batch);
        let correctness = Correctness::of(points);
        let (Some(small), Some(large)) = (rows.first(), rows.last()) else {
            return Analysis::unmeasured(correctness);
        };
        let shape = large.config.shape;
        let section = transformer_section(&transformer);

        let activation_pts: Vec<(f64, f64)> = rows
            .iter()
            .map(|r| (batch(r), r.result.metric(Metric::ActivationBytes)))
            .collect();
        let fit = LinearFit::fit(&activation_pts);
        let grad_bytes = large.result.metric(Metric::GradBytes);

        let mut findings = Vec::new();
        let mut fits = Vec::new();
        if let Some(fit) = &fit {
            findings.push(
                Text::said(Key::ActivationsFit)
                    .bytes("slope", fit.slope)
                    .count("sizes", fit.n)
                    .number("r_squared", fit.r_squared)
                    .bytes("intercept", fit.intercept),
            );
            fits.push(ReportedFit {
                what: Text::said(Key::FitActivations),
                fit: fit.clone(),
            });
            if let Some(crossover) = fit.solve(grad_bytes) {
                let above: Vec<Text> = rows
                    .iter()
                    .filter(|r| batch(r) > crossover)
                    .map(|r| Text::said(CommonKey::Number).number("value", batch(r)))
                    .collect();
                findings.push(
                    Text::said(Key::Crossover)
                        .bytes("gradients", grad_bytes)
                        .number("batch", crossover)
                        .list("above", above),
                );
            }
        }
        findings.push(
            Text::said(Key::LazyInit)
                .bytes(
                    "after_init",
                    large.result.metric(Metric::ParamBytesAfterInit),
                )
                .count("params", shape.num_params())
                .bytes("params_bytes", large.result.metric(Metric::ParamBytes)),
        );
        findings.extend(fixed_cost_per_step(&rows));
        let peak_small = small.result.peak_bytes() as f64;
        let peak_large = large.result.peak_bytes() as f64;
        findings.push(
            Text::said(Key::PeaksRange)
                .number("small", batch(small))
                .number("large", batch(large))
                .bytes("peak_small", peak_small)
                .bytes("peak_large", peak_large),
        );
        findings.extend(
            paired
                .iter()
                .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id)),
        );
        let (bracket_findings, bracket_comparisons) = device_brackets(&rows);
        findings.extend(bracket_findings);
        debug_assert!(find(paired, HEADLINE).is_none_or(|c| c.spec.baseline == large.id));

        let p = shape.num_params() as f64;
        let mut comparisons = vec![
            Comparison {
                quantity: Key::LabelParameters.into(),
                predicted_bytes: predict::param_bytes(shape),
                measured_bytes: large.result.metric(Metric::ParamBytes),
                measured_upper_bytes: None,
                note: Text::said(Key::ParamsNote).count("params", shape.num_params()),
            },
            Comparison {
                quantity: Key::LabelAdamStateTwoMoments.into(),
                predicted_bytes: predict::adam_state_bytes(shape),
                measured_bytes: large.result.metric(Metric::OptimizerStateBytes),
                measured_upper_bytes: None,
                note: Text::said(Key::AdamNote),
            },
            Comparison {
                quantity: Key::LabelParameterGradients.into(),
                predicted_bytes: predict::grad_bytes(shape),
                measured_bytes: grad_bytes,
                measured_upper_bytes: None,
                note: Text::said(Key::GradsNote),
            },
            activations_per_sample(large, fit.as_ref(), shape),
            Comparison {
                quantity: Text::said(Key::StepQuantity).number("batch", batch(large)),
                predicted_bytes: predict::step_peak(shape, batch(large)),
                measured_bytes: peak_large,
                measured_upper_bytes: large.peak_upper(),
                note: Text::said(Key::StepNote)
                    .bytes("process", large.result.metric(Metric::ProcessBaselineBytes))
                    .bytes("runtime", large.result.metric(Metric::RuntimeBytes)),
            },
        ];
        comparisons.extend(bracket_comparisons);

        let throughput = Series::throughput(
            Text::said(Key::LabelSamplesSMedianBarsFastestAnd),
            rows.iter().map(|r| (batch(r), r.result)),
        );
        let peak_of = |phase: Phase| -> Vec<(f64, f64)> {
            rows.iter()
                .map(|r| {
                    (
                        batch(r),
                        r.result
                            .phase(phase)
                            .map_or(f64::NAN, |p| p.peak_bytes as f64),
                    )
                })
                .collect()
        };
        let charts = vec![
            Chart {
                id: "peak-vs-batch".into(),
                title: Text::said(Key::LabelPeakMemoryOfATrainingStep),
                x_label: Key::LabelBatchSizeSamples.into(),
                y_label: Key::LabelBytesInUse.into(),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Bytes,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: vec![
                    Series::line(
                        Key::LabelStepPeakMeasured,
                        false,
                        rows.iter()
                            .map(|r| (batch(r), r.result.peak_bytes() as f64))
                            .collect(),
                    ),
                    Series::line(
                        Key::LabelForwardPeakMeasured,
                        false,
                        peak_of(Phase::Forward),
                    ),
                    Series::line(
                        Key::LabelBackwardPeakMeasured,
                        false,
                        peak_of(Phase::Backward),
                    ),
                    Series::line(
                        Text::said(Key::LabelLiveBeforeTheStepModelAdam),
                        false,
                        rows.iter()
                            .map(|r| (batch(r), r.result.metric(Metric::LiveBeforeStepBytes)))
                            .collect(),
                    ),
                    Series::line(
                        Key::LabelStepPeakPredicted,
                        true,
                        rows.iter()
                            .map(|r| (batch(r), predict::step_peak(r.config.shape, batch(r))))
                            .collect(),
                    ),
                ],
            },
            Chart {
                id: "components-vs-batch".into(),
                title: Text::said(Key::LabelWhereTheBytesOfAStep),
                x_label: Key::LabelBatchSizeSamples.into(),
                y_label: Key::LabelBytes.into(),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Bytes,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: [
                    (Text::from(Key::LabelParameters2), Metric::ParamBytes),
                    (Text::from(Key::LabelAdamState), Metric::OptimizerStateBytes),
                    (Text::from(Key::LabelInputsAndTargets), Metric::InputBytes),
                    (
                        Text::said(Key::LabelProcessBeforeTheModelThreadPool),
                        Metric::ProcessBaselineBytes,
                    ),
                    (
                        Text::said(Key::LabelBackendBuffersAllocatedByTheFirst),
                        Metric::RuntimeBytes,
                    ),
                    (
                        Text::said(Key::LabelActivationsForwardPeakAboveLive),
                        Metric::ActivationBytes,
                    ),
                    (Text::from(Key::LabelParameterGradients2), Metric::GradBytes),
                ]
                .into_iter()
                .map(|(name, metric)| {
                    Series::line(
                        name,
                        false,
                        rows.iter()
                            .map(|r| (batch(r), r.result.metric(metric)))
                            .collect(),
                    )
                })
                .collect(),
            },
            Chart {
                id: "activations-vs-gradients".into(),
                title: Text::said(Key::LabelWhatSetsThePeakActivationsAgainst),
                x_label: Key::LabelBatchSizeSamples.into(),
                y_label: Key::LabelBytes.into(),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Bytes,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: {
                    let mut s = vec![
                        Series::line(
                            Text::said(Key::LabelActivationsKeptByForwardMeasured),
                            false,
                            activation_pts.iter().map(|&(b, v)| (b, v)).collect(),
                        ),
                        Series::line(
                            Key::LabelParameterGradientsMeasured,
                            false,
                            rows.iter()
                                .map(|r| (batch(r), r.result.metric(Metric::GradBytes)))
                                .collect(),
                        ),
                    ];
                    if let Some(fit) = &fit {
                        s.push(Series::line(
                            Key::LabelActivationsFittedLine,
                            true,
                            rows.iter()
                                .map(|r| (batch(r), fit.predict(batch(r))))
                                .collect(),
                        ));
                    }
                    s
                },
            },
            Chart {
                id: "throughput-vs-batch".into(),
                title: Text::said(Key::LabelTrainingThroughputAgainstBatchSize),
                x_label: Key::LabelBatchSizeSamples.into(),
                y_label: Key::LabelThroughputSamplesS.into(),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Given,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: vec![throughput],
            },
        ];

        let mut charts = charts;
        if let Some((chart, lines)) = workloads::timeline_chart(
            "memory-timeline",
            Text::said(Key::LabelMemoryThroughOneTrainingStepThe),
            &[small, large],
        ) {
            charts.insert(1, chart);
            findings.extend(lines);
        }
        section.append_to(&mut findings, &mut comparisons, &mut charts);

        let state_bytes = large.result.metric(Metric::ParamBytes)
            + grad_bytes
            + large.result.metric(Metric::OptimizerStateBytes);
        let published = vec![PublishedFigure {
            source: Text::said(Key::PublishedSource),
            claim: Text::said(Key::PublishedClaim),
            ours: Text::said(Key::PublishedOurs)
                .number("per_param", state_bytes / p)
                .bytes("state", state_bytes)
                .count("params", shape.num_params()),
        }];

        Analysis {
            fix_table: None,
            headline: Headline::versus(
                Text::said(Key::Headline)
                    .number("large", batch(large))
                    .number("small", batch(small)),
                Side::step(large.result),
                Side::step(small.result),
                correctness,
                Text::said(Key::SweepDetail),
            )
            .timed_by(HEADLINE),
            secondary_headlines: vec![],
            findings,
            comparisons,
            fits,
            charts,
            published,
        }
    }
}

/// A point's batch size, as the x of the charts and fits.
fn batch(row: &Row<'_, TrainConfig>) -> f64 {
    row.config.batch as f64
}

/// Where a step's time goes as the batch shrinks: step time fitted against the batch (time per
/// sample and a fixed time per step), and the phases of the smallest batch's step. The fixed
/// part decides when a smaller batch, or accumulation over micro-batches, costs time.
fn fixed_cost_per_step(rows: &[Row<'_, TrainConfig>]) -> Option<Text> {
    let small = rows.first()?;
    let points: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (batch(r), r.result.step.median_s))
        .collect();
    let fit = LinearFit::fit(&points)?;
    let phases = small
        .result
        .phase_times
        .iter()
        .map(|t| {
            Text::said(Key::PhaseShare)
                .name("phase", &t.phase)
                .seconds("time", t.timing.median_s)
                .number(
                    "share",
                    t.timing.median_s / small.result.step.median_s * 100.0,
                )
        })
        .collect();
    Some(
        Text::said(Key::FixedCost)
            .seconds("slope", fit.slope)
            .seconds("intercept", fit.intercept)
            .count("sizes", fit.n)
            .number("r_squared", fit.r_squared)
            .count("batch", small.config.batch)
            .seconds("step", small.result.step.median_s)
            .list("phases", phases),
    )
}

/// The forward pass's activations per sample against the rule: on the CPU, the slope of the
/// exact forward peaks against the batch; on a device, whose peaks are brackets, the largest
/// batch's forward bracket above its start, per sample (a slope fitted through lower bounds
/// would mix bounds that caught the loss's transient with bounds that did not).
fn activations_per_sample(
    large: &Row<'_, TrainConfig>,
    fit: Option<&LinearFit>,
    shape: ModelShape,
) -> Comparison<Text> {
    let predicted = predict::activation_bytes_per_sample(shape);
    let b = batch(large);
    match bracket::added(large, Phase::Forward, b) {
        Some((lower, upper)) => Comparison::new(
            Key::LabelActivationsPerSample,
            predicted,
            lower,
            Text::said(Key::ActivationsNoteBracket).number("batch", b),
        )
        .bracketed(Some(upper)),
        None => Comparison::new(
            Key::LabelActivationsPerSample,
            predicted,
            fit.map_or(f64::NAN, |f| f.slope),
            Text::said(Key::ActivationsNoteFit),
        ),
    }
}

/// On a device backend (phases bracketed): the forward and backward peaks of the smallest and
/// largest MLP batch, bracketed, beside the rules' forward peak and step peak (backward starts
/// with every kept activation and ends with every gradient). Nothing on the CPU.
fn device_brackets(rows: &[Row<'_, TrainConfig>]) -> (Vec<Text>, Vec<Comparison<Text>>) {
    let ends: Vec<&Row<'_, TrainConfig>> = match (rows.first(), rows.last()) {
        (Some(a), Some(b)) if a.id != b.id => vec![a, b],
        (Some(a), _) => vec![a],
        _ => Vec::new(),
    };
    let label =
        |r: &Row<'_, TrainConfig>| Text::said(Key::BracketPoint).count("batch", r.config.batch);
    let (mut findings, mut comparisons) = bracket::phase_brackets(
        &ends,
        Phase::Forward,
        Text::said(Key::BracketRuleForward),
        label,
        |r| predict::forward_peak(r.config.shape, batch(r)),
    );
    let (f, c) = bracket::phase_brackets(
        &ends,
        Phase::Backward,
        Text::said(Key::BracketRuleBackward),
        label,
        |r| predict::step_peak(r.config.shape, batch(r)),
    );
    findings.extend(f);
    comparisons.extend(c);
    (findings, comparisons)
}

/// The transformer's rows: the common section, and what the forward pass keeps per sequence
/// (fitted against the batch) beside the blocks' rule.
fn transformer_section(rows: &[Row<'_, TrainConfig>]) -> workloads::Section {
    let mut section = workloads::transformer_section(
        rows,
        &Axis {
            id: "batch",
            x_label: Key::LabelBatchSizeSequences.into(),
            x: &|c: &TrainConfig| c.batch as f64,
            x_scale: Scale::Log2,
            line: &|_| String::new(),
            predicted_forward: &|c: &TrainConfig| predict::forward_peak(c.shape, c.batch as f64),
            predicted_step: &|c: &TrainConfig| predict::step_peak(c.shape, c.batch as f64),
            note: Text::said(Key::TransformerNote),
        },
    );
    let Some(shape) = rows.first().and_then(|r| r.config.shape.transformer()) else {
        return section;
    };
    let kept: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (r.config.batch as f64, r.result.metric(Metric::GraphBytes)))
        .collect();
    if let Some(fit) = LinearFit::fit(&kept) {
        let predicted = predict::activation_bytes_per_sample(shape);
        section.findings.push(
            Text::said(Key::TransformerKept)
                .bytes("slope", fit.slope)
                .count("seq", shape.seq)
                .count("sizes", fit.n)
                .number("r_squared", fit.r_squared)
                .count("layers", shape.layers)
                .bytes("predicted", predicted),
        );
        section.comparisons.push(Comparison {
            quantity: Text::said(Key::TransformerKeptQuantity),
            predicted_bytes: predicted,
            measured_bytes: fit.slope,
            measured_upper_bytes: None,
            note: Text::said(Key::TransformerKeptNote)
                .count("layers", shape.layers)
                .count("seq", shape.seq),
        });
    }
    section
}
