//! The sequence-length sweep's conclusions: what one block keeps per token (the difference
//! between the two depths), its fit against the length, Burn's rule and Korthikanti's formula
//! beside it, the step's components, and the index row.

use results::keys::sequence_length::Key;
use results::keys::CommonKey;
use results::{
    Analysis, AxisUnit, Chart, Comparison, ComparisonSpec, Correctness, Fix, Headline, LinearFit,
    MeasuredPoint, Metric, PairedComparison, PublishedFigure, ReportedFit, Scale, Series, Side,
    TechniqueId, Text,
};

use super::{predict, SeqConfig, SequenceLength};
use crate::harness::backend::Checkpointing;
use crate::harness::models::TransformerShape;
use crate::technique::{checks_of_fix, Analyse, Row};

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

type R<'a> = Row<'a, SeqConfig>;

/// The secondary row: balanced checkpointing against none at the middle length, timed in
/// pairs.
fn checkpointing_headline(rows: &[R<'_>]) -> Option<Headline<Text>> {
    let (plain, balanced) = checkpointing_pair(rows)?;
    Some(
        Headline::versus(
            Text::said(Key::CheckpointingHeadline)
                .count("seq", plain.config.shape.seq)
                .count("blocks", plain.config.shape.layers),
            Side::step(plain.result),
            Side::step(balanced.result),
            Correctness::of_checks(&balanced.result.checks).unwrap_or(Correctness::Unknown),
            Key::CheckpointingDetail,
        )
        .variant("balanced checkpointing")
        .timed_by(CHECKPOINTING)
        .of_fix(Fix::Checkpointing),
    )
}

/// The sweep, read once: the deepest rows without and with checkpointing, each length
/// paired with a shallower depth, and the per-token fit.
struct Sweep<'r> {
    deep: Vec<&'r R<'r>>,
    pairs: Vec<Pair<'r>>,
    deep_balanced: Vec<&'r R<'r>>,
    pairs_balanced: Vec<Pair<'r>>,
    short: &'r R<'r>,
    long: &'r R<'r>,
    fit: Option<LinearFit>,
}

impl<'r> Sweep<'r> {
    fn new(plain: &'r [R<'r>], balanced: &'r [R<'r>]) -> Option<Self> {
        let (deep, pairs) = depth_pairs(plain);
        let (deep_balanced, pairs_balanced) = depth_pairs(balanced);
        let fit = LinearFit::fit(
            &pairs
                .iter()
                .map(|p| (p.seq, p.per_token_layer()))
                .collect::<Vec<_>>(),
        );
        Some(Self {
            short: deep.first().copied()?,
            long: deep.last().copied()?,
            deep,
            pairs,
            deep_balanced,
            pairs_balanced,
            fit,
        })
    }

    fn shape(&self) -> TransformerShape {
        self.long.config.shape
    }

    /// The model at sequence length `seq`.
    fn at(&self, seq: f64) -> TransformerShape {
        TransformerShape {
            seq: seq as usize,
            ..self.shape()
        }
    }
}

/// Each length's bytes per token and block beside Burn's rule and Korthikanti's.
fn per_token(sw: &Sweep<'_>) -> (Vec<Text>, Vec<Comparison<Text>>) {
    sw.pairs
        .iter()
        .map(|p| {
            let s = sw.at(p.seq);
            let burn = predict::burn_bytes_per_token_layer(&s);
            let finding = Text::said(Key::PerToken)
                .number("seq", p.seq)
                .bytes("measured", p.per_token_layer())
                .count("deep", p.deep.config.shape.layers)
                .count("shallow", p.shallow.config.shape.layers)
                .bytes("burn", burn)
                .bytes(
                    "adapted",
                    predict::korthikanti_f32_no_dropout_bytes_per_token_layer(&s),
                )
                .bytes("published", predict::korthikanti_bytes_per_token_layer(&s));
            let comparison = Comparison::new(
                Text::said(Key::PerTokenQuantity).number("seq", p.seq),
                burn,
                p.per_token_layer(),
                Key::PerTokenNote,
            );
            (finding, comparison)
        })
        .unzip()
}

