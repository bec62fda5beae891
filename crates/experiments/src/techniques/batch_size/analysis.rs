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

type R<'a> = Row<'a, TrainConfig>;

/// The MLP's sweep, read once: the rows by batch, the ends, and the activations' fit.
struct Sweep<'r, 'a> {
    rows: &'r [R<'a>],
    small: &'r R<'a>,
    large: &'r R<'a>,
    fit: Option<LinearFit>,
}

impl Sweep<'_, '_> {
    fn shape(&self) -> ModelShape {
        self.large.config.shape
    }

    fn grads(&self) -> f64 {
        self.large.result.metric(Metric::GradBytes)
    }

    /// A metric of every row against its batch.
    fn line(&self, f: &dyn Fn(&R<'_>) -> f64) -> Vec<(f64, f64)> {
        self.rows.iter().map(|r| (batch(r), f(r))).collect()
    }
}

/// The activations' fit against the batch, and the batch past which they outweigh the
/// gradients.
fn fit_findings(sweep: &Sweep<'_, '_>) -> Vec<Text> {
    let Some(fit) = &sweep.fit else {
        return Vec::new();
    };
    let mut findings = vec![Text::said(Key::ActivationsFit)
        .bytes("slope", fit.slope)
        .count("sizes", fit.n)
        .number("r_squared", fit.r_squared)
        .bytes("intercept", fit.intercept)];
    if let Some(crossover) = fit.solve(sweep.grads()) {
        let above: Vec<Text> = sweep
            .rows
            .iter()
            .filter(|r| batch(r) > crossover)
            .map(|r| Text::said(CommonKey::Number).number("value", batch(r)))
            .collect();
        findings.push(
            Text::said(Key::Crossover)
                .bytes("gradients", sweep.grads())
                .number("batch", crossover)
                .list("above", above),
        );
    }
    findings
}

/// What the sweep shows, in the page's order.
fn findings(sweep: &Sweep<'_, '_>, paired: &[PairedComparison]) -> Vec<Text> {
    let (small, large) = (sweep.small, sweep.large);
    let mut findings = fit_findings(sweep);
    findings.push(
        Text::said(Key::LazyInit)
            .bytes(
                "after_init",
                large.result.metric(Metric::ParamBytesAfterInit),
            )
            .count("params", sweep.shape().num_params())
            .bytes("params_bytes", large.result.metric(Metric::ParamBytes)),
    );
    findings.extend(fixed_cost_per_step(sweep.rows));
    findings.push(
        Text::said(Key::PeaksRange)
            .number("small", batch(small))
            .number("large", batch(large))
            .bytes("peak_small", small.peak())
            .bytes("peak_large", large.peak()),
    );
    findings.extend(
        paired
            .iter()
            .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id)),
    );
    findings.extend(device_brackets(sweep.rows).0);
    findings
}

/// The components of the largest batch's step, and its peak, beside their rules.
fn predictions(sweep: &Sweep<'_, '_>) -> Vec<Comparison<Text>> {
    let (large, shape) = (sweep.large, sweep.shape());
    let mut comparisons = vec![
        Comparison::new(
            Key::LabelParameters,
            predict::param_bytes(shape),
            large.result.metric(Metric::ParamBytes),
            Text::said(Key::ParamsNote).count("params", shape.num_params()),
        ),
        Comparison::new(
            Key::LabelAdamStateTwoMoments,
            predict::adam_state_bytes(shape),
            large.result.metric(Metric::OptimizerStateBytes),
            Key::AdamNote,
        ),
        Comparison::new(
            Key::LabelParameterGradients,
            predict::grad_bytes(shape),
            sweep.grads(),
            Key::GradsNote,
        ),
        activations_per_sample(large, sweep.fit.as_ref(), shape),
        Comparison::new(
            Text::said(Key::StepQuantity).number("batch", batch(large)),
            predict::step_peak(shape, batch(large)),
            large.peak(),
            Text::said(Key::StepNote)
                .bytes("process", large.result.metric(Metric::ProcessBaselineBytes))
                .bytes("runtime", large.result.metric(Metric::RuntimeBytes)),
        )
        .bracketed(large.peak_upper()),
    ];
    comparisons.extend(device_brackets(sweep.rows).1);
    comparisons
}

/// The step's and each phase's peak against the batch, with the rule's.
fn peak_chart(sweep: &Sweep<'_, '_>) -> Chart<Text> {
    let phase = |phase: Phase| {
        sweep.line(&move |r: &R<'_>| {
            r.result
                .phase(phase)
                .map_or(f64::NAN, |p| p.peak_bytes as f64)
        })
    };
    Chart::new(
        "peak-vs-batch",
        Key::LabelPeakMemoryOfATrainingStep,
        Key::LabelBatchSizeSamples,
        Key::LabelBytesInUse,
    )
    .x(AxisUnit::Given, Scale::Log2)
    .y(AxisUnit::Bytes)
    .series([
        Series::line(Key::LabelStepPeakMeasured, false, sweep.line(&|r| r.peak())),
        Series::line(Key::LabelForwardPeakMeasured, false, phase(Phase::Forward)),
        Series::line(
            Key::LabelBackwardPeakMeasured,
            false,
            phase(Phase::Backward),
        ),
        Series::line(
            Key::LabelLiveBeforeTheStepModelAdam,
            false,
            sweep.line(&|r| r.result.metric(Metric::LiveBeforeStepBytes)),
        ),
        Series::line(
            Key::LabelStepPeakPredicted,
            true,
            sweep.line(&|r| predict::step_peak(r.config.shape, batch(r))),
        ),
    ])
}

