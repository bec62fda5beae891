//! Optimizer state's conclusions: state bytes per parameter measured beside burn-optim's
//! tensors, the step's fixed part beside the published per-parameter rules, the loss curves
//! that prove each optimizer trains, charts and the index row.

use results::keys::optimizer_state::Key;
use results::keys::CommonKey;
use results::{
    Analysis, AxisUnit, Chart, Comparison, ComparisonSpec, Correctness, Headline, MeasuredPoint,
    Metric, PairedComparison, PublishedFigure, Scale, Series, Side, Text, Trace,
};

use super::{predict, OptimizerConfig, OptimizerState};
use crate::harness::optim::Optimizer;
use crate::technique::{Analyse, Row};
use crate::workloads;

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

fn loss_chart(
    id: &str,
    title: impl Into<Text>,
    y_label: impl Into<Text>,
    rows: &[R<'_>],
) -> Chart<Text> {
    Chart {
        id: id.into(),
        title: title.into(),
        x_label: Text::said(Key::LabelStepOfTheProofSRun),
        y_label: y_label.into(),
        x_unit: AxisUnit::Given,
        y_unit: AxisUnit::Given,
        x_scale: Scale::Linear,
        categories: Vec::new(),
        series: rows
            .iter()
            .map(|r| {
                Series::line(
                    Text::said(Key::LossSeries)
                        .name("optimizer", r.config.optimizer().name())
                        .number("lr", r.config.train.lr),
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
    ) -> Analysis<Text> {
        let (mlp, transformer) = workloads::split(rows);
        let correctness = Correctness::of(points);
        let (Some(adam), Some(momentum)) =
            (of(&mlp, Optimizer::Adam), of(&mlp, Optimizer::Momentum))
        else {
            return Analysis::unmeasured(correctness);
        };
        let params = adam.config.train.shape.num_params();

        let mut findings = vec![Text::said(Key::State)
            .count("params", params)
            .count("batch", adam.config.train.batch)
            .bytes("adam", adam.result.metric(Metric::OptimizerStateBytes))
            .number("adam_per_param", state_per_param(adam))
            .bytes(
                "momentum",
                momentum.result.metric(Metric::OptimizerStateBytes),
            )
            .number("momentum_per_param", state_per_param(momentum))
            .bytes("adam_peak", adam.peak())
            .bytes("momentum_peak", momentum.peak())];
        findings.extend(
            paired
                .iter()
                .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id)),
        );
        for r in mlp.iter().chain(&transformer) {
            let o = r.config.optimizer();
            let (first, last) = losses(r);
            findings.push(
                Text::said(Key::Row)
                    .name("point", r.label)
                    .number("per_param", state_per_param(r))
                    .count("values", o.values_per_param())
                    .number("fixed_per_param", fixed_per_param(r))
                    .number("first", first)
                    .number("last", last)
                    .count("steps", r.config.proof_steps)
                    .number("lr", r.config.train.lr),
            );
        }
        let fall = |r: &R<'_>| {
            let (first, last) = losses(r);
            (first - last) / first * 100.0
        };
        findings.push(
            Text::said(Key::Price)
                .count("steps", momentum.config.proof_steps)
                .number("momentum_fall", fall(momentum))
                .number("adam_fall", fall(adam)),
        );
        findings.push(Text::said(Key::Dampening));

        let note = |o: Optimizer| {
            Text::said(Key::StateNote)
                .count("values", o.values_per_param())
                .name("optimizer", o.name())
        };
        let comparisons: Vec<Comparison<Text>> = mlp
            .iter()
            .chain(&transformer)
            .map(|r| {
                let o = r.config.optimizer();
                Comparison::new(
                    Text::said(Key::StateQuantity).name("point", r.label),
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
        let per_param = |name: Key, rows: &[R<'_>], f: fn(&R<'_>) -> f64| {
            Series::line(
                name,
                false,
                rows.iter()
                    .map(|r| (x_of(r.config.optimizer()), f(r)))
                    .collect(),
            )
        };
        let mut state_series = vec![
            per_param(Key::LabelMLPMeasured, &mlp, state_per_param),
            Series::line(
                Text::said(Key::LabelBurnOptimSStateTensorsX),
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
                per_param(Key::LabelTransformerMeasured, &transformer, state_per_param),
            );
        }
        let mut charts = vec![
            Chart {
                id: "state-per-param".into(),
                title: Key::LabelOptimizerStatePerParameter.into(),
                x_label: Key::LabelOptimizerBurnSDefaults.into(),
                y_label: Key::LabelStatePerParameterBytes.into(),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Given,
                x_scale: Scale::Linear,
                categories: categories.clone(),
                series: state_series,
            },
            Chart {
                id: "peak-by-optimizer".into(),
                title: Text::said(Key::StepChart).count("batch", adam.config.train.batch),
                x_label: Key::LabelOptimizerBurnSDefaults.into(),
                y_label: Key::LabelBytes.into(),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Bytes,
                x_scale: Scale::Linear,
                categories,
                series: vec![
                    Series::line(
                        CommonKey::StepPeak,
                        false,
                        mlp.iter()
                            .map(|r| (x_of(r.config.optimizer()), r.peak()))
                            .collect(),
                    ),
                    Series::line(
                        Text::said(Key::LabelWeightsGradientsOptimizerState),
                        false,
                        mlp.iter()
                            .map(|r| {
                                (
                                    x_of(r.config.optimizer()),
                                    fixed_per_param(r) * params as f64,
                                )
                            })
                            .collect(),
                    ),
                    Series::line(
                        Key::LabelOptimizerState,
                        false,
                        mlp.iter()
                            .map(|r| {
                                (
                                    x_of(r.config.optimizer()),
                                    r.result.metric(Metric::OptimizerStateBytes),
                                )
                            })
                            .collect(),
                    ),
                ],
            },
            loss_chart(
                "loss-by-step",
                Text::said(Key::LabelTheProofTheMlpSLoss),
                Key::LabelMSELoss,
                &mlp,
            ),
        ];
        if !transformer.is_empty() {
            charts.push(loss_chart(
                "transformer-loss-by-step",
                Text::said(Key::LabelTheProofTheTransformerSLoss),
                Key::LabelCrossEntropyNatsPerToken,
                &transformer,
            ));
        }
        if let Some(sgd) = of(&mlp, Optimizer::Sgd) {
            if let Some((chart, lines)) = workloads::timeline_chart(
                "memory-timeline",
                Text::said(Key::LabelMemoryThroughOneTrainingStepPlain),
                &[sgd, adam],
            ) {
                charts.insert(2, chart);
                findings.extend(lines);
            }
        }

        let adamw = of(&mlp, Optimizer::AdamW);
        let published = vec![
            PublishedFigure {
                source: Text::said(Key::AccelerateSource),
                claim: Text::said(Key::AccelerateClaim),
                ours: Text::said(Key::AccelerateOurs)
                    .number("adam_fixed", fixed_per_param(adam))
                    .number("predicted", predict::fixed_bytes_per_param(Optimizer::Adam)),
            },
            PublishedFigure {
                source: Text::said(Key::HfSource),
                claim: Text::said(Key::HfClaim),
                ours: {
                    let t = Text::said(Key::HfOurs).number("momentum", state_per_param(momentum));
                    match adamw {
                        Some(r) => t.number("adamw", state_per_param(r)),
                        None => t,
                    }
                },
            },
            PublishedFigure {
                source: Text::said(Key::ZeroSource),
                claim: Text::said(Key::ZeroClaim),
                ours: Text::said(Key::ZeroOurs).number("adam_fixed", fixed_per_param(adam)),
            },
        ];

        Analysis {
            fix_table: None,
            fix_checks: Vec::new(),
            headline: Headline::versus(
                Text::said(Key::Headline).count("batch", adam.config.train.batch),
                Side::step(adam.result),
                Side::step(momentum.result),
                correctness,
                Text::said(CommonKey::WorstCheck),
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
