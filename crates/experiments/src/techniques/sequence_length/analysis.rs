//! The sequence-length sweep's conclusions: what one block keeps per token (the difference
//! between the two depths), its fit against the length, Burn's rule and Korthikanti's formula
//! beside it, the step's components, and the index row.

use results::{Analysis, Chart, Comparison, ComparisonSpec, Correctness, Headline, LinearFit, MeasuredPoint, Metric, PairedComparison, PublishedFigure, ReportedFit, Scale, Series, Side, format::{self, mib}};

use super::{predict, SeqConfig, SequenceLength};
use crate::harness::backend::Checkpointing;
use crate::technique::{Analyse, Row};

/// One sequence length measured at both depths.
struct Pair<'r> {
    seq: f64,
    shallow: &'r Row<'r, SeqConfig>,
    deep: &'r Row<'r, SeqConfig>,
}

impl Pair<'_> {
    /// Bytes one block keeps for backward per token: the difference in what the forward pass
    /// leaves live between the two depths, per added block and token.
    fn per_token_layer(&self) -> f64 {
        let kept = |r: &Row<'_, SeqConfig>| r.result.metric(Metric::GraphBytes);
        let blocks = (self.deep.config.shape.layers - self.shallow.config.shape.layers) as f64;
        let tokens = (self.deep.config.batch * self.deep.config.shape.seq) as f64;
        (kept(self.deep) - kept(self.shallow)) / (blocks * tokens)
    }
}

/// The id of the paired comparison of checkpointing on the transformer.
const CHECKPOINTING: &str = "checkpointing";

/// The model's depth at the middle sequence length, without and with balanced checkpointing:
/// the pair whose time is compared (the longest sequences would take minutes per build).
fn checkpointing_pair<'r, 'a>(
    rows: &'r [Row<'a, SeqConfig>],
) -> Option<(&'r Row<'a, SeqConfig>, &'r Row<'a, SeqConfig>)> {
    let layers = rows.iter().map(|r| r.config.shape.layers).max()?;
    let mut lengths: Vec<usize> = rows.iter().map(|r| r.config.shape.seq).collect();
    lengths.sort_unstable();
    lengths.dedup();
    let seq = *lengths.get(lengths.len() / 2)?;
    let at = |c: Checkpointing| {
        rows.iter().find(|r| {
            r.config.shape.layers == layers
                && r.config.shape.seq == seq
                && r.config.checkpointing == c
        })
    };
    Some((at(Checkpointing::None)?, at(Checkpointing::Balanced)?))
}

