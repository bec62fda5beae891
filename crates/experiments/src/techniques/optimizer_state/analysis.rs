//! Optimizer state's conclusions: state bytes per parameter measured beside burn-optim's
//! tensors, the step's fixed part beside the published per-parameter rules, the loss curves
//! that prove each optimizer trains, charts and the index row.

use results::{Analysis, Chart, Comparison, ComparisonSpec, Correctness, Headline, MeasuredPoint, Metric, PairedComparison, PublishedFigure, Scale, Series, Side, Trace, analysis::worst_check, format::{self, mib}};

use super::{predict, OptimizerConfig, OptimizerState};
use crate::harness::optim::Optimizer;
use crate::technique::{Analyse, Row};
use crate::workloads_worded as workloads;

type R<'a> = Row<'a, OptimizerConfig>;

/// The id of the headline's paired comparison.
const HEADLINE: &str = "headline";

/// The row of `rows` stepped with `optimizer`.
fn of<'r, 'a>(rows: &'r [R<'a>], optimizer: Optimizer) -> Option<&'r R<'a>> {
    rows.iter().find(|r| r.config.optimizer() == optimizer)
}

/// The headline's comparison: Adam (the baseline everyone starts from) against SGD with
/// momentum, on the MLP.
pub(super) fn comparisons(rows: &[R<'_>]) -> Vec<ComparisonSpec> {
    let mlp = workloads::mlp_rows(rows);
    match (of(&mlp, Optimizer::Adam), of(&mlp, Optimizer::Momentum)) {
        (Some(adam), Some(momentum)) => vec![ComparisonSpec::new(HEADLINE, adam.id, momentum.id)],
        _ => Vec::new(),
    }
}

/// Measured optimizer state per parameter.
fn state_per_param(r: &R<'_>) -> f64 {
    r.result.metric(Metric::OptimizerStateBytes) / r.config.train.shape.num_params() as f64
}

/// The step's fixed part (weights, gradients and optimizer state) as measured, per parameter.
fn fixed_per_param(r: &R<'_>) -> f64 {
    (r.result.metric(Metric::ParamBytes)
        + r.result.metric(Metric::GradBytes)
        + r.result.metric(Metric::OptimizerStateBytes))
        / r.config.train.shape.num_params() as f64
}

/// The first and last loss of the proof's run.
fn losses(r: &R<'_>) -> (f64, f64) {
    let l = r.result.trace(Trace::LossByStep);
    (
        l.first().copied().unwrap_or(f64::NAN),
        l.last().copied().unwrap_or(f64::NAN),
    )
}

/// The categorical x of `optimizer` (1 is the first of [`Optimizer::ALL`]).
fn x_of(optimizer: Optimizer) -> f64 {
    Optimizer::ALL
        .iter()
        .position(|&o| o == optimizer)
        .map_or(f64::NAN, |i| (i + 1) as f64)
}

fn loss_chart(id: &str, title: &str, y_label: &str, rows: &[R<'_>]) -> Chart {
    Chart {
        id: id.into(),
        title: title.into(),
        x_label: "step of the proof's run".into(),
        y_label: y_label.into(),
        x_scale: Scale::Linear,
        categories: Vec::new(),
        series: rows
            .iter()
            .map(|r| {
                Series::line(
                    &format!("{} (lr {})", r.config.optimizer().name(), r.config.train.lr),
                    false,
                    r.result
                        .trace(Trace::LossByStep)
                        .iter()
                        .enumerate()
                        .map(|(i, &l)| ((i + 1) as f64, l))
                        .collect(),
                )
            })
            .collect(),
    }
}

impl Analyse for OptimizerState {
    fn analyse(
        &self,
        rows: Vec<R<'_>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis {
        let (mlp, transformer) = workloads::split(rows);
        let correctness = Correctness::of(points);
        let (Some(adam), Some(momentum)) =
            (of(&mlp, Optimizer::Adam), of(&mlp, Optimizer::Momentum))
        else {
            return Analysis::unmeasured(correctness);
        };
        let params = adam.config.train.shape.num_params();

        let mut findings = vec![format!(
            "The MLP ({} parameters, batch {}): Adam keeps {} of state ({:.2} B per parameter), \
             SGD with momentum {} ({:.2} B); the step's peak goes from {} to {}.",
            params,
            adam.config.train.batch,
            format::bytes(adam.result.metric(Metric::OptimizerStateBytes)),
            state_per_param(adam),
            format::bytes(momentum.result.metric(Metric::OptimizerStateBytes)),
            state_per_param(momentum),
            format::bytes(adam.peak()),
            format::bytes(momentum.peak()),
        )];
        findings.extend(paired.iter().map(PairedComparison::finding));
        for r in mlp.iter().chain(&transformer) {
            let o = r.config.optimizer();
            let (first, last) = losses(r);
            findings.push(format!(
                "{}: {:.2} B of state per parameter measured, {} predicted ({} parameter-sized \
                 tensor(s) in burn-optim's state); weights, gradients and state {:.2} B per \
                 parameter; loss {:.4} -> {:.4} over the proof's {} steps at lr {}.",
                r.label,
                state_per_param(r),
                o.values_per_param() * 4,
                o.values_per_param(),
                fixed_per_param(r),
                first,
                last,
                r.config.proof_steps,
                r.config.train.lr,
            ));
        }
        let fall = |r: &R<'_>| {
            let (first, last) = losses(r);
            (first - last) / first * 100.0
        };
        findings.push(format!(
            "The price is training progress, not bytes: over the proof's {} steps from the same \
             weights the MLP's loss fell by {:.1}% under SGD with momentum against {:.1}% under \
             Adam (each at its own learning rate). Whether a lighter optimizer still trains your \
             model is for your model to show.",
            momentum.config.proof_steps,
            fall(momentum),
            fall(adam)
        ));
        findings.push(
            "Burn's SGD momentum has a dampening of 0.1 by default (PyTorch's is 0): the same \
             velocity tensor, a different update. Set `with_dampening(0.0)` to match PyTorch's \
             runs; the bytes do not change."
                .into(),
        );

        let note = |o: Optimizer| {
            format!(
                "{} parameter-sized f32 tensor(s) per parameter (burn-optim 0.21's state \
                 record for {}), times the parameters; measured: what stays live after the first \
                 step above what was live before it (the records' own bookkeeping included, \
                 which the rule leaves out)",
                o.values_per_param(),
                o.name()
            )
        };
        let comparisons: Vec<Comparison> = mlp
            .iter()
            .chain(&transformer)
            .map(|r| {
                let o = r.config.optimizer();
                Comparison::new(
                    format!("optimizer state, {}", r.label),
                    predict::state_bytes(r.config.train.shape, o),
                    r.result.metric(Metric::OptimizerStateBytes),
                    note(o),
                )
            })
            .collect();

        let categories: Vec<String> = Optimizer::ALL
            .iter()
            .map(|o| o.name().to_string())
            .collect();
        let per_param = |name: &str, rows: &[R<'_>], f: fn(&R<'_>) -> f64| {
            Series::line(
                name,
                false,
                rows.iter()
                    .map(|r| (x_of(r.config.optimizer()), f(r)))
                    .collect(),
            )
        };
        let mut state_series = vec![
            per_param("MLP (measured)", &mlp, state_per_param),
            Series::line(
                "burn-optim's state tensors x 4 B (predicted)",
                true,
                Optimizer::ALL
                    .iter()
                    .map(|&o| (x_of(o), (o.values_per_param() * 4) as f64))
                    .collect(),
            ),
        ];
        if !transformer.is_empty() {
            state_series.insert(
                1,
                per_param("transformer (measured)", &transformer, state_per_param),
            );
        }
        let mut charts = vec![
            Chart {
                id: "state-per-param".into(),
                title: "Optimizer state per parameter".into(),
                x_label: "optimizer (Burn's defaults)".into(),
                y_label: "state per parameter (bytes)".into(),
                x_scale: Scale::Linear,
                categories: categories.clone(),
                series: state_series,
            },
            Chart {
                id: "peak-by-optimizer".into(),
                title: format!("The MLP's step (batch {})", adam.config.train.batch),
                x_label: "optimizer (Burn's defaults)".into(),
                y_label: "bytes (MiB)".into(),
                x_scale: Scale::Linear,
                categories,
                series: vec![
                    Series::line(
                        "step peak",
                        false,
                        mlp.iter()
                            .map(|r| (x_of(r.config.optimizer()), mib(r.peak())))
                            .collect(),
                    ),
                    Series::line(
                        "weights + gradients + optimizer state",
                        false,
                        mlp.iter()
                            .map(|r| {
                                (
                                    x_of(r.config.optimizer()),
                                    mib(fixed_per_param(r) * params as f64),
                                )
                            })
                            .collect(),
                    ),
                    Series::line(
                        "optimizer state",
                        false,
                        mlp.iter()
                            .map(|r| {
                                (
                                    x_of(r.config.optimizer()),
                                    mib(r.result.metric(Metric::OptimizerStateBytes)),
                                )
                            })
                            .collect(),
                    ),
                ],
            },
            loss_chart(
                "loss-by-step",
                "The proof: the MLP's loss under each optimizer, from the same weights",
                "MSE loss",
                &mlp,
            ),
        ];
        if !transformer.is_empty() {
            charts.push(loss_chart(
                "transformer-loss-by-step",
                "The proof: the transformer's loss under each optimizer, from the same weights",
                "cross-entropy (nats per token)",
                &transformer,
            ));
        }
        if let Some(sgd) = of(&mlp, Optimizer::Sgd) {
            if let Some((chart, lines)) = workloads::timeline_chart(
                "memory-timeline",
                "Memory through one training step: plain SGD against Adam",
                &[sgd, adam],
            ) {
                charts.insert(2, chart);
                findings.extend(lines);
            }
        }

        let adamw = of(&mlp, Optimizer::AdamW);
        let published = vec![
            PublishedFigure {
                source: "accelerate `estimate-memory`".into(),
                claim: "fp32 Adam: 16 bytes per parameter (weights, gradients, optimizer state; \
                        no activations)"
                    .into(),
                ours: format!(
                    "{:.2} B per parameter measured for weights + gradients + Adam state on the \
                     MLP ({} predicted from burn-optim's tensors): Burn's f32 Adam matches the \
                     rule, with its few bytes of per-tensor bookkeeping on top",
                    fixed_per_param(adam),
                    predict::fixed_bytes_per_param(Optimizer::Adam)
                ),
            },
            PublishedFigure {
                source: "Hugging Face Transformers, \"efficient training on a single GPU\"".into(),
                claim: "plain AdamW keeps 8 bytes of optimizer state per parameter, SGD with \
                        momentum 4"
                    .into(),
                ours: format!(
                    "AdamW {} B, momentum {:.2} B per parameter measured",
                    adamw.map_or("not measured".to_string(), |r| format!(
                        "{:.2}",
                        state_per_param(r)
                    )),
                    state_per_param(momentum)
                ),
            },
            PublishedFigure {
                source: "ZeRO (Rajbhandari et al. 2020)".into(),
                claim: "mixed-precision Adam: 2 + 2 + 12 = 16 bytes per parameter (fp16 weights \
                        and gradients, fp32 master weights and two moments)"
                    .into(),
                ours: format!(
                    "Burn 0.21 has no mixed-precision optimizer; f32 Adam reaches about the same \
                     total by another split (4 + 4 + 8): {:.2} B measured",
                    fixed_per_param(adam)
                ),
            },
        ];

        Analysis {
            headline: Headline::versus(
                format!(
                    "Adam against SGD with momentum (Burn's defaults), MLP, batch {} (step peak; \
                     time per sample)",
                    adam.config.train.batch
                ),
                Side::step(adam.result),
                Side::step(momentum.result),
                correctness,
                worst_check(points),
            )
            .timed_by(HEADLINE),
            secondary_headlines: vec![],
            findings,
            comparisons,
            fits: vec![],
            charts,
            published,
        }
    }
}
