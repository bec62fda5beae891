//! Mixed precision's conclusions: loss curves and their drift from f32's, zero gradients with
//! and without the loss scale, memory by component predicted beside measured, throughput,
//! charts, published figures and the index row.

use results::{Analysis, Chart, Check, Comparison, ComparisonSpec, Correctness, FloatStorage, Headline, MeasuredPoint, Metric, PairedComparison, Phase, PublishedFigure, Scale, Series, Side, Trace, format::{self, mib}, paired::find as find_paired};

use super::MixedMetric;
use super::{predict, MixedConfig, MixedPrecision, Precision, INIT_SEED, PRECISIONS};
use crate::bracket;
use crate::harness::models::{MarkovChain, TransformerShape, SUCCESSORS};
use crate::technique::{Analyse, Row};
use crate::workloads_worded::{self as workloads, HasModel};

/// A measured mixed-precision point.
type R<'a> = Row<'a, MixedConfig>;

/// The loss after each training step.
fn losses<'a>(r: &R<'a>) -> &'a [f64] {
    r.result.trace(Trace::LossByStep)
}

/// A run's loss against the step, named by its precision.
fn loss_curve(r: &R<'_>) -> Series {
    Series::line(
        r.config.precision.name(),
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
    drift_check(reference, candidate, "", f64::INFINITY).max_rel_diff
}

/// A precision's loss curve against f32's, as a check: its [`drift`] held to `tolerance` (the
/// drift between two f32 runs from different initial weights; NaN when that run is missing,
/// which fails the check).
pub fn drift_check(reference: &[f64], candidate: &[f64], name: &str, tolerance: f64) -> Check {
    let as_f32 = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<_>>();
    Check::compare(
        &format!("{name}: loss over {} steps against f32", reference.len()),
        &as_f32(reference),
        &as_f32(candidate),
        tolerance,
    )
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
    ) -> Analysis {
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
        // The tolerance: how far f32 drifts from itself when only the initial weights change.
        let tolerance = yardstick
            .first()
            .map(|y| drift(reference, losses(y)))
            .unwrap_or(f64::NAN);
        let checks: Vec<(Precision, Check)> = rows
            .iter()
            .filter(|r| r.config.precision != Precision::F32)
            .map(|r| {
                let p = r.config.precision;
                (p, drift_check(reference, losses(r), p.name(), tolerance))
            })
            .collect();

        let mut findings = Vec::new();
        if let (Some(first), Some(last)) = (reference.first(), reference.last()) {
            findings.push(format!(
                "The task is learned: in f32 the loss falls from {first:.4} to {last:.4} over {} \
             steps ({}). The yardstick: f32 from other initial weights ends at {} and drifts \
             from it by up to {:.2}% of the initial loss; a precision whose curve stays within \
             that drift has not changed the result beyond what the choice of initial weights \
             does.",
                reference.len(),
                format::pct((last / first - 1.0) * 100.0),
                yardstick
                    .first()
                    .and_then(|y| losses(y).last())
                    .map_or("n/a".into(), |l| format!("{l:.4}")),
                tolerance * 100.0
            ));
        }
        for r in &rows {
            let p = r.config.precision;
            let losses = losses(r);
            let drift = checks.iter().find(|(q, _)| *q == p).map(|(_, c)| c);
            let mut sentence = format!(
                "{}: step peak {}, final loss {:.4}",
                format::capitalise(p.name()),
                format::bytes(r.peak()),
                losses.last().copied().unwrap_or(f64::NAN),
            );
            if let Some(c) = drift {
                sentence.push_str(&format!(
                    ", largest drift from f32 {:.3e} ({:.2}% of the initial loss){}",
                    c.max_abs_diff,
                    c.max_rel_diff * 100.0,
                    if c.passed {
                        ": within the yardstick"
                    } else {
                        ": beyond the yardstick, the result changed"
                    }
                ));
            }
            let m = |metric: MixedMetric| r.result.metric(metric);
            sentence.push_str(&format!(
            "; gradient elements exactly zero (of {}), without a loss scale: {} at the initial \
             weights, {} at the trained ones",
            m(MixedMetric::GradElements),
            m(MixedMetric::ZeroGradElementsUnscaledInitial),
            m(MixedMetric::ZeroGradElementsUnscaledFinal),
        ));
            if p.loss_scaled() {
                sentence.push_str(&format!(
                    "; with the loss scale: {} (scale {}) and {} (scale {}); {} of {} steps were \
                 skipped on overflow",
                    m(MixedMetric::ZeroGradElementsScaledInitial),
                    m(MixedMetric::FiniteLossScaleInitial),
                    m(MixedMetric::ZeroGradElementsScaledFinal),
                    m(MixedMetric::FiniteLossScaleFinal),
                    m(MixedMetric::SkippedSteps),
                    losses.len()
                ));
            }
            sentence.push('.');
            findings.push(sentence);
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
            findings.push(format!(
            "What the loss scale does: with f32 master weights (mixed f16), {without} gradient \
             elements are exactly zero at the initial weights without a scale and {with} with it \
             (f32: {}){}. With f16 storage, at the trained weights: {pure_without} without and \
             {pure_with} with the scale{}.",
            zeros(f32_row, MixedMetric::ZeroGradElementsUnscaledInitial),
            if with < without {
                format!(
                    ": the scale kept {} small gradients from flushing to zero in the f16 \
                     backward pass",
                    without - with
                )
            } else {
                ": here the scale recovered none".into()
            },
            if pure_with >= 0.9 * pure_without {
                ": the scale cannot help much there, because the unscaled gradients go back \
                 into f16 (and Adam's moments are f16 too)"
            } else {
                ""
            },
        ));
        }
        if let Some(mixed) = find(Precision::MixedBf16) {
            let act = |r: &R<'_>| r.result.metric(Metric::ActivationBytes);
            findings.push(format!(
            "Mixed precision against f32 at batch {}: forward activations {} -> {}, step peak {} \
             -> {} ({}). Weights, gradients and Adam state stay f32; the 16-bit weight copies \
             kept for backward ({} predicted) eat into the activations saved, so mixed \
             precision lowers the peak only where activations dominate it.",
            mixed.config.batch,
            format::bytes(act(f32_row)),
            format::bytes(act(mixed)),
            format::bytes(f32_row.peak()),
            format::bytes(mixed.peak()),
            format::pct((mixed.peak() / f32_row.peak() - 1.0) * 100.0),
            format::bytes(mixed.config.shape.mlp().map_or(f64::NAN, |s| {
                ((s.depth - 1) * s.width.pow(2)) as f64 * 2.0
            })),
        ));
        }
        let bf16 = find(Precision::Bf16);
        if let Some(b) = bf16.or_else(|| find(Precision::F16)) {
            findings.push(format!(
                "Time per sample on this machine, timed in pairs against f32: {} {}; {} \
             {}. Where 16 bits cost time on a CPU, it is because Flex converts them to f32 for \
             the matmul and back (gemm's f16 matmul converts blocks as it packs them). On a GPU \
             with bf16/f16 tensor cores (an H100 or H200), 16-bit matmuls are expected to run \
             faster than f32 ones; that is not measured in this run (see the published figure \
             below and the GPU result set where there is one).",
                b.config.precision.name(),
                find_paired(paired, STORAGE).map_or_else(
                    || "not timed in pairs".to_string(),
                    PairedComparison::cost_phrase
                ),
                row_precisions(&rows)
                    .0
                    .map_or("mixed precision", Precision::name),
                find_paired(paired, MIXED).map_or_else(
                    || "not timed in pairs".to_string(),
                    PairedComparison::cost_phrase
                ),
            ));
        }
        findings.extend(paired.iter().map(PairedComparison::finding));
        let seed_check = seed_study
            .first()
            .and_then(|r| r.result.checks.first().map(|c| (r, c)));
        if let Some((r, c)) = seed_check {
            let reference = r.result.trace(Trace::SeedReferenceFinalLoss);
            let candidate = r.result.trace(Trace::SeedCandidateFinalLoss);
            findings.push(format!(
                "The index row's proof, paired by seed at the quick size ({} runs each from {} \
                 initial weights, mean of the last {} losses): f32 ends at {}, {} at {}. On \
                 average {} ends {:.2e} {} than f32 from the same weights; f32's own spread \
                 across the seeds is {:.2e}, so the check {}.",
                reference.len(),
                reference.len(),
                super::SEED_STUDY_LAST_LOSSES,
                list(reference),
                r.config.precision.name(),
                list(candidate),
                r.config.precision.name(),
                c.max_abs_diff.abs(),
                if c.max_abs_diff > 0.0 {
                    "higher"
                } else {
                    "lower"
                },
                c.max_abs_diff / c.max_rel_diff,
                if c.passed {
                    "passes: mixed precision trains as well as f32 within the seed-to-seed spread"
                } else {
                    "FAILS: mixed precision trains worse than the seed-to-seed spread allows"
                }
            ));
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
                    "parameters x bytes per stored value",
                ),
                (
                    "Adam state",
                    2.0 * params * e,
                    Metric::OptimizerStateBytes,
                    "two moments per parameter, stored like the parameters",
                ),
                (
                    "gradients",
                    params * e,
                    Metric::GradBytes,
                    "one gradient per parameter, in the parameters' type",
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
                    forward_note(p),
                ),
            ] {
                // The forward activations are the forward phase's peak above its start:
                // bracketed on a device.
                let upper = (metric == Metric::ActivationBytes)
                    .then(|| bracket::added_upper(r, Phase::Forward, 1.0))
                    .flatten();
                comparisons.push(
                    Comparison::new(
                        format!("{}: {quantity}", p.name()),
                        predicted,
                        r.result.metric(metric),
                        note,
                    )
                    .bracketed(upper),
                );
            }
        }

        let component_series = |metric: Metric, label: &str| -> Series {
            Series::line(
                label,
                false,
                PRECISIONS
                    .iter()
                    .enumerate()
                    .filter_map(|(i, &p)| {
                        find(p).map(|r| ((i + 1) as f64, mib(r.result.metric(metric))))
                    })
                    .collect(),
            )
        };
        let loss_series: Vec<Series> = rows.iter().map(loss_curve).collect();
        let mut scale_series = Vec::new();
        for r in &rows {
            if let Some(trace) = r.result.traces.get(&Trace::LossScaleByStep) {
                scale_series.push(Series::line(
                    r.config.precision.name(),
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
                title: "Memory by component and precision".into(),
                x_label: "precision".into(),
                y_label: "bytes (MiB)".into(),
                x_scale: Scale::Linear,
                categories: categories.clone(),
                series: vec![
                    Series {
                        name: "step peak".into(),
                        predicted: false,
                        points: Series::<String>::line(
                            "",
                            false,
                            PRECISIONS
                                .iter()
                                .enumerate()
                                .filter_map(|(i, &p)| {
                                    find(p).map(|r| ((i + 1) as f64, mib(r.peak())))
                                })
                                .collect(),
                        )
                        .points,
                        marked: Vec::new(),
                    },
                    component_series(Metric::ParamBytes, "weights"),
                    component_series(Metric::OptimizerStateBytes, "Adam state"),
                    component_series(Metric::GradBytes, "gradients"),
                    component_series(Metric::ActivationBytes, "forward activations"),
                ],
            },
            Chart {
                id: "throughput-by-precision".into(),
                title: "Training throughput by precision (this CPU)".into(),
                x_label: "precision".into(),
                y_label: "throughput (samples/s)".into(),
                x_scale: Scale::Linear,
                categories: categories.clone(),
                series: vec![Series::throughput(
                    "median; bars: fastest and slowest step",
                    PRECISIONS
                        .iter()
                        .enumerate()
                        .filter_map(|(i, &p)| find(p).map(|r| ((i + 1) as f64, r.result))),
                )],
            },
            Chart {
                id: "loss-by-step".into(),
                title: "Loss over the training run".into(),
                x_label: "step".into(),
                y_label: "MSE loss".into(),
                x_scale: Scale::Linear,
                categories: Vec::new(),
                series: loss_series,
            },
            Chart {
                id: "loss-scale-by-step".into(),
                title: "Dynamic loss scale".into(),
                x_label: "step".into(),
                y_label: "log2 of the loss scale".into(),
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
            "Memory through one training step in f32, mixed and 16-bit precision",
            &timeline_rows,
        ) {
            charts.insert(1, chart);
            findings.extend(lines);
        }

        let published = vec![
            PublishedFigure {
                source: "Hugging Face Transformers, \"efficient training on a single GPU\" \
                     (bert-large, V100 16 GB, batch 4)"
                    .into(),
                claim: "fp16 mixed precision: 8.86 -> 18.64 samples/s (+110%), 14949 -> 13939 MB \
                    (-6.8%); mixed precision keeps an fp32 and a half copy of the weights"
                    .into(),
                ours: match find(Precision::MixedF16) {
                    Some(m) => format!(
                        "on this CPU: time per sample of mixed bf16 against f32 {} (mixed f16's \
                         is not timed in pairs); mixed f16's step peak {} -> {} ({}); a GPU \
                         result set is needed for the speed comparison",
                        find_paired(paired, MIXED).map_or_else(
                            || "not timed in pairs".to_string(),
                            PairedComparison::cost_phrase
                        ),
                        format::bytes(f32_row.peak()),
                        format::bytes(m.peak()),
                        format::pct((m.peak() / f32_row.peak() - 1.0) * 100.0)
                    ),
                    None => "not measured".into(),
                },
            },
            PublishedFigure {
                source: "Micikevicius et al. 2018, \"Mixed Precision Training\"".into(),
                claim: "half precision nearly halves activation memory; f32 master weights, loss \
                    scaling and f32 accumulation keep accuracy; bf16 needs no loss scaling"
                    .into(),
                ours: match (find(Precision::MixedBf16), bf16) {
                    (Some(m), _) => format!(
                        "forward activations {} (f32) -> {} (mixed bf16, {})",
                        format::bytes(f32_row.result.metric(Metric::ActivationBytes)),
                        format::bytes(m.result.metric(Metric::ActivationBytes)),
                        format::pct(
                            (m.result.metric(Metric::ActivationBytes)
                                / f32_row.result.metric(Metric::ActivationBytes)
                                - 1.0)
                                * 100.0
                        )
                    ),
                    (None, _) => "not measured".into(),
                },
            },
        ];

        // The index row: f32 against mixed precision (f32 master weights), the technique people
        // use, proved by the seed study; the second row: 16-bit storage, proved by its drift.
        let drift_detail = |p: Precision| {
            checks
                .iter()
                .filter(|(q, _)| *q == p)
                .map(|(_, c)| {
                    format!(
                        "{}: largest drift {:.2}% of the initial loss (tolerance {:.2}%, the drift \
                         between two f32 runs){}",
                        c.what,
                        c.max_rel_diff * 100.0,
                        c.tolerance * 100.0,
                        if c.passed { "" } else { ", FAILED" }
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        let verdict = |c: Option<&Check>| Correctness::of_checks(c).unwrap_or(Correctness::Unknown);
        let (mixed, storage) = row_precisions(&rows);
        let row = |p: Option<Precision>| p.and_then(find);
        let headline = match row(mixed) {
            Some(m) => Headline::versus(
                format!(
                    "f32 against {}, {} training steps (step peak; time per sample)",
                    m.config.precision.name(),
                    reference.len()
                ),
                Side::step(f32_row.result),
                Side::step(m.result),
                verdict(seed_check.map(|(_, c)| c)),
                seed_check.map_or_else(
                    || "the seed study was not measured".to_string(),
                    |(_, c)| {
                        format!(
                            "{}: {} on average {:.2e} ({:.2} of f32's spread){}",
                            c.what,
                            if c.max_abs_diff > 0.0 {
                                "worse"
                            } else {
                                "better"
                            },
                            c.max_abs_diff.abs(),
                            c.max_rel_diff,
                            if c.passed { "" } else { ", FAILED" }
                        )
                    },
                ),
            )
            .timed_by(MIXED)
            .variant(m.config.precision.name()),
            None => Analysis::unmeasured(Correctness::Unknown).headline,
        };
        let secondary_headlines = row(storage)
            .map(|b| {
                let p = b.config.precision;
                Headline::versus(
                    format!(
                        "f32 against {}, {} training steps (step peak; time per sample)",
                        p.name(),
                        reference.len()
                    ),
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

/// Final losses as a short list.
fn list(values: &[f64]) -> String {
    values
        .iter()
        .map(|v| format!("{v:.4}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// How the forward activations of `p` are predicted, and what is not.
fn forward_note(p: Precision) -> &'static str {
    match (p.compute(), p.storage()) {
        (None, FloatStorage::Bf16) => {
            "each hidden layer's Linear and ReLU outputs in bf16, plus, during the last Linear, \
             the f32 copies of its input, weight and output that the CPU backend's bf16 matmul \
             works in"
        }
        (None, FloatStorage::F16) => {
            "each hidden layer's Linear and ReLU outputs, the last output and the loss's \
             difference in f16. Not predicted: the CPU's f16 matmul (gemm-f16 0.19) packs blocks \
             of both operands into f32 buffers it allocates on every call"
        }
        (None, _) => {
            "each hidden layer's Linear and ReLU outputs, the last output and the loss's \
             difference"
        }
        (Some(FloatStorage::Bf16), _) => {
            "bf16 Linear and ReLU outputs and input copy, f32 output and loss difference, the \
             bf16 weight copies Linear keeps for backward (all layers but the first), and during \
             the last Linear the f32 working copies of the CPU backend's bf16 matmul"
        }
        (Some(_), _) => {
            "f16 Linear and ReLU outputs and input copy, f32 output and loss difference, the f16 \
             weight copies Linear keeps for backward (all layers but the first). Not predicted: \
             the f32 packing buffers the CPU's f16 matmul allocates on every call"
        }
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
    let tolerance = yardstick
        .first()
        .map(|y| drift(reference, losses(y)))
        .unwrap_or(f64::NAN);
    let floor = MarkovChain::new(shape.vocab, SUCCESSORS, f32_row.config.seed).entropy_rate_nats();
    let mut findings = vec![format!(
        "Transformer ({}, batch {}, the same batch every step, Adam at {}): in f32 the loss falls \
         from {:.3} to {:.3} nats over {} steps; the chain's entropy rate, the floor of the loss \
         on fresh sequences, is {:.3} nats (uniform guessing: {:.3}). The yardstick, f32 from \
         other initial weights, drifts from it by up to {:.2}% of the initial loss.{}",
        f32_row.config.shape.describe(),
        f32_row.config.batch,
        f32_row.config.lr,
        reference.first().copied().unwrap_or(f64::NAN),
        reference.last().copied().unwrap_or(f64::NAN),
        reference.len(),
        floor,
        (shape.vocab as f64).ln(),
        tolerance * 100.0,
        if reference.last().is_some_and(|&l| l < floor) {
            " The loss ends below the floor because the batch is the same at every step: the \
             model learns the chain's transitions and then memorises the batch, as the MLP \
             memorises its teacher's batch; what is compared is the same run in each precision."
        } else {
            ""
        }
    )];
    let mut can = Vec::new();
    let mut cannot = Vec::new();
    for r in &rows {
        let p = r.config.precision;
        let curve = losses(r);
        if learned(reference, curve) {
            can.push(p.name());
        } else {
            cannot.push(p.name());
        }
        if p == Precision::F32 {
            continue;
        }
        let c = drift_check(reference, curve, p.name(), tolerance);
        findings.push(format!(
            "Transformer, {}: step peak {} (f32: {}), final loss {:.3}, largest drift from \
             f32 {:.2}% of the initial loss ({}).",
            p.name(),
            format::bytes(r.peak()),
            format::bytes(f32_row.peak()),
            curve.last().copied().unwrap_or(f64::NAN),
            c.max_rel_diff * 100.0,
            if c.passed {
                "within the yardstick"
            } else {
                "beyond the yardstick: the result changed"
            }
        ));
    }
    findings.push(format!(
        "Transformer: the precisions that learn the task (the loss falls by at least half as \
         much as in f32): {}; that cannot: {}.",
        if can.is_empty() {
            "none".into()
        } else {
            can.join(", ")
        },
        if cannot.is_empty() {
            "none".into()
        } else {
            cannot.join(", ")
        }
    ));
    let mut series: Vec<Series> = rows.iter().map(|r| loss_curve(r)).collect();
    series.push(Series::line(
        "the chain's entropy rate (the floor)",
        true,
        vec![(1.0, floor), (reference.len() as f64, floor)],
    ));
    let comparisons = transformer_comparisons(&rows, shape);
    if let Some(f32_weights) = comparisons.first() {
        let tensors = parameter_tensors(shape);
        let extra = f32_weights.measured_bytes - f32_weights.predicted_bytes;
        findings.push(format!(
            "Transformer, memory by precision: weights, Adam state and gradients follow the \
             bytes per stored value (the table below), except for a fixed part that no precision \
             changes: {} more in the weights than {} parameters x 4 bytes in f32, about {} for \
             each of its {} parameter tensors, is host bookkeeping (each parameter's `Param`, \
             its autodiff node and Flex's tensor header), the same in bf16: at this small \
             size {:.0}% of the f32 weights. The sequence-length page measures the same per \
             block at its sizes. The gradients measure less than their rule: they are what \
             backward leaves live above what was live before the forward pass, and the graph's \
             own bookkeeping, freed by backward, comes off them.",
            format::bytes(extra),
            shape.num_params(),
            format::bytes(extra / tensors as f64),
            tensors,
            extra / f32_weights.predicted_bytes * 100.0,
        ));
    }
    workloads::Section {
        findings,
        comparisons,
        charts: vec![Chart {
            id: "transformer-loss-by-step".into(),
            title: "Transformer: loss over the training run, by precision".into(),
            x_label: "step".into(),
            y_label: "cross-entropy (nats)".into(),
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
fn transformer_comparisons(rows: &[&R<'_>], shape: TransformerShape) -> Vec<Comparison> {
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
                "parameters x bytes per stored value; host bookkeeping per parameter tensor \
                 not in the rule",
            ),
            (
                "Adam state",
                2.0 * params * e,
                Metric::OptimizerStateBytes,
                "two moments per parameter, stored like the parameters; bookkeeping not in the \
                 rule",
            ),
            (
                "gradients",
                params * e,
                Metric::GradBytes,
                "one gradient per parameter, in the parameters' type; measured as what \
                 backward leaves live above what was live before the forward pass, less the \
                 graph's bookkeeping that backward frees",
            ),
        ] {
            comparisons.push(Comparison {
                quantity: format!("transformer, {}: {quantity}", p.name()),
                predicted_bytes: predicted,
                measured_bytes: r.result.metric(metric),
                measured_upper_bytes: None,
                note: note.into(),
            });
        }
    }
    comparisons
}
