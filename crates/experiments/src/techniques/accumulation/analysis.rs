//! Gradient accumulation's conclusions: the step peak against k, predicted beside measured,
//! charts, Hugging Face's figures beside ours, and the index row.

use results::keys::accumulation::Key;
use results::keys::CommonKey;
use results::{
    paired::find, Analysis, AxisUnit, Chart, Comparison, ComparisonSpec, Correctness, Fix,
    Headline, MeasuredPoint, Metric, PairedComparison, Phase, PublishedFigure, Scale, Series, Side,
    TechniqueId, Text,
};

use super::{predict, Accumulation};
use crate::harness::train::TrainConfig;
use crate::technique::{checks_of_fix, Analyse, Row};
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

type R<'a> = Row<'a, TrainConfig>;

/// The sweep of k on the MLP, read once: the plain step, the index row's k, the largest k.
struct Sweep<'r, 'a> {
    rows: &'r [R<'a>],
    base: &'r R<'a>,
    chosen: &'r R<'a>,
    most: &'r R<'a>,
}

impl Sweep<'_, '_> {
    fn batch(&self) -> usize {
        self.base.config.batch
    }

    fn saving(&self, r: &R<'_>) -> f64 {
        self.base.peak() - r.peak()
    }

    fn best(&self) -> f64 {
        self.rows
            .iter()
            .map(|r| self.saving(r))
            .fold(f64::NEG_INFINITY, f64::max)
    }

    fn predicted(&self, r: &R<'_>) -> f64 {
        let c = &self.base.config;
        predict::step_peak(c.shape, c.batch as f64, r.config.micro_batches)
    }
}

/// The peaks at the ends of the sweep, the chosen k and the floor the gradients set.
fn findings(sweep: &Sweep<'_, '_>, paired: &[PairedComparison]) -> Vec<Text> {
    let (base, most) = (sweep.base, sweep.most);
    let best_k = sweep
        .rows
        .iter()
        .find(|r| sweep.saving(r) == sweep.best())
        .map_or(0, |r| r.config.micro_batches);
    let floor = sweep
        .rows
        .iter()
        .map(|r| r.result.metric(Metric::GradBytes))
        .fold(f64::NAN, f64::max);
    let mut findings = vec![
        Text::said(Key::Peaks)
            .count("batch", sweep.batch())
            .bytes("plain", base.peak())
            .count("k", most.config.micro_batches)
            .count("micro_batch", sweep.batch() / most.config.micro_batches)
            .bytes("accumulated", most.peak()),
        Text::said(Key::ChosenK)
            .count("k", sweep.chosen.config.micro_batches)
            .number("share", MOST_OF_THE_SAVING)
            .bytes("best", sweep.best())
            .count("best_k", best_k)
            .bytes("saved", sweep.saving(sweep.chosen)),
    ];
    findings.extend(
        paired
            .iter()
            .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id)),
    );
    findings.push(Text::said(Key::Floor).bytes("gradients", floor));
    findings
}

/// Each k's step peak beside the rule's.
fn step_comparisons(sweep: &Sweep<'_, '_>) -> Vec<Comparison<Text>> {
    sweep
        .rows
        .iter()
        .map(|r| {
            Comparison::new(
                Text::said(Key::StepQuantity).count("k", r.config.micro_batches),
                sweep.predicted(r),
                r.peak(),
                Text::said(Key::StepNote)
                    .bytes("process", r.result.metric(Metric::ProcessBaselineBytes))
                    .bytes("runtime", r.result.metric(Metric::RuntimeBytes)),
            )
            .bracketed(r.peak_upper())
        })
        .collect()
}

/// The peaks against k, measured and predicted.
fn peak_chart(sweep: &Sweep<'_, '_>) -> Chart<Text> {
    let line = |name: Key, predicted: bool, f: &dyn Fn(&R<'_>) -> f64| {
        Series::line(
            name,
            predicted,
            sweep
                .rows
                .iter()
                .map(|r| (r.config.micro_batches as f64, f(r)))
                .collect(),
        )
    };
    let phase_peak = |phase: Phase| {
        move |r: &R<'_>| {
            r.result
                .phase(phase)
                .map_or(f64::NAN, |p| p.peak_bytes as f64)
        }
    };
    Chart::new(
        "peak-vs-micro-batches",
        Text::said(Key::PeakChart).count("batch", sweep.batch()),
        Key::LabelMicroBatchesKBatchBK,
        Key::LabelBytesInUse,
    )
    .x(AxisUnit::Given, Scale::Log2)
    .y(AxisUnit::Bytes)
    .series([
        line(Key::LabelStepPeakMeasured, false, &|r| r.peak()),
        line(
            Key::LabelForwardPeakMeasured,
            false,
            &phase_peak(Phase::Forward),
        ),
        line(
            Key::LabelBackwardPeakMeasured,
            false,
            &phase_peak(Phase::Backward),
        ),
        line(Key::LabelStepPeakPredicted, true, &|r| sweep.predicted(r)),
    ])
}

