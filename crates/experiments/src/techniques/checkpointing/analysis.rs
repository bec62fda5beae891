//! Gradient checkpointing's conclusions: the saving against depth and batch, where it starts to
//! pay, predicted activations beside measured, the time overhead, published figures, and the
//! index row.

use results::keys::checkpointing::Key;
use results::keys::CommonKey;
use results::{
    paired::find, Analysis, AxisUnit, Chart, ChartPoint, Comparison, ComparisonSpec, Correctness,
    Fix, Headline, MeasuredPoint, Metric, PairedComparison, Phase, PublishedFigure, Scale, Series,
    Side, TechniqueId, Text,
};

use super::{predict, GradientCheckpointing};
use crate::bracket;
use crate::harness::backend::Checkpointing;
use crate::harness::train::TrainConfig;
use crate::technique::{checks_of_fix, Analyse, Row};
use crate::workloads::{self, Axis};

/// A measured checkpointing point.
type R<'a> = Row<'a, TrainConfig>;

/// The strategy, as sentences and legends name it.
fn strategy(c: Checkpointing) -> Text {
    Text::said(match c {
        Checkpointing::None => Key::StrategyNone,
        Checkpointing::Balanced => Key::StrategyBalanced,
    })
}

/// Pairs of (plain, balanced) rows with equal depth and batch, in `key` order.
fn pairs<'r, 'a>(rows: &'r [R<'a>], keep: impl Fn(&R<'a>) -> bool) -> Vec<(&'r R<'a>, &'r R<'a>)> {
    rows.iter()
        .filter(|r| r.config.checkpointing == Checkpointing::None && keep(r))
        .filter_map(|p| {
            rows.iter()
                .find(|b| {
                    b.config.checkpointing == Checkpointing::Balanced
                        && b.config.shape == p.config.shape
                        && b.config.batch == p.config.batch
                })
                .map(|b| (p, b))
        })
        .collect()
}

/// The id of the paired comparison of a (plain, balanced) pair.
fn pair_id(plain: &R<'_>) -> String {
    format!(
        "depth-{}-batch-{}",
        plain.config.shape.depth(),
        plain.config.batch
    )
}

/// The headline's pair: the largest depth, at the depth sweep's batch.
fn deepest<'r, 'a>(rows: &'r [R<'a>]) -> Option<(&'r R<'a>, &'r R<'a>)> {
    pairs(rows, |_| true)
        .into_iter()
        .max_by_key(|(p, _)| (p.config.shape.depth(), std::cmp::Reverse(p.config.batch)))
}

/// The depth sweep's pairs timed in pairs besides the deepest (the headline).
const TIMED_DEPTH: usize = 16;

/// The (plain, balanced) pairs timed in pairs: the depth sweep's deepest (the headline) and
/// depth [`TIMED_DEPTH`], and the batch sweep's smallest batch, the points of the time-cost
/// charts (the depth sweep's batch is also a point of the batch sweep). The other pairs are not
/// timed: with each comparison run in four builds or more, timing all of them would not fit the
/// full run's budget beside the transformer's points (the largest batch alone took 74 s, depth
/// 32 about 45 s, depths 4 and 8 18 s together).
pub(super) fn comparisons(rows: &[R<'_>]) -> Vec<ComparisonSpec> {
    let rows = workloads::mlp_rows(rows);
    let rows = &rows;
    let Some((deep, _)) = deepest(rows) else {
        return Vec::new();
    };
    let headline = deep.id;
    let depth_batch = deep.config.batch;
    let smallest = pairs(rows, |r| r.config.batch != depth_batch)
        .iter()
        .map(|(p, _)| p.config.batch)
        .min();
    let timed = |r: &R<'_>| {
        (r.config.batch == depth_batch
            && (r.config.shape.depth() == TIMED_DEPTH || r.id == headline))
            || Some(r.config.batch) == smallest
    };
    pairs(rows, timed)
        .into_iter()
        .map(|(p, b)| {
            let spec = ComparisonSpec::new(&pair_id(p), p.id, b.id);
            if p.id == headline {
                spec
            } else {
                spec.supporting()
            }
        })
        .collect()
}

/// A (plain, balanced) pair of rows of the same depth and batch.
type Pair<'r, 'a> = (&'r R<'a>, &'r R<'a>);

