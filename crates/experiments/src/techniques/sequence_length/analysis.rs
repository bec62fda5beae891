//! The sequence-length sweep's conclusions: what one block keeps per token (the difference
//! between the two depths), its fit against the length, Burn's rule and Korthikanti's formula
//! beside it, the step's components, and the index row.

use results::keys::sequence_length::Key;
use results::keys::CommonKey;
use results::{
    Analysis, AxisUnit, Chart, Comparison, ComparisonSpec, Correctness, Headline, LinearFit,
    MeasuredPoint, Metric, PairedComparison, PublishedFigure, ReportedFit, Scale, Series, Side,
    Text,
};

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
    ) -> Analysis<Text> {
        rows.sort_by_key(|r| (r.config.shape.seq, r.config.shape.layers));
        let correctness = Correctness::of(points);
        let secondary_headlines: Vec<Headline<Text>> = checkpointing_pair(&rows)
            .map(|(plain, balanced)| {
                Headline::versus(
                    Text::said(Key::CheckpointingHeadline)
                        .count("seq", plain.config.shape.seq)
                        .count("blocks", plain.config.shape.layers),
                    Side::step(plain.result),
                    Side::step(balanced.result),
                    Correctness::of_checks(&balanced.result.checks).unwrap_or(Correctness::Unknown),
                    Text::said(Key::CheckpointingDetail),
                )
                .variant("balanced checkpointing")
                .timed_by(CHECKPOINTING)
            })
            .into_iter()
            .collect();
        let timeline = checkpointing_pair(&rows).and_then(|(plain, balanced)| {
            crate::workloads::timeline_chart(
                "memory-timeline",
                Text::said(Key::LabelMemoryThroughOneTrainingStepWithout),
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
            findings.push(
                Text::said(Key::PerToken)
                    .number("seq", p.seq)
                    .bytes("measured", measured)
                    .count("deep", p.deep.config.shape.layers)
                    .count("shallow", p.shallow.config.shape.layers)
                    .bytes("burn", burn)
                    .bytes("adapted", adapted)
                    .bytes("published", predict::korthikanti_bytes_per_token_layer(&s)),
            );
            comparisons.push(Comparison {
                quantity: Text::said(Key::PerTokenQuantity).number("seq", p.seq),
                predicted_bytes: burn,
                measured_bytes: measured,
                measured_upper_bytes: None,
                note: Text::said(Key::PerTokenNote),
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
            findings.push(
                Text::said(Key::Fit)
                    .count("lengths", fit.n)
                    .number("r_squared", fit.r_squared)
                    .bytes("intercept", fit.intercept)
                    .bytes("slope", fit.slope)
                    .bytes("predicted_intercept", predicted_intercept)
                    .bytes("predicted_slope", predicted_slope)
                    .count("heads", shape.heads)
                    .bytes("first_slope", first_slope)
                    .number("crossover_rule", predict::burn_crossover_seq(&shape)),
            );
            comparisons.push(Comparison {
                quantity: Text::said(Key::InterceptQuantity),
                predicted_bytes: predicted_intercept,
                measured_bytes: fit.intercept,
                measured_upper_bytes: None,
                note: Text::said(Key::Label18DH2F32Values),
            });
            comparisons.push(Comparison {
                quantity: Text::said(Key::SlopeQuantity),
                predicted_bytes: predicted_slope,
                measured_bytes: fit.slope,
                measured_upper_bytes: None,
                note: Text::said(Key::SlopeNote),
            });
            fits.push(ReportedFit {
                what: Text::said(Key::FitWhat),
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
            let mut t = Text::said(Key::Balanced)
                .number("seq", p.seq)
                .bytes("measured", measured)
                .bytes("predicted", predicted);
            if let Some(w) = without {
                t = t.bytes("without", w);
            }
            findings.push(t);
            comparisons.push(Comparison {
                quantity: Text::said(Key::BalancedQuantity).number("seq", p.seq),
                predicted_bytes: predicted,
                measured_bytes: measured,
                measured_upper_bytes: None,
                note: Text::said(Key::BalancedNote),
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
            let mut t = Text::said(Key::BalancedPeak)
                .count("seq", long.config.shape.seq)
                .count("blocks", shape.layers)
                .bytes("without", without)
                .bytes("with", with);
            if let Some(c) = b.result.checks.first() {
                t = t
                    .number("max_rel_diff", c.max_rel_diff)
                    .number("tolerance", c.tolerance)
                    .number("passed", u8::from(c.passed));
            }
            findings.push(t);
        }

        findings.extend(
            paired
                .iter()
                .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id)),
        );

        let r = long.result;
        let params = r.metric(Metric::ParamBytes);
        comparisons.push(Comparison {
            quantity: Text::said(Key::ParamsQuantity).count("blocks", shape.layers),
            predicted_bytes: predict::param_bytes(&shape),
            measured_bytes: params,
            measured_upper_bytes: None,
            note: Text::said(Key::ParamsNote)
                .count("params", shape.num_params())
                .bytes("extra", params - predict::param_bytes(&shape))
                .bytes("per_block", per_block_extra(&pairs))
                .bytes(
                    "shallow_extra",
                    pairs.last().map_or(f64::NAN, |p| {
                        p.shallow.result.metric(Metric::ParamBytes)
                            - predict::param_bytes(&p.shallow.config.shape)
                    }),
                ),
        });
        comparisons.push(Comparison {
            quantity: Text::from(Key::LabelAdamState),
            predicted_bytes: predict::adam_state_bytes(&shape),
            measured_bytes: r.metric(Metric::OptimizerStateBytes),
            measured_upper_bytes: None,
            note: Text::from(Key::LabelN8BytesPerParameter),
        });
        findings.push(
            Text::said(Key::Components)
                .count("seq", shape.seq)
                .count("batch", long.config.batch)
                .count("blocks", shape.layers)
                .bytes("peak", r.peak_bytes() as f64)
                .bytes("weights", params)
                .bytes("adam", r.metric(Metric::OptimizerStateBytes))
                .bytes("gradients", r.metric(Metric::GradBytes))
                .bytes("kept", r.metric(Metric::GraphBytes))
                .bytes("activations", r.metric(Metric::ActivationBytes)),
        );
        findings.push(
            Text::said(Key::Throughput)
                .count("short", short.config.shape.seq)
                .count("long", long.config.shape.seq)
                .number(
                    "short_rate",
                    short.result.samples_per_step as f64 / short.result.step.median_s,
                )
                .number("long_rate", r.samples_per_step as f64 / r.step.median_s),
        );

        let x = |r: &Row<'_, SeqConfig>| r.config.shape.seq as f64;
        let charts = vec![
            Chart {
                id: "per-token-per-block".into(),
                title: Text::said(Key::LabelBytesOneBlockKeepsPerToken),
                x_label: Key::LabelSequenceLengthTokens.into(),
                y_label: Text::said(Key::LabelBytesPerTokenPerBlock),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Bytes,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: vec![
                    Series::line(
                        Key::LabelMeasuredDifferenceBetweenDepths,
                        false,
                        pairs.iter().map(|p| (p.seq, p.per_token_layer())).collect(),
                    ),
                    Series::line(
                        Text::said(Key::LabelBurnSRule418D),
                        true,
                        pairs
                            .iter()
                            .map(|p| (p.seq, predict::burn_bytes_per_token_layer(&at(p.seq))))
                            .collect(),
                    ),
                    Series::line(
                        Key::LabelBalancedCheckpointingMeasured,
                        false,
                        pairs_balanced
                            .iter()
                            .map(|p| (p.seq, p.per_token_layer()))
                            .collect(),
                    ),
                    Series::line(
                        Text::said(Key::LabelBalancedCheckpointingRule410D),
                        true,
                        pairs_balanced
                            .iter()
                            .map(|p| (p.seq, predict::balanced_bytes_per_token_layer(&at(p.seq))))
                            .collect(),
                    ),
                    Series::line(
                        Text::said(Key::LabelKorthikantiF32WithoutDropout416),
                        true,
                        pairs
                            .iter()
                            .map(|p| {
                                (
                                    p.seq,
                                    predict::korthikanti_f32_no_dropout_bytes_per_token_layer(&at(
                                        p.seq,
                                    )),
                                )
                            })
                            .collect(),
                    ),
                    Series::line(
                        Text::said(Key::LabelKorthikantiAsPublished34D5),
                        true,
                        pairs
                            .iter()
                            .map(|p| {
                                (
                                    p.seq,
                                    predict::korthikanti_bytes_per_token_layer(&at(p.seq)),
                                )
                            })
                            .collect(),
                    ),
                ],
            },
            Chart {
                id: "components-vs-seq".into(),
                title: Text::said(Key::ComponentsChart).count("blocks", shape.layers),
                x_label: Key::LabelSequenceLengthTokens.into(),
                y_label: Key::LabelBytes.into(),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Bytes,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: {
                    let mut series: Vec<Series<Text>> = [
                        (Text::from(Key::LabelWeights), Metric::ParamBytes),
                        (Text::from(Key::LabelAdamState), Metric::OptimizerStateBytes),
                        (Text::from(Key::LabelGradients), Metric::GradBytes),
                        (
                            Text::said(Key::LabelKeptByForwardForBackward),
                            Metric::GraphBytes,
                        ),
                    ]
                    .into_iter()
                    .map(|(name, metric)| {
                        Series::line(
                            name,
                            false,
                            deep.iter()
                                .map(|r| (x(r), r.result.metric(metric)))
                                .collect(),
                        )
                    })
                    .collect();
                    series.push(Series::line(
                        CommonKey::StepPeak,
                        false,
                        deep.iter()
                            .map(|r| (x(r), r.result.peak_bytes() as f64))
                            .collect(),
                    ));
                    series
                },
            },
            Chart {
                id: "peak-checkpointing-vs-seq".into(),
                title: Text::said(Key::CheckpointingChart).count("blocks", shape.layers),
                x_label: Key::LabelSequenceLengthTokens.into(),
                y_label: CommonKey::StepPeak.into(),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Bytes,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: [
                    (Key::LabelNoCheckpointing, &deep),
                    (Key::LabelBalancedCheckpointing, &deep_balanced),
                ]
                .into_iter()
                .map(|(name, rows)| {
                    Series::line(
                        name,
                        false,
                        rows.iter()
                            .map(|r| (x(r), r.result.peak_bytes() as f64))
                            .collect(),
                    )
                })
                .collect(),
            },
            Chart {
                id: "throughput-vs-seq".into(),
                title: Text::said(Key::ThroughputChart).count("blocks", shape.layers),
                x_label: Key::LabelSequenceLengthTokens.into(),
                y_label: Key::LabelThroughputTokensS.into(),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Given,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: vec![Series::throughput(
                    Text::said(Key::LabelTokensSMedianBarsFastestAnd),
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
                source: Text::said(Key::PublishedSource),
                claim: Text::said(Key::PublishedClaim),
                ours: Text::said(Key::PublishedOurs)
                    .bytes("measured", p.per_token_layer())
                    .number("seq", p.seq)
                    .bytes(
                        "published",
                        predict::korthikanti_bytes_per_token_layer(&at(p.seq)),
                    )
                    .bytes(
                        "adapted",
                        predict::korthikanti_f32_no_dropout_bytes_per_token_layer(&at(p.seq)),
                    ),
            })
            .into_iter()
            .collect();

        Analysis {
            fix_table: None,
            fix_checks: Vec::new(),
            headline: Headline::versus(
                Text::said(Key::Headline)
                    .count("long", long.config.shape.seq)
                    .count("short", short.config.shape.seq)
                    .count("blocks", shape.layers),
                Side::step(long.result),
                Side::step(short.result),
                // The checks belong to the checkpointing row: the sweep has nothing to prove.
                Correctness::NotApplicable,
                Text::said(Key::SweepDetail),
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
