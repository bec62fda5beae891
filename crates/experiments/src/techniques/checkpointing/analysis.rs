//! Gradient checkpointing's conclusions: the saving against depth and batch, where it starts to
//! pay, predicted activations beside measured, the time overhead, published figures, and the
//! index row.

use results::keys::checkpointing::Key;
use results::keys::CommonKey;
use results::{
    paired::find, Analysis, AxisUnit, Chart, ChartPoint, Comparison, ComparisonSpec, Correctness,
    Headline, MeasuredPoint, Metric, PairedComparison, Phase, PublishedFigure, Scale, Series, Side,
    Text,
};

use super::{predict, GradientCheckpointing};
use crate::bracket;
use crate::harness::backend::Checkpointing;
use crate::harness::train::TrainConfig;
use crate::technique::{Analyse, Row};
use crate::workloads::{self, Axis};

/// A measured checkpointing point.
type R<'a> = Row<'a, TrainConfig>;

/// The strategy's name in sentences and legends.
fn strategy_name(c: Checkpointing) -> &'static str {
    match c {
        Checkpointing::None => "no checkpointing",
        Checkpointing::Balanced => "balanced checkpointing",
    }
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

impl Analyse for GradientCheckpointing {
    /// The analysis of the checkpointing experiment.
    fn analyse(
        &self,
        rows: Vec<Row<'_, TrainConfig>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis<Text> {
        let (mut rows, transformer) = workloads::split(rows);
        rows.sort_by_key(|r| (r.config.shape.depth(), r.config.batch));
        let section = transformer_section(&transformer);
        let correctness = Correctness::of(points);
        // The depth sweep is the only one reaching the largest depth, the batch sweep the only one
        // reaching the largest batch.
        let (Some(max_depth), Some(max_batch)) = (
            rows.iter().map(|r| r.config.shape.depth()).max(),
            rows.iter().map(|r| r.config.batch).max(),
        ) else {
            return Analysis::unmeasured(correctness);
        };
        let depth_batch = rows
            .iter()
            .find(|r| r.config.shape.depth() == max_depth)
            .map_or(0, |r| r.config.batch);
        let batch_depth = rows
            .iter()
            .find(|r| r.config.batch == max_batch)
            .map_or(0, |r| r.config.shape.depth());
        let by_depth = pairs(&rows, |r| r.config.batch == depth_batch);
        let mut by_batch = pairs(&rows, |r| r.config.shape.depth() == batch_depth);
        by_batch.sort_by_key(|(p, _)| p.config.batch);
        let Some(&(deep_plain, deep_bal)) = by_depth.last() else {
            return Analysis::unmeasured(correctness);
        };

        let saved = |p: &R<'_>, b: &R<'_>| p.peak() - b.peak();
        let timed = |p: &R<'_>| find(paired, &pair_id(p));
        let headline_id = pair_id(deep_plain);
        let activation = |r: &R<'_>| r.result.metric(Metric::ActivationBytes);
        let mut findings = Vec::new();
        findings.push(
            Text::said(Key::Deepest)
                .count("depth", max_depth)
                .count("batch", depth_batch)
                .bytes("plain", deep_plain.peak())
                .bytes("balanced", deep_bal.peak())
                .bytes("plain_kept", activation(deep_plain))
                .bytes("balanced_kept", activation(deep_bal))
                .paired("timing", &headline_id),
        );
        findings.extend(
            find(paired, &headline_id)
                .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id)),
        );
        let resolved = paired
            .iter()
            .filter_map(|c| c.timing())
            .filter(|t| t.cost.resolved())
            .count();
        let timed_pairs = paired.iter().filter(|c| c.timing().is_some()).count();
        if timed_pairs > 1 {
            findings.push(
                Text::said(Key::Resolved)
                    .count("pairs", timed_pairs)
                    .count("resolved", resolved),
            );
        }
        // Where it starts to pay: the smallest batch at which the balanced peak is lower by more
        // than the repeat-to-repeat spread of the bytes measured (1%, generously).
        let pays = by_batch.iter().find(|(p, b)| saved(p, b) > 0.01 * p.peak());
        let grads = |r: &R<'_>| r.result.metric(Metric::GradBytes);
        if let Some(&(p, _)) = by_batch.first() {
            let shape = p.config.shape;
            let grad_bytes = predict::grad_bytes(shape);
            let crossover =
                grad_bytes / predict::activation_bytes_per_sample(shape, Checkpointing::None);
            let mut t = Text::said(Key::WhereItPays)
                .count("depth", shape.depth())
                .bytes("gradients", grads(p))
                .number("crossover", crossover);
            if let Some((pp, bb)) = pays {
                t = t
                    .count("pays_batch", pp.config.batch)
                    .bytes("pays_plain", pp.peak())
                    .bytes("pays_balanced", bb.peak());
            }
            findings.push(t);
        }

        let mut comparisons = Vec::new();
        for (p, b) in [(deep_plain, deep_bal)]
            .into_iter()
            .chain(by_batch.last().copied())
        {
            for r in [p, b] {
                comparisons.push(Comparison {
                    quantity: Text::said(Key::ActivationsQuantity)
                        .count("depth", r.config.shape.depth())
                        .count("batch", r.config.batch)
                        .name("strategy", strategy_name(r.config.checkpointing)),
                    predicted_bytes: r.config.batch as f64
                        * predict::activation_bytes_per_sample(
                            r.config.shape,
                            r.config.checkpointing,
                        ),
                    measured_bytes: activation(r),
                    measured_upper_bytes: bracket::added_upper(r, Phase::Forward, 1.0),
                    note: match r.config.checkpointing {
                        Checkpointing::None => Text::said(Key::ActivationsNotePlain),
                        Checkpointing::Balanced => Text::said(Key::ActivationsNoteBalanced),
                    },
                });
                comparisons.push(Comparison {
                    quantity: Text::said(Key::StepQuantity)
                        .count("depth", r.config.shape.depth())
                        .count("batch", r.config.batch)
                        .name("strategy", strategy_name(r.config.checkpointing)),
                    predicted_bytes: predict::step_peak(&r.config),
                    measured_bytes: r.peak(),
                    measured_upper_bytes: r.peak_upper(),
                    note: Text::said(Key::StepNote),
                });
            }
        }

        // Step peak (measured or predicted) of one strategy along a sweep, against `x`.
        let peak_line =
            |pairs: &[(&R<'_>, &R<'_>)], x: fn(&R<'_>) -> f64, c: Checkpointing, predicted| {
                pairs
                    .iter()
                    .map(|(p, b)| {
                        let r = if c == Checkpointing::None { p } else { b };
                        let y = if predicted {
                            predict::step_peak(&r.config)
                        } else {
                            r.peak()
                        };
                        (x(r), y)
                    })
                    .collect::<Vec<(f64, f64)>>()
            };
        let depth = |r: &R<'_>| r.config.shape.depth() as f64;
        let batch = |r: &R<'_>| r.config.batch as f64;
        let depth_line = |c, predicted| peak_line(&by_depth, depth, c, predicted);
        let batch_line = |c, predicted| peak_line(&by_batch, batch, c, predicted);
        let mut peak_by_depth = Vec::new();
        let mut peak_by_batch = Vec::new();
        for c in [Checkpointing::None, Checkpointing::Balanced] {
            let name = |key: Key| Text::said(key).name("strategy", strategy_name(c));
            peak_by_depth.push(Series::line(
                name(Key::SeriesMeasured),
                false,
                depth_line(c, false),
            ));
            peak_by_depth.push(Series::line(
                name(Key::SeriesPredicted),
                true,
                depth_line(c, true),
            ));
            peak_by_batch.push(Series::line(
                name(Key::SeriesMeasured),
                false,
                batch_line(c, false),
            ));
            peak_by_batch.push(Series::line(
                name(Key::SeriesPredicted),
                true,
                batch_line(c, true),
            ));
        }
        // The paired cost of each pair with its 95% interval; pairs not timed are left out.
        let overhead = |name: Text, pairs: &[(&R<'_>, &R<'_>)], x: fn(&R<'_>) -> f64| Series {
            name,
            predicted: false,
            points: pairs
                .iter()
                .filter_map(|(p, _)| {
                    let t = timed(p)?.timing()?;
                    Some(ChartPoint {
                        x: x(p),
                        y: t.cost.estimate_pct,
                        y_low: Some(t.cost.low_pct),
                        y_high: Some(t.cost.high_pct),
                    })
                })
                .collect(),
            marked: Vec::new(),
            band: false,
        };
        let mut charts = vec![
            Chart {
                id: "peak-vs-depth".into(),
                title: Text::said(Key::DepthChart).count("batch", depth_batch),
                x_label: Key::LabelDepthLinearLayers.into(),
                y_label: CommonKey::StepPeak.into(),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Bytes,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: peak_by_depth,
            },
            Chart {
                id: "overhead-vs-depth".into(),
                title: Text::said(Key::LabelTimeCostOfCheckpointingPairedBalanced),
                x_label: Key::LabelDepthLinearLayers.into(),
                y_label: Text::said(Key::LabelExtraTimePerStep),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Given,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: vec![overhead(
                    Text::said(Key::DepthOverheadSeries).count("batch", depth_batch),
                    &by_depth,
                    depth,
                )],
            },
            Chart {
                id: "peak-vs-batch".into(),
                title: Text::said(Key::BatchChart).count("depth", batch_depth),
                x_label: Key::LabelBatchSizeSamples.into(),
                y_label: CommonKey::StepPeak.into(),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Bytes,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: peak_by_batch,
            },
            Chart {
                id: "overhead-vs-batch".into(),
                title: Text::said(Key::BatchOverheadChart).count("depth", batch_depth),
                x_label: Key::LabelBatchSizeSamples.into(),
                y_label: Text::said(Key::LabelExtraTimePerStep),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Given,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: vec![overhead(
                    Text::said(Key::LabelBalancedAgainstPlainPairedBars95),
                    &by_batch,
                    batch,
                )],
            },
        ];
        if let Some((chart, lines)) = workloads::timeline_chart(
            "memory-timeline",
            Text::said(Key::LabelMemoryThroughOneTrainingStepWithout),
            &[deep_plain, deep_bal],
        ) {
            charts.insert(1, chart);
            findings.extend(lines);
        }

        let published = vec![
            PublishedFigure {
                source: Text::said(Key::ChenSource),
                claim: Text::said(Key::ChenClaim),
                ours: Text::said(Key::ChenOurs)
                    .number("kept_share", activation(deep_bal) / activation(deep_plain))
                    .count("depth", max_depth)
                    .paired("timing", &headline_id),
            },
            PublishedFigure {
                source: Text::said(Key::HfSource),
                claim: Text::said(Key::HfClaim),
                ours: Text::said(Key::HfOurs)
                    .count("depth", max_depth)
                    .count("batch", depth_batch)
                    .paired("timing", &headline_id)
                    .bytes("plain", deep_plain.peak())
                    .bytes("balanced", deep_bal.peak()),
            },
        ];

        section.append_to(&mut findings, &mut comparisons, &mut charts);
        Analysis {
            fix_table: None,
            fix_checks: Vec::new(),
            headline: Headline::versus(
                Text::said(Key::Headline)
                    .count("depth", max_depth)
                    .count("batch", depth_batch),
                Side::step(deep_plain.result),
                Side::step(deep_bal.result),
                correctness,
                Text::said(CommonKey::WorstCheck),
            )
            .timed_by(&headline_id),
            secondary_headlines: vec![],
            findings,
            comparisons,
            fits: vec![],
            charts,
            published,
        }
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
            line: &|c: &TrainConfig| strategy_name(c.checkpointing).to_string(),
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