/// The MLP's two sweeps, read once: by depth at one batch, by batch at one depth, and the
/// deepest pair (the headline).
struct Sweeps<'r, 'a> {
    by_depth: Vec<Pair<'r, 'a>>,
    by_batch: Vec<Pair<'r, 'a>>,
    depth_batch: usize,
    batch_depth: usize,
    deep: Pair<'r, 'a>,
}

impl<'r, 'a> Sweeps<'r, 'a> {
    /// The depth sweep is the only one reaching the largest depth, the batch sweep the only
    /// one reaching the largest batch.
    fn new(rows: &'r [R<'a>]) -> Option<Self> {
        let max_depth = rows.iter().map(|r| r.config.shape.depth()).max()?;
        let max_batch = rows.iter().map(|r| r.config.batch).max()?;
        let depth_batch = rows
            .iter()
            .find(|r| r.config.shape.depth() == max_depth)
            .map_or(0, |r| r.config.batch);
        let batch_depth = rows
            .iter()
            .find(|r| r.config.batch == max_batch)
            .map_or(0, |r| r.config.shape.depth());
        let by_depth = pairs(rows, |r| r.config.batch == depth_batch);
        let mut by_batch = pairs(rows, |r| r.config.shape.depth() == batch_depth);
        by_batch.sort_by_key(|(p, _)| p.config.batch);
        Some(Self {
            deep: *by_depth.last()?,
            by_depth,
            by_batch,
            depth_batch,
            batch_depth,
        })
    }

    fn max_depth(&self) -> usize {
        self.deep.0.config.shape.depth()
    }

    fn headline_id(&self) -> String {
        pair_id(self.deep.0)
    }
}

fn activation(r: &R<'_>) -> f64 {
    r.result.metric(Metric::ActivationBytes)
}

/// The deepest pair's peaks and activations, and how many timed pairs resolved a cost.
fn findings(sw: &Sweeps<'_, '_>, paired: &[PairedComparison]) -> Vec<Text> {
    let (plain, balanced) = sw.deep;
    let mut findings = vec![Text::said(Key::Deepest)
        .count("depth", sw.max_depth())
        .count("batch", sw.depth_batch)
        .bytes("plain", plain.peak())
        .bytes("balanced", balanced.peak())
        .bytes("plain_kept", activation(plain))
        .bytes("balanced_kept", activation(balanced))
        .paired("timing", sw.headline_id())];
    findings.extend(
        find(paired, &sw.headline_id())
            .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id)),
    );
    let timed: Vec<_> = paired.iter().filter_map(|c| c.timing()).collect();
    if timed.len() > 1 {
        findings.push(Text::said(Key::Resolved).count("pairs", timed.len()).count(
            "resolved",
            timed.iter().filter(|t| t.cost.resolved()).count(),
        ));
    }
    findings.extend(where_it_pays(sw));
    findings
}

/// Where it starts to pay: the smallest batch at which the balanced peak is lower by more
/// than the repeat-to-repeat spread of the bytes measured (1%, generously), beside the batch
/// at which the rule's activations outweigh the gradients.
fn where_it_pays(sw: &Sweeps<'_, '_>) -> Option<Text> {
    let &(p, _) = sw.by_batch.first()?;
    let shape = p.config.shape;
    let crossover = predict::grad_bytes(shape)
        / predict::activation_bytes_per_sample(shape, Checkpointing::None);
    let mut t = Text::said(Key::WhereItPays)
        .count("depth", shape.depth())
        .bytes("gradients", p.result.metric(Metric::GradBytes))
        .number("crossover", crossover);
    let pays = sw
        .by_batch
        .iter()
        .find(|(p, b)| p.peak() - b.peak() > 0.01 * p.peak());
    if let Some((pp, bb)) = pays {
        t = t
            .count("pays_batch", pp.config.batch)
            .bytes("pays_plain", pp.peak())
            .bytes("pays_balanced", bb.peak());
    }
    Some(t)
}

