//! Gradient checkpointing's conclusions: the saving against depth and batch, where it starts to
//! pay, predicted activations beside measured, the time overhead, published figures, and the
//! index row.

use results::{Analysis, Chart, ChartPoint, Comparison, ComparisonSpec, Correctness, Headline, MeasuredPoint, Metric, PairedComparison, Phase, PublishedFigure, Scale, Series, Side, analysis::worst_check, format::{self, mib}, paired::find};

use super::{predict, GradientCheckpointing};
use crate::bracket;
use crate::harness::backend::Checkpointing;
use crate::harness::train::TrainConfig;
use crate::technique::{Analyse, Row};
use crate::workloads_worded::{self as workloads, Axis};

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
    ) -> Analysis {
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
        let deep_cost = find(paired, &headline_id).map_or_else(
            || "not timed in pairs".to_string(),
            PairedComparison::cost_phrase,
        );
        let activation = |r: &R<'_>| r.result.metric(Metric::ActivationBytes);
        let mut findings = Vec::new();
        findings.push(format!(
        "At depth {} and batch {}: step peak {} without checkpointing, {} with ({}); the forward \
         pass keeps {} against {} ({:.3} of it); time per step {} (timed in pairs, below).",
        max_depth,
        depth_batch,
        format::bytes(deep_plain.peak()),
        format::bytes(deep_bal.peak()),
        format::pct(-saved(deep_plain, deep_bal) / deep_plain.peak() * 100.0),
        format::bytes(activation(deep_plain)),
        format::bytes(activation(deep_bal)),
        activation(deep_bal) / activation(deep_plain),
        deep_cost,
    ));
        findings.extend(find(paired, &headline_id).map(PairedComparison::finding));
        let resolved = paired
            .iter()
            .filter_map(|c| c.timing())
            .filter(|t| t.cost.resolved())
            .count();
        let timed_pairs = paired.iter().filter(|c| c.timing().is_some()).count();
        if timed_pairs > 1 {
            findings.push(format!(
                "Across the {timed_pairs} (plain, balanced) pairs timed in pairs, {resolved} \
                 show a time difference whose 95% interval excludes 0 (the charts below draw \
                 each interval)."
            ));
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
            findings.push(format!(
                "Where it starts to pay (depth {}): the parameter gradients ({} measured) set the \
             step's peak until the forward pass's activations outgrow them, predicted at batch \
             {:.0} without checkpointing. {}",
                shape.depth(),
                format::bytes(grads(p)),
                crossover,
                match pays {
                    Some((pp, bb)) => format!(
                        "Checkpointing first lowers the measured peak by more than 1% at batch {} \
                     ({} -> {}).",
                        pp.config.batch,
                        format::bytes(pp.peak()),
                        format::bytes(bb.peak())
                    ),
                    None => "No measured batch showed a saving above 1%.".into(),
                }
            ));
        }

        let mut comparisons = Vec::new();
        for (p, b) in [(deep_plain, deep_bal)]
            .into_iter()
            .chain(by_batch.last().copied())
        {
            for r in [p, b] {
                comparisons.push(Comparison {
                    quantity: format!(
                        "forward activations, depth {}, batch {}, {}",
                        r.config.shape.depth(),
                        r.config.batch,
                        strategy_name(r.config.checkpointing)
                    ),
                    predicted_bytes: r.config.batch as f64
                        * predict::activation_bytes_per_sample(
                            r.config.shape,
                            r.config.checkpointing,
                        ),
                    measured_bytes: activation(r),
                    measured_upper_bytes: bracket::added_upper(r, Phase::Forward, 1.0),
                    note: match r.config.checkpointing {
                        Checkpointing::None => {
                            "each hidden layer's Linear and ReLU outputs, plus the last output and \
                         the loss's difference"
                        }
                        Checkpointing::Balanced => {
                            "each hidden layer's Linear output only (ReLU recomputed in backward), \
                         plus the last output, the loss's difference and the last ReLU output \
                         still live as the last Linear's input"
                        }
                    }
                    .into(),
                });
                comparisons.push(Comparison {
                    quantity: format!(
                        "step peak, depth {}, batch {}, {}",
                        r.config.shape.depth(),
                        r.config.batch,
                        strategy_name(r.config.checkpointing)
                    ),
                    predicted_bytes: predict::step_peak(&r.config),
                    measured_bytes: r.peak(),
                    measured_upper_bytes: r.peak_upper(),
                    note: "model + Adam state + inputs + the larger of activations and parameter \
                       gradients; the process baseline (thread pool, matmul slabs) and \
                       temporaries inside backward, including recomputed outputs, are not \
                       predicted"
                        .into(),
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
                        (x(r), mib(y))
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
            let name = strategy_name(c);
            peak_by_depth.push(Series::line(
                &format!("{name} (measured)"),
                false,
                depth_line(c, false),
            ));
            peak_by_depth.push(Series::line(
                &format!("{name} (predicted)"),
                true,
                depth_line(c, true),
            ));
            peak_by_batch.push(Series::line(
                &format!("{name} (measured)"),
                false,
                batch_line(c, false),
            ));
            peak_by_batch.push(Series::line(
                &format!("{name} (predicted)"),
                true,
                batch_line(c, true),
            ));
        }
        // The paired cost of each pair with its 95% interval; pairs not timed are left out.
        let overhead = |name: &str, pairs: &[(&R<'_>, &R<'_>)], x: fn(&R<'_>) -> f64| Series {
            name: name.into(),
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
        };
        let mut charts = vec![
            Chart {
                id: "peak-vs-depth".into(),
                title: format!("Step peak against depth (batch {depth_batch})"),
                x_label: "depth (Linear layers)".into(),
                y_label: "step peak (MiB)".into(),
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: peak_by_depth,
            },
            Chart {
                id: "overhead-vs-depth".into(),
                title: "Time cost of checkpointing (paired, balanced against plain, 95% CI)".into(),
                x_label: "depth (Linear layers)".into(),
                y_label: "extra time per step (%)".into(),
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: vec![overhead(
                    &format!("against depth (batch {depth_batch}); bars: 95% CI"),
                    &by_depth,
                    depth,
                )],
            },
            Chart {
                id: "peak-vs-batch".into(),
                title: format!("Step peak against batch size (depth {batch_depth}): where it pays"),
                x_label: "batch size (samples)".into(),
                y_label: "step peak (MiB)".into(),
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: peak_by_batch,
            },
            Chart {
                id: "overhead-vs-batch".into(),
                title: format!(
                    "Time cost of checkpointing against batch size (depth {batch_depth})"
                ),
                x_label: "batch size (samples)".into(),
                y_label: "extra time per step (%)".into(),
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: vec![overhead(
                    "balanced against plain (paired); bars: 95% CI",
                    &by_batch,
                    batch,
                )],
            },
        ];
        if let Some((chart, lines)) = workloads::timeline_chart(
            "memory-timeline",
            "Memory through one training step: without and with checkpointing",
            &[deep_plain, deep_bal],
        ) {
            charts.insert(1, chart);
            findings.extend(lines);
        }

        let published =
            vec![
        PublishedFigure {
            source: "Chen et al. 2016, \"Training Deep Nets with Sublinear Memory Cost\"".into(),
            claim: "segments of about sqrt(n) layers: O(sqrt(n)) activation memory for one extra \
                    forward pass; a 1000-layer ResNet from 48 GB to 7 GB at about +30% time"
                .into(),
            ours: format!(
                "Burn's balanced strategy is per operation, not per segment: it drops ReLU \
                 outputs and keeps every Linear output, so activations stay linear in depth \
                 ({:.3} of plain at depth {}); time per step {}",
                activation(deep_bal) / activation(deep_plain),
                max_depth,
                deep_cost
            ),
        },
        PublishedFigure {
            source: "Hugging Face Transformers, \"efficient training on a single GPU\" \
                     (bert-large, V100, batch 1 x accumulation 4)"
                .into(),
            claim: "checkpointing costs about 20% of speed (7.75 -> 5.99 samples/s, -23%); \
                    8681 -> 6775 MB (-22%)"
                .into(),
            ours: format!(
                "depth {} batch {}: time per step {}; step peak {} -> {} ({})",
                max_depth,
                depth_batch,
                deep_cost,
                format::bytes(deep_plain.peak()),
                format::bytes(deep_bal.peak()),
                format::pct(-saved(deep_plain, deep_bal) / deep_plain.peak() * 100.0),
            ),
        },
    ];

        section.append_to(&mut findings, &mut comparisons, &mut charts);
        Analysis {
            headline: Headline::versus(
                format!(
                    "depth {max_depth}, batch {depth_batch}: NoCheckpointing against \
                 BalancedCheckpointing (step peak; time per sample)"
                ),
                Side::step(deep_plain.result),
                Side::step(deep_bal.result),
                correctness,
                worst_check(points),
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
            x_label: "blocks",
            x: &|c: &TrainConfig| c.shape.depth() as f64,
            x_scale: Scale::Log2,
            line: &|c: &TrainConfig| strategy_name(c.checkpointing).to_string(),
            predicted_forward: &|c: &TrainConfig| predict::forward_peak(c),
            predicted_step: &|c: &TrainConfig| predict::step_peak(c),
            note: "model + Adam state + token ids + what the forward pass keeps (the blocks' \
                   rule with or without the balanced strategy, see the sequence-length page; \
                   v + 3 d + 5 values per token outside the blocks, the same count with \
                   checkpointing: not modelled) + log-softmax's output (v per token)",
        },
    );
    let mut sorted: Vec<R<'_>> = rows.to_vec();
    sorted.sort_by_key(|r| r.config.shape.depth());
    let savings: Vec<String> = pairs(&sorted, |_| true)
        .into_iter()
        .map(|(p, b)| {
            format!(
                "{} blocks {} -> {} ({})",
                p.config.shape.depth(),
                format::bytes(p.peak()),
                format::bytes(b.peak()),
                format::pct(-(p.peak() - b.peak()) / p.peak() * 100.0)
            )
        })
        .collect();
    if !savings.is_empty() {
        let failed = workloads::failed_checks(rows);
        section.findings.push(format!(
            "Transformer: balanced checkpointing's step peak against none: {}. The gradients \
             with and without it: {}. Its time on the transformer is timed in pairs on the \
             sequence-length page.",
            savings.join("; "),
            if failed == 0 {
                "identical within the check's tolerance at every depth".to_string()
            } else {
                format!("{failed} checks failed")
            }
        ));
    }
    section
}