/// Balanced checkpointing against none on the transformer, timed in pairs.
pub(super) fn comparisons(rows: &[Row<'_, SeqConfig>]) -> Vec<ComparisonSpec> {
    checkpointing_pair(rows)
        .map(|(plain, balanced)| ComparisonSpec::new(CHECKPOINTING, plain.id, balanced.id))
        .into_iter()
        .collect()
}

impl Analyse for SequenceLength {
    /// The analysis of a sequence-length sweep.
    fn analyse(
        &self,
        mut rows: Vec<Row<'_, SeqConfig>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis {
        rows.sort_by_key(|r| (r.config.shape.seq, r.config.shape.layers));
        let correctness = Correctness::of(points);
        let secondary_headlines: Vec<Headline> = checkpointing_pair(&rows)
            .map(|(plain, balanced)| {
                Headline::versus(
                    format!(
                        "sequence {}, {} blocks: no checkpointing against balanced checkpointing \
                         (step peak; time per token)",
                        plain.config.shape.seq, plain.config.shape.layers
                    ),
                    Side::step(plain.result),
                    Side::step(balanced.result),
                    Correctness::of_checks(&balanced.result.checks).unwrap_or(Correctness::Unknown),
                    "the gradients of one step from the initial weights, with and without \
                     checkpointing",
                )
                .variant("balanced checkpointing")
                .timed_by(CHECKPOINTING)
            })
            .into_iter()
            .collect();
        let timeline = checkpointing_pair(&rows).and_then(|(plain, balanced)| {
            crate::workloads_worded::timeline_chart(
                "memory-timeline",
                "Memory through one training step: without and with balanced checkpointing",
                &[plain, balanced],
            )
        });
        let (plain, balanced): (Vec<_>, Vec<_>) = rows
            .into_iter()
            .partition(|r| r.config.checkpointing == Checkpointing::None);
        let (deep, pairs) = depth_pairs(&plain);
        let (deep_balanced, pairs_balanced) = depth_pairs(&balanced);
        let (Some(short), Some(long)) = (deep.first(), deep.last()) else {
            return Analysis::unmeasured(correctness);
        };
        let shape = long.config.shape;
        let at = |seq: f64| results_shape(shape, seq);

        let mut findings = Vec::new();
        let mut comparisons = Vec::new();
        for p in &pairs {
            let measured = p.per_token_layer();
            let s = at(p.seq);
            let burn = predict::burn_bytes_per_token_layer(&s);
            let adapted = predict::korthikanti_f32_no_dropout_bytes_per_token_layer(&s);
            findings.push(format!(
                "Sequence {}: one block keeps {} per token for backward (measured: {} blocks \
                 against {}); Burn's op-by-op rule predicts {} ({:+.1}%); Korthikanti et al.'s \
                 formula, adapted to f32 without dropout, {} ({:+.1}%); as published (16-bit, \
                 dropout) {}.",
                p.seq,
                format::bytes(measured),
                p.deep.config.shape.layers,
                p.shallow.config.shape.layers,
                format::bytes(burn),
                format::diff_pct(burn, measured),
                format::bytes(adapted),
                format::diff_pct(adapted, measured),
                format::bytes(predict::korthikanti_bytes_per_token_layer(&s)),
            ));
            comparisons.push(Comparison {
                quantity: format!("bytes per token per block, sequence {}", p.seq),
                predicted_bytes: burn,
                measured_bytes: measured,
                measured_upper_bytes: None,
                note: "18 d + 3 h s + h + 2 f32 values (module docs of predict.rs), the 3 h s \
                       corrected after the first measurement (first written 2 h s); measured as \
                       the difference between the two depths"
                    .into(),
            });
        }

        let fit = LinearFit::fit(
            &pairs
                .iter()
                .map(|p| (p.seq, p.per_token_layer()))
                .collect::<Vec<_>>(),
        );
        let mut fits = Vec::new();
        if let Some(fit) = &fit {
            let predicted_slope = predict::ATTENTION_VALUES_PER_HEAD * shape.heads as f64 * 4.0;
            let first_slope = predict::FIRST_ATTENTION_VALUES_PER_HEAD * shape.heads as f64 * 4.0;
            let predicted_intercept = predict::burn_bytes_per_token_layer(&at(0.0));
            findings.push(format!(
                "Fitted over {} lengths (R\u{b2} = {:.6}): a block keeps {} per token plus {} per \
                 token for every token of the sequence; Burn's rule says {} plus {} (3 x {} heads \
                 x 4 bytes: inside softmax, the shifted scores, which `exp` keeps as its input, \
                 and the exponentials, which the division keeps; and softmax's output, which \
                 the product with v keeps). That 3 is an explanation after the measurement, not \
                 a prediction: the rule was first written with 2 (`exp` keeping its output), \
                 {} per token of sequence, and the measurement sent us back to burn-autodiff's \
                 `float_exp`. The length-dependent term overtakes the fixed one at a sequence \
                 of {:.0} tokens (rule: {:.0}).",
                fit.n,
                fit.r_squared,
                format::bytes(fit.intercept),
                format::bytes(fit.slope),
                format::bytes(predicted_intercept),
                format::bytes(predicted_slope),
                shape.heads,
                format::bytes(first_slope),
                fit.intercept / fit.slope,
                predict::burn_crossover_seq(&shape),
            ));
            comparisons.push(Comparison {
                quantity: "fixed bytes per token per block (fit's intercept)".into(),
                predicted_bytes: predicted_intercept,
                measured_bytes: fit.intercept,
                measured_upper_bytes: None,
                note: "18 d + h + 2 f32 values".into(),
            });
            comparisons.push(Comparison {
                quantity: "bytes per token per block per token of sequence (fit's slope)".into(),
                predicted_bytes: predicted_slope,
                measured_bytes: fit.slope,
                measured_upper_bytes: None,
                note: "3 h f32 values: softmax's shifted scores, exponentials and output \
                       (corrected after the first measurement, which showed 3, not the 2 first \
                       written)"
                    .into(),
            });
            fits.push(ReportedFit {
                what: "bytes one block keeps per token against sequence length".into(),
                fit: fit.clone(),
            });
        }

        for p in &pairs_balanced {
            let measured = p.per_token_layer();
            let predicted = predict::balanced_bytes_per_token_layer(&at(p.seq));
            let without = pairs
                .iter()
                .find(|q| q.seq == p.seq)
                .map(Pair::per_token_layer);
            findings.push(format!(
                "Sequence {}, balanced checkpointing: one block keeps {} per token (predicted {}, \
                 {:+.1}%){}.",
                p.seq,
                format::bytes(measured),
                format::bytes(predicted),
                format::diff_pct(predicted, measured),
                without.map_or(String::new(), |w| format!(
                    ", against {} without checkpointing ({} per token per block)",
                    format::bytes(w),
                    format::pct((measured - w) / w * 100.0)
                )),
            ));
            comparisons.push(Comparison {
                quantity: format!(
                    "bytes per token per block, balanced checkpointing, sequence {}",
                    p.seq
                ),
                predicted_bytes: predicted,
                measured_bytes: measured,
                measured_upper_bytes: None,
                note: "10 d + 2 h s + h + 4 f32 values (module docs of predict.rs), written \
                       before the first checkpointed measurement"
                    .into(),
            });
        }
        if let Some(b) = deep_balanced
            .iter()
            .find(|b| b.config.shape.seq == long.config.shape.seq)
        {
            let (without, with) = (
                long.result.peak_bytes() as f64,
                b.result.peak_bytes() as f64,
            );
            findings.push(format!(
                "At sequence {} with {} blocks, balanced checkpointing takes the step peak from {} \
                 to {} ({} of the step peak); the gradients of one step agree with and without \
                 it ({}).",
                long.config.shape.seq,
                shape.layers,
                format::bytes(without),
                format::bytes(with),
                format::pct((with - without) / without * 100.0),
                b.result
                    .checks
                    .first()
                    .map_or("not checked".to_string(), |c| format!(
                        "largest relative difference {:.1e}, tolerance {:.0e}: {}",
                        c.max_rel_diff,
                        c.tolerance,
                        if c.passed { "passed" } else { "FAILED" }
                    )),
            ));
        }

        findings.extend(paired.iter().map(PairedComparison::finding));

        let r = long.result;
        let params = r.metric(Metric::ParamBytes);
        comparisons.push(Comparison {
            quantity: format!("parameters ({} blocks)", shape.layers),
            predicted_bytes: predict::param_bytes(&shape),
            measured_bytes: params,
            measured_upper_bytes: None,
            note: format!(
                "{} parameters x 4 bytes (the count is checked against Burn's own \
                 `num_params` in a test); what is measured beyond it ({}, about {} per block, \
                 {} per parameter tensor of its 16, from the shallow point's {}) is host \
                 bookkeeping, live after every parameter was first read: each parameter's \
                 `Param`, its autodiff node and Flex's tensor header, the same in every \
                 precision (the mixed-precision page); not in the rule",
                shape.num_params(),
                format::bytes(params - predict::param_bytes(&shape)),
                format::bytes(per_block_extra(&pairs)),
                format::bytes(per_block_extra(&pairs) / 16.0),
                format::bytes(pairs.last().map_or(f64::NAN, |p| {
                    p.shallow.result.metric(Metric::ParamBytes)
                        - predict::param_bytes(&p.shallow.config.shape)
                })),
            ),
        });
        comparisons.push(Comparison {
            quantity: "Adam state".into(),
            predicted_bytes: predict::adam_state_bytes(&shape),
            measured_bytes: r.metric(Metric::OptimizerStateBytes),
            measured_upper_bytes: None,
            note: "8 bytes per parameter".into(),
        });
        findings.push(format!(
            "At sequence {} ({} sequences, {} blocks) the step peak is {}: weights {}, Adam \
             state {}, gradients {}, and {} left by the forward pass for backward (its peak {} \
             above what was live).",
            shape.seq,
            long.config.batch,
            shape.layers,
            format::bytes(r.peak_bytes() as f64),
            format::bytes(params),
            format::bytes(r.metric(Metric::OptimizerStateBytes)),
            format::bytes(r.metric(Metric::GradBytes)),
            format::bytes(r.metric(Metric::GraphBytes)),
            format::bytes(r.metric(Metric::ActivationBytes)),
        ));
        findings.push(format!(
            "Time per token across lengths is not compared in pairs (a sweep of sizes, not a \
             substitute; checkpointing's cost is): the throughput chart shows each point's \
             median step, measured minutes apart; from sequence {} to {} it went from {} to {} \
             tokens/s.",
            short.config.shape.seq,
            long.config.shape.seq,
            format::rate(short.result.samples_per_step as f64 / short.result.step.median_s),
            format::rate(r.samples_per_step as f64 / r.step.median_s),
        ));

        let x = |r: &Row<'_, SeqConfig>| r.config.shape.seq as f64;
        let charts = vec![
            Chart {
                id: "per-token-per-block".into(),
                title: "Bytes one block keeps per token, against sequence length".into(),
                x_label: "sequence length (tokens)".into(),
                y_label: "bytes per token per block (KiB)".into(),
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: vec![
                    Series::line(
                        "measured (difference between depths)",
                        false,
                        pairs
                            .iter()
                            .map(|p| (p.seq, p.per_token_layer() / 1024.0))
                            .collect(),
                    ),
                    Series::line(
                        "Burn's rule: 4 (18 d + 3 h s + h + 2)",
                        true,
                        pairs
                            .iter()
                            .map(|p| {
                                (
                                    p.seq,
                                    predict::burn_bytes_per_token_layer(&at(p.seq)) / 1024.0,
                                )
                            })
                            .collect(),
                    ),
                    Series::line(
                        "balanced checkpointing (measured)",
                        false,
                        pairs_balanced
                            .iter()
                            .map(|p| (p.seq, p.per_token_layer() / 1024.0))
                            .collect(),
                    ),
                    Series::line(
                        "balanced checkpointing, rule: 4 (10 d + 2 h s + h + 4)",
                        true,
                        pairs_balanced
                            .iter()
                            .map(|p| {
                                (
                                    p.seq,
                                    predict::balanced_bytes_per_token_layer(&at(p.seq)) / 1024.0,
                                )
                            })
                            .collect(),
                    ),
                    Series::line(
                        "Korthikanti, f32 without dropout: 4 (16 d + h s)",
                        true,
                        pairs
                            .iter()
                            .map(|p| {
                                (
                                    p.seq,
                                    predict::korthikanti_f32_no_dropout_bytes_per_token_layer(&at(
                                        p.seq,
                                    )) / 1024.0,
                                )
                            })
                            .collect(),
                    ),
                    Series::line(
                        "Korthikanti as published: 34 d + 5 h s (16-bit, dropout)",
                        true,
                        pairs
                            .iter()
                            .map(|p| {
                                (
                                    p.seq,
                                    predict::korthikanti_bytes_per_token_layer(&at(p.seq)) / 1024.0,
                                )
                            })
                            .collect(),
                    ),
                ],
            },
            Chart {
                id: "components-vs-seq".into(),
                title: format!(
                    "A training step of {} blocks, component by component",
                    shape.layers
                ),
                x_label: "sequence length (tokens)".into(),
                y_label: "bytes (MiB)".into(),
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: {
                    let mut series: Vec<Series> = [
                        ("weights", Metric::ParamBytes),
                        ("Adam state", Metric::OptimizerStateBytes),
                        ("gradients", Metric::GradBytes),
                        ("kept by forward for backward", Metric::GraphBytes),
                    ]
                    .into_iter()
                    .map(|(name, metric)| {
                        Series::line(
                            name,
                            false,
                            deep.iter()
                                .map(|r| (x(r), mib(r.result.metric(metric))))
                                .collect(),
                        )
                    })
                    .collect();
                    series.push(Series::line(
                        "step peak",
                        false,
                        deep.iter()
                            .map(|r| (x(r), mib(r.result.peak_bytes() as f64)))
                            .collect(),
                    ));
                    series
                },
            },
            Chart {
                id: "peak-checkpointing-vs-seq".into(),
                title: format!(
                    "Step peak of {} blocks with and without balanced checkpointing",
                    shape.layers
                ),
                x_label: "sequence length (tokens)".into(),
                y_label: "step peak (MiB)".into(),
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: [
                    ("no checkpointing", &deep),
                    ("balanced checkpointing", &deep_balanced),
                ]
                .into_iter()
                .map(|(name, rows)| {
                    Series::line(
                        name,
                        false,
                        rows.iter()
                            .map(|r| (x(r), mib(r.result.peak_bytes() as f64)))
                            .collect(),
                    )
                })
                .collect(),
            },
            Chart {
                id: "throughput-vs-seq".into(),
                title: format!("Training throughput of {} blocks", shape.layers),
                x_label: "sequence length (tokens)".into(),
                y_label: "throughput (tokens/s)".into(),
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: vec![Series::throughput(
                    "tokens/s (median; bars: fastest and slowest repeat)",
                    deep.iter().map(|r| (x(r), r.result)),
                )],
            },
        ];
        let mut charts = charts;
        if let Some((chart, lines)) = timeline {
            charts.insert(1, chart);
            findings.extend(lines);
        }

        let published = pairs
            .last()
            .map(|p| PublishedFigure {
                source: "Korthikanti et al. 2022, Reducing Activation Recomputation in Large \
                         Transformer Models"
                    .into(),
                claim: "Activations per layer: sbh(34 + 5as/h) bytes with 16-bit values and \
                        dropout."
                    .into(),
                ours: format!(
                    "{} per token per block measured at sequence {} in f32 without dropout; \
                     the formula gives {} as published and {} adapted to f32 without dropout",
                    format::bytes(p.per_token_layer()),
                    p.seq,
                    format::bytes(predict::korthikanti_bytes_per_token_layer(&at(p.seq))),
                    format::bytes(predict::korthikanti_f32_no_dropout_bytes_per_token_layer(
                        &at(p.seq)
                    )),
                ),
            })
            .into_iter()
            .collect();

        Analysis {
            headline: Headline::versus(
                format!(
                    "sequence {} against sequence {} ({} blocks, step peak)",
                    long.config.shape.seq, short.config.shape.seq, shape.layers
                ),
                Side::step(long.result),
                Side::step(short.result),
                // The checks belong to the checkpointing row: the sweep has nothing to prove.
                Correctness::NotApplicable,
                "a sweep, not a substitute: each length computes a different step",
            ),
            secondary_headlines,
            findings,
            comparisons,
            fits,
            charts,
            published,
        }
    }
}

/// The rows at the largest depth, in sequence order, and each paired with the row of the same
/// sequence length at a smaller depth.
fn depth_pairs<'r, 'a>(
    rows: &'r [Row<'a, SeqConfig>],
) -> (Vec<&'r Row<'a, SeqConfig>>, Vec<Pair<'r>>) {
    let max_layers = rows.iter().map(|r| r.config.shape.layers).max();
    let deep: Vec<&Row<'_, SeqConfig>> = rows
        .iter()
        .filter(|r| Some(r.config.shape.layers) == max_layers)
        .collect();
    let pairs = deep
        .iter()
        .filter_map(|d| {
            let shallow = rows.iter().find(|r| {
                r.config.shape.seq == d.config.shape.seq
                    && r.config.shape.layers < d.config.shape.layers
            })?;
            Some(Pair {
                seq: d.config.shape.seq as f64,
                shallow,
                deep: d,
            })
        })
        .collect();
    (deep, pairs)
}

/// Bytes live after the parameters were first read beyond the parameters' own, per added
/// block (the difference between the two depths at the longest sequence).
fn per_block_extra(pairs: &[Pair<'_>]) -> f64 {
    pairs.last().map_or(f64::NAN, |p| {
        let extra = |r: &Row<'_, SeqConfig>| {
            r.result.metric(Metric::ParamBytes) - predict::param_bytes(&r.config.shape)
        };
        let blocks = (p.deep.config.shape.layers - p.shallow.config.shape.layers) as f64;
        (extra(p.deep) - extra(p.shallow)) / blocks
    })
}

/// `shape` at sequence length `seq`.
fn results_shape(
    shape: crate::harness::models::TransformerShape,
    seq: f64,
) -> crate::harness::models::TransformerShape {
    crate::harness::models::TransformerShape {
        seq: seq as usize,
        ..shape
    }
}