/// A row's activations and step peak beside the rules'.
fn row_predictions(r: &R<'_>) -> [Comparison<Text>; 2] {
    let c = &r.config;
    let quantity = |key: Key| {
        Text::said(key)
            .count("depth", c.shape.depth())
            .count("batch", c.batch)
            .text("strategy", strategy(c.checkpointing))
    };
    let note = match c.checkpointing {
        Checkpointing::None => Key::ActivationsNotePlain,
        Checkpointing::Balanced => Key::ActivationsNoteBalanced,
    };
    let per_sample = predict::activation_bytes_per_sample(c.shape, c.checkpointing);
    [
        Comparison::new(
            quantity(Key::ActivationsQuantity),
            c.batch as f64 * per_sample,
            activation(r),
            note,
        )
        .bracketed(bracket::added_upper(r, Phase::Forward, 1.0)),
        Comparison::new(
            quantity(Key::StepQuantity),
            predict::step_peak(c),
            r.peak(),
            Key::StepNote,
        )
        .bracketed(r.peak_upper()),
    ]
}

/// The deepest pair's and the largest batch's predictions.
fn predictions(sw: &Sweeps<'_, '_>) -> Vec<Comparison<Text>> {
    std::iter::once(sw.deep)
        .chain(sw.by_batch.last().copied())
        .flat_map(|(p, b)| [p, b])
        .flat_map(row_predictions)
        .collect()
}

