//! Gradient accumulation's conclusions: the step peak against k, predicted beside measured,
//! charts, Hugging Face's figures beside ours, and the index row.

use results::keys::accumulation::Key;
use results::keys::CommonKey;
use results::{
    paired::find, Analysis, AxisUnit, Chart, Comparison, ComparisonSpec, Correctness, Headline,
    MeasuredPoint, Metric, PairedComparison, Phase, PublishedFigure, Scale, Series, Side, Text,
};

use super::{predict, Accumulation};
use crate::harness::train::TrainConfig;
use crate::technique::{Analyse, Row};
use crate::workloads::{self, Axis};

/// The share of the largest measured saving that the index row's k must reach.
const MOST_OF_THE_SAVING: f64 = 0.9;

/// The id of the headline's paired comparison.
const HEADLINE: &str = "headline";

/// The plain step (k = 1) and the index row's k: the smallest that gives most of the saving
/// (past it, more micro-batches cost time and buy little memory), from `rows` sorted by k.
pub(super) fn plain_and_chosen<'r, 'a>(
    rows: &'r [Row<'a, TrainConfig>],
) -> Option<(&'r Row<'a, TrainConfig>, &'r Row<'a, TrainConfig>)> {
    let base = rows.iter().find(|r| r.config.micro_batches == 1)?;
    let most = rows.iter().max_by_key(|r| r.config.micro_batches)?;
    let saving = |r: &Row<'_, TrainConfig>| base.peak() - r.peak();
    let best = rows.iter().map(saving).fold(f64::NEG_INFINITY, f64::max);
    let chosen = rows
        .iter()
        .filter(|r| r.config.micro_batches > 1 && saving(r) >= MOST_OF_THE_SAVING * best)
        .min_by_key(|r| r.config.micro_batches)
        .unwrap_or(most);
    Some((base, chosen))
}