/// The fit of bytes per token and block against the length, beside the rule's intercept and
/// slope.
fn fit_part(sw: &Sweep<'_>) -> (Vec<Text>, Vec<Comparison<Text>>) {
    let Some(fit) = &sw.fit else {
        return (Vec::new(), Vec::new());
    };
    let heads = sw.shape().heads as f64;
    let predicted_slope = predict::ATTENTION_VALUES_PER_HEAD * heads * 4.0;
    let first_slope = predict::FIRST_ATTENTION_VALUES_PER_HEAD * heads * 4.0;
    let predicted_intercept = predict::burn_bytes_per_token_layer(&sw.at(0.0));
    let finding = Text::said(Key::Fit)
        .count("lengths", fit.n)
        .number("r_squared", fit.r_squared)
        .bytes("intercept", fit.intercept)
        .bytes("slope", fit.slope)
        .bytes("predicted_intercept", predicted_intercept)
        .bytes("predicted_slope", predicted_slope)
        .count("heads", sw.shape().heads)
        .bytes("first_slope", first_slope)
        .number("crossover_rule", predict::burn_crossover_seq(&sw.shape()));
    let comparisons = vec![
        Comparison::new(
            Key::InterceptQuantity,
            predicted_intercept,
            fit.intercept,
            Key::Label18DH2F32Values,
        ),
        Comparison::new(
            Key::SlopeQuantity,
            predicted_slope,
            fit.slope,
            Key::SlopeNote,
        ),
    ];
    (vec![finding], comparisons)
}

/// Balanced checkpointing's bytes per token and block, and its peak at the longest length.
fn balanced_part(sw: &Sweep<'_>) -> (Vec<Text>, Vec<Comparison<Text>>) {
    let (mut findings, comparisons): (Vec<Text>, Vec<Comparison<Text>>) = sw
        .pairs_balanced
        .iter()
        .map(|p| {
            let measured = p.per_token_layer();
            let predicted = predict::balanced_bytes_per_token_layer(&sw.at(p.seq));
            let mut t = Text::said(Key::Balanced)
                .number("seq", p.seq)
                .bytes("measured", measured)
                .bytes("predicted", predicted);
            if let Some(q) = sw.pairs.iter().find(|q| q.seq == p.seq) {
                t = t.bytes("without", q.per_token_layer());
            }
            let c = Comparison::new(
                Text::said(Key::BalancedQuantity).number("seq", p.seq),
                predicted,
                measured,
                Key::BalancedNote,
            );
            (t, c)
        })
        .unzip();
    let long = sw.long;
    let at_longest = sw
        .deep_balanced
        .iter()
        .find(|b| b.config.shape.seq == long.config.shape.seq);
    if let Some(b) = at_longest {
        let mut t = Text::said(Key::BalancedPeak)
            .count("seq", long.config.shape.seq)
            .count("blocks", sw.shape().layers)
            .bytes("without", long.result.peak_bytes() as f64)
            .bytes("with", b.result.peak_bytes() as f64);
        if let Some(c) = b.result.checks.first() {
            t = t
                .number("max_rel_diff", c.max_rel_diff)
                .number("tolerance", c.tolerance)
                .number("passed", u8::from(c.passed));
        }
        findings.push(t);
    }
    (findings, comparisons)
}

/// The longest step's weights and Adam state beside the rules, its components, and the
/// throughput at the ends of the sweep.
fn components(sw: &Sweep<'_>) -> (Vec<Text>, Vec<Comparison<Text>>) {
    let (shape, r) = (sw.shape(), sw.long.result);
    let params = r.metric(Metric::ParamBytes);
    let shallow_extra = sw.pairs.last().map_or(f64::NAN, |p| {
        p.shallow.result.metric(Metric::ParamBytes) - predict::param_bytes(&p.shallow.config.shape)
    });
    let comparisons = vec![
        Comparison::new(
            Text::said(Key::ParamsQuantity).count("blocks", shape.layers),
            predict::param_bytes(&shape),
            params,
            Text::said(Key::ParamsNote)
                .count("params", shape.num_params())
                .bytes("extra", params - predict::param_bytes(&shape))
                .bytes("per_block", per_block_extra(&sw.pairs))
                .bytes("shallow_extra", shallow_extra),
        ),
        Comparison::new(
            Key::LabelAdamState,
            predict::adam_state_bytes(&shape),
            r.metric(Metric::OptimizerStateBytes),
            Key::LabelN8BytesPerParameter,
        ),
    ];
    let rate = |r: &R<'_>| r.result.samples_per_step as f64 / r.result.step.median_s;
    let findings = vec![
        Text::said(Key::Components)
            .count("seq", shape.seq)
            .count("batch", sw.long.config.batch)
            .count("blocks", shape.layers)
            .bytes("peak", r.peak_bytes() as f64)
            .bytes("weights", params)
            .bytes("adam", r.metric(Metric::OptimizerStateBytes))
            .bytes("gradients", r.metric(Metric::GradBytes))
            .bytes("kept", r.metric(Metric::GraphBytes))
            .bytes("activations", r.metric(Metric::ActivationBytes)),
        Text::said(Key::Throughput)
            .count("short", sw.short.config.shape.seq)
            .count("long", sw.long.config.shape.seq)
            .number("short_rate", rate(sw.short))
            .number("long_rate", rate(sw.long)),
    ];
    (findings, comparisons)
}