/// Step peaks of both strategies along a sweep, measured and predicted.
fn peak_chart(
    id: &str,
    title: Text,
    x_label: Key,
    pairs: &[Pair<'_, '_>],
    x: fn(&R<'_>) -> f64,
) -> Chart<Text> {
    let line = |c: Checkpointing, predicted: bool| {
        let key = if predicted {
            Key::SeriesPredicted
        } else {
            Key::SeriesMeasured
        };
        let points = pairs
            .iter()
            .map(|&(p, b)| {
                let r = if c == Checkpointing::None { p } else { b };
                let y = if predicted {
                    predict::step_peak(&r.config)
                } else {
                    r.peak()
                };
                (x(r), y)
            })
            .collect();
        Series::line(
            Text::said(key).text("strategy", strategy(c)),
            predicted,
            points,
        )
    };
    Chart::new(id, title, x_label, CommonKey::StepPeak)
        .x(AxisUnit::Given, Scale::Log2)
        .y(AxisUnit::Bytes)
        .series(
            [Checkpointing::None, Checkpointing::Balanced]
                .into_iter()
                .flat_map(|c| [line(c, false), line(c, true)]),
        )
}

/// The paired cost of each timed pair along a sweep, with its 95% interval.
fn overhead_chart(
    (id, title, x_label): (&str, Text, Key),
    name: Text,
    pairs: &[Pair<'_, '_>],
    x: fn(&R<'_>) -> f64,
    paired: &[PairedComparison],
) -> Chart<Text> {
    let points = pairs
        .iter()
        .filter_map(|(p, _)| {
            let t = find(paired, &pair_id(p))?.timing()?;
            Some(ChartPoint {
                x: x(p),
                y: t.cost.estimate_pct,
                y_low: Some(t.cost.low_pct),
                y_high: Some(t.cost.high_pct),
            })
        })
        .collect();
    let series = Series {
        name,
        predicted: false,
        points,
        marked: Vec::new(),
        band: false,
    };
    Chart::new(id, title, x_label, Key::LabelExtraTimePerStep)
        .x(AxisUnit::Given, Scale::Log2)
        .series([series])
}

/// The four charts: peaks and time costs against depth and against batch.
fn charts(sw: &Sweeps<'_, '_>, paired: &[PairedComparison]) -> Vec<Chart<Text>> {
    let depth = |r: &R<'_>| r.config.shape.depth() as f64;
    let batch = |r: &R<'_>| r.config.batch as f64;
    vec![
        peak_chart(
            "peak-vs-depth",
            Text::said(Key::DepthChart).count("batch", sw.depth_batch),
            Key::LabelDepthLinearLayers,
            &sw.by_depth,
            depth,
        ),
        overhead_chart(
            (
                "overhead-vs-depth",
                Key::LabelTimeCostOfCheckpointingPairedBalanced.into(),
                Key::LabelDepthLinearLayers,
            ),
            Text::said(Key::DepthOverheadSeries).count("batch", sw.depth_batch),
            &sw.by_depth,
            depth,
            paired,
        ),
        peak_chart(
            "peak-vs-batch",
            Text::said(Key::BatchChart).count("depth", sw.batch_depth),
            Key::LabelBatchSizeSamples,
            &sw.by_batch,
            batch,
        ),
        overhead_chart(
            (
                "overhead-vs-batch",
                Text::said(Key::BatchOverheadChart).count("depth", sw.batch_depth),
                Key::LabelBatchSizeSamples,
            ),
            Key::LabelBalancedAgainstPlainPairedBars95.into(),
            &sw.by_batch,
            batch,
            paired,
        ),
    ]
}

/// Chen et al.'s and Hugging Face's figures beside ours.
fn published(sw: &Sweeps<'_, '_>) -> Vec<PublishedFigure<Text>> {
    let (plain, balanced) = sw.deep;
    vec![
        PublishedFigure {
            source: Text::said(Key::ChenSource),
            claim: Text::said(Key::ChenClaim),
            ours: Text::said(Key::ChenOurs)
                .number("kept_share", activation(balanced) / activation(plain))
                .count("depth", sw.max_depth())
                .paired("timing", sw.headline_id()),
        },
        PublishedFigure {
            source: Text::said(Key::HfSource),
            claim: Text::said(Key::HfClaim),
            ours: Text::said(Key::HfOurs)
                .count("depth", sw.max_depth())
                .count("batch", sw.depth_batch)
                .paired("timing", sw.headline_id())
                .bytes("plain", plain.peak())
                .bytes("balanced", balanced.peak()),
        },
    ]
}

impl Analyse for GradientCheckpointing {
    /// The analysis of the checkpointing experiment.
    fn analyse(
        &self,
        rows: Vec<R<'_>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis<Text> {
        let checks = checks_of_fix(&rows, Fix::Checkpointing, TechniqueId::Checkpointing);
        let (mut rows, transformer) = workloads::split(rows);
        rows.sort_by_key(|r| (r.config.shape.depth(), r.config.batch));
        let correctness = Correctness::of(points);
        let Some(sw) = Sweeps::new(&rows) else {
            return Analysis::unmeasured(correctness);
        };
        let mut findings = findings(&sw, paired);
        let mut comparisons = predictions(&sw);
        let mut charts = charts(&sw, paired);
        if let Some((chart, lines)) = workloads::timeline_chart(
            "memory-timeline",
            Text::said(Key::LabelMemoryThroughOneTrainingStepWithout),
            &[sw.deep.0, sw.deep.1],
        ) {
            charts.insert(1, chart);
            findings.extend(lines);
        }
        transformer_section(&transformer).append_to(&mut findings, &mut comparisons, &mut charts);
        let headline = Headline::versus(
            Text::said(Key::Headline)
                .count("depth", sw.max_depth())
                .count("batch", sw.depth_batch),
            Side::step(sw.deep.0.result),
            Side::step(sw.deep.1.result),
            correctness,
            CommonKey::WorstCheck,
        )
        .timed_by(&sw.headline_id())
        .of_fix(Fix::Checkpointing);
        Analysis::new(headline)
            .findings(findings)
            .comparisons(comparisons)
            .charts(charts)
            .published(published(&sw))
            .fix_checks(checks)
    }
}

/// The transformer's rows: the common section, plain and balanced as two lines against the
/// number of blocks, and the saving of each pair.
fn transformer_section(rows: &[R<'_>]) -> workloads::Section {
    let mut section = workloads::transformer_section(
        rows,
        &Axis {
            id: "blocks",
            x_label: Key::LabelBlocks.into(),
            x: &|c: &TrainConfig| c.shape.depth() as f64,
            x_scale: Scale::Log2,
            line: &|c: &TrainConfig| Some(strategy(c.checkpointing)),
            predicted_forward: &|c: &TrainConfig| predict::forward_peak(c),
            predicted_step: &|c: &TrainConfig| predict::step_peak(c),
            note: Text::said(Key::TransformerNote),
        },
    );
    let mut sorted: Vec<R<'_>> = rows.to_vec();
    sorted.sort_by_key(|r| r.config.shape.depth());
    let savings: Vec<Text> = pairs(&sorted, |_| true)
        .into_iter()
        .map(|(p, b)| {
            Text::said(Key::TransformerSaving)
                .count("blocks", p.config.shape.depth())
                .bytes("plain", p.peak())
                .bytes("balanced", b.peak())
        })
        .collect();
    if !savings.is_empty() {
        let failed = workloads::failed_checks(rows);
        section.findings.push(
            Text::said(Key::Transformer)
                .list("savings", savings)
                .count("failed", failed),
        );
    }
    section
}