/// The headline's comparison: the plain step against the chosen k.
pub(super) fn comparisons(rows: &[Row<'_, TrainConfig>]) -> Vec<ComparisonSpec> {
    let mlp = workloads::mlp_rows(rows);
    plain_and_chosen(&mlp)
        .map(|(base, chosen)| ComparisonSpec::new(HEADLINE, base.id, chosen.id))
        .into_iter()
        .collect()
}

impl Analyse for Accumulation {
    /// The analysis of the accumulation experiment.
    fn analyse(
        &self,
        rows: Vec<Row<'_, TrainConfig>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis<Text> {
        let (mut rows, mut transformer) = workloads::split(rows);
        rows.sort_by_key(|r| r.config.micro_batches);
        transformer.sort_by_key(|r| r.config.micro_batches);
        let section = transformer_section(&transformer);
        let correctness = Correctness::of(points);
        let (Some((base, chosen)), Some(most)) = (plain_and_chosen(&rows), rows.last()) else {
            return Analysis::unmeasured(correctness);
        };
        let batch = base.config.batch as f64;
        let shape = base.config.shape;
        let peak = |r: &Row<'_, TrainConfig>| r.peak();
        let saving = |r: &Row<'_, TrainConfig>| peak(base) - peak(r);
        let best = rows.iter().map(saving).fold(f64::NEG_INFINITY, f64::max);
        let timed = find(paired, HEADLINE);

        let mut findings = vec![Text::said(Key::Peaks)
            .count("batch", base.config.batch)
            .bytes("plain", peak(base))
            .count("k", most.config.micro_batches)
            .count("micro_batch", base.config.batch / most.config.micro_batches)
            .bytes("accumulated", peak(most))];
        findings.push(
            Text::said(Key::ChosenK)
                .count("k", chosen.config.micro_batches)
                .number("share", MOST_OF_THE_SAVING)
                .bytes("best", best)
                .count(
                    "best_k",
                    rows.iter()
                        .find(|r| saving(r) == best)
                        .map_or(0, |r| r.config.micro_batches),
                )
                .bytes("saved", saving(chosen)),
        );
        findings.extend(
            paired
                .iter()
                .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id)),
        );
        let floor = rows
            .iter()
            .map(|r| r.result.metric(Metric::GradBytes))
            .fold(f64::NAN, f64::max);
        findings.push(Text::said(Key::Floor).bytes("gradients", floor));

        let mut comparisons: Vec<Comparison<Text>> = rows
            .iter()
            .map(|r| Comparison {
                quantity: Text::said(Key::StepQuantity).count("k", r.config.micro_batches),
                predicted_bytes: predict::step_peak(shape, batch, r.config.micro_batches),
                measured_bytes: peak(r),
                measured_upper_bytes: r.peak_upper(),
                note: Text::said(Key::StepNote)
                    .bytes("process", r.result.metric(Metric::ProcessBaselineBytes))
                    .bytes("runtime", r.result.metric(Metric::RuntimeBytes)),
            })
            .collect();

        let series_of = |name: Key, f: &dyn Fn(&Row<'_, TrainConfig>) -> f64| {
            Series::line(
                name,
                false,
                rows.iter()
                    .map(|r| (r.config.micro_batches as f64, f(r)))
                    .collect(),
            )
        };
        let phase_peak = |phase: Phase| {
            move |r: &Row<'_, TrainConfig>| {
                r.result
                    .phase(phase)
                    .map_or(f64::NAN, |p| p.peak_bytes as f64)
            }
        };
        let mut charts = vec![
            Chart {
                id: "peak-vs-micro-batches".into(),
                title: Text::said(Key::PeakChart).count("batch", base.config.batch),
                x_label: Text::said(Key::LabelMicroBatchesKBatchBK),
                y_label: Key::LabelBytesInUse.into(),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Bytes,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: vec![
                    series_of(Key::LabelStepPeakMeasured, &peak),
                    series_of(Key::LabelForwardPeakMeasured, &phase_peak(Phase::Forward)),
                    series_of(Key::LabelBackwardPeakMeasured, &phase_peak(Phase::Backward)),
                    Series::line(
                        Key::LabelStepPeakPredicted,
                        true,
                        rows.iter()
                            .map(|r| {
                                (
                                    r.config.micro_batches as f64,
                                    predict::step_peak(shape, batch, r.config.micro_batches),
                                )
                            })
                            .collect(),
                    ),
                ],
            },
            Chart {
                id: "throughput-vs-micro-batches".into(),
                title: Key::LabelTrainingThroughputWithAccumulation.into(),
                x_label: Text::said(Key::LabelMicroBatchesKBatchBK),
                y_label: Key::LabelThroughputSamplesS.into(),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Given,
                x_scale: Scale::Log2,
                categories: Vec::new(),
                series: vec![Series::throughput(
                    Text::said(Key::LabelSamplesSMedianBarsFastestAnd),
                    rows.iter()
                        .map(|r| (r.config.micro_batches as f64, r.result)),
                )],
            },
        ];
        if let Some((chart, lines)) = workloads::timeline_chart(
            "memory-timeline",
            Text::said(Key::LabelMemoryThroughOneTrainingStepOne),
            &[base, chosen],
        ) {
            charts.insert(1, chart);
            findings.extend(lines);
        }

        section.append_to(&mut findings, &mut comparisons, &mut charts);
        let four = rows.iter().find(|r| r.config.micro_batches == 4);
        let published = vec![PublishedFigure {
            source: Text::said(Key::PublishedSource),
            claim: Text::said(Key::PublishedClaim),
            ours: match four {
                Some(r) => {
                    let mut t = Text::said(Key::PublishedOurs)
                        .count("batch", base.config.batch)
                        .count("micro_batch", base.config.batch / 4)
                        .bytes("plain", peak(base))
                        .bytes("accumulated", peak(r))
                        .count("timed_k", chosen.config.micro_batches);
                    if let Some(c) = timed.filter(|t| t.spec.technique == r.id) {
                        t = t.paired("timing", &c.spec.id);
                    }
                    t
                }
                None => Text::said(Key::PublishedOursUnmeasured),
            },
        }];

        Analysis {
            fix_table: None,
            headline: Headline::versus(
                Text::said(Key::Headline)
                    .count("batch", base.config.batch)
                    .count("k", chosen.config.micro_batches)
                    .count(
                        "micro_batch",
                        base.config.batch / chosen.config.micro_batches,
                    )
                    .number("share", MOST_OF_THE_SAVING),
                Side::step(base.result),
                Side::step(chosen.result),
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

/// The transformer's rows: the common section, and the saving at the largest k.
fn transformer_section(rows: &[Row<'_, TrainConfig>]) -> workloads::Section {
    let mut section = workloads::transformer_section(
        rows,
        &Axis {
            id: "micro-batches",
            x_label: Key::LabelMicroBatchesK.into(),
            x: &|c: &TrainConfig| c.micro_batches as f64,
            x_scale: Scale::Log2,
            line: &|_| String::new(),
            predicted_forward: &|c: &TrainConfig| {
                predict::forward_peak(c.shape, c.batch as f64, c.micro_batches)
            },
            predicted_step: &|c: &TrainConfig| {
                predict::step_peak(c.shape, c.batch as f64, c.micro_batches)
            },
            note: Text::said(Key::TransformerNote),
        },
    );
    if let (Some(base), Some(most)) = (
        rows.iter().find(|r| r.config.micro_batches == 1),
        rows.iter().max_by_key(|r| r.config.micro_batches),
    ) {
        let checks = workloads::failed_checks(rows);
        section.findings.push(
            Text::said(Key::TransformerPeaks)
                .count("batch", base.config.batch)
                .bytes("plain", base.peak())
                .count("k", most.config.micro_batches)
                .count(
                    "micro_batch",
                    base.config.batch / most.config.micro_batches.max(1),
                )
                .bytes("accumulated", most.peak())
                .count("failed", checks),
        );
    }
    section
}