/// Where the bytes of a step go, component by component, against the batch.
fn components_chart(sweep: &Sweep<'_, '_>) -> Chart<Text> {
    let components = [
        (Key::LabelParameters, Metric::ParamBytes),
        (Key::LabelAdamState, Metric::OptimizerStateBytes),
        (Key::LabelInputsAndTargets, Metric::InputBytes),
        (
            Key::LabelProcessBeforeTheModelThreadPool,
            Metric::ProcessBaselineBytes,
        ),
        (
            Key::LabelBackendBuffersAllocatedByTheFirst,
            Metric::RuntimeBytes,
        ),
        (
            Key::LabelActivationsForwardPeakAboveLive,
            Metric::ActivationBytes,
        ),
        (Key::LabelParameterGradients, Metric::GradBytes),
    ];
    Chart::new(
        "components-vs-batch",
        Key::LabelWhereTheBytesOfAStep,
        Key::LabelBatchSizeSamples,
        Key::LabelBytes,
    )
    .x(AxisUnit::Given, Scale::Log2)
    .y(AxisUnit::Bytes)
    .series(
        components.map(|(name, metric)| {
            Series::line(name, false, sweep.line(&|r| r.result.metric(metric)))
        }),
    )
}

/// What sets the peak: the activations kept against the gradients, with the fit.
fn activations_chart(sweep: &Sweep<'_, '_>) -> Chart<Text> {
    let fitted = sweep.fit.as_ref().map(|fit| {
        Series::line(
            Key::LabelActivationsFittedLine,
            true,
            sweep.line(&|r| fit.predict(batch(r))),
        )
    });
    Chart::new(
        "activations-vs-gradients",
        Key::LabelWhatSetsThePeakActivationsAgainst,
        Key::LabelBatchSizeSamples,
        Key::LabelBytes,
    )
    .x(AxisUnit::Given, Scale::Log2)
    .y(AxisUnit::Bytes)
    .series([
        Series::line(
            Key::LabelActivationsKeptByForwardMeasured,
            false,
            sweep.line(&|r| r.result.metric(Metric::ActivationBytes)),
        ),
        Series::line(
            Key::LabelParameterGradientsMeasured,
            false,
            sweep.line(&|r| r.result.metric(Metric::GradBytes)),
        ),
    ])
    .series(fitted)
}

/// Throughput against the batch.
fn throughput_chart(sweep: &Sweep<'_, '_>) -> Chart<Text> {
    Chart::new(
        "throughput-vs-batch",
        Key::LabelTrainingThroughputAgainstBatchSize,
        Key::LabelBatchSizeSamples,
        Key::LabelThroughputSamplesS,
    )
    .x(AxisUnit::Given, Scale::Log2)
    .series([Series::throughput(
        Key::LabelSamplesSMedianBarsFastestAnd,
        sweep.rows.iter().map(|r| (batch(r), r.result)),
    )])
}

/// Hugging Face's bytes per parameter beside ours.
fn published(sweep: &Sweep<'_, '_>) -> PublishedFigure<Text> {
    let large = sweep.large;
    let state_bytes = large.result.metric(Metric::ParamBytes)
        + sweep.grads()
        + large.result.metric(Metric::OptimizerStateBytes);
    PublishedFigure {
        source: Text::said(Key::PublishedSource),
        claim: Text::said(Key::PublishedClaim),
        ours: Text::said(Key::PublishedOurs)
            .number("per_param", state_bytes / sweep.shape().num_params() as f64)
            .bytes("state", state_bytes)
            .count("params", sweep.shape().num_params()),
    }
}

impl Analyse for BatchSize {
    /// The analysis of a batch-size sweep.
    fn analyse(
        &self,
        rows: Vec<R<'_>>,
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
        let activations: Vec<(f64, f64)> = rows
            .iter()
            .map(|r| (batch(r), r.result.metric(Metric::ActivationBytes)))
            .collect();
        let sweep = Sweep {
            rows: &rows,
            small,
            large,
            fit: LinearFit::fit(&activations),
        };
        debug_assert!(find(paired, HEADLINE).is_none_or(|c| c.spec.baseline == large.id));
        let mut findings = findings(&sweep, paired);
        let mut comparisons = predictions(&sweep);
        let mut charts = vec![
            peak_chart(&sweep),
            components_chart(&sweep),
            activations_chart(&sweep),
            throughput_chart(&sweep),
        ];
        if let Some((chart, lines)) = workloads::timeline_chart(
            "memory-timeline",
            Text::said(Key::LabelMemoryThroughOneTrainingStepThe),
            &[small, large],
        ) {
            charts.insert(1, chart);
            findings.extend(lines);
        }
        transformer_section(&transformer).append_to(&mut findings, &mut comparisons, &mut charts);
        let headline = Headline::versus(
            Text::said(Key::Headline)
                .number("large", batch(large))
                .number("small", batch(small)),
            Side::step(large.result),
            Side::step(small.result),
            correctness,
            Key::SweepDetail,
        )
        .timed_by(HEADLINE);
        Analysis::new(headline)
            .findings(findings)
            .comparisons(comparisons)
            .fits(sweep.fit.clone().map(|fit| ReportedFit {
                what: Text::said(Key::FitActivations),
                fit,
            }))
            .charts(charts)
            .published([published(&sweep)])
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
            line: &|_| None,
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
            regime: None,
        });
    }
    section
}