/// Throughput against k.
fn throughput_chart(sweep: &Sweep<'_, '_>) -> Chart<Text> {
    Chart::new(
        "throughput-vs-micro-batches",
        Key::LabelTrainingThroughputWithAccumulation,
        Key::LabelMicroBatchesKBatchBK,
        Key::LabelThroughputSamplesS,
    )
    .x(AxisUnit::Given, Scale::Log2)
    .series([Series::throughput(
        Text::said(Key::LabelSamplesSMedianBarsFastestAnd),
        sweep
            .rows
            .iter()
            .map(|r| (r.config.micro_batches as f64, r.result)),
    )])
}

/// Hugging Face's figures beside ours at k = 4.
fn published(sweep: &Sweep<'_, '_>, paired: &[PairedComparison]) -> PublishedFigure<Text> {
    let ours = match sweep.rows.iter().find(|r| r.config.micro_batches == 4) {
        Some(r) => {
            let mut t = Text::said(Key::PublishedOurs)
                .count("batch", sweep.batch())
                .count("micro_batch", sweep.batch() / 4)
                .bytes("plain", sweep.base.peak())
                .bytes("accumulated", r.peak())
                .count("timed_k", sweep.chosen.config.micro_batches);
            if let Some(c) = find(paired, HEADLINE).filter(|t| t.spec.technique == r.id) {
                t = t.paired("timing", &c.spec.id);
            }
            t
        }
        None => Text::said(Key::PublishedOursUnmeasured),
    };
    PublishedFigure {
        source: Text::said(Key::PublishedSource),
        claim: Text::said(Key::PublishedClaim),
        ours,
    }
}

/// The index row: the plain step against the chosen k.
fn headline(sweep: &Sweep<'_, '_>, correctness: Correctness) -> Headline<Text> {
    let k = sweep.chosen.config.micro_batches;
    Headline::versus(
        Text::said(Key::Headline)
            .count("batch", sweep.batch())
            .count("k", k)
            .count("micro_batch", sweep.batch() / k)
            .number("share", MOST_OF_THE_SAVING),
        Side::step(sweep.base.result),
        Side::step(sweep.chosen.result),
        correctness,
        Text::said(CommonKey::WorstCheck),
    )
    .timed_by(HEADLINE)
    .of_fix(Fix::Accumulation)
}

impl Analyse for Accumulation {
    /// The analysis of the accumulation experiment.
    fn analyse(
        &self,
        rows: Vec<R<'_>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis<Text> {
        let checks = checks_of_fix(&rows, Fix::Accumulation, TechniqueId::Accumulation);
        let (mut rows, mut transformer) = workloads::split(rows);
        rows.sort_by_key(|r| r.config.micro_batches);
        transformer.sort_by_key(|r| r.config.micro_batches);
        let correctness = Correctness::of(points);
        let (Some((base, chosen)), Some(most)) = (plain_and_chosen(&rows), rows.last()) else {
            return Analysis::unmeasured(correctness);
        };
        let sweep = Sweep {
            rows: &rows,
            base,
            chosen,
            most,
        };
        let mut findings = findings(&sweep, paired);
        let mut comparisons = step_comparisons(&sweep);
        let mut charts = vec![peak_chart(&sweep), throughput_chart(&sweep)];
        if let Some((chart, lines)) = workloads::timeline_chart(
            "memory-timeline",
            Text::said(Key::LabelMemoryThroughOneTrainingStepOne),
            &[base, chosen],
        ) {
            charts.insert(1, chart);
            findings.extend(lines);
        }
        transformer_section(&transformer).append_to(&mut findings, &mut comparisons, &mut charts);
        Analysis::new(headline(&sweep, correctness))
            .findings(findings)
            .comparisons(comparisons)
            .charts(charts)
            .published([published(&sweep, paired)])
            .fix_checks(checks)
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
            line: &|_| None,
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
