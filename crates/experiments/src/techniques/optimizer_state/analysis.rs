//! Optimizer state's conclusions: state bytes per parameter measured beside burn-optim's
//! tensors, the step's fixed part beside the published per-parameter rules, the loss curves
//! that prove each optimizer trains, charts and the index row.

use results::keys::optimizer_state::Key;
use results::keys::CommonKey;
use results::{
    Analysis, AxisUnit, Chart, Comparison, ComparisonSpec, Correctness, Fix, Headline,
    MeasuredPoint, Metric, PairedComparison, PublishedFigure, Series, Side, TechniqueId, Text,
    Trace,
};

use super::{predict, OptimizerConfig, OptimizerState};
use crate::harness::optim::Optimizer;
use crate::technique::{checks_of_fix, Analyse, Row};
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

fn loss_chart(id: &str, title: Key, y_label: Key, rows: &[R<'_>]) -> Chart<Text> {
    let curve = |r: &R<'_>| {
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
    };
    Chart::new(id, title, Key::LabelStepOfTheProofSRun, y_label).series(rows.iter().map(curve))
}

/// The MLP's and the transformer's rows, read once, with Adam and SGD with momentum.
struct Set<'r, 'a> {
    mlp: &'r [R<'a>],
    transformer: &'r [R<'a>],
    adam: &'r R<'a>,
    momentum: &'r R<'a>,
}

impl Set<'_, '_> {
    fn all(&self) -> impl Iterator<Item = &R<'_>> {
        self.mlp.iter().chain(self.transformer)
    }

    fn params(&self) -> u64 {
        self.adam.config.train.shape.num_params()
    }
}

/// One optimizer's row: its state per parameter, fixed part and loss.
fn row_finding(r: &R<'_>) -> Text {
    let o = r.config.optimizer();
    let (first, last) = losses(r);
    Text::said(Key::Row)
        .name("point", r.label)
        .number("per_param", state_per_param(r))
        .number("values", o.values_per_param_of(&r.config.train.shape))
        .number("fixed_per_param", fixed_per_param(r))
        .number("first", first)
        .number("last", last)
        .count("steps", r.config.proof_steps)
        .number("lr", r.config.train.lr)
}

/// Adam's state against momentum's, every row, and what the lighter state costs in loss.
fn findings(set: &Set<'_, '_>, paired: &[PairedComparison]) -> Vec<Text> {
    let (adam, momentum) = (set.adam, set.momentum);
    let state = |r: &R<'_>| r.result.metric(Metric::OptimizerStateBytes);
    let headline = Text::said(Key::State)
        .count("params", set.params())
        .count("batch", adam.config.train.batch)
        .bytes("adam", state(adam))
        .number("adam_per_param", state_per_param(adam))
        .bytes("momentum", state(momentum))
        .number("momentum_per_param", state_per_param(momentum))
        .bytes("adam_peak", adam.peak())
        .bytes("momentum_peak", momentum.peak());
    let fall = |r: &R<'_>| {
        let (first, last) = losses(r);
        (first - last) / first * 100.0
    };
    let price = Text::said(Key::Price)
        .count("steps", momentum.config.proof_steps)
        .number("momentum_fall", fall(momentum))
        .number("adam_fall", fall(adam));
    let paired = paired
        .iter()
        .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id));
    std::iter::once(headline)
        .chain(paired)
        .chain(set.all().map(row_finding))
        .chain([price, Text::said(Key::Dampening)])
        .collect()
}

/// The presets Adafactor's saving is projected onto: GPT-2 small's widths and two Llama ones.
const PROJECTED: [&str; 3] = ["gpt2-124m", "tinyllama-1.1b", "llama-2-7b"];