/// A rule per token and block along the sweep's lengths.
fn rule_line(
    sw: &Sweep<'_>,
    name: Key,
    pairs: &[Pair<'_>],
    rule: fn(&TransformerShape) -> f64,
) -> Series<Text> {
    Series::line(
        name,
        true,
        pairs.iter().map(|p| (p.seq, rule(&sw.at(p.seq)))).collect(),
    )
}

/// Bytes one block keeps per token, measured and by each rule.
fn per_token_chart(sw: &Sweep<'_>) -> Chart<Text> {
    let measured = |name: Key, pairs: &[Pair<'_>]| {
        Series::line(
            name,
            false,
            pairs.iter().map(|p| (p.seq, p.per_token_layer())).collect(),
        )
    };
    Chart::new(
        "per-token-per-block",
        Key::LabelBytesOneBlockKeepsPerToken,
        Key::LabelSequenceLengthTokens,
        Key::LabelBytesPerTokenPerBlock,
    )
    .x(AxisUnit::Given, Scale::Log2)
    .y(AxisUnit::Bytes)
    .series([
        measured(Key::LabelMeasuredDifferenceBetweenDepths, &sw.pairs),
        rule_line(
            sw,
            Key::LabelBurnSRule418D,
            &sw.pairs,
            predict::burn_bytes_per_token_layer,
        ),
        measured(Key::LabelBalancedCheckpointingMeasured, &sw.pairs_balanced),
        rule_line(
            sw,
            Key::LabelBalancedCheckpointingRule410D,
            &sw.pairs_balanced,
            predict::balanced_bytes_per_token_layer,
        ),
        rule_line(
            sw,
            Key::LabelKorthikantiF32WithoutDropout416,
            &sw.pairs,
            predict::korthikanti_f32_no_dropout_bytes_per_token_layer,
        ),
        rule_line(
            sw,
            Key::LabelKorthikantiAsPublished34D5,
            &sw.pairs,
            predict::korthikanti_bytes_per_token_layer,
        ),
    ])
}

/// A value of each row against its sequence length.
fn by_seq(rows: &[&R<'_>], f: &dyn Fn(&R<'_>) -> f64) -> Vec<(f64, f64)> {
    rows.iter()
        .map(|r| (r.config.shape.seq as f64, f(r)))
        .collect()
}

/// The deepest step's components against the length, and its peak.
fn components_chart(sw: &Sweep<'_>) -> Chart<Text> {
    let components = [
        (Key::LabelWeights, Metric::ParamBytes),
        (Key::LabelAdamState, Metric::OptimizerStateBytes),
        (Key::LabelGradients, Metric::GradBytes),
        (Key::LabelKeptByForwardForBackward, Metric::GraphBytes),
    ];
    Chart::new(
        "components-vs-seq",
        Text::said(Key::ComponentsChart).count("blocks", sw.shape().layers),
        Key::LabelSequenceLengthTokens,
        Key::LabelBytes,
    )
    .x(AxisUnit::Given, Scale::Log2)
    .y(AxisUnit::Bytes)
    .series(components.map(|(name, metric)| {
        Series::line(name, false, by_seq(&sw.deep, &|r| r.result.metric(metric)))
    }))
    .series([Series::line(
        CommonKey::StepPeak,
        false,
        by_seq(&sw.deep, &|r| r.result.peak_bytes() as f64),
    )])
}

/// The step peak with and without checkpointing, and the throughput, against the length.
fn peak_and_throughput_charts(sw: &Sweep<'_>) -> [Chart<Text>; 2] {
    let blocks = sw.shape().layers;
    let peak = |r: &R<'_>| r.result.peak_bytes() as f64;
    [
        Chart::new(
            "peak-checkpointing-vs-seq",
            Text::said(Key::CheckpointingChart).count("blocks", blocks),
            Key::LabelSequenceLengthTokens,
            CommonKey::StepPeak,
        )
        .x(AxisUnit::Given, Scale::Log2)
        .y(AxisUnit::Bytes)
        .series([
            Series::line(Key::LabelNoCheckpointing, false, by_seq(&sw.deep, &peak)),
            Series::line(
                Key::LabelBalancedCheckpointing,
                false,
                by_seq(&sw.deep_balanced, &peak),
            ),
        ]),
        Chart::new(
            "throughput-vs-seq",
            Text::said(Key::ThroughputChart).count("blocks", blocks),
            Key::LabelSequenceLengthTokens,
            Key::LabelThroughputTokensS,
        )
        .x(AxisUnit::Given, Scale::Log2)
        .series([Series::throughput(
            Key::LabelTokensSMedianBarsFastestAnd,
            sw.deep
                .iter()
                .map(|r| (r.config.shape.seq as f64, r.result)),
        )]),
    ]
}

/// Korthikanti et al.'s per-token figure beside ours at the longest length.
fn published(sw: &Sweep<'_>) -> Option<PublishedFigure<Text>> {
    let p = sw.pairs.last()?;
    let s = sw.at(p.seq);
    Some(PublishedFigure {
        source: Text::said(Key::PublishedSource),
        claim: Text::said(Key::PublishedClaim),
        ours: Text::said(Key::PublishedOurs)
            .bytes("measured", p.per_token_layer())
            .number("seq", p.seq)
            .bytes("published", predict::korthikanti_bytes_per_token_layer(&s))
            .bytes(
                "adapted",
                predict::korthikanti_f32_no_dropout_bytes_per_token_layer(&s),
            ),
    })
}

/// Findings, predictions and the fit of the sweep, in the page's order.
fn conclusions(sw: &Sweep<'_>, paired: &[PairedComparison]) -> (Vec<Text>, Vec<Comparison<Text>>) {
    let mut findings = Vec::new();
    let mut comparisons = Vec::new();
    for (f, c) in [per_token(sw), fit_part(sw), balanced_part(sw)] {
        findings.extend(f);
        comparisons.extend(c);
    }
    findings.extend(
        paired
            .iter()
            .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id)),
    );
    let (f, c) = components(sw);
    findings.extend(f);
    comparisons.extend(c);
    (findings, comparisons)
}

