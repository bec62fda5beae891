//! The batch-size sweep's conclusions: the activation fit and the crossover, predictions beside
//! measurements, charts and the index row.

use results::{Analysis, Chart, Comparison, ComparisonSpec, Correctness, Headline, LinearFit, MeasuredPoint, Metric, PairedComparison, Phase, PublishedFigure, ReportedFit, Scale, Series, Side, format::{self, mib}, paired::find};

use super::{predict, BatchSize};
use crate::bracket;
use crate::harness::models::ModelShape;
use crate::harness::train::TrainConfig;
use crate::technique::{Analyse, Row};
use crate::workloads_worded::{self as workloads, Axis};

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
    ) -> Analysis {
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
            findings.push(format!(
            "The forward pass keeps {} per sample for backward (least-squares fit over {} batch \
             sizes, R\u{b2} = {:.6}), on top of a fixed {}.",
            format::bytes(fit.slope),
            fit.n,
            fit.r_squared,
            format::bytes(fit.intercept)
        ));
            fits.push(ReportedFit {
                what: "bytes kept by the forward pass against batch size".into(),
                fit: fit.clone(),
            });
            if let Some(crossover) = fit.solve(grad_bytes) {
                let above: Vec<String> = rows
                    .iter()
                    .filter(|r| batch(r) > crossover)
                    .map(|r| format!("{}", batch(r)))
                    .collect();
                findings.push(format!(
                "Parameter gradients take {}; activations outgrow them at batch {:.0}. Below that \
                 the step peak is set by the gradients and a smaller batch saves little; above \
                 it (measured here: {}) the peak grows with the batch.",
                format::bytes(grad_bytes),
                crossover,
                if above.is_empty() {
                    "none".to_string()
                } else {
                    above.join(", ")
                }
            ));
            }
        }
        findings.push(format!(
            "Burn initialises parameters lazily: right after `init()` {} were live; the {} \
         parameters ({}) are allocated when first read.",
            format::bytes(large.result.metric(Metric::ParamBytesAfterInit)),
            shape.num_params(),
            format::bytes(large.result.metric(Metric::ParamBytes)),
        ));
        findings.extend(fixed_cost_per_step(&rows));
        let peak_small = small.result.peak_bytes() as f64;
        let peak_large = large.result.peak_bytes() as f64;
        findings.push(format!(
        "From batch {} to batch {} ({}x the samples) the step peak goes from {} to {} ({:.2}x).",
        batch(small),
        batch(large),
        batch(large) / batch(small),
        format::bytes(peak_small),
        format::bytes(peak_large),
        peak_large / peak_small,
    ));
        findings.extend(paired.iter().map(PairedComparison::finding));
        let (bracket_findings, bracket_comparisons) = device_brackets(&rows);
        findings.extend(bracket_findings);
        debug_assert!(find(paired, HEADLINE).is_none_or(|c| c.spec.baseline == large.id));

        let p = shape.num_params() as f64;
        let mut comparisons = vec![
            Comparison {
                quantity: "parameters".into(),
                predicted_bytes: predict::param_bytes(shape),
                measured_bytes: large.result.metric(Metric::ParamBytes),
                measured_upper_bytes: None,
                note: format!("{} parameters x 4 bytes (f32)", shape.num_params()),
            },
            Comparison {
                quantity: "Adam state (two moments)".into(),
                predicted_bytes: predict::adam_state_bytes(shape),
                measured_bytes: large.result.metric(Metric::OptimizerStateBytes),
                measured_upper_bytes: None,
                note: "8 bytes per parameter; measured as what stays live after the first step"
                    .into(),
            },
            Comparison {
                quantity: "parameter gradients".into(),
                predicted_bytes: predict::grad_bytes(shape),
                measured_bytes: grad_bytes,
                measured_upper_bytes: None,
                note: "4 bytes per parameter; measured as what backward leaves live".into(),
            },
            activations_per_sample(large, fit.as_ref(), shape),
            Comparison {
                quantity: format!("step peak at batch {}", batch(large)),
                predicted_bytes: predict::step_peak(shape, batch(large)),
                measured_bytes: peak_large,
                measured_upper_bytes: large.peak_upper(),
                note: format!(
                    "model + Adam state + inputs + max(activations, gradients). Not predicted: {} \
                 live in the process before the model was built (thread pool, matmul slabs), \
                 {} of backend buffers allocated by the first pass, and temporaries inside \
                 backward",
                    format::bytes(large.result.metric(Metric::ProcessBaselineBytes)),
                    format::bytes(large.result.metric(Metric::RuntimeBytes))
                ),
            },
        ];
        comparisons.extend(bracket_comparisons);

        let throughput = Series::throughput(
            "samples/s (median; bars: fastest and slowest repeat)",
            rows.iter().map(|r| (batch(r), r.result)),
        );
        let peak_of = |phase: Phase| -> Vec<(f64, f64)> {
            rows.iter()
                .map(|r| {
                    (
                        batch(r),
                        mib(r
                            .result
                            .phase(phase)
                            .map_or(f64::NAN, |p| p.peak_bytes as f64)),
                    )
                })
                .collect()
        };
        let charts = vec![
            Chart {
                id: "peak-vs-batch".into(),
                title: "Peak memory of a training step against batch size".into(),
                x_label: "batch size (samples)".into(),
                y_label: "bytes in use (MiB)".into(),
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: vec![
                    Series::line(
                        "step peak (measured)",
                        false,
                        rows.iter()
                            .map(|r| (batch(r), mib(r.result.peak_bytes() as f64)))
                            .collect(),
                    ),
                    Series::line("forward peak (measured)", false, peak_of(Phase::Forward)),
                    Series::line("backward peak (measured)", false, peak_of(Phase::Backward)),
                    Series::line(
                        "live before the step: model, Adam state, inputs",
                        false,
                        rows.iter()
                            .map(|r| (batch(r), mib(r.result.metric(Metric::LiveBeforeStepBytes))))
                            .collect(),
                    ),
                    Series::line(
                        "step peak (predicted)",
                        true,
                        rows.iter()
                            .map(|r| (batch(r), mib(predict::step_peak(r.config.shape, batch(r)))))
                            .collect(),
                    ),
                ],
            },
            Chart {
                id: "components-vs-batch".into(),
                title: "Where the bytes of a step go, component by component".into(),
                x_label: "batch size (samples)".into(),
                y_label: "bytes (MiB)".into(),
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: [
                    ("parameters", Metric::ParamBytes),
                    ("Adam state", Metric::OptimizerStateBytes),
                    ("inputs and targets", Metric::InputBytes),
                    (
                        "process before the model (thread pool, matmul slabs)",
                        Metric::ProcessBaselineBytes,
                    ),
                    (
                        "backend buffers allocated by the first pass",
                        Metric::RuntimeBytes,
                    ),
                    (
                        "activations (forward peak above live)",
                        Metric::ActivationBytes,
                    ),
                    ("parameter gradients", Metric::GradBytes),
                ]
                .into_iter()
                .map(|(name, metric)| {
                    Series::line(
                        name,
                        false,
                        rows.iter()
                            .map(|r| (batch(r), mib(r.result.metric(metric))))
                            .collect(),
                    )
                })
                .collect(),
            },
            Chart {
                id: "activations-vs-gradients".into(),
                title: "What sets the peak: activations against parameter gradients".into(),
                x_label: "batch size (samples)".into(),
                y_label: "bytes (MiB)".into(),
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: {
                    let mut s = vec![
                        Series::line(
                            "activations kept by forward (measured)",
                            false,
                            activation_pts.iter().map(|&(b, v)| (b, mib(v))).collect(),
                        ),
                        Series::line(
                            "parameter gradients (measured)",
                            false,
                            rows.iter()
                                .map(|r| (batch(r), mib(r.result.metric(Metric::GradBytes))))
                                .collect(),
                        ),
                    ];
                    if let Some(fit) = &fit {
                        s.push(Series::line(
                            "activations, fitted line",
                            true,
                            rows.iter()
                                .map(|r| (batch(r), mib(fit.predict(batch(r)))))
                                .collect(),
                        ));
                    }
                    s
                },
            },
            Chart {
                id: "throughput-vs-batch".into(),
                title: "Training throughput against batch size".into(),
                x_label: "batch size (samples)".into(),
                y_label: "throughput (samples/s)".into(),
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: vec![throughput],
            },
        ];

        let mut charts = charts;
        if let Some((chart, lines)) = workloads::timeline_chart(
            "memory-timeline",
            "Memory through one training step: the smallest and the largest batch",
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
            source: "accelerate `estimate-memory`; ZeRO (Rajbhandari et al. 2020)".into(),
            claim: "Adam in f32 needs 16 bytes per parameter for weights, gradients and optimizer \
                state (before activations)."
                .into(),
            ours: format!(
                "{:.2} bytes per parameter measured (weights + gradients + Adam state = {} for {} \
             parameters)",
                state_bytes / p,
                format::bytes(state_bytes),
                shape.num_params()
            ),
        }];

        Analysis {
        headline: Headline::versus(
            format!(
                "batch {} against batch {} (step peak; time per sample)",
                batch(large),
                batch(small)
            ),
            Side::step(large.result),
            Side::step(small.result),
            correctness,
            "a sweep, not a substitute: each batch size computes a different step, so there is \
             nothing to compare",
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
fn fixed_cost_per_step(rows: &[Row<'_, TrainConfig>]) -> Option<String> {
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
            format!(
                "{} {} ({:.0}%)",
                t.phase,
                format::seconds(t.timing.median_s),
                t.timing.median_s / small.result.step.median_s * 100.0
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let step_s = small.result.step.median_s;
    let share = if fit.intercept < step_s {
        format!(
            "is {:.0}% of the {} step",
            fit.intercept / step_s * 100.0,
            format::seconds(step_s)
        )
    } else {
        // A fit over noisy steps can put the intercept above the smallest step.
        format!(
            "is all of the {} step (the fitted intercept is larger)",
            format::seconds(step_s)
        )
    };
    Some(format!(
        "Step time grows by {} per sample on top of a fixed {} per step (least-squares fit of \
         the median step time over {} batch sizes, R\u{b2} = {:.3}): at batch {} the fixed part \
         {share}{}. Part of that fixed cost is the optimizer's update of every parameter, which \
         does not depend on the batch: a smaller batch pays it over fewer samples.",
        format::seconds(fit.slope),
        format::seconds(fit.intercept),
        fit.n,
        fit.r_squared,
        small.config.batch,
        if phases.is_empty() {
            String::new()
        } else {
            format!("; its phases: {phases}")
        }
    ))
}

/// The forward pass's activations per sample against the rule: on the CPU, the slope of the
/// exact forward peaks against the batch; on a device, whose peaks are brackets, the largest
/// batch's forward bracket above its start, per sample (a slope fitted through lower bounds
/// would mix bounds that caught the loss's transient with bounds that did not).
fn activations_per_sample(
    large: &Row<'_, TrainConfig>,
    fit: Option<&LinearFit>,
    shape: ModelShape,
) -> Comparison {
    let predicted = predict::activation_bytes_per_sample(shape);
    let rule = "forward peak: each hidden layer's Linear and ReLU outputs, the last Linear \
                output and the loss's difference (x 4 bytes)";
    let b = batch(large);
    match bracket::added(large, Phase::Forward, b) {
        Some((lower, upper)) => Comparison::new(
            "activations per sample",
            predicted,
            lower,
            format!(
                "{rule}; measured at batch {b}: the forward phase's bracket above what was live \
                 when it began, per sample (the lower bound's readings can miss the loss's \
                 square, alive only inside the pass)"
            ),
        )
        .bracketed(Some(upper)),
        None => Comparison::new(
            "activations per sample",
            predicted,
            fit.map_or(f64::NAN, |f| f.slope),
            format!("{rule}; measured as the slope of the fit"),
        ),
    }
}

/// On a device backend (phases bracketed): the forward and backward peaks of the smallest and
/// largest MLP batch, bracketed, beside the rules' forward peak and step peak (backward starts
/// with every kept activation and ends with every gradient). Nothing on the CPU.
fn device_brackets(rows: &[Row<'_, TrainConfig>]) -> (Vec<String>, Vec<Comparison>) {
    let ends: Vec<&Row<'_, TrainConfig>> = match (rows.first(), rows.last()) {
        (Some(a), Some(b)) if a.id != b.id => vec![a, b],
        (Some(a), _) => vec![a],
        _ => Vec::new(),
    };
    let label = |r: &Row<'_, TrainConfig>| format!("MLP at batch {}", r.config.batch);
    let (mut findings, mut comparisons) = bracket::phase_brackets(
        &ends,
        Phase::Forward,
        "model + Adam state + inputs + the forward pass's activations at its peak, the \
         CPU's rule: what it keeps and the loss's square for a moment",
        label,
        |r| predict::forward_peak(r.config.shape, batch(r)),
    );
    let (f, c) = bracket::phase_brackets(
        &ends,
        Phase::Backward,
        "model + Adam state + inputs + max(what the forward pass kept, the parameter \
         gradients): the step-peak rule, which leaves out what backward holds for a moment \
         beside them",
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
            x_label: "batch size (sequences)",
            x: &|c: &TrainConfig| c.batch as f64,
            x_scale: Scale::Log2,
            line: &|_| String::new(),
            predicted_forward: &|c: &TrainConfig| predict::forward_peak(c.shape, c.batch as f64),
            predicted_step: &|c: &TrainConfig| predict::step_peak(c.shape, c.batch as f64),
            note: "model + Adam state + token ids + what the forward pass keeps (per token, \
                   18 d + 3 h s + h + 2 f32 values per block and v + 3 d + 5 outside the \
                   blocks) + log-softmax's output (v per token) while the loss reads it; the \
                   last two written after measuring (explanations, not predictions)",
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
        section.findings.push(format!(
            "Transformer: the forward pass leaves {} per sequence of {} tokens for backward \
             ({} per token; least-squares fit over {} batch sizes, R\u{b2} = {:.6}); the rule \
             ({} blocks x (18 d + 3 h s + h + 2) f32 values per token, plus v + 3 d + 5 outside \
             the blocks, the latter written after the sequence-length sweep measured it) \
             gives {} ({:+.1}%).",
            format::bytes(fit.slope),
            shape.seq,
            format::bytes(fit.slope / shape.seq as f64),
            fit.n,
            fit.r_squared,
            shape.layers,
            format::bytes(predicted),
            format::diff_pct(predicted, fit.slope),
        ));
        section.comparisons.push(Comparison {
            quantity: "transformer: kept for backward per sequence".into(),
            predicted_bytes: predicted,
            measured_bytes: fit.slope,
            measured_upper_bytes: None,
            note: format!(
                "{} blocks x {} tokens x (18 d + 3 h s + h + 2) x 4 bytes, plus v + 3 d + 5 \
                 values per token outside the blocks (an explanation written after measuring, \
                 see the sequence-length page); measured as the slope of what the forward pass \
                 leaves live against the batch",
                shape.layers, shape.seq
            ),
        });
    }
    section
}