/// Adafactor's state against Adam's at real widths, which this run does not train with either:
/// projected by burn-optim's factored rule and labelled so, beside the rule's largest error
/// where this page measured it (its MLP and transformer).
fn adafactor_projections(set: &Set<'_, '_>) -> Vec<Text> {
    let worst = set
        .all()
        .filter(|r| r.config.optimizer() == Optimizer::Adafactor)
        .map(|r| {
            let shape = r.config.train.shape;
            let rule = predict::state_bytes(shape, Optimizer::Adafactor);
            let gap = r.result.metric(Metric::OptimizerStateBytes) - rule;
            (
                gap / rule * 100.0,
                gap,
                state_tensors(&shape.trainable_shapes()),
            )
        })
        .max_by(|a, b| a.0.abs().total_cmp(&b.0.abs()));
    let Some((error_pct, gap, tensors)) = worst else {
        return Vec::new();
    };
    PROJECTED
        .iter()
        .filter_map(|id| estimator::capacity::preset(id))
        .map(|p| {
            let state = |o: Optimizer| predict::state_bytes(p.shape, o);
            Text::said(Key::AdafactorProjected)
                .name("model", p.id)
                .count("params", p.shape.trainable_params())
                .bytes("adafactor", state(Optimizer::Adafactor))
                .bytes("adam", state(Optimizer::Adam))
                .number("error_pct", error_pct)
                .bytes("gap", gap)
                .count("tensors", tensors)
        })
        .collect()
}

/// Adafactor's state tensors for parameters of `shapes`: a row and a column statistic for a
/// matrix, one whole tensor for a vector.
fn state_tensors(shapes: &[Vec<usize>]) -> u64 {
    shapes
        .iter()
        .map(|dims| if dims.len() >= 2 { 2 } else { 1 })
        .sum()
}

/// Each row's state beside burn-optim's tensors.
fn predictions(set: &Set<'_, '_>) -> Vec<Comparison<Text>> {
    set.all()
        .map(|r| {
            let o = r.config.optimizer();
            Comparison::new(
                Text::said(Key::StateQuantity).name("point", r.label),
                predict::state_bytes(r.config.train.shape, o),
                r.result.metric(Metric::OptimizerStateBytes),
                Text::said(Key::StateNote)
                    .number("values", o.values_per_param_of(&r.config.train.shape))
                    .name("optimizer", o.name()),
            )
        })
        .collect()
}

fn categories() -> Vec<String> {
    Optimizer::ALL
        .iter()
        .map(|o| o.name().to_string())
        .collect()
}

/// A value of each row at its optimizer's category.
fn by_optimizer(rows: &[R<'_>], f: &dyn Fn(&R<'_>) -> f64) -> Vec<(f64, f64)> {
    rows.iter()
        .map(|r| (x_of(r.config.optimizer()), f(r)))
        .collect()
}

/// State per parameter, per optimizer, beside burn-optim's tensors.
fn state_chart(set: &Set<'_, '_>) -> Chart<Text> {
    let shape = set.adam.config.train.shape;
    let rule = Optimizer::ALL
        .iter()
        .map(|&o| (x_of(o), o.values_per_param_of(&shape) * 4.0))
        .collect();
    let transformer = (!set.transformer.is_empty()).then(|| {
        Series::line(
            Key::LabelTransformerMeasured,
            false,
            by_optimizer(set.transformer, &state_per_param),
        )
    });
    Chart::new(
        "state-per-param",
        Key::LabelOptimizerStatePerParameter,
        Key::LabelOptimizerBurnSDefaults,
        Key::LabelStatePerParameterBytes,
    )
    .categories(categories())
    .series([Series::line(
        Key::LabelMLPMeasured,
        false,
        by_optimizer(set.mlp, &state_per_param),
    )])
    .series(transformer)
    .series([Series::line(Key::LabelBurnOptimSStateTensorsX, true, rule)])
}