impl Analyse for SequenceLength {
    /// The analysis of a sequence-length sweep.
    fn analyse(
        &self,
        mut rows: Vec<R<'_>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis<Text> {
        rows.sort_by_key(|r| (r.config.shape.seq, r.config.shape.layers));
        let correctness = Correctness::of(points);
        let checks = checks_of_fix(&rows, Fix::Checkpointing, TechniqueId::SequenceLength);
        let secondary = checkpointing_headline(&rows);
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
        let Some(sw) = Sweep::new(&plain, &balanced) else {
            return Analysis::unmeasured(correctness);
        };
        let (mut findings, comparisons) = conclusions(&sw, paired);
        let mut charts = vec![per_token_chart(&sw), components_chart(&sw)];
        charts.extend(peak_and_throughput_charts(&sw));
        if let Some((chart, lines)) = timeline {
            charts.insert(1, chart);
            findings.extend(lines);
        }
        let headline = Headline::versus(
            Text::said(Key::Headline)
                .count("long", sw.long.config.shape.seq)
                .count("short", sw.short.config.shape.seq)
                .count("blocks", sw.shape().layers),
            Side::step(sw.long.result),
            Side::step(sw.short.result),
            // The checks belong to the checkpointing row: the sweep has nothing to prove.
            Correctness::NotApplicable,
            Key::SweepDetail,
        );
        Analysis::new(headline)
            .secondary(secondary)
            .findings(findings)
            .comparisons(comparisons)
            .fits(sw.fit.clone().map(|fit| ReportedFit {
                what: Text::said(Key::FitWhat),
                fit,
            }))
            .charts(charts)
            .published(published(&sw))
            .fix_checks(checks)
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