/// The MLP's step peak, fixed part and state, per optimizer.
fn peak_chart(set: &Set<'_, '_>) -> Chart<Text> {
    let params = set.params() as f64;
    Chart::new(
        "peak-by-optimizer",
        Text::said(Key::StepChart).count("batch", set.adam.config.train.batch),
        Key::LabelOptimizerBurnSDefaults,
        Key::LabelBytes,
    )
    .y(AxisUnit::Bytes)
    .categories(categories())
    .series([
        Series::line(
            CommonKey::StepPeak,
            false,
            by_optimizer(set.mlp, &|r| r.peak()),
        ),
        Series::line(
            Key::LabelWeightsGradientsOptimizerState,
            false,
            by_optimizer(set.mlp, &|r| fixed_per_param(r) * params),
        ),
        Series::line(
            Key::LabelOptimizerState,
            false,
            by_optimizer(set.mlp, &|r| r.result.metric(Metric::OptimizerStateBytes)),
        ),
    ])
}

/// The published bytes per parameter beside ours.
fn published(set: &Set<'_, '_>) -> Vec<PublishedFigure<Text>> {
    let adam = set.adam;
    let hf = Text::said(Key::HfOurs).number("momentum", state_per_param(set.momentum));
    let hf = match of(set.mlp, Optimizer::AdamW) {
        Some(r) => hf.number("adamw", state_per_param(r)),
        None => hf,
    };
    vec![
        PublishedFigure {
            source: Text::said(Key::AccelerateSource),
            claim: Text::said(Key::AccelerateClaim),
            ours: Text::said(Key::AccelerateOurs)
                .number("adam_fixed", fixed_per_param(adam))
                .number(
                    "predicted",
                    predict::fixed_bytes_per_param(adam.config.train.shape, Optimizer::Adam),
                ),
        },
        PublishedFigure {
            source: Text::said(Key::HfSource),
            claim: Text::said(Key::HfClaim),
            ours: hf,
        },
        PublishedFigure {
            source: Text::said(Key::ZeroSource),
            claim: Text::said(Key::ZeroClaim),
            ours: Text::said(Key::ZeroOurs).number("adam_fixed", fixed_per_param(adam)),
        },
    ]
}

impl Analyse for OptimizerState {
    fn analyse(
        &self,
        rows: Vec<R<'_>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis<Text> {
        let momentum_rows: Vec<R<'_>> = rows
            .iter()
            .filter(|r| r.config.optimizer() == Optimizer::Momentum)
            .cloned()
            .collect();
        let checks = checks_of_fix(&momentum_rows, Fix::Momentum, TechniqueId::OptimizerState);
        let (mlp, transformer) = workloads::split(rows);
        let correctness = Correctness::of(points);
        let (Some(adam), Some(momentum)) =
            (of(&mlp, Optimizer::Adam), of(&mlp, Optimizer::Momentum))
        else {
            return Analysis::unmeasured(correctness);
        };
        let set = Set {
            mlp: &mlp,
            transformer: &transformer,
            adam,
            momentum,
        };
        let mut findings = findings(&set, paired);
        findings.extend(adafactor_projections(&set));
        let mut charts = vec![
            state_chart(&set),
            peak_chart(&set),
            loss_chart(
                "loss-by-step",
                Key::LabelTheProofTheMlpSLoss,
                Key::LabelMSELoss,
                &mlp,
            ),
        ];
        if !transformer.is_empty() {
            charts.push(loss_chart(
                "transformer-loss-by-step",
                Key::LabelTheProofTheTransformerSLoss,
                Key::LabelCrossEntropyNatsPerToken,
                &transformer,
            ));
        }
        let timeline = of(&mlp, Optimizer::Sgd).and_then(|sgd| {
            workloads::timeline_chart(
                "memory-timeline",
                Text::said(Key::LabelMemoryThroughOneTrainingStepPlain),
                &[sgd, adam],
            )
        });
        if let Some((chart, lines)) = timeline {
            charts.insert(2, chart);
            findings.extend(lines);
        }
        let headline = Headline::versus(
            Text::said(Key::Headline).count("batch", adam.config.train.batch),
            Side::step(adam.result),
            Side::step(momentum.result),
            correctness,
            CommonKey::WorstCheck,
        )
        .timed_by(HEADLINE)
        .of_fix(Fix::Momentum);
        Analysis::new(headline)
            .findings(findings)
            .comparisons(predictions(&set))
            .charts(charts)
            .published(published(&set))
            .fix_checks(checks)
    }
}
